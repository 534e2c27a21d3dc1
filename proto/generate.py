"""Generate the Python code for proto/arena/v1/*.proto into sdk/arena_sdk/wire/.

Run ``python proto/generate.py`` after changing a .proto file and commit the
result; ``--check`` (used by the tests) fails when the checked-in code differs
from a fresh generation.  The generated grpc module imports its messages as
``arena.v1``, which would clash with the server package ``arena``: the import
is rewritten to ``arena_sdk.wire``.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROTO_ROOT = REPO / "proto"
OUT = REPO / "sdk" / "arena_sdk" / "wire"
GENERATED = ("arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py")


def generate(out: Path) -> None:
    """Run protoc (from grpcio-tools) and fix the generated imports."""
    from grpc_tools import protoc  # a development dependency only

    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "protoc",
            f"-I{PROTO_ROOT}",
            f"-I{Path(protoc.__file__).parent / '_proto'}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            str(PROTO_ROOT / "arena" / "v1" / "arena.proto"),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        out.mkdir(parents=True, exist_ok=True)
        for name in GENERATED:
            text = (Path(tmp) / "arena" / "v1" / name).read_text()
            text = text.replace("from arena.v1 import arena_pb2", "from arena_sdk.wire import arena_pb2")
            (out / name).write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    if not args.check:
        generate(OUT)
        print(f"generated {', '.join(GENERATED)} in {OUT.relative_to(REPO)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(fresh)
        stale = [n for n in GENERATED if not filecmp.cmp(fresh / n, OUT / n, shallow=False)]
    if stale:
        print(f"stale generated code: {', '.join(stale)}; run python proto/generate.py")
        return 1
    print("generated code is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
