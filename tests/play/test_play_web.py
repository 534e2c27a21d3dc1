"""The table's web edge without a browser: origins, hosts, headers, bad messages (a real uvicorn)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from play_support import FAST, arena_play

pytestmark = pytest.mark.timeout(300)


async def _handshake(url: str, origin: str | None) -> dict:
    """Open the table's WebSocket with ``origin``; its first pushed message."""
    headers = {} if origin is None else {"Origin": origin}
    async with connect(url, additional_headers=headers, origin=None, open_timeout=30) as ws:
        return json.loads(await asyncio.wait_for(ws.recv(), 30))


def test_websockets_and_requests_from_other_origins_are_refused(tmp_path: Path) -> None:
    with arena_play(tmp_path, *FAST, "--set", "max_hands=1") as table:
        ws_url = table.url.replace("http://", "ws://") + "/ws"
        for origin in ("http://evil.example", "null", None, table.origin.replace("127.0.0.1", "localhost")):
            with pytest.raises(InvalidStatus) as refused:
                asyncio.run(_handshake(ws_url, origin))
            assert refused.value.response.status_code == 403, origin
        # A wrong key is refused the same way; the table's own origin is let in.
        with pytest.raises(InvalidStatus):
            asyncio.run(_handshake(ws_url.replace("/t/", "/t/x"), table.origin))
        first = asyncio.run(_handshake(ws_url, table.origin))
        assert first["type"] == "state" and first["state"]["seat"] == 2

        page = httpx.get(table.url, timeout=30)
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe" not in csp
        assert page.headers["x-frame-options"] == "DENY"
        # A cross-site form post, a rebinding Host, an unknown table: refused.
        assert httpx.post(table.url, headers={"Origin": "http://evil.example"}, timeout=30).status_code == 403
        assert httpx.get(table.url, headers={"Host": "evil.example"}, timeout=30).status_code == 400
        assert httpx.get(table.origin + "/t/nosuchtable", timeout=30).status_code == 404


def test_unreadable_and_stale_messages_are_answered_with_a_message(tmp_path: Path) -> None:
    async def talk(url: str, origin: str) -> list[str]:
        replies = []
        async with connect(url, additional_headers={"Origin": origin}, origin=None, open_timeout=30) as ws:
            state = None
            while state is None or state["decision"] is None:  # the first bid
                message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                state = message.get("state", state)
            rid = state["decision"]["request_id"]
            for bad in ("not json", json.dumps([1]), json.dumps({"type": "dance"}),
                        json.dumps({"type": "answer", "request_id": rid + 1, "action": "3"}),
                        json.dumps({"type": "answer", "request_id": rid, "action": "14"}),
                        json.dumps({"type": "answer", "request_id": rid, "action": "<b>x</b>" * 2}),
                        "x" * 5000):  # fmt: skip
                await ws.send(bad)
                while (reply := json.loads(await asyncio.wait_for(ws.recv(), 60)))["type"] != "refused":
                    assert reply["type"] == "state"
                replies.append(reply["message"])
        return replies

    with arena_play(tmp_path, *FAST, "--set", "max_hands=1") as table:
        replies = asyncio.run(talk(table.url.replace("http://", "ws://") + "/ws", table.origin))
    assert replies[:3] == ["that message cannot be read", "that message cannot be read", "unknown request"]
    assert "no longer open" in replies[3]
    assert "not a bid you can make" in replies[4] and "not a bid you can make" in replies[5]
    assert replies[6] == "that message is too long"
