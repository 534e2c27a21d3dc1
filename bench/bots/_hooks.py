"""Optional instrumentation for the benchmark bots (bench/referee.py sets the variables).

- ``BENCH_TRACE=path``: time every ``BotDriver.handle`` call of a decision
  request (View.from_request + the bot + answer_to_proto) and write the
  durations (microseconds) as JSON to ``path`` when the process exits.
- ``BENCH_PROFILE=path``: run the whole bot under cProfile and dump the stats
  to ``path`` when the process exits.
- ``BENCH_CPU=path``: write the process CPU time (all threads) spent from the
  first decision request to the last, the number of requests in between, and
  the garbage collections of that span (count, longest pause) as JSON to
  ``path`` when the process exits.

Nothing is patched unless a variable is set.  The headline runs set only
``BENCH_CPU`` (one ``WhichOneof`` and one ``time.process_time()`` per message,
about 1 µs; the raw echo client pays the same).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import time


class CpuMeter:
    """Process CPU time between the first and the last decision request."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.first: float | None = None
        self.last = 0.0
        self.count = 0
        self.gc_pauses: list[float] = []
        self._gc_start = 0.0
        if path:
            atexit.register(self.dump)
            gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self.first is not None:
            self.gc_pauses.append(time.perf_counter() - self._gc_start)

    def tick(self) -> None:
        now = time.process_time()
        if self.first is None:
            self.first = now
        else:
            self.count += 1
        self.last = now

    def dump(self) -> None:
        if self.path and self.first is not None:
            with open(self.path, "w") as f:
                json.dump(
                    {
                        "cpu_s": self.last - self.first,
                        "decisions": self.count,
                        "gc_count": len(self.gc_pauses),
                        "gc_max_s": max(self.gc_pauses, default=0.0),
                    },
                    f,
                )


def install() -> None:
    trace = os.environ.get("BENCH_TRACE")
    profile = os.environ.get("BENCH_PROFILE")
    cpu = os.environ.get("BENCH_CPU")
    if cpu:
        from arena_sdk.bot import BotDriver

        meter = CpuMeter(cpu)
        inner = BotDriver.handle

        def counted(self, message, *args):  # type: ignore[no-untyped-def]
            if message.WhichOneof("message") == "request":
                meter.tick()
            return inner(self, message, *args)

        BotDriver.handle = counted  # type: ignore[method-assign]
    if trace:
        from arena_sdk.bot import BotDriver

        original = BotDriver.handle
        handle_us: list[float] = []
        clock = time.perf_counter

        def handle(self, message, *args):  # type: ignore[no-untyped-def]
            started = clock()
            answer = original(self, message, *args)
            if answer is not None:
                handle_us.append((clock() - started) * 1e6)
            return answer

        BotDriver.handle = handle  # type: ignore[method-assign]

        def dump() -> None:
            with open(trace, "w") as f:
                json.dump({"handle_us": handle_us}, f)

        atexit.register(dump)
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()

        def dump_profile() -> None:
            profiler.disable()
            profiler.dump_stats(profile)

        atexit.register(dump_profile)
