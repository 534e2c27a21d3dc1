"""The Dockerfile policy of `arena bot build` (issue 24, items 3 and 7): parser and rules, no Docker.

A custom Dockerfile may start only from the bot base (or the base Python
image), both build arguments the builder passes; no URL or git sources, no
``--from`` but earlier stages of the same file, no ``RUN`` flags, none of the
instructions that make Docker work for a seat.  Whatever the parser cannot
read is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.sandbox.build import DEFAULT_DOCKERFILE
from arena.sandbox.dockerfile_policy import DockerfileError, check_dockerfile, image_config_warnings, parse_dockerfile

REPO = Path(__file__).resolve().parents[2]
HEAD = "ARG BOT_BASE=arena-bot-base\nFROM ${BOT_BASE}\n"


def _refused(text: str, *words: str) -> str:
    with pytest.raises(DockerfileError) as caught:
        check_dockerfile(text)
    message = str(caught.value)
    for word in words:
        assert word in message, (word, message)
    return message


@pytest.mark.parametrize(
    "path",
    ["docker/referee/Dockerfile", "tests/sandbox/probe_bot/Dockerfile", "tests/hostile/zoo/Dockerfile", "tests/hostile/covert/Dockerfile"],
)  # fmt: skip
def test_the_projects_own_dockerfiles_pass(path):
    summary = check_dockerfile((REPO / path).read_text())
    assert summary.base_args == {"BASE_IMAGE"}


def test_the_default_and_the_three_line_dockerfiles_pass():
    assert check_dockerfile(DEFAULT_DOCKERFILE).base_args == {"BOT_BASE"}
    assert check_dockerfile(HEAD + "COPY bot.py /bot/\n").base_args == {"BOT_BASE"}


def test_the_parser_joins_continuations_and_drops_comments():
    text = "# escape=`\nARG BOT_BASE\nfrom ${BOT_BASE}\nRUN echo a `\n  # inside\n\n  && echo b\ncopy  --chown=1:1  a  b  /bot/\n"
    parsed = parse_dockerfile(text)
    assert parsed.escape == "`"
    assert [(i.line, i.keyword) for i in parsed.instructions] == [(2, "ARG"), (3, "FROM"), (4, "RUN"), (8, "COPY")]
    assert parsed.instructions[2].args == "echo a   && echo b"
    assert parsed.instructions[3].flags == {"chown": "1:1"} and parsed.instructions[3].words == ["a", "b", "/bot/"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (HEAD + "ADD http://127.0.0.1:8000/x /bot/x\n", ["line 3", "ADD", "URL"]),
        (HEAD + "add HTTPS://example.org/x /bot/x\n", ["line 3", "URL"]),
        (HEAD + 'ADD ["http://127.0.0.1/x", "/bot/x"]\n', ["line 3", "URL"]),
        (HEAD + "ADD bot.py \\\n  http://127.0.0.1/x /bot/\n", ["line 3", "URL"]),
        ("# escape=`\n" + HEAD + "ADD `\n http://127.0.0.1/x /bot/x\n", ["line 4", "URL"]),
        (HEAD + "ADD git@github.com:someone/bot.git /bot/\n", ["line 3", "git"]),
        (HEAD + "ADD github.com/someone/bot /bot/\n", ["line 3", "git"]),
        (HEAD + "ARG U=http://127.0.0.1/x\nADD $U /bot/x\n", ["line 4", "variable"]),
        (HEAD + "ADD --checksum=sha256:00 x.tar /bot/\n", ["line 3", "--checksum"]),
        (HEAD + "COPY --from=other-entrant:1 /bot /bot\n", ["line 3", "--from", "other-entrant:1"]),
        (HEAD + "COPY --from=later /x /y\nFROM ${BOT_BASE} AS later\n", ["line 3", "--from"]),
        (HEAD + "COPY --from=0 /x /y\n", ["line 3", "--from"]),
        (HEAD + "COPY --from=${X} /x /y\n", ["line 3", "--from"]),
        ("FROM other-entrant:1\n", ["line 1", "FROM", "BOT_BASE"]),
        ("FROM arena-bot-base\n", ["line 1", "FROM"]),
        ("ARG OTHER=other-entrant:1\nFROM ${OTHER}\n", ["line 2", "FROM"]),
        ("ARG BOT_BASE\nFROM ${BOT_BASE:+other-entrant}\n", ["line 2", "FROM"]),
        ("ARG BOT_BASE\nFROM ${BOT_BASE}-evil\n", ["line 2", "FROM"]),
        ("ARG BOT_BASE\nFROM ${BOT_BASE##x}\n", ["line 2", "cannot"]),
        ("FROM ${BOT_BASE}\n", ["line 1", "FROM"]),  # not declared: Docker reads it as empty
        ("ARG BOT_BASE\nFROM --platform=linux/arm64 ${BOT_BASE}\n", ["line 2", "--platform"]),
        ("ARG BOT_BASE\nFROM ${BOT_BASE} AS a:b\n", ["line 2", "stage name"]),
        (HEAD + "RUN --mount=type=bind,from=other-entrant:1,target=/o cp -r /o /bot\n", ["line 3", "--mount"]),
        (HEAD + "RUN --network=host true\n", ["line 3", "--network"]),
        (HEAD + "HEALTHCHECK --interval=1ms CMD true\n", ["line 3", "HEALTHCHECK"]),
        (HEAD + "healthcheck NONE\n", ["line 3", "HEALTHCHECK"]),
        (HEAD + "VOLUME /sys/x\n", ["line 3", "VOLUME"]),
        (HEAD + "STOPSIGNAL SIGKILL\n", ["line 3", "STOPSIGNAL"]),
        (HEAD + "ONBUILD ADD http://127.0.0.1/x /x\n", ["line 3", "ONBUILD"]),
        ("# syntax=docker/dockerfile:1\n" + HEAD, ["line 1", "syntax"]),
        ("# frontend=evil\n" + HEAD, ["line 1", "directive"]),
        # Docker 20.10 stops at the unknown directive and keeps \\ as the escape: the ADD would be a line of its own.
        ("# check=skip=all\n# escape=`\n" + HEAD + "RUN echo `\nADD http://127.0.0.1/x /x\n", ["line 1", "directive"]),
        ("# escape=x\n" + HEAD, ["line 1", "escape"]),
        ("# hello\n# syntax=evil/frontend\n" + HEAD, ["line 2", "syntax"]),
        (HEAD + "RUN <<EOF\ncurl http://x\nEOF\n", ["line 3", "heredoc"]),
        (HEAD + "COPY <<EOF /bot/x\nhi\nEOF\n", ["line 3", "heredoc"]),
        (HEAD + "FETCH http://x\n", ["line 3", "FETCH"]),
        ("RUN true\n" + HEAD, ["line 1", "FROM"]),
        ("", ["FROM"]),
        ("# only a comment\n", ["FROM"]),
        (HEAD + 'ADD ["http://x", \n', ["line 3"]),
        (HEAD + "COPY --chown=\"a b\" x /bot/\n", ["line 3"]),
        (HEAD + "COPY\x00 x /bot/\n", ["NUL"]),
    ],
)
def test_refused(text, words):
    _refused(text, *words)


def test_allowed_forms():
    assert check_dockerfile("FROM scratch\nCOPY bot.py /\n").base_args == set()
    two = "ARG BOT_BASE\nARG BASE_IMAGE\nFROM ${BASE_IMAGE} AS Build\nRUN true\nFROM $BOT_BASE\nCOPY --from=build /x /y\nCOPY --from=0 /x /z\n"
    summary = check_dockerfile(two)
    assert summary.base_args == {"BOT_BASE", "BASE_IMAGE"} and summary.stages == ["build", None]
    assert check_dockerfile("ARG BOT_BASE=x\nFROM ${BOT_BASE:-other}\n").base_args == {"BOT_BASE"}
    assert check_dockerfile('ARG BOT_BASE="arena-bot-base"\nFROM ${BOT_BASE}\n').base_args == {"BOT_BASE"}
    assert check_dockerfile("ARG A=1 BOT_BASE\nFROM ${BOT_BASE}${NOTHING}\n").base_args == {"BOT_BASE"}
    assert check_dockerfile(HEAD + "FROM ${BOT_BASE} AS two\nFROM two\nCOPY --from=1 /a /b\n").stages == [None, "two", None]
    assert check_dockerfile(HEAD + "ADD --chown=10001 data.tar /bot/\n# a comment: x=1\n# syntax is a word\n")
    assert check_dockerfile(HEAD + "RUN python3 -c 'print(1 << 3)'\n")


def test_image_config_warnings():
    config = {
        "Healthcheck": {"Test": ["CMD", "true"], "Interval": 1_000_000},
        "Volumes": {"/data": {}, "/cache": {}},
        "StopSignal": "SIGINT",
        "OnBuild": ["RUN true"],
    }
    warnings = image_config_warnings(config)
    assert len(warnings) == 4
    text = "\n".join(warnings)
    for word in ("HEALTHCHECK", "VOLUME /cache, /data", "STOPSIGNAL SIGINT", "ONBUILD"):
        assert word in text, (word, text)
    assert image_config_warnings({}) == [] and image_config_warnings(None) == []
    assert image_config_warnings({"Healthcheck": {"Test": ["NONE"]}, "Volumes": None, "OnBuild": None}) == []
