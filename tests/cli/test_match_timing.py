"""`arena match run` shows each bot's time per decision (issue 16 item 5): wall, CPU, the referee's share.

A bot that burns CPU and one that sleeps take the same wall time per
decision; only the CPU column tells them apart, which is what an author needs
to tell "my bot was slow" from "the machine was busy".
"""

from __future__ import annotations

import json
import sys

BURN_S = 0.04

BOT = """\
import time
from arena_sdk import Bot, run

class Timed(Bot):
    name = {name!r}

    def wait(self):
        if {burn}:  # burn a known amount of CPU in this process
            until = time.process_time() + {seconds}
            while time.process_time() < until:
                pass
        else:  # the same wall time without the CPU
            time.sleep({seconds})

    def bid(self, view):
        self.wait()
        return 3

    def play(self, view):
        self.wait()
        return view.legal_cards()[0]

run(Timed())
"""


def _row(stdout: str, name: str) -> list[str]:
    """The cells of ``name``'s row in the "time per decision" table."""
    table = stdout[stdout.index("time per decision") :]
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row for {name} in:\n{table}")


def _mean_p50(cell: str) -> tuple[float, float]:
    mean, p50 = cell.split()[0].split("/")
    return float(mean), float(p50)


def test_match_summary_shows_wall_cpu_and_referee_time_per_bot(run_cli, tmp_path):
    for name, burn in (("burner", True), ("sleeper", False)):
        (tmp_path / f"{name}.py").write_text(BOT.format(name=name, burn=burn, seconds=BURN_S))
    result = run_cli(
        "match", "run", "--set", "max_hands=1", "--games", "1", "--out", "m",
        "--bot", f"cmd:{sys.executable} {tmp_path / 'burner.py'}",
        "--bot", f"cmd:{sys.executable} {tmp_path / 'sleeper.py'}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "wall ms" in result.stdout and "CPU ms" in result.stdout and "referee" in result.stdout
    burner, sleeper = _row(result.stdout, "burner"), _row(result.stdout, "sleeper")
    # columns: bot, decisions, wall mean/p50, wall max, CPU mean/p50, referee µs mean
    timing = json.loads((tmp_path / "m" / "match.json").read_text())["games"][0]["timing"]
    assert int(burner[1]) == timing["N"]["decisions"] + timing["S"]["decisions"]
    assert int(sleeper[1]) == timing["E"]["decisions"] + timing["W"]["decisions"]
    wanted_ms = BURN_S * 1000
    for row in (burner, sleeper):
        wall_mean, wall_p50 = _mean_p50(row[2])
        assert wall_mean >= 0.95 * wanted_ms and wall_p50 >= 0.95 * wanted_ms, row
        assert float(row[3]) >= wall_p50
        assert 0 < float(row[5]) < 100_000, row  # the referee's own share: some µs, far below the bots'
    burner_cpu, sleeper_cpu = _mean_p50(burner[4]), _mean_p50(sleeper[4])
    assert min(burner_cpu) >= 0.95 * wanted_ms, burner  # slow by CPU ...
    assert max(sleeper_cpu) < 0.5 * wanted_ms, sleeper  # ... or slow by the clock only
