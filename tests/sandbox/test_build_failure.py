"""A failed build in its author's words (issue 46): the step, the reason, its last lines; no colour codes.

The logs here are the engine's own text as a failed offline build prints it
(pip's real messages); the served ladder's end-to-end checks are in
tests/ladder/test_build_messages.py.
"""

from __future__ import annotations

from arena.sandbox.build_failure import explain_failure, strip_terminal

OWN_PIP = """\
Step 1/4 : ARG BOT_BASE=arena-bot-base
Step 2/4 : FROM ${BOT_BASE}
 ---> 0123456789ab
Step 3/4 : RUN pip install requests
 ---> Running in abcdef012345
\x1b[33mWARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection \
broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish \
a new connection: [Errno 101] Network is unreachable')': /simple/requests/\x1b[0m
\x1b[31mERROR: Could not find a version that satisfies the requirement requests (from versions: none)\x1b[0m
\x1b[31mERROR: No matching distribution found for requests\x1b[0m
The command '/bin/sh -c pip install requests' returned a non-zero code: 1
"""
ERROR = "The command '/bin/sh -c pip install requests' returned a non-zero code: 1"


def test_a_teams_own_pip_install_is_explained_as_offline_with_what_to_do() -> None:
    said = explain_failure(strip_terminal(OWN_PIP).splitlines(), ERROR, what="your upload")
    first, *rest = said.splitlines()
    assert first.startswith("your upload: step 3/4 `RUN pip install requests` failed (exit code 1): ")
    assert "builds have no network" in first and "wheels/" in first
    assert "RUN pip install --no-index --find-links wheels requests" in first
    assert "requirements.txt is not among" not in said and "/srv" not in said  # not the default Dockerfile's words
    assert rest[0] == "Its last lines:" and rest[-1] == "  ERROR: No matching distribution found for requests"
    assert not any("returned a non-zero code" in line or "--->" in line for line in rest)


def test_a_requirement_missing_from_wheels_names_the_wheels_folder() -> None:
    log = [
        "Step 3/4 : RUN cd /bot  && if [ -f requirements.txt ]; then       /venv/bin/pip install --no-cache-dir "
        "--no-index --find-links wheels -r requirements.txt;     fi  && rm -rf wheels Dockerfile",
        " ---> Running in 0123",
        "Looking in links: wheels",
        "ERROR: Could not find a version that satisfies the requirement numpy==1.26.4 (from versions: none)",
        "ERROR: No matching distribution found for numpy==1.26.4",
    ]
    said = explain_failure(log, "The command '/bin/sh -c cd /bot ...' returned a non-zero code: 1", what="mybot")
    first = said.splitlines()[0]
    assert "pip did not find 'numpy==1.26.4' among the wheels in wheels/" in first
    assert "`RUN cd /bot && if [ -f requirements.txt ]; then /venv/bin/pip install" in first  # one short line


def test_a_step_that_reaches_for_the_network_says_builds_are_offline() -> None:
    log = ["Step 4/6 : RUN npm install", " ---> Running in 0123", "npm ERR! code EAI_AGAIN",
           "npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN"]  # fmt: skip
    said = explain_failure(log, "The command '/bin/sh -c npm install' returned a non-zero code: 1", what="your upload")
    assert "tried to reach the network, but builds have no network" in said.splitlines()[0]
    assert "node_modules/" in said


def test_any_other_failure_shows_the_step_and_its_last_lines() -> None:
    log = ["Step 3/3 : RUN make", " ---> Running in x", *(f"line {i}" for i in range(30)), "make: *** No rule"]
    said = explain_failure(log, "The command '/bin/sh -c make' returned a non-zero code: 2", what="your upload")
    lines = said.splitlines()
    assert lines[0] == "your upload: step 3/3 `RUN make` failed (exit code 2)."
    assert lines[-1] == "  make: *** No rule" and len(lines) == 2 + 12


def test_a_step_the_oom_killer_ended_is_said_to_be_over_the_memory_limit() -> None:
    log = ["Step 3/7 : RUN python -c 'bytearray(400 << 20)'", " ---> Running in x", "Killed"]
    said = explain_failure(log, "The command '/bin/sh -c python ...' returned a non-zero code: 137", what="your upload")
    first = said.splitlines()[0]
    assert first.startswith("your upload: step 3/7 ") and "(exit code 137): the step was killed" in first
    assert "memory limit" in first and said.splitlines()[-1] == "  Killed"


def test_colour_codes_and_progress_rewrites_are_stripped() -> None:
    assert strip_terminal("\x1b[1;31mred\x1b[0m and \x1b]8;;http://x\x07link\x1b]8;;\x07\n") == "red and link\n"
    assert strip_terminal("  10%\r  50%\r 100%\ndone\r\n") == " 100%\ndone\n"
    assert strip_terminal("tab\tkept\n") == "tab\tkept\n"


def test_a_command_missing_from_the_image_says_where_pip_is() -> None:
    log = ["Step 5/9 : RUN pip install requests", " ---> Running in 0123", "/bin/sh: 1: pip: not found"]
    said = explain_failure(log, "The command '/bin/sh -c pip install requests' returned a non-zero code: 127",
                           what="your upload")  # fmt: skip
    first = said.splitlines()[0]
    assert first.startswith("your upload: step 5/9 `RUN pip install requests` failed (exit code 127): ")
    assert "the command 'pip' is not in the image" in first and "/venv/bin/pip" in first
