"""No message to a seat ever holds another seat's hidden cards (docs/architecture.md section 4).

A full match of SDK random bots (separate processes) with every message the
referee sends recorded per seat (``RemoteSeat.transcript``).  The deal is
rebuilt from the records alone (``deck`` and ``first`` of each hand), not from
the referee's views, and every card in every message is checked against what
the seat may know at that moment: its own cards, and cards already played in
that hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from arena_sdk.engine import parse_seat, seat_name
from arena_sdk.wire import arena_pb2 as pb
from google.protobuf import text_format
from referee_support import (
    CARD_TOKEN,
    EASY,
    arun,
    check_record,
    make_spec,
    python_launcher,
    running_referee,
    write_sdk_bot,
)

from arena.referee.host import host_match
from arena.referee.session import RemoteSeat


def hosted_with_transcripts(
    address: str, spec: Any, bot_dir: Path, log_dir: Path
) -> tuple[Any, list[RemoteSeat]]:
    n = spec.rules.players
    seats = [RemoteSeat(s, spec.match_id) for s in range(n)]
    for seat in seats:
        seat.transcript = []
    launchers = [python_launcher(write_sdk_bot(bot_dir)) for _ in range(n)]

    async def scenario() -> Any:
        async with running_referee(address) as server:
            return await host_match(
                server, spec, launchers, server.addresses[0], log_dir=log_dir, seats=seats
            )

    return arun(scenario(), 60), seats


class Deal:
    """Who may know which card of one hand, rebuilt from the record's deck and first seat."""

    def __init__(self, n: int, hand: dict[str, Any]) -> None:
        self.n = n
        self.deck: list[str] = hand["deck"]
        self.first = parse_seat(n, hand["first"])
        self.actions: list[dict[str, Any]] = hand["actions"]

    def own(self, seat: int, before: int, kind: int | None = None) -> set[str]:
        """The cards ``seat`` may have seen of its own before action ``before`` (plus a DRAW's offer)."""
        if self.n == 4:  # card i goes to seat (dealer + 1 + i) % 4
            return {c for i, c in enumerate(self.deck) if (self.first + 1 + i) % 4 == seat}
        # Two players: stock pair k (cards 2k, 2k+1) is drawn by seat (first + k) % 2; the
        # drawer sees both cards of its pair, and the top one when it is offered.
        drawn = sum(a["kind"] == "draw" for a in self.actions[:before])
        out = {
            self.deck[2 * k + j]
            for k in range(drawn)
            if (self.first + k) % 2 == seat
            for j in (0, 1)
        }
        if kind == pb.DRAW:
            out.add(self.deck[2 * drawn])
        return out

    def anyones(self, seat: int) -> set[str]:
        """Every card that is hidden from ``seat`` at some point: the other seats' cards."""
        if self.n == 4:
            return set(self.deck) - self.own(seat, len(self.actions))
        mine = {
            self.deck[2 * k + j] for k in range(26) if (self.first + k) % 2 == seat for j in (0, 1)
        }
        return set(self.deck) - mine

    def played(self, before: int | None = None) -> list[str]:
        return [a["action"] for a in self.actions[:before] if a["kind"] == "play"]


def check_transcript(
    seat: int, transcript: list[pb.RefereeMessage], records: list[dict[str, Any]], n: int
) -> int:
    """Check every message sent to ``seat``; returns how many requests were checked."""
    where: dict[int, tuple[int, int, int]] = {}
    for g, record in enumerate(records):
        for h, hand in enumerate(record["hands"]):
            for j, action in enumerate(hand["actions"]):
                where[action["request_id"]] = (g, h, j)
    game = -1
    allowed: set[str] = set()
    requests = 0
    hidden_hands = 0
    for message in transcript:
        which = message.WhichOneof("message")
        text = text_format.MessageToString(message)
        if which == "game_start":
            game = message.game_start.game_index
            allowed = set()
        elif which == "request":
            request = message.request
            g, h, j = where[request.request_id]
            assert g == game, "a request of another game"
            deal = Deal(n, records[g]["hands"][h])
            assert deal.actions[j]["seat"] == seat_name(n, seat), "a request sent to the wrong seat"
            view = request.view
            assert view.seat == seat and view.hand_number == h + 1
            own = deal.own(seat, j, request.kind)
            public = deal.played(j)
            allowed = own | set(public)
            hand = set(view.hand)
            if view.hand_hidden:
                assert not hand, "a hidden hand was sent"
                hidden_hands += 1
            assert hand <= own, f"seat {seat} was sent cards it does not hold: {sorted(hand - own)}"
            assert set(view.seen_discards) <= own
            if request.kind == pb.DRAW:
                assert (
                    view.offered_card
                    == deal.deck[2 * sum(a["kind"] == "draw" for a in deal.actions[:j])]
                )
            else:
                assert view.offered_card == ""
            history = [c for t in view.tricks for c in t.cards] + [
                p.card for p in view.current_trick
            ]
            assert history == public, "the view's tricks are not the public history"
            if request.kind == pb.PLAY:
                assert set(request.legal) <= hand
            leaked = set(CARD_TOKEN.findall(text)) & (deal.anyones(seat) - set(public))
            assert not leaked, (
                f"request {request.request_id} to seat {seat} shows hidden cards {sorted(leaked)}"
            )
            requests += 1
        elif which == "hand_end":
            hand_record = records[game]["hands"][message.hand_end.hand_number - 1]
            played = Deal(n, hand_record).played()
            assert [c for t in message.hand_end.tricks for c in t.cards] == played
            allowed |= set(played)
        if which != "request":
            extra = set(CARD_TOKEN.findall(text)) - allowed
            assert not extra, f"a {which} message to seat {seat} shows cards {sorted(extra)}"
    if records and records[0]["ruleset"]["blind_nil"] != "off":
        assert hidden_hands > 0, "the test should see blind nil decisions"
    return requests


def run_and_check(address: str, spec: Any, bot_dir: Path, log_dir: Path) -> None:
    hosted, seats = hosted_with_transcripts(address, spec, bot_dir, log_dir)
    n = spec.rules.players
    records = [check_record(g.record) for g in hosted.outcome.games]
    for record in records:
        assert record["result"]["ending"] in ("max_hands", "target", "floor")
        # The random bots never bid blind nil, so no exchange reshuffles what a seat saw.
        assert all(
            not a["action"]
            for h in record["hands"]
            for a in h["actions"]
            if a["kind"] == "blind_nil"
        )
    for s, seat in enumerate(seats):
        assert seat.transcript is not None
        checked = check_transcript(s, seat.transcript, records, n)
        asked = sum(
            a["seat"] == seat_name(n, s) for r in records for h in r["hands"] for a in h["actions"]
        )
        assert checked == asked > 0
        kinds = [m.WhichOneof("message") for m in seat.transcript]
        assert kinds[0] == "welcome" and kinds[-1] == "match_end"
        assert kinds.count("game_start") == kinds.count("game_end") == len(spec.deal_seeds)


def test_four_players_see_only_their_own_cards(unix_address, bot_dir, log_dir) -> None:
    # wikipedia: blind nil open to all, so views with hidden hands are checked too.
    spec = make_spec(preset="wikipedia", games=2, max_hands=2, tc=EASY, seed="hidden-4")
    run_and_check(unix_address, spec, bot_dir, log_dir)


def test_two_players_see_only_their_own_cards(unix_address, bot_dir, log_dir) -> None:
    spec = make_spec(preset="two-player", games=2, max_hands=2, tc=EASY, seed="hidden-2")
    run_and_check(unix_address, spec, bot_dir, log_dir)


@pytest.mark.parametrize("where", ["seen_discards", "notice"])
def test_the_checker_catches_a_leak(unix_address, bot_dir, log_dir, where) -> None:
    """The check is not vacuous: an opponent's card slipped into a view or a notice is found."""
    spec = make_spec(preset="two-player", games=1, max_hands=1, tc=EASY, seed="hidden-leak")
    hosted, seats = hosted_with_transcripts(unix_address, spec, bot_dir, log_dir)
    records = [check_record(g.record) for g in hosted.outcome.games]
    transcript = list(seats[0].transcript or [])
    check_transcript(0, transcript, records, 2)  # clean as sent
    deal = Deal(2, records[0]["hands"][0])
    secret = min(deal.anyones(0) - set(deal.played()))  # one of B's discards: never public
    i = next(i for i, m in enumerate(transcript) if m.WhichOneof("message") == "request")
    if where == "seen_discards":
        tampered = pb.RefereeMessage()
        tampered.CopyFrom(transcript[i])
        tampered.request.view.seen_discards.append(secret)
        transcript[i] = tampered
    else:
        transcript.insert(
            i + 1, pb.RefereeMessage(notice=pb.Notice(code="info", message=f"B holds {secret}"))
        )
    with pytest.raises(AssertionError):
        check_transcript(0, transcript, records, 2)
