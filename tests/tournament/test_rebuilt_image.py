"""A rebuilt image under an entry's tag: refused with the way forward, or a new entry version.

A bot image (the random example bot) is built, plays a tournament, is
rebuilt with a changed file under the same tag (a layer on the first build:
seconds, where a full build takes minutes on a loaded engine), and plays on
as ``bot@2`` with ``--accept-rebuilt``; the first version's rows stay as they were.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import build_image
from docker_support import BASE_IMAGE, engine_or_skip, remove_own
from tournament_support import arena

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]  # a bot image build on a shared, loaded engine

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"


@pytest.fixture
def engine() -> Iterator[Any]:
    client = engine_or_skip("rebuilt image tests")
    yield client
    left = remove_own(client)
    client.close()
    assert not left, f"containers left behind: {left}"


def rebuild(client: Any, image: str, tag: str) -> str:
    """``image`` with one file changed, under ``tag``: its new ID."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (("Dockerfile", f"FROM {image}\nCOPY changed.txt /opt/changed.txt\n"), ("changed.txt", "v2\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data.encode())
            tar.addfile(info, io.BytesIO(data.encode()))
    context.seek(0)
    built, _ = client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, network_mode="none")
    return str(built.id)


def rows(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT game_id, side0, side1, image0, image1, deal_seed, finished_at FROM games ORDER BY game_id").fetchall()


def test_a_rebuilt_image_plays_on_as_a_new_entry_version(engine, tmp_path):
    source = tmp_path / "bot"
    shutil.copytree(BOTS / "random", source)
    tag = f"arena-grow-rebuilt:{os.getpid()}"
    built = [build_image(source, tag=tag, base_image=BASE_IMAGE, client=engine).image_id]
    try:
        path = tmp_path / "t.toml"
        path.write_text(
            '[tournament]\nname = "rebuilt"\nseed = "rebuilt"\ndeals_per_pairing = 1\nconcurrency = 2\n'
            'output = "out"\n\n[rules]\npreset = "pagat"\nset = { max_hands = 2 }\n\n'
            f'[[entry]]\nname = "bot"\nbot = "docker:{tag}"\n\n'
            f'[[entry]]\nname = "greedy"\nbot = "cmd:python {BOTS / "greedy" / "bot.py"}"\n'
        )
        first = arena(tmp_path, "tournament", "run", "t.toml", "--json", "--no-show")
        assert first.returncode == 0, first.stderr
        before = rows(tmp_path / "out")
        assert len(before) == 2 and {r[3] for r in before if r[1] == "bot"} == {built[0]}

        built.append(rebuild(engine, built[0], tag))
        assert built[1] != built[0]

        refused = arena(tmp_path, "tournament", "run", "t.toml", "--json", "--no-show")
        assert refused.returncode == 2
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "entry 'bot'" in lines[0] and "--accept-rebuilt" in lines[0], refused.stderr
        assert "bot@2" in lines[0]
        assert rows(tmp_path / "out") == before

        accepted = arena(tmp_path, "tournament", "run", "t.toml", "--json", "--no-show", "--accept-rebuilt")
        assert accepted.returncode == 0, accepted.stderr
        summary = json.loads(accepted.stdout)
        assert (summary["played"], summary["unfinished"]) == (2, []), summary
        assert "plays on as bot@2" in accepted.stderr
        after = rows(tmp_path / "out")
        assert [r for r in after if r in before] == before, "the first version's rows are kept as they were"
        new = [r for r in after if r not in before]
        assert {(r[1], r[2]) for r in new} == {("bot@2", "greedy"), ("greedy", "bot@2")}
        for r in new:
            assert (r[3] if r[1] == "bot@2" else r[4]) == built[1]
        assert {r[5] for r in new} == {r[5] for r in before}, "the new version plays the same deals"

        shown = arena(tmp_path, "ratings", "show", "out", "--json")
        assert sorted(e["name"] for e in json.loads(shown.stdout)["entries"]) == ["bot", "bot@2", "greedy"]

        again = arena(tmp_path, "tournament", "run", "t.toml", "--json", "--no-show")
        assert again.returncode == 0 and json.loads(again.stdout)["played"] == 0, again.stderr
    finally:
        for image in (tag, *built):
            with contextlib.suppress(Exception):
                engine.images.remove(image, force=True)
