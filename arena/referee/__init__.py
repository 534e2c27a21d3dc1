"""The gRPC edge: the referee server, seat sessions, tokens, deadlines, proto conversion."""

# Before grpc is imported below: gRPC reads its transport settings once, at import
# (arena_sdk.transport says which and why).
from arena_sdk.transport import prefer_polling_transport

prefer_polling_transport()

from arena.referee.server import RefereeServer, server_options  # noqa: E402
from arena.referee.session import RemoteSeat  # noqa: E402

__all__ = ["RefereeServer", "RemoteSeat", "server_options"]
