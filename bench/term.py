"""A term on this machine: pairs per hour per core, and what ``[ladder] concurrency`` buys.

Runs ``arena ladder rehearse``'s course (arena.rehearse) twice in this
process, the same seed and teams, with ``concurrency`` 1 and then 2 (each
half of the time given), faults off so the two runs differ only in that
key; prints both runs' figures and their ratio, and writes them as the
markdown table of docs/ladder.md's "Sizing a course" (``--markdown FILE``).

    .venv/bin/python bench/term.py                       # 40 teams, one hour (half an hour each)
    .venv/bin/python bench/term.py --teams 20 --minutes 12 --markdown sizing.md
    .venv/bin/python bench/term.py --report rehearsal.json   # a table from a saved rehearsal

``--report`` reads what ``arena ladder rehearse --json`` printed (any
faults, any concurrency) and makes the same table from it, without running.

A shared machine's figures are its own: the table says the load average
each run saw.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.rehearse.course import Settings, rehearse
from arena.rehearse.plan import make_plan
from arena.sandbox.tree import remove_tree


def one_run(
    teams: int, seconds: float, concurrency: int, seed: int, max_hands: int
) -> dict[str, Any]:
    plan = make_plan(seed, teams, faults=False)
    directory = Path(tempfile.mkdtemp(prefix="bench-term-"))
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    try:
        report = rehearse(
            directory / "ladder",
            plan,
            Settings(seconds=seconds, concurrency=concurrency, max_hands=max_hands),
        )
    finally:
        remove_tree(directory, ignore_errors=True)
    report["load_average"] = round((load_before + os.getloadavg()[0]) / 2, 1)
    report["wall"] = round(time.monotonic() - began, 1)
    return report


def concurrency_of(report: dict[str, Any]) -> int:
    return int(report.get("settings", {}).get("concurrency", 1))


def row(label: str, r: dict[str, Any]) -> str:
    mib = (r["peak_memory"] or 0) / 2**20
    site = r["site"]["p95"]
    wait = r["build_queue_wait_p95"]
    tau = "–" if r["tau"] is None else f"{r['tau']:+.2f}"
    return (
        f"| {label} | {r['seconds'] / 60:.1f} min | {r['pairs']['done']} | {r['pairs']['per_hour']:.0f} | "
        f"{r['pairs']['per_hour_per_core']:.0f} | {'–' if wait is None else f'{wait:.1f} s'} | "
        f"{'–' if site is None else f'{site * 1000:.0f} ms'} | {mib:.0f} MiB | "
        f"{tau} ({r['tau_rated']}) | {r.get('load_average', '–')} | {len(r['failures'])} |"
    )


def markdown(
    teams: int,
    max_hands: int,
    runs: dict[int, dict[str, Any]],
    *,
    faults: str = "faults off",
    source: str = "`bench/term.py`",
) -> str:
    cores = next(iter(runs.values()))["cores"]
    lines = [
        f"{teams} teams, {max_hands} hands a game, {cores} cores (measured by {source}; {faults}):",
        "",
        (
            "| concurrency | term | pairs done | pairs/hour | pairs/hour/core | build wait p95 | site p95 | "
            "peak memory | Kendall τ (rated) | load average | audit failures |"
        ),
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [row(str(c), r) for c, r in sorted(runs.items())]
    if 1 in runs and 2 in runs and runs[1]["pairs"]["per_hour"]:
        ratio = runs[2]["pairs"]["per_hour"] / runs[1]["pairs"]["per_hour"]
        lines += [
            "",
            f"concurrency 2 played {ratio:.2f}× the pairs per hour of concurrency 1 in the same process.",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument(
        "--minutes", type=float, default=None, help="the whole bench's length (instead of --hours)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-hands", type=int, default=3)
    parser.add_argument(
        "--concurrency", default="1,2", help="the runs, each an equal share of the time"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--markdown", type=Path, default=None, help="write the sizing table here")
    parser.add_argument(
        "--report", type=Path, nargs="+", default=None,
        help="make the table from saved `arena ladder rehearse --json` reports instead of running",
    )  # fmt: skip
    args = parser.parse_args()
    if args.report:
        reports = [json.loads(path.read_text()) for path in args.report]
        runs = {concurrency_of(r): r for r in reports}
        kinds = sorted({f["kind"] for r in reports for f in r.get("faults", [])})
        first = reports[0]
        table = markdown(first["teams"], int(first["settings"]["max_hands"]), runs, source="`arena ladder rehearse`",
                         faults=f"faults: {', '.join(kinds)}" if kinds else "faults off")  # fmt: skip
        print(table)
        if args.markdown is not None:
            args.markdown.write_text(table, encoding="utf-8")
        return 0
    levels = [int(c) for c in args.concurrency.split(",")]
    total = args.minutes * 60 if args.minutes is not None else args.hours * 3600
    runs = {}
    for level in levels:
        print(
            f"concurrency {level}: {total / len(levels) / 60:.1f} min, {args.teams} teams ...",
            file=sys.stderr,
            flush=True,
        )
        runs[level] = one_run(args.teams, total / len(levels), level, args.seed, args.max_hands)
    table = markdown(args.teams, args.max_hands, runs)
    if args.json:
        print(json.dumps({str(k): v for k, v in runs.items()}, indent=2, default=str))
    else:
        print(table)
    if args.markdown is not None:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
