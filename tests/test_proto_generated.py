"""The checked-in generated gRPC code matches a fresh generation from proto/."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "proto" / "generate.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("proto_generate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_code_is_fresh():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_check_notices_a_difference(tmp_path, monkeypatch, capsys):
    generator = load_generator()
    stale = tmp_path / "wire"
    shutil.copytree(generator.OUT, stale)
    with (stale / "arena_pb2.pyi").open("a") as f:
        f.write("# edited by hand\n")
    monkeypatch.setattr(generator, "OUT", stale)
    monkeypatch.setattr(sys, "argv", ["generate.py", "--check"])
    assert generator.main() == 1
    assert "arena_pb2.pyi" in capsys.readouterr().out


def test_generated_grpc_module_imports_from_the_sdk_package():
    text = (REPO / "sdk" / "arena_sdk" / "wire" / "arena_pb2_grpc.py").read_text()
    assert "from arena_sdk.wire import arena_pb2" in text
    assert "from arena.v1" not in text
