#!/usr/bin/env python
"""What off-turn CPU (issue 36) adds to a decision, against building one request in the same process.

The referee reads no meter for it beyond the reads it already made (at the
answer and at the request): per decision the seat closes the span from those
two readings and opens the next (:class:`arena.referee.session.RemoteSeat`),
and the match loop adds the span and checks the limit
(:meth:`arena.match.loop.SeatStats.add_offturn`, ``_offturn_over``).  This
times those steps (the seat's as the same statements on a plain object: a live
``RemoteSeat`` needs a stream) and, as the baseline, ``request_message`` for a
4-player view, which the referee runs once per decision.  A decision costs the
referee about 500 µs of CPU in ``bench/referee.py`` (``cpu_server_us``).

Run: ``python bench/offturn_cost.py``.
"""

from __future__ import annotations

import timeit
from types import SimpleNamespace

from arena_sdk.engine import GameState, resolve_ruleset
from arena_sdk.protocol import request_message

from arena.match import TimeControl
from arena.match.loop import SeatStats, _offturn_over
from arena.match.seat import SeatReply

N = 200_000


def per_call(fn, number: int) -> float:
    """Seconds per call: the best of five runs (the least disturbed by other work)."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> None:
    stats, tc = SeatStats(), TimeControl()
    reply = SeatReply(offturn_cpu_s=0.0001, offturn_s=0.01)

    def loop_side() -> None:
        stats.add_offturn(reply.offturn_cpu_s, reply.offturn_s)
        _offturn_over(stats, tc)

    seat = SimpleNamespace(_idle_from=(1.0, 0.5), _cpu_start=0.6, _cpu_now=0.7, _offturn=(None, 0.0))

    def seat_side() -> None:  # decide(): close the span; receive(): open the next
        idle, seat._idle_from = seat._idle_from, None
        if idle is not None and idle[1] is not None and seat._cpu_start is not None:
            seat._offturn = (max(0.0, seat._cpu_start - idle[1]), max(0.0, 2.0 - idle[0]))
        else:
            seat._offturn = (None, 0.0)
        seat._idle_from = (2.5, seat._cpu_now if seat._cpu_start is not None else None)

    state = GameState.new(resolve_ruleset("pagat", {}), 1)
    view = state.view(state.to_move)
    added = per_call(loop_side, N) + per_call(seat_side, N)
    baseline = per_call(lambda: request_message(1, view, 1000, 30_000, 31_000), N // 10)
    print(f"off-turn bookkeeping per decision: {added * 1e6:.2f} µs")
    print(f"request_message per decision (baseline): {baseline * 1e6:.1f} µs")
    print(f"ratio: {added / baseline:.3f} (and about {added / 500e-6:.2%} of the referee's ~500 µs CPU a decision)")


if __name__ == "__main__":
    main()
