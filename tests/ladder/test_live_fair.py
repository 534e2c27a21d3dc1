"""Spectator streams shared fairly (issue 46): one client cannot take every live place.

A real site (uvicorn on 127.0.0.1, a ladder directory) with a game on its
live hub; clients are told apart by their address: the second client
connects from 127.0.0.2 (any 127.x address is the loopback).  Before the
fix one anonymous client could hold all 200 places.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from site_support import SyntheticLadder, served

from arena.ladder.games.live import MAX_SPECTATORS_PER_CLIENT, LiveGames
from arena.ladder.games.state import LadderState

pytestmark = pytest.mark.timeout(300)
GAME = "L0000001-t1"


@contextlib.contextmanager
def _site(tmp_path: Path) -> Iterator[tuple[str, LiveGames]]:
    lad = SyntheticLadder(tmp_path / "lad")
    hub = LiveGames(4)
    hub.start(GAME, ("a@1", "b@1"))
    try:
        with served(lad.config, lambda: LadderState(live=hub)) as url:
            yield url, hub
    finally:
        hub.close()
        lad.close()


def _client(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=httpx.Timeout(30, read=60))


def _open(client: httpx.Client, url: str) -> httpx.Response:
    """A stream's response once its headers came (its body is left unread: the place stays taken)."""
    return client.send(client.build_request("GET", f"{url}/live/{GAME}/events"), stream=True)


def test_one_client_holds_only_its_share_of_the_live_places(tmp_path: Path) -> None:
    with _site(tmp_path) as (url, hub), _client("127.0.0.1") as first, _client("127.0.0.2") as second:
        held = [_open(first, url) for _ in range(MAX_SPECTATORS_PER_CLIENT)]
        try:
            assert [r.status_code for r in held] == [200] * MAX_SPECTATORS_PER_CLIENT
            refused = _open(first, url)
            if refused.status_code == 200:  # today's bug: the stream never ends, so it is not read
                held.append(refused)
            assert refused.status_code == 429, "one client took a fifth live place"
            refused.read()
            assert f"already watching with {MAX_SPECTATORS_PER_CLIENT} streams" in refused.text
            assert refused.headers.get("retry-after") == "30"
            other = _open(second, url)  # another visitor still finds a place
            assert other.status_code == 200
            other.close()
            held.pop().close()  # one of the first client's tabs closed: its place comes back
            deadline = time.monotonic() + 60
            while True:
                again = _open(first, url)
                if again.status_code == 200:
                    held.append(again)
                    break
                again.close()
                assert time.monotonic() < deadline, "a closed stream's place never came back"
                time.sleep(0.2)
        finally:
            for response in held:
                response.close()
        deadline = time.monotonic() + 60
        while hub.spectators and time.monotonic() < deadline:  # every place given back once its stream ended
            time.sleep(0.1)
        assert hub.spectators == 0 and not hub._by_client


def test_the_places_are_given_back_once_each(tmp_path: Path) -> None:
    hub = LiveGames(4)
    assert hub.admit("a") is None and hub.admit("a") is None
    hub.leave("a")
    hub.leave("a")
    assert hub.spectators == 0 and not hub._by_client
    for _ in range(MAX_SPECTATORS_PER_CLIENT):
        assert hub.admit("b") is None
    assert "close one first" in (hub.admit("b") or "")
    assert hub.admit("c") is None and hub.spectators == MAX_SPECTATORS_PER_CLIENT + 1
