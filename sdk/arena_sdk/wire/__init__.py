"""Generated protobuf and gRPC code for ``proto/arena/v1`` (do not edit; see proto/generate.py)."""
