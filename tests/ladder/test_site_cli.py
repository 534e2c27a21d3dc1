"""``arena ladder``'s help texts show their real defaults; ``show`` prints the limits in MiB."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from ladder_support import cli


def test_serve_help_names_the_real_default_address(tmp_path: Path):
    made = cli("ladder", "init", str(tmp_path / "lad"))
    assert made.returncode == 0, made.stderr
    server = tomllib.loads((tmp_path / "lad" / "ladder.toml").read_text())["server"]
    shown = cli("ladder", "serve", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.replace("│", " ").split())
    assert "ladder.toml's ;" not in text and "ladder.toml's )" not in text, text
    assert f"[server] host; init writes {server['host']}" in text, text
    assert f"[server] port; init writes {server['port']};" in text, text


def test_show_prints_the_upload_limits_in_mib(tmp_path: Path):
    made = cli("ladder", "init", str(tmp_path / "lad"), "--set", "max_hands=1")
    assert made.returncode == 0, made.stderr
    toml = tmp_path / "lad" / "ladder.toml"
    toml.write_text(re.sub(r"(?m)^max_bytes = .*$", "max_bytes = 1572864", toml.read_text()))
    shown = cli("ladder", "show", str(tmp_path / "lad"))
    assert shown.returncode == 0, shown.stderr
    assert "uploads: at most 1.5 MiB and 2000 files each, 20 per team per UTC day" in shown.stdout, shown.stdout
    assert "1572864" not in shown.stdout
    as_json = cli("ladder", "show", str(tmp_path / "lad"), "--json")
    assert '"max_bytes": 1572864' in as_json.stdout
