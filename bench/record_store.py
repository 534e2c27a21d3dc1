"""The cost of storing a game: its record put in place inside its row's transaction, against the old order.

Old: the record written durably under a fixed temporary name and renamed, then
the row in a transaction of its own.  New (:func:`arena.tables.rows.store_played`):
the record written durably under a name of its own, then renamed inside the
row's transaction.  Both do the same fsyncs; the run alternates them in one
process, on one disk, and prints the new cost as a ratio of the old.

    python bench/record_store.py [--games 300] [--record-kib 40]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from arena.match.output import write_record
from arena.results.store import ResultsStore
from arena.tables.rows import GameSlot, game_row, store_played
from arena.tables.spec import TableGame


def game(game_id: str, size: int) -> TableGame:
    record = {"game_id": game_id, "hands": [{"actions": [{"seat": 0, "card": "SA"}]}] * 1, "padding": "x" * size}
    return TableGame(
        game_id=game_id, ending="target", winner=0, scores=(500, 100), hands=5, forfeit_sides=(), forfeit_reason=None,
        forfeit_detail=None, void=None, strikes=(0, 0), decisions=40, think_seconds=0.1, record=record,
    )  # fmt: skip


def old_way(store: ResultsStore, out: Path, slot: GameSlot, played: TableGame) -> None:
    write_record(out / "records", played, durable=True)  # type: ignore[arg-type]
    store.record_game(game_row(slot, played, ruleset_hash="r", images={}))


def new_way(store: ResultsStore, out: Path, slot: GameSlot, played: TableGame) -> None:
    store_played(store, out, slot, played, ruleset_hash="r", images={})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--record-kib", type=int, default=40, help="size of each record (a 13-hand game's is ~40 KiB)")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="bench-records-", dir=".") as tmp:
        stores = {}
        for name in times:
            (Path(tmp) / name).mkdir()
            stores[name] = ResultsStore(Path(tmp) / name / "results.sqlite")
            stores[name].claim("h", "bench", "r")
        try:
            for n in range(args.games):
                for name, way in (("old", old_way), ("new", new_way))[:: 1 if n % 2 else -1]:  # alternate who goes first
                    gid = f"g{n:05d}"
                    played = game(gid, args.record_kib * 1024)
                    started = time.perf_counter()
                    way(stores[name], Path(tmp) / name, GameSlot(gid, 0, n, 1, f"c{n}", "a", "b", "s"), played)
                    times[name].append(time.perf_counter() - started)
        finally:
            for store in stores.values():
                store.close()
    old, new = (statistics.median(times[k]) * 1000 for k in ("old", "new"))
    print(f"{args.games} games, records of {args.record_kib} KiB: median per stored game "
          f"old {old:.2f} ms, new {new:.2f} ms; ratio new/old {new / old:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
