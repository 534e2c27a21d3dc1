"""Importing the site (and making its app) loads neither the referee, grpc, trio nor the table kernel.

The site reads the stores and renders pages: a fresh interpreter that
imports :mod:`arena.ladder.site.app` and creates the app must not pay for the
ladder loop's machinery (today's main loaded all of it through the service
and the builder).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from site_support import SyntheticLadder

HEAVY = ("grpc", "trio", "arena.referee", "arena.tables", "arena.ladder.service", "arena.ladder.versions.builds", "docker")

PROBE = """
import sys
from pathlib import Path
from arena.ladder.site.settings import SiteSettings
from arena.ladder.games.state import LadderState
import arena.ladder.site.app as web
app = web.create_app(SiteSettings(Path(sys.argv[1]), "probe"), LadderState)
web.wrap(app, app.state.site.settings)
from starlette.testclient import TestClient
with TestClient(app) as client:
    assert client.get("/").status_code == 200
    assert client.get("/teams/alpha").status_code == 200
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
print("HEAVY", heavy)
"""


def test_the_site_imports_and_serves_without_the_loop_machinery(tmp_path: Path):
    ladder = SyntheticLadder(tmp_path / "lad")
    ladder.add_team("alpha")
    ladder.close()
    probe = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{heavy!r}", repr(HEAVY)), str(tmp_path / "lad")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert "HEAVY []" in probe.stdout, probe.stdout
