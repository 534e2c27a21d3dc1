"""``arena sprt`` with a bot in a sandboxed container against a local process."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from test_sprt_run import FAST, arena, bot

from arena.sandbox.build import build_image
from arena.sandbox.docker import LABEL, MATCH_LABEL

REPO = Path(__file__).resolve().parents[2]
TAG = "arena-sprt-random:test"

pytestmark = pytest.mark.docker


def test_docker_bot_plays_pairs_and_leaves_no_container(tmp_path):
    client = engine_or_skip()
    built = build_image(REPO / "example_bots" / "random", tag=TAG, base_image=BASE_IMAGE, client=client)
    args = [sys.executable, "-m", "arena", "sprt", "--bot", f"docker:{TAG}", "--bot", bot("random"), *FAST,
            "--elo0", "0", "--elo1", "200", "--max-pairs", "1", "--pairs-per-table", "1", "--seed", "d",
            "--out", "out", "--json"]  # fmt: skip
    result = arena(tmp_path, args)
    assert result.returncode in (0, 3, 4), result.stderr
    summary = json.loads(result.stdout)
    assert summary["pairs"] == 1 and summary["new"] == TAG
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as conn:
        rows = conn.execute("SELECT table_no, side0, image0, image1 FROM games ORDER BY table_no").fetchall()
    assert len(rows) == 2
    image_of_new = {r[1]: r[2] for r in rows}[TAG]
    assert image_of_new == built.image_id
    left = [
        c.name
        for c in client.containers.list(all=True, filters={"label": [LABEL]})
        if c.labels.get(MATCH_LABEL, "").startswith(f"sprt-{summary['run_id']}/")
    ]
    assert not left, left
