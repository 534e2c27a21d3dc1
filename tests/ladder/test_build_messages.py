"""Build failures in the team's words on a real ladder (issue 46): no server paths, no colour codes.

Red team 5: a team's own ``RUN pip install requests`` failed with "requirement
... of /srv/.../submissions/g05/1/requirements.txt is not among the wheels in
..." (a file the team does not have, the server's paths shown), and the build
log on the site showed raw colour codes.  Here, on a served ladder with real
offline builds (Docker): the reason names the failing step and why (pip
cannot download: builds are offline, with what to do), the policy's refusal
is named as the policy's, and neither the reason, the log on ``/me`` nor the
API holds the ladder's directory or an escape character.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from docker_support import engine_or_skip
from guard_support import signed_in
from ladder_support import Ladder, served, tarball

pytestmark = [pytest.mark.docker, pytest.mark.timeout(2400)]

BOT = "from arena_sdk import run\nfrom arena_sdk.testing import RandomBot\n\nrun(RandomBot())\n"
OWN_PIP = """\
ARG BOT_BASE
FROM ${BOT_BASE}
USER root
COPY bot.py /bot/bot.py
RUN printf '\\033[1;31mcoloured words\\033[0m\\n' && /venv/bin/pip install requests
USER 10001
"""
POLICY = """\
ARG BOT_BASE
FROM ${BOT_BASE}
ADD https://example.com/tool /tool
"""


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    client = engine_or_skip("the ladder's builds")
    lad = Ladder(tmp_path_factory.mktemp("ladder") / "lad", "submissions.validation_hands=1",
                 teams=("alpha", "beta", "gamma"))  # fmt: skip
    with served(lad, client):
        yield lad


def _failed(ladder: Ladder, team: str, files: dict[str, str]) -> dict[str, Any]:
    assert ladder.upload(team, tarball(files)).status_code == 201
    done = ladder.wait_for(f"{team}@1 failed", lambda: ladder.versions(team)[0]["status"] == "failed", timeout=1500)
    assert done
    return ladder.versions(team)[0]


def _no_server_paths(ladder: Ladder, text: str) -> None:
    directory = str(ladder.directory)
    assert directory not in text and str(ladder.directory.resolve()) not in text
    assert "/submissions/" not in text and "\x1b" not in text and "[31m" not in text


def test_a_teams_own_pip_install_fails_in_words_the_team_can_act_on(ladder: Ladder) -> None:
    version = _failed(ladder, "alpha", {"bot.py": BOT, "Dockerfile": OWN_PIP})
    reason = version["reason"]
    assert reason.startswith("build failed: your upload: step "), reason
    assert "`RUN printf" in reason and "/venv/bin/pip install requests` failed (exit code 1)" in reason
    assert "builds have no network" in reason and "wheels/" in reason
    assert "RUN pip install --no-index --find-links wheels requests" in reason
    assert "requirements.txt is not among" not in reason
    _no_server_paths(ladder, reason)
    _no_server_paths(ladder, version["build_log"])
    assert "coloured words" in version["build_log"]
    page = signed_in(ladder, ladder.tokens["alpha"]).get("/me").text
    assert "builds have no network" in page
    _no_server_paths(ladder, page)


def test_the_dockerfile_policy_is_named_as_the_refusal(ladder: Ladder) -> None:
    version = _failed(ladder, "beta", {"bot.py": BOT, "Dockerfile": POLICY})
    reason = version["reason"]
    assert reason.startswith("build failed: your upload: the Dockerfile policy refuses it: Dockerfile line 3: "), reason
    _no_server_paths(ladder, reason)
    _no_server_paths(ladder, version["build_log"])


def test_a_requirement_without_its_wheel_names_the_wheels_folder(ladder: Ladder) -> None:
    version = _failed(ladder, "gamma", {"bot.py": BOT, "requirements.txt": "nctag==1.2\n"})
    reason = version["reason"]
    assert "pip did not find 'nctag==1.2' among the wheels in wheels/" in reason, reason
    _no_server_paths(ladder, reason)
    _no_server_paths(ladder, version["build_log"])
