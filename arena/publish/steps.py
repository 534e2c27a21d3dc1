"""The replay viewer's data: every step of a game, computed by the rules engine.

A record is first checked with :func:`arena_sdk.engine.replay_record`; the game is
then played again decision by decision on a :class:`GameState`, and after each
decision the state (and each seat's :meth:`GameState.view`) is written down as one
*step*.  The viewer's JavaScript only draws these steps: it knows no rule of Spades.

A step is a flat object (keys below).  To keep 10,000 games small, each step
stores only the keys whose value differs from the step before (the first step
stores all of them); a reader rebuilds step *i* by merging steps 0..i in order.

=====  =============================================================================
key    value
=====  =============================================================================
n      hand number
d      dealer (four players) or first player (two players) of the hand
k, m   the decision due next and the seat to make it (``null`` when none)
b, bl  bids per seat (``null``: not bid yet) and blind-nil flags
w      tricks won per seat this hand
t      the trick on the table: ``[[seat, card], ...]`` in play order
tl, tw the trick's leader, and its winner once complete (else ``null``)
sb     spades broken
sc, bg scores and bags per team
h0..   each seat's true hand, a 52-bit card mask in hex
v0..   each seat's own view of its hand: ``"="`` (the true hand), ``null`` (not
       looked at yet: blind nil) or a mask
s0, s1 two players: the discards each seat has seen (mask)
of     two players: ``[seat, card]`` offered in the draw (only that seat sees it)
dc     two players: the discard pile (mask; only the "all" view shows it)
x      two players: cards each seat exchanged (public count)
hr     at a hand's end: the score breakdown per team
a      the decision that led here: ``{"s", "k", "x" (public text; none for a play
       or a bid), "c" (public cards), "v" (the bid), "px"/"pc"/"pdx"/"pd" (text and
       cards only the acting seat knew), "ms", "cpu" (milliseconds), "def" (default
       move), "ans" (what was sent), "dn" (with "def": the seat's decision index),
       "why" (with "def": the referee's reason)}``; ``null`` for the deal and end steps
e      marks at this step: ``[kind, seat or null, text]`` (strike, timeout,
       default, event, voidsuit, forfeit, void)
end    the final result, on the last step only
=====  =============================================================================

Cards are indices 0..51 (suit * 13 + rank, suits C D H S).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena_sdk.engine import (
    CARDS,
    Decision,
    GameState,
    HandResult,
    ReplayReport,
    mask_of,
    replay_record,
    seat_name,
    team_name,
)

FORMAT_VERSION = 1
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


def _hex(mask: int) -> str:
    return format(mask, "x")


def _cards(cards: Any) -> list[int]:
    return sorted(int(c) for c in cards)


class _Timing:
    """The referee's fields of each decision, in play order (empty for version 1)."""

    def __init__(self, record: Mapping[str, Any], *, with_notes: bool = False) -> None:
        self.with_notes = with_notes
        self.entries: list[Mapping[str, Any]] = [
            a for h in record.get("hands", []) for a in h.get("actions", [])
        ]
        self.events: dict[Any, list[Mapping[str, Any]]] = {}
        self.loose: list[Mapping[str, Any]] = []
        for ev in record.get("events", []) or []:
            if not isinstance(ev, Mapping):
                continue
            rid = ev.get("request_id")
            if isinstance(rid, int) and not isinstance(rid, bool):
                self.events.setdefault(rid, []).append(ev)
            else:
                self.loose.append(ev)

    def fields(self, index: int) -> dict[str, Any]:
        entry = self.entries[index] if index < len(self.entries) else {}
        out: dict[str, Any] = {}
        names = (
            ("ms", "ms"), ("cpu_ms", "cpu"), ("default", "def"), ("answer", "ans"),
            ("decision", "dn"), ("reason", "why"),
        )  # fmt: skip
        for src, dst in (*names, ("note", "note")) if self.with_notes else names:
            value = entry.get(src)
            if value is not None and not isinstance(value, (dict, list)):
                out[dst] = value if isinstance(value, (int, float)) else str(value)
        return out

    def events_of(self, index: int) -> list[Mapping[str, Any]]:
        entry = self.entries[index] if index < len(self.entries) else {}
        rid = entry.get("request_id")
        return self.events.pop(rid, []) if isinstance(rid, int) else []


def _public_state(
    state: GameState, prev: dict[str, Any] | None = None, mover: int | None = None
) -> dict[str, Any]:
    """The step for ``state``.  With ``prev`` and ``mover`` (a card played inside a hand),
    only the mover's hand and view are taken again: in the play no other seat's cards,
    nor what any seat may look at, change (this halves the cost of a game)."""
    n = state.players
    out: dict[str, Any] = {
        "n": state.hand_number,
        "d": state.first,
        "k": None if state.decision is None else state.decision.value,
        "m": state.to_move,
        "b": list(state.bids),
        "bl": list(state.blind),
        "w": list(state.tricks_won),
        "t": [[s, int(c)] for s, c in state.current_trick()],
        "tl": state.leader if state.decision is Decision.PLAY else None,
        "tw": None,
        "sb": state.spades_broken,
        "sc": list(state.scores),
        "bg": list(state.bags),
        "hr": None,
        "a": None,
        "e": [],
    }
    for seat in range(n):
        if prev is not None and seat != mover:
            out[f"h{seat}"], out[f"v{seat}"] = prev[f"h{seat}"], prev[f"v{seat}"]
            if n == 2:
                out[f"s{seat}"] = prev[f"s{seat}"]
            continue
        view = state.view(seat)
        true_mask = state.hands[seat]
        out[f"h{seat}"] = _hex(true_mask)
        if view.hand is None:
            out[f"v{seat}"] = None
        else:
            own = mask_of(view.hand)
            out[f"v{seat}"] = "=" if own == true_mask else _hex(own)
        if n == 2:
            out[f"s{seat}"] = _hex(mask_of(view.seen_discards))
            if view.offered_card is not None:
                out["of"] = [seat, int(view.offered_card)]
    if n == 2:
        out.setdefault("of", None if prev is None else prev.get("of"))
        out["dc"] = _hex(mask_of(CARDS[c] for c in state.discards))
        out["x"] = list(state.exchanged)
    return out


def _hand_end_state(before: dict[str, Any], hand: HandResult, n: int) -> dict[str, Any]:
    """The table just after a hand's last card: empty hands, the last trick, the breakdown."""
    last = hand.played[-1]
    out = dict(before)
    out.update(
        k=None,
        m=None,
        b=list(hand.bids),
        bl=list(hand.blind),
        w=list(hand.tricks),
        t=[[(last.leader + i) % n, int(c)] for i, c in enumerate(last.cards)],
        tl=last.leader,
        tw=last.winner,
        sc=[t.score_after for t in hand.teams],
        bg=[t.bags_after for t in hand.teams],
        hr=[_team_breakdown(t, n) for t in hand.teams],
        of=None if n == 2 else before.get("of"),
        e=[],
    )
    for seat in range(n):
        out[f"h{seat}"] = "0"
        out[f"v{seat}"] = "="
    if n == 2:
        out["x"] = list(hand.exchanged)
    else:
        out.pop("of", None)
    return out


def _team_breakdown(score: Any, n: int) -> dict[str, Any]:
    data = score.to_dict()
    for nil in data["nil_results"]:
        nil["seat"] = seat_name(n, nil["seat"])
    return data


def _describe(
    kind: Decision, action: Any, seat: int, before: tuple[list[int], int, int], after: GameState
) -> dict[str, Any]:
    """Public and private text of one decision (private: what only ``seat`` knew).

    ``before`` is the stock, the stock position and the seat's hand before the decision.
    """
    stock, stock_pos, hand_before = before
    out: dict[str, Any] = {"s": seat, "k": kind.value}
    if kind is Decision.PLAY:
        out["c"] = [int(action)]  # the page words plays and bids itself: the commonest steps
    elif kind is Decision.BID:
        out["v"] = action
    elif kind is Decision.BLIND_NIL:
        out["x"] = "bids blind nil" if action else "looks at the cards (no blind nil)"
    elif kind is Decision.DRAW:
        offered, other = int(stock[stock_pos]), int(stock[stock_pos + 1])
        out["x"] = "draws"
        if action:
            out.update(px="keeps", pc=[offered], pdx="and discards the next", pd=[other])
        else:
            out.update(px="discards", pc=[offered], pdx="and takes the next", pd=[other])
    else:  # exchange
        returned = _cards(action)
        drawn = after.hands[seat] & ~hand_before
        out["x"] = f"exchanges {len(returned)} card{'s' if len(returned) != 1 else ''}"
        out.update(px="returns", pc=returned, pdx="and draws", pd=_cards(_indices(drawn)))
    return out


def _indices(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def _shows_out(state: GameState, seat: int, card: int) -> str | None:
    """The suit ``seat`` just showed it has none of (public knowledge), if any."""
    trick = state.trick
    if not trick:
        return None
    led = trick[0] // 13
    return SUIT_NAMES[led] if card // 13 != led else None


def game_steps(record: Any, report: ReplayReport | None = None, *, with_notes: bool = False) -> dict[str, Any]:
    """The viewer's data for one record (checked first: a bad record raises ``RecordError``).

    ``with_notes``: the bots' notes on their decisions go in too (a seat's own:
    for its author's page, or a publication whose organiser asked for them).
    """
    report = report or replay_record(record)
    final = report.state
    rules = final.rules
    n = rules.players
    state = GameState.new(
        rules,
        final.seed,  # type: ignore[arg-type]
        first=final.first_of_game,
        scores=final.start_scores,
        bags=final.start_bags,
        decks=final.deck_log,
    )
    timing = _Timing(record, with_notes=with_notes)
    full: list[dict[str, Any]] = []
    hands: list[dict[str, Any]] = []

    def deal_step() -> None:
        step = _public_state(state)
        hands.append({"n": state.hand_number, "step": len(full), "tricks": []})
        full.append(step)

    deal_step()
    for index, entry in enumerate(final.history):
        seat, kind, action = entry.seat, entry.kind, entry.action
        before = (state.stock, state.stock_pos, state.hands[seat] if state.hands else 0)
        finished = len(state.hand_results)
        void_suit = _shows_out(state, seat, int(action)) if kind is Decision.PLAY else None
        if kind is Decision.PLAY and not state.trick:
            hands[-1]["tricks"].append(len(full))
        state.apply(action)
        hand_over = len(state.hand_results) > finished
        if hand_over:
            step = _hand_end_state(full[-1], state.hand_results[-1], n)
        else:
            in_play = kind is Decision.PLAY and state.decision is Decision.PLAY
            step = _public_state(state, full[-1], seat) if in_play else _public_state(state)
            if kind is Decision.PLAY and not state.trick:
                last = state.tricks[-1]
                step["t"] = [[(last.leader + i) % n, int(c)] for i, c in enumerate(last.cards)]
                step["tl"], step["tw"] = last.leader, last.winner
        act = _describe(kind, action, seat, before, state)
        act.update(timing.fields(index))
        step["a"] = act
        marks = _marks(act, seat, void_suit, timing.events_of(index), n)
        step["e"] = marks
        full.append(step)
        if hand_over and not state.is_over:
            deal_step()
    end = dict(full[-1])
    end.update(a=None, e=_end_marks(record, report, timing, n), hr=None)
    end["end"] = _end_info(record, report, n)
    full.append(end)
    return {
        "v": FORMAT_VERSION,
        "game_id": record.get("game_id"),
        "match_id": record.get("match_id"),
        "players": n,
        "seats": [seat_name(n, s) for s in range(n)],
        "teams": [team_name(n, t) for t in range(2)],
        "names": _names(record, n),
        "rules": rules.to_dict(),
        "ruleset_hash": rules.hash,
        "strikes": _strikes(record, n),
        "hands": hands,
        "steps": _deltas(full),
    }


def _marks(act: Mapping[str, Any], seat: int, void_suit: str | None,
           events: list[Mapping[str, Any]], n: int) -> list[list[Any]]:  # fmt: skip
    marks: list[list[Any]] = []
    default = act.get("def")
    if default:
        kind = "timeout" if default == "timeout" else "strike"
        # The seat's decision index (as `python -m arena_sdk.testing ... --decision K` takes it) and why.
        text = f"decision {act['dn']}: " if isinstance(act.get("dn"), int) else ""
        text += f"default move ({default}"
        text += f": {act['why']})" if act.get("why") else ")"
        if act.get("ans"):
            text += f"; sent {act['ans']}"
        marks.append([kind, seat, text])
    if void_suit:
        marks.append(["voidsuit", seat, f"void in {void_suit}"])
    for ev in events:
        marks.append(["event", _seat_index(ev.get("seat"), n), _event_text(ev)])
    return marks


def _seat_index(name: Any, n: int) -> int | None:
    names = [seat_name(n, s) for s in range(n)]
    return names.index(name) if name in names else None


def _event_text(ev: Mapping[str, Any]) -> str:
    code = str(ev.get("code", "event"))
    detail = ev.get("detail")
    return f"{code}: {detail}" if detail else code


def _end_marks(record: Mapping[str, Any], report: ReplayReport, timing: _Timing,
               n: int) -> list[list[Any]]:  # fmt: skip
    marks = [["event", _seat_index(ev.get("seat"), n), _event_text(ev)] for ev in timing.loose]
    for evs in timing.events.values():  # events whose request matched no decision
        marks += [["event", _seat_index(ev.get("seat"), n), _event_text(ev)] for ev in evs]
    result = record.get("result") if isinstance(record.get("result"), Mapping) else {}
    forfeit = result.get("forfeit")
    if isinstance(forfeit, Mapping):
        text = f"forfeit ({forfeit.get('reason', '?')})"
        if isinstance(forfeit.get("decision"), int):  # lost while asked (issue 26): which decision
            text += f" at the seat's decision {forfeit['decision']}"
        if forfeit.get("detail"):
            text += f": {forfeit['detail']}"
        marks.append(["forfeit", _seat_index(forfeit.get("seat"), n), text])
    void = result.get("void")
    if isinstance(void, Mapping):
        text = f"void game ({void.get('reason', '?')})"
        if void.get("detail"):
            text += f": {void['detail']}"
        marks.append(["void", None, text])
    return marks


def _end_info(record: Mapping[str, Any], report: ReplayReport, n: int) -> dict[str, Any]:
    r = report.result
    return {
        "ending": r.ending,
        "winner": None if r.winner is None else team_name(n, r.winner),
        "scores": list(r.scores),
        "bags": list(r.bags),
        "hands": r.hands,
    }


def _names(record: Mapping[str, Any], n: int) -> list[dict[str, str]]:
    seats = record.get("seats") if isinstance(record.get("seats"), Mapping) else {}
    out = []
    for s in range(n):
        info = seats.get(seat_name(n, s), {})
        info = info if isinstance(info, Mapping) else {}
        out.append({"name": str(info.get("name", "")), "version": str(info.get("version", ""))})
    return out


def _strikes(record: Mapping[str, Any], n: int) -> list[int]:
    strikes = record.get("strikes") if isinstance(record.get("strikes"), Mapping) else {}
    out = []
    for s in range(n):
        v = strikes.get(seat_name(n, s), 0)
        out.append(v if isinstance(v, int) and not isinstance(v, bool) else 0)
    return out


def _deltas(full: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step as the keys that changed since the one before (the first: all keys)."""
    out: list[dict[str, Any]] = []
    prev: dict[str, Any] = {}
    for step in full:
        keys = set(prev) | set(step)
        delta = {k: step.get(k) for k in sorted(keys) if prev.get(k, ...) != step.get(k, ...)}
        out.append(delta)
        prev = step
    return out


def full_steps(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The steps of :func:`game_steps` data merged back into full states (for tests/tools)."""
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    for delta in data["steps"]:
        cur = {**cur, **delta}
        out.append(cur)
    return out
