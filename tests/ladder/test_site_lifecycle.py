"""The organiser's moves the lifecycle refuses are a clear 409 on the site, and change nothing (a 500 before)."""

from __future__ import annotations

from pathlib import Path

import httpx
from site_support import SyntheticLadder, served

from arena.ladder.versions.lifecycle import DISABLED, FAILED


def test_disabling_a_failed_version_is_a_409_and_changes_nothing(tmp_path: Path):
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        lad.add_team("alpha")
        failed = lad.add_version("alpha", active=False)
        lad.store.set_status(failed.id, FAILED, reason="build timed out after 40 s")
        active = lad.add_version("alpha")
        with served(lad.config, lad.state) as url:
            admin = {"Authorization": f"Bearer {lad.admin}"}
            refused = httpx.post(f"{url}/api/admin/versions/alpha@1/disable", headers=admin, timeout=30)
            assert refused.status_code == 409, refused.text
            assert "alpha@1 is failed: it cannot become disabled" in refused.text
            assert httpx.post(f"{url}/api/admin/versions/alpha@2/disable", headers=admin, timeout=30).status_code == 200
            again = httpx.post(f"{url}/api/admin/versions/alpha@2/disable", headers=admin, timeout=30)
            assert again.status_code == 200, "disabling twice is the same as once"
        assert lad.store.version(failed.id).status == FAILED
        assert lad.store.version(failed.id).reason == "build timed out after 40 s"
        assert lad.store.version(active.id).status == DISABLED
    finally:
        lad.close()
