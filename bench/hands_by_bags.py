"""Contracts set and points per hand by where the bag count stood, from game records.

Run: ``python bench/hands_by_bags.py DIR_OR_FILES... [--near 7] [--json]``.  Reads
the game records (``*.json``, a directory's ``records/`` or the directory itself:
an ``arena sprt --out`` or ``arena tournament run`` folder) and prints, per bot
(by the name its seats joined with), the hands it played, how many of its
contracts were set and its mean points per hand, split by whether its side began
the hand with ``--near`` bags or more, and by the first two hands against the
rest.  The CPU per decision of each bot (the referee's ``cpu_ms``) comes last.

Round 4 used it on the sprt of Hard against the 30 × 30 flat Monte Carlo
reference: Hard 2 was set in 17 of the 35 hands its side began on seven bags or
more (the reference 4 of 19), which a game cut short after two hands never
reaches (docs/builtin-bots.md, *Round 4*).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def record_paths(args: list[str]) -> list[Path]:
    """Every game record named by ``args`` (files, or folders holding ``records/`` or records)."""
    paths: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            folder = path / "records" if (path / "records").is_dir() else path
            paths.extend(sorted(folder.glob("*.json")))
        else:
            paths.append(path)
    return paths


def tally(records: list[dict[str, Any]], near: int) -> dict[str, Any]:
    """Per bot and slice: hands, contracts set, points; and CPU per decision per bot."""
    hands: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    cpu: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for record in records:
        names = {seat: entry["name"] for seat, entry in record["seats"].items()}
        for number, hand in enumerate(record["hands"]):
            for team, result in hand["result"]["teams"].items():
                bot = names[team[0]]  # a side's seats are one bot's in duplicate play
                bag_slice = f"bags >= {near}" if result["bags_before"] >= near else f"bags < {near}"
                for name in ("all", bag_slice, "hands 1-2" if number < 2 else "hands 3+"):
                    row = hands[(bot, name)]
                    row[0] += 1
                    row[1] += bool(result["contract"]) and not result["made"]
                    row[2] += result["points"]
            for action in hand["actions"]:
                if "cpu_ms" in action:
                    spent = cpu[names[action["seat"]]]
                    spent[0] += action["cpu_ms"]
                    spent[1] += 1
    slices = [
        {"bot": bot, "slice": name, "hands": n, "set": s, "points_per_hand": p / n}
        for (bot, name), (n, s, p) in sorted(hands.items())
    ]
    return {"slices": slices, "cpu_ms_per_decision": {bot: t / n for bot, (t, n) in sorted(cpu.items()) if n}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hands_by_bags.py", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="record files, or folders with records (an sprt --out)")
    parser.add_argument("--near", type=int, default=7, help="bags that count as near the threshold (default 7)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    paths = record_paths(args.paths)
    if not paths:
        parser.error("no game records found")
    records = []
    for path in paths:
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            parser.error(f"{path}: {exc}")
    result = tally(records, args.near)
    if args.json:
        print(json.dumps({"games": len(records), **result}))
        return 0
    print(f"{len(records)} games")
    for row in result["slices"]:
        print(f"  {row['bot']:16} {row['slice']:11} hands {row['hands']:4}  set {row['set']:3} "
              f"({row['set'] / row['hands']:5.1%})  points per hand {row['points_per_hand']:+6.1f}")  # fmt: skip
    for bot, ms in result["cpu_ms_per_decision"].items():
        print(f"  {bot}: {ms:.1f} ms CPU per decision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
