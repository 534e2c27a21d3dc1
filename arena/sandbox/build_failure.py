"""A failed build in its author's words: the failing step, why (offline pip, the network), its last lines.

A build's log is the engine's and the tools' text: colour codes from pip or
npm, Docker's own bookkeeping lines, and a one-line error ("The command
'/bin/sh -c pip install requests' returned a non-zero code: 1") that says
nothing a student can act on.  :func:`explain_failure` turns it into a few
lines: which step failed, the reason when it is one we know (a package pip
could not find among the upload's wheels, a step that tried to reach the
network: builds are offline), what to do, and the step's last lines.  It
names files relative to the bot's directory and never a server's path: the
caller says how the directory is called (``what``: its path for ``arena bot
build``, "your upload" on a ladder).

:func:`strip_terminal` removes terminal control sequences (colours, cursor
moves) from the log, so a page shows text and not ``\\x1b[31m``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Terminal control sequences: CSI (colours, cursor moves), OSC (titles, links), and two-character escapes.
_TERMINAL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STEP = re.compile(r"^Step (\d+/\d+) : (.*)$")
_EXIT = re.compile(r"returned a non-zero code: (\d+)")
_NOT_FOUND = re.compile(r"(?:No matching distribution found for|Could not find a version that satisfies the requirement) (\S+)")
#: What a step that tried to reach the network prints (pip, npm, curl, apt, git).
_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|Failed to establish a new "
    r"connection|EAI_AGAIN|ENOTFOUND|ENETUNREACH|getaddrinfo|Name or service not known|Could not connect to"
)
#: A shell that did not find a command (``/bin/sh: 1: pip: not found``, bash's ``command not found``).
_NOT_INSTALLED = re.compile(r"^/bin/(?:ba)?sh: (?:\d+: )?(?:line \d+: )?([^\s:]+): (?:command )?not found")
#: Docker's bookkeeping lines: not the step's own output.
_NOISE = re.compile(r"^\s*(?:---> |Removing intermediate container|Step \d+/\d+ : |Sending build context|The command .* returned a non-zero code)")
#: The step's last lines a failure shows.
TAIL_LINES = 12
#: How the offline wheels are made (docs/packaging.md).
WHEELS_HOW = "pip download --only-binary=:all: --python-version 3.11 -d wheels"


def strip_terminal(text: str) -> str:
    """``text`` without terminal control sequences (colours, cursor moves); a progress line's ``\\r``
    rewrites keep only their last state."""
    text = _TERMINAL.sub("", text.replace("\r\n", "\n"))
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def explain_failure(lines: Sequence[str], error: str | None, *, what: str) -> str:
    """What a failed build says to its author (first line: the step and why; then the step's last lines).

    ``lines``: the log's last lines (terminal codes already stripped);
    ``error``: the engine's error line; ``what``: how the bot's directory is named.
    """
    step, output = _failing_step(lines)
    exit_code = _EXIT.search(error or "")
    head = f"{what}: " + (f"step {step[0]} `{_short(step[1])}` failed" if step else "the build failed")
    head += f" (exit code {exit_code.group(1)})" if exit_code else (f" ({error})" if error and not step else "")
    why = _reason(step[1] if step else "", output)
    if not why and exit_code and exit_code.group(1) == "137":  # SIGKILL: the cgroup's OOM killer, as a rule
        why = ("the step was killed, most often because it went over the build's memory limit: make the step use "
               "less memory (the organiser sets the limit).")
    tail = [line for line in output if line.strip()][-TAIL_LINES:]
    text = f"{head}: {why}" if why else f"{head}."
    return text + ("\nIts last lines:\n" + "\n".join(f"  {line}" for line in tail) if tail else "")


def missing_requirement(lines: Sequence[str]) -> str | None:
    """The requirement pip could not find, from a failed build's log."""
    for line in lines:
        found = _NOT_FOUND.search(line)
        if found:
            return found.group(1)
    return None


def _failing_step(lines: Sequence[str]) -> tuple[tuple[str, str] | None, list[str]]:
    """The last step the log shows (its number and instruction) and its output lines."""
    start = None
    for i, line in enumerate(lines):
        if _STEP.match(line.strip()):
            start = i
    if start is None:
        return None, [line for line in lines if not _NOISE.match(line)]
    found = _STEP.match(lines[start].strip())
    assert found is not None
    return (found.group(1), found.group(2)), [line for line in lines[start + 1 :] if not _NOISE.match(line)]


def _short(instruction: str, most: int = 120) -> str:
    """An instruction on one short line (Docker joins a multi-line RUN with its spaces)."""
    text = " ".join(instruction.split())
    return text if len(text) <= most else text[: most - 3] + "..."


def _reason(instruction: str, output: Sequence[str]) -> str:
    """Why the step failed, when it is one we know, and what to do; empty otherwise."""
    missing = missing_requirement(output)
    if missing is not None and "--no-index" in instruction:
        return (
            f"pip did not find {missing!r} among the wheels in wheels/ (the build is offline): put its wheel and "
            f"its dependencies' wheels there, e.g. {WHEELS_HOW} -r requirements.txt (see docs/packaging.md)."
        )
    if missing is not None or (_NETWORK.search("\n".join(output)) and "pip" in instruction):
        package = repr(missing) if missing else "a package"
        return (
            f"pip tried to download {package}, but builds have no network: nothing can be downloaded during a "
            f"build. Put the wheels in your directory's wheels/ folder ({WHEELS_HOW} {missing or 'PACKAGE'}) and "
            f"install from there: RUN pip install --no-index --find-links wheels {missing or 'PACKAGE'} "
            f"(or list it in requirements.txt without a Dockerfile; see docs/packaging.md)."
        )
    absent = next((m for m in map(_NOT_INSTALLED.search, output) if m), None)
    if absent is not None:
        return (
            f"the command {absent.group(1)!r} is not in the image. On the bot base (FROM ${{BOT_BASE}}) Python "
            f"and pip are in /venv/bin (RUN /venv/bin/pip install --no-index --find-links wheels ...); anything "
            f"else must come in your directory (see docs/packaging.md)."
        )
    if _NETWORK.search("\n".join(output)):
        return (
            "this step tried to reach the network, but builds have no network: put what it downloads in your "
            "directory (Python: wheels in wheels/; Node: node_modules/ from npm ci) and install it from there "
            "(see docs/packaging.md)."
        )
    return ""


__all__ = ["TAIL_LINES", "explain_failure", "missing_requirement", "strip_terminal"]
