"""``arena ratings publish --with-logs``: each game's replay page links its table's bot logs, as text.

A real tournament of local example bots, one of which writes markup to its
log; the site is published through the CLI and read back as HTML (and one
page through a real Chromium).  Logs are off by default, never inlined,
served as ``.txt`` and capped; publishing without them removes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium_run import chromium
from publish_dom import Node, parse

from arena.publish.games import MAX_LOG_BYTES, publish_log
from tournament_support import arena

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"
#: What the loud bot writes to its log: it must never reach a page as markup.
MARK = "<script>alert('from a log')</script>"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament (greedy against a random bot that writes ``MARK`` to its log)."""
    tmp = tmp_path_factory.mktemp("logs")
    loud = tmp / "loud.py"
    loud.write_text(
        "import runpy, sys\n"
        f"print({MARK!r}, file=sys.stderr, flush=True)\n"
        f"sys.argv = [{str(BOTS / 'random' / 'bot.py')!r}]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    (tmp / "t.toml").write_text(
        '[tournament]\nname = "logs"\nseed = "logs"\ndeals_per_pairing = 1\nconcurrency = 2\noutput = "out"\n\n'
        '[rules]\npreset = "pagat"\nset = { max_hands = 2 }\n\n'
        f'[[entry]]\nname = "greedy"\nbot = "cmd:python {BOTS / "greedy" / "bot.py"}"\n\n'
        f'[[entry]]\nname = "loud"\nbot = "cmd:python {loud}"\n'
    )
    result = arena(tmp, "tournament", "run", "t.toml", "--no-show")
    assert result.returncode == 0, result.stderr
    return tmp


def publish(tmp: Path, *args: str) -> Path:
    result = arena(tmp, "ratings", "publish", "out", "--out", "site", "--json", *args)
    assert result.returncode == 0, result.stderr
    return Path(tmp / json.loads(result.stdout)["games"]).parent


def page(site: Path, game: str) -> Node:
    return parse((site / "games" / f"{game}.html").read_text())


def test_each_replay_page_links_its_tables_logs_as_text(played):
    site = publish(played, "--with-logs")
    for game, table, seats in (
        ("p000-d000-t1", "p000-t1", ["greedy, seat 0", "loud, seat 1", "greedy, seat 2", "loud, seat 3"]),
        ("p000-d000-t2", "p000-t2", ["loud, seat 0", "greedy, seat 1", "loud, seat 2", "greedy, seat 3"]),
    ):
        links = page(site, game).find_all("a", class_="log")
        assert [a.text for a in links] == seats
        for a, who in zip(links, seats, strict=True):
            entry, seat = who.split(", seat ")
            assert a.attrs["href"] == f"logs/{table}/{entry}-seat{seat}.log.txt"
            source = (played / "out" / "logs" / table / f"{entry}-seat{seat}.log").read_text()
            assert (site / "games" / a.attrs["href"]).read_text() == source
    loud_log = (site / "games" / "logs" / "p000-t1" / "loud-seat1.log.txt").read_text()
    assert MARK in loud_log, "the log is published as the bot wrote it, as text"
    for html in site.rglob("*.html"):
        assert "alert(" not in html.read_text(), f"{html} holds a bot's log text"


def test_a_real_browser_finds_the_log_links(played, tmp_path):
    site = publish(played, "--with-logs")
    dom = parse(chromium(tmp_path, "--dump-dom", (site / "games" / "p000-d000-t2.html").as_uri()).stdout)
    links = dom.find_all("a", class_="log")
    assert [a.attrs["href"] for a in links] == [
        "logs/p000-t2/loud-seat0.log.txt", "logs/p000-t2/greedy-seat1.log.txt",
        "logs/p000-t2/loud-seat2.log.txt", "logs/p000-t2/greedy-seat3.log.txt",
    ]  # fmt: skip
    assert not dom.find_all("script", src="logs/p000-t2/loud-seat0.log.txt")


def test_logs_are_off_by_default_and_go_when_published_without_them(played):
    site = publish(played, "--with-logs")
    assert (site / "games" / "logs").is_dir()
    site = publish(played)
    assert not (site / "games" / "logs").exists(), "no log outlives a publication without them"
    for game in ("p000-d000-t1", "p000-d000-t2"):
        assert page(site, game).find_all("a", class_="log") == []
    for html in site.rglob("*"):
        assert "loud-seat" not in html.name


def test_a_long_log_is_cut_to_its_end_and_bad_bytes_are_replaced(tmp_path):
    source = tmp_path / "bot.log"
    head = b"\xff\xfe start " * 1000
    tail = b"last words\n"
    source.write_bytes(head + b"x" * MAX_LOG_BYTES + tail)
    target = tmp_path / "site" / "bot.log.txt"
    publish_log(source, target)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(f"[the first {len(head) + len(tail)} bytes of this log are not published]\n")
    assert text.endswith("x" * 100 + "last words\n")
    assert len(text.encode()) < MAX_LOG_BYTES + 100
    short = tmp_path / "short.log"
    short.write_bytes(b"ok \xff\n")
    publish_log(short, tmp_path / "site" / "short.log.txt")
    assert (tmp_path / "site" / "short.log.txt").read_text(encoding="utf-8") == "ok \ufffd\n"
