"""What a bot's own Dockerfile may do: a small parser and the rules `arena bot build` applies.

A bot's Dockerfile is hostile input.  The Docker daemon runs a build's ``RUN``
steps without a network, but it does more than ``RUN``: it fetches ``ADD``
URLs and git repositories itself, ``COPY --from=<image>`` and ``FROM <image>``
read any image on the engine (another entrant's bot), ``RUN --mount`` can
reach other images, the build cache or secrets, and a ``# syntax=`` line makes
BuildKit pull a frontend image.  So a bot's Dockerfile may:

- start each stage ``FROM ${BOT_BASE}`` (the bot base the builder passes),
  ``FROM ${BASE_IMAGE}`` (the base Python image the builder passes), an
  earlier stage of the same file, or ``scratch``;
- ``ADD`` only files of its directory (no URL, no git source, no variable
  that could become one);
- ``COPY --from`` only earlier stages of the same file;
- use no ``RUN`` flags (``--mount``, ``--network``, ``--security``);
- not use ``ONBUILD``, ``HEALTHCHECK``, ``VOLUME`` or ``STOPSIGNAL`` (settings
  that make Docker work for a seat outside its limits, or that act in builds
  of other images);
- only the ``escape`` parser directive (any other, even one a newer Docker
  knows, could end the directives early for one reader and not the other, and
  change the escape character between them).

Anything this parser cannot read the way Docker does (heredocs, quoted flags,
unknown instructions or directives, variable forms other than ``$NAME``,
``${NAME}``, ``${NAME:-word}``, ``${NAME:+word}``) is refused: a rule that
cannot be checked is no rule.  ``FROM`` is checked after substituting the
global ``ARG`` values the way Docker does, with the two base arguments set to
markers no Dockerfile can contain: a stage passes only when its image is
exactly the value the builder passes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from arena.errors import ArenaError

#: The build arguments the builder passes: each holds an image the organiser chose.
BASE_ARGS = ("BOT_BASE", "BASE_IMAGE")
#: The longest Dockerfile read (characters).
MAX_DOCKERFILE_CHARS = 1024 * 1024

_ALLOWED = {"FROM", "ARG", "ENV", "LABEL", "WORKDIR", "USER", "COPY", "ADD", "RUN", "CMD", "ENTRYPOINT", "EXPOSE", "SHELL", "MAINTAINER"}  # fmt: skip
#: Instructions Docker knows that a bot's Dockerfile may not use, and why.
REFUSED = {
    "ONBUILD": "its triggers run in the builds of other images that start from this one",
    "HEALTHCHECK": "Docker runs a health check itself, outside the seat's CPU limit",
    "VOLUME": "seats get no volumes, and a volume path can keep a seat's container from starting",
    "STOPSIGNAL": "the arena stops seats itself; a stop signal of the image changes how its containers end",
}
#: Flags each instruction may carry (all others are refused).
_FLAGS = {"COPY": {"from", "chown", "chmod", "link"}, "ADD": {"chown", "chmod", "link"}}
_DIRECTIVE = re.compile(r"^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$")
_SYNTAX_COMMENT = re.compile(r"^#[ \t]*syntax[ \t]*=", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STAGE = re.compile(r"[a-z][a-z0-9_.-]*")
_HEREDOC = re.compile(r"(?<!<)<<-?[\"']?[A-Za-z_]")
_FLAG = re.compile(r"--([a-z][a-z0-9-]*)(?:=(.*))?")
_MARKER = {name: f"\0{name}\0" for name in BASE_ARGS}  # a NUL is refused in the text: no Dockerfile can write it


class DockerfileError(ArenaError, ValueError):
    """A Dockerfile the policy refuses; the message names the line and the reason."""


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One instruction: its first line, keyword (upper case), flags and the rest of its arguments."""

    line: int
    keyword: str
    flags: dict[str, str | None]
    args: str

    @property
    def words(self) -> list[str]:
        """The arguments split on whitespace (the shell form of COPY and ADD)."""
        return self.args.split()


@dataclasses.dataclass(frozen=True)
class ParsedDockerfile:
    """A Dockerfile read the way Docker reads it: its escape character and its instructions."""

    escape: str
    instructions: list[Instruction]


@dataclasses.dataclass(frozen=True)
class DockerfileSummary:
    """What a Dockerfile that passed uses: the base arguments its stages start from, ARGs, stage names."""

    base_args: set[str]
    declared_args: set[str]
    stages: list[str | None]


def _refuse(line: int | None, reason: str) -> DockerfileError:
    where = f"Dockerfile line {line}: " if line is not None else "Dockerfile: "
    return DockerfileError(where + reason)


def parse_dockerfile(text: str) -> ParsedDockerfile:
    """Split ``text`` into instructions as Docker does: directives, continuations, comments.

    Raises :class:`DockerfileError` for what Docker might read differently.
    """
    if "\0" in text:
        raise _refuse(None, "it contains a NUL character")
    if len(text) > MAX_DOCKERFILE_CHARS:
        raise _refuse(None, f"it is longer than {MAX_DOCKERFILE_CHARS} characters")
    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
    escape = "\\"
    seen: set[str] = set()
    first = 0
    for first, line in enumerate(lines):  # noqa: B007 - the directives end where the loop breaks
        found = _DIRECTIVE.match(line.strip())
        if not found:
            break
        key, value = found.group(1).lower(), found.group(2)
        if key in seen:
            raise _refuse(first + 1, f"the parser directive {key!r} is given twice")
        seen.add(key)
        if key == "escape":
            if value not in ("\\", "`"):
                raise _refuse(first + 1, f"the escape directive must be \\ or `, not {value!r}")
            escape = value
        elif key == "syntax":
            raise _refuse(first + 1, "a syntax directive makes the builder fetch a frontend image: not allowed")
        else:  # Docker 20.10 stops reading directives at an unknown one, BuildKit at some: only escape is sure
            raise _refuse(first + 1, f"the parser directive {key!r} is not allowed (only escape is)")
    else:
        first = len(lines)
    continuation = re.compile(rf"^(.*?){re.escape(escape)}[ \t]*$")
    instructions: list[Instruction] = []
    pending: str | None = None
    start = 0
    for number, line in enumerate(lines[first:], start=first + 1):
        if _CONTROL.search(line):
            raise _refuse(number, "it contains a control character")
        stripped = line.strip()
        if stripped.startswith("#"):
            if _SYNTAX_COMMENT.match(stripped):
                raise _refuse(number, "a syntax directive makes the builder fetch a frontend image: not allowed")
            continue  # a comment, also inside a continuation
        if not stripped:
            continue  # a blank line, also inside a continuation
        if pending is None:
            start, pending = number, ""
        found = continuation.match(line)
        if found:
            pending += found.group(1)
            continue
        pending += line
        instructions.append(_instruction(start, pending))
        pending = None
    if pending is not None and pending.strip():  # a continuation at the end of the file
        instructions.append(_instruction(start, pending))
    return ParsedDockerfile(escape=escape, instructions=instructions)


def _instruction(line: int, text: str) -> Instruction:
    """One logical line: keyword, leading ``--flags`` and the rest."""
    parts = text.strip().split(maxsplit=1)
    keyword = parts[0].upper()
    rest = parts[1] if len(parts) > 1 else ""
    flags: dict[str, str | None] = {}
    while rest.startswith("--"):
        pieces = rest.split(maxsplit=1)
        token, tail = pieces[0], (pieces[1] if len(pieces) > 1 else "")
        found = _FLAG.fullmatch(token)
        if not found or re.search(r"[\"'\\`]", token):
            raise _refuse(line, f"{keyword}: cannot read the flag {token!r}")
        flags[found.group(1)] = found.group(2)
        rest = tail.lstrip()
    return Instruction(line=line, keyword=keyword, flags=flags, args=rest.strip())


def check_dockerfile(text: str) -> DockerfileSummary:
    """Check a bot's Dockerfile against the policy above; :class:`DockerfileError` says what is refused."""
    parsed = parse_dockerfile(text)
    meta: dict[str, str | None] = {}
    declared: set[str] = set()
    base_args: set[str] = set()
    stages: list[str | None] = []
    for ins in parsed.instructions:
        if ins.keyword in REFUSED:
            raise _refuse(ins.line, f"{ins.keyword} is not allowed in a bot's Dockerfile: {REFUSED[ins.keyword]}")
        if ins.keyword not in _ALLOWED:
            raise _refuse(ins.line, f"unknown instruction {ins.keyword!r}")
        allowed_flags = _FLAGS.get(ins.keyword, set())
        for flag in ins.flags:
            if flag not in allowed_flags:
                why = " (RUN flags can mount other images, the build cache or secrets)" if ins.keyword == "RUN" else ""
                raise _refuse(ins.line, f"{ins.keyword} --{flag} is not allowed{why}")
        if ins.keyword in ("RUN", "COPY", "ADD") and _HEREDOC.search(ins.args):
            raise _refuse(ins.line, f"{ins.keyword}: heredocs (<<WORD) are not supported")
        if ins.keyword == "ARG":
            names = _args(ins, meta if not stages else None, parsed.escape)
            declared.update(names)
            continue
        if not stages and ins.keyword != "FROM":
            raise _refuse(ins.line, f"{ins.keyword} before the first FROM (only ARG may come first)")
        if ins.keyword == "FROM":
            stages.append(_from(ins, meta, stages, base_args, parsed.escape))
        elif ins.keyword in ("COPY", "ADD"):
            _copy_or_add(ins, stages)
    if not stages:
        raise _refuse(None, "no FROM instruction")
    return DockerfileSummary(base_args=base_args, declared_args=declared, stages=stages)


def _args(ins: Instruction, meta: dict[str, str | None] | None, escape: str) -> list[str]:
    """The names an ARG declares; before the first FROM, their values go into ``meta``."""
    names = []
    for word in ins.words or [""]:
        name, eq, value = word.partition("=")
        if not _NAME.fullmatch(name):
            raise _refuse(ins.line, f"ARG: cannot read {word!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if re.search(r"[\"']", value):
            raise _refuse(ins.line, f"ARG: cannot read the value of {name}")
        names.append(name)
        if meta is not None:
            if name in BASE_ARGS:
                meta[name] = _MARKER[name]  # the builder passes it: the default never applies
            else:
                meta[name] = _substitute(value, meta, escape, ins) if eq else None
    return names


def _substitute(word: str, env: Mapping[str, str | None], escape: str, ins: Instruction) -> str:
    """``word`` with ``$NAME``, ``${NAME}``, ``${NAME:-w}``, ``${NAME:+w}`` replaced; others refused."""
    out: list[str] = []
    i = 0
    while i < len(word):
        char = word[i]
        if char == escape and i + 1 < len(word):
            out.append(word[i + 1])
            i += 2
            continue
        if char != "$":
            out.append(char)
            i += 1
            continue
        if word.startswith("{", i + 1):
            end = word.find("}", i + 2)
            found = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^${}]*))?", word[i + 2 : end]) if end > 0 else None
            if not found:
                raise _refuse(ins.line, f"{ins.keyword}: cannot read the variable in {word!r}")
            value = env.get(found.group(1)) or ""
            operator, alternative = found.group(2), found.group(3) or ""
            if operator == ":-":
                value = value or alternative
            elif operator == ":+":
                value = alternative if value else ""
            out.append(value)
            i = end + 1
            continue
        name = _NAME.match(word, i + 1)
        if not name:
            raise _refuse(ins.line, f"{ins.keyword}: cannot read the variable in {word!r}")
        out.append(env.get(name.group(0)) or "")
        i = name.end()
    return "".join(out)


def _from(
    ins: Instruction, meta: Mapping[str, str | None], stages: list[str | None], base_args: set[str], escape: str
) -> str | None:
    """Check one FROM; returns its stage name (lower case) or None."""
    words = ins.words
    if len(words) not in (1, 3) or (len(words) == 3 and words[1].lower() != "as"):
        raise _refuse(ins.line, f"FROM: cannot read {ins.args!r} (FROM image [AS name])")
    if re.search(r"[\"']", words[0]):
        raise _refuse(ins.line, f"FROM: cannot read {words[0]!r} (no quotes)")
    image = _substitute(words[0], meta, escape, ins)
    name = words[2].lower() if len(words) == 3 else None
    if name is not None and (not _STAGE.fullmatch(name) or name in stages):
        raise _refuse(ins.line, f"FROM: {words[2]!r} is not a valid new stage name")
    for arg, marker in _MARKER.items():
        if image == marker:
            base_args.add(arg)
            return name
    if image.lower() in {s for s in stages if s} or image == "scratch":
        return name
    raise _refuse(
        ins.line,
        f"FROM {words[0]} is not allowed: a bot image starts FROM ${{BOT_BASE}} (the bot base the builder "
        f"passes; declare ARG BOT_BASE first), FROM ${{BASE_IMAGE}}, or an earlier stage of the same file",
    )


def _copy_or_add(ins: Instruction, stages: list[str | None]) -> None:
    """Check COPY --from and ADD sources."""
    source = ins.flags.get("from", "")
    if "from" in ins.flags:
        earlier = stages[:-1]
        ok = bool(source) and (
            (source.isdigit() and int(source) < len(earlier)) or source.lower() in {s for s in earlier if s}
        )
        if not ok:
            raise _refuse(
                ins.line, f"COPY --from={source} is not allowed: --from may name only an earlier stage of this file"
            )
    if ins.args.startswith("["):
        try:
            words = json.loads(ins.args)
        except ValueError:
            raise _refuse(ins.line, f"{ins.keyword}: cannot read the JSON form {ins.args!r}") from None
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise _refuse(ins.line, f"{ins.keyword}: cannot read the JSON form {ins.args!r}")
    else:
        words = ins.words
    if len(words) < 2:
        raise _refuse(ins.line, f"{ins.keyword} needs a source and a destination")
    if ins.keyword != "ADD":
        return
    for word in words[:-1]:
        plain = re.sub(r"[\"'\\`]", "", word).lower()  # quotes and escapes vanish when Docker reads the word
        if "$" in plain:
            raise _refuse(ins.line, f"ADD source {word!r}: a variable is not allowed in an ADD source (it could be a URL)")
        if "://" in plain:
            raise _refuse(ins.line, f"ADD source {word!r}: a URL is not allowed (the Docker daemon would fetch it, network or not)")  # fmt: skip
        if plain.startswith(("git@", "github.com/")):
            raise _refuse(ins.line, f"ADD source {word!r}: a git source is not allowed (the daemon would fetch it)")


def image_config_warnings(config: Mapping[str, Any] | None) -> list[str]:
    """Warnings for an image's settings (``docker inspect``'s ``Config``) that make Docker work for a seat.

    ``arena bot build`` refuses these in a Dockerfile; an image built elsewhere may still carry them.
    """
    config = config or {}
    warnings = []
    test = (config.get("Healthcheck") or {}).get("Test") or []
    if test and test[0] != "NONE":
        warnings.append(
            "the image declares HEALTHCHECK: Docker would run it outside the seat's CPU limit; "
            "seats do not need it (arena bot build refuses it)"
        )
    volumes = sorted(str(path) for path in (config.get("Volumes") or {}))
    if volumes:
        warnings.append(
            f"the image declares VOLUME {', '.join(volumes)}: seats get an empty read-only directory there, "
            "not a volume (write to /tmp)"
        )
    if config.get("StopSignal"):
        warnings.append(
            f"the image declares STOPSIGNAL {config['StopSignal']}: the arena stops seats itself "
            "(arena bot build refuses it)"
        )
    triggers = config.get("OnBuild") or []
    if triggers:
        warnings.append(
            f"the image declares ONBUILD ({len(triggers)} trigger(s)): they run in the builds of images "
            "made FROM it (arena bot build refuses it)"
        )
    return warnings
