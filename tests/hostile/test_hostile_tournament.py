"""The hostile-bot suite: a whole tournament of misbehaving bots next to two honest ones.

Every hostile bot is the same image (``zoo/``: SDK bots in ``bot.py``, raw
gRPC in ``raw.py``), the behaviour chosen per entry with
``env = { ARENA_HOSTILE = "..." }`` in the tournament file.  Each hostile
entry plays only the two honest entries (``opponents``), one deal, duplicate
tables.  The tournament runs through the real CLI (``arena tournament run``)
in a subprocess, with small time controls (0.3 s a move, 1 s bank), while
this process probes the gRPC health service of every table's referee.

Checked afterwards, from the results store, the game records and the seat
logs of the tournament's output:

- every behaviour got its documented outcome (docs/protocol.md): a strike
  and the default move, a refused message, ``forfeit:<reason>`` with its
  reason, disqualification; sandbox abuse is contained and the game goes on;
- the honest pairing's games are exactly those of a run of the same file
  without the hostile entries (deal seeds depend on the two names only);
- the tournament finishes, no container is left, the referees' health checks
  answer throughout.

``ARENA_WRITE_RELIABILITY=1`` writes the table of this run to
``docs/reliability.md``; it is always written to the test's tmp directory.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.sandbox.docker import LABEL, MATCH_LABEL, SOCKET_DIR_IN_CONTAINER
from docker_support import TEST_LABEL, TEST_RUN

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reliability.md"
#: docs/reliability.md from this line on is written by hand and kept when the table is rewritten.
HAND_WRITTEN = "<!-- HAND_WRITTEN: below this line by hand; the generator keeps it -->"
NAME = "hostile-zoo"
BASELINE = "hostile-baseline"
SEED = "hostile-bots"
HONEST = ("random", "heuristic")
MOVE_MS = 300
#: slow-sometimes' second sleep (tests/hostile/zoo/bot.py): past the bank it has left.
LONG_SLEEP_MS = 1150
PIDS = 64
TMPFS_BYTES = 8 << 20
LOG_BYTES = 256 << 10
#: A health check slower than this counts as the referee not answering.
HEALTH_DEADLINE_S = 5.0
#: The hostile tournament must end within this: about two minutes on a quiet machine; 480 s was
#: passed at load 40, so the bound only says it never hangs.
TOURNAMENT_TIMEOUT_S = 900.0

SETTINGS = f"""
[rules]
preset = "pagat"
set = {{ max_hands = 2 }}

[time]
move = {MOVE_MS / 1000}
bank = 1.0
hard_cap = 2.0

[limits]
memory = "128m"
cpus = 0.5
pids = {PIDS}
tmpfs = "{TMPFS_BYTES >> 20}m"
log_bytes = {LOG_BYTES}

[faults]
strikes_per_game = 3
disqualify_min_games = 2
disqualify_share = 0.5
"""


# ---------------------------------------------------------------------- what a run left behind


@dataclasses.dataclass
class Game:
    """One stored game, seen from the hostile entry's seats."""

    row: dict[str, Any]
    record: dict[str, Any] | None
    seats: tuple[str, ...]
    """The hostile entry's seats (N, S or E, W)."""
    logs: list[str]

    @property
    def ending(self) -> str:
        return str(self.row["ending"])

    @property
    def played_out(self) -> bool:
        return self.ending in ("target", "floor", "max_hands")

    @property
    def strikes(self) -> int:
        return int(self.row["strikes0"] if self.row["side0"] == self.hostile else self.row["strikes1"])

    @property
    def hostile(self) -> str:
        return self.row["side1"] if self.row["side0"] in HONEST else self.row["side0"]

    def events(self, code: str) -> list[dict[str, Any]]:
        if self.record is None:
            return []
        return [e for e in self.record["events"] if e["seat"] in self.seats and e["code"] == code]

    def actions(self, seat: str | None = None) -> list[dict[str, Any]]:
        if self.record is None:
            return []
        wanted = (seat,) if seat else self.seats
        return [a for h in self.record["hands"] for a in h["actions"] if a["seat"] in wanted]

    def defaults(self, seat: str | None = None, reason: str | None = None) -> list[dict[str, Any]]:
        return [
            a for a in self.actions(seat) if "default" in a and (reason is None or a["default"] == reason)
        ]

    def reports(self, key: str | None = None) -> list[dict[str, Any]]:
        out = []
        for text in self.logs:
            for line in text.splitlines():
                if line.startswith("HOSTILE "):
                    data = json.loads(line[len("HOSTILE ") :])
                    if key is None or key in data:
                        out.append(data)
        return out


@dataclasses.dataclass
class Entry:
    """A hostile entry's games and fate."""

    name: str
    games: list[Game]
    disqualified: str | None

    @property
    def played(self) -> list[Game]:
        return [g for g in self.games if g.ending != "forfeit:disqualified"]

    @property
    def skipped(self) -> list[Game]:
        return [g for g in self.games if g.ending == "forfeit:disqualified"]


def load_rows(out: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(out / "results.sqlite") as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM games ORDER BY game_id")]


def load_entry(out: Path, name: str, rows: list[dict[str, Any]], disqualified: dict[str, str]) -> Entry:
    games = []
    for row in rows:
        if name not in (row["side0"], row["side1"]):
            continue
        seats = ("N", "S") if row["side0"] == name else ("E", "W")
        record_path = out / "records" / f"{row['game_id']}.json"
        record = json.loads(record_path.read_text()) if row["record"] and record_path.exists() else None
        pairing, _deal, table = row["game_id"].split("-")
        log_dir = out / "logs" / f"{pairing}-{table}"
        seat_numbers = (0, 2) if seats == ("N", "S") else (1, 3)
        logs = [  # a tournament names its bots' logs <entry>-seat<N>.log
            (log_dir / f"{name}-seat{s}.log").read_text(errors="replace")
            for s in seat_numbers
            if (log_dir / f"{name}-seat{s}.log").exists()
        ]
        games.append(Game(row, record, seats, logs))
    return Entry(name, games, disqualified.get(name))


# ---------------------------------------------------------------------- the cases


Check = Callable[[Entry], tuple[str, bool]]


@dataclasses.dataclass(frozen=True)
class Case:
    behaviour: str
    kind: str
    """``SDK`` or ``raw gRPC``."""
    does: str
    expected: str
    check: Check


def _endings(entry: Entry) -> str:
    counts: dict[str, int] = {}
    for g in entry.games:
        counts[g.ending] = counts.get(g.ending, 0) + 1
    return ", ".join(f"{n}× `{e}`" for e, n in sorted(counts.items()))


def forfeits(reason: str, *details: str) -> Check:
    """Every game it played is forfeited for ``reason`` with one of ``details``; then it is disqualified."""

    def check(entry: Entry) -> tuple[str, bool]:
        played = entry.played
        detail = played[0].row["forfeit_detail"] if played else ""
        ok = (
            len(played) >= 2
            and all(g.ending == f"forfeit:{reason}" and g.row["forfeit_entry"] == entry.name for g in played)
            and all(any(d in str(g.row["forfeit_detail"]) for d in details) for g in played)
            and entry.disqualified is not None
            and all(g.row["forfeit_entry"] == entry.name for g in entry.skipped)
        )
        observed = f"{_endings(entry)}; reason: “{detail}”; disqualified: {entry.disqualified or 'no'}"
        return observed, ok

    return check


def played_out(extra: Callable[[Entry], tuple[str, bool]] | None = None, *, strikes: bool = False) -> Check:
    """Every game is played to its end, not disqualified; ``strikes``: the entry's strikes are allowed."""

    def check(entry: Entry) -> tuple[str, bool]:
        ok = len(entry.games) == 4 and all(g.played_out for g in entry.games) and entry.disqualified is None
        total = sum(g.strikes for g in entry.games)
        if not strikes:
            ok = ok and total == 0
        observed = f"{_endings(entry)}; strikes: {total}"
        if extra is not None:
            more, more_ok = extra(entry)
            observed += f"; {more}"
            ok = ok and more_ok
        return observed, ok

    return check


def slow_sometimes(entry: Entry) -> tuple[str, bool]:
    paid, timeouts, stale = [], 0, 0
    ok = True
    for g in entry.games:
        for seat in g.seats:
            # "ms" leaves out the referee's own stalls ("lag_ms"): on a loaded machine they excuse part of a wait.
            wall = [(a["ms"] + a.get("lag_ms", 0), a) for a in g.actions(seat) if "default" not in a]
            over = [ms for ms, a in wall if ms > MOVE_MS]
            paid.extend(over)
            seat_timeouts = len(g.defaults(seat, "timeout"))
            timeouts += seat_timeouts
            # The second overrun (a 1.15 s sleep) is struck, unless the referee's own stall excused enough of
            # it: then that answer stands, and the record says how long the referee stalled (lag_ms).
            excused = [a for ms, a in wall if ms >= LONG_SLEEP_MS - 50 and a.get("lag_ms")]
            ok = ok and bool(over) and (seat_timeouts >= 1 or bool(excused))
        stale += len(g.events("stale_answer"))
    ok = ok and stale >= 1
    longest = max(paid, default=0.0)
    text = (
        f"{len(paid)} decisions over {MOVE_MS} ms paid by the bank (longest {longest:.0f} ms, no strike); "
        f"{timeouts} `timeout` strikes with the default move; {stale} late answers refused (`stale_answer`)"
    )
    return text, ok


def refused(code: str) -> Callable[[Entry], tuple[str, bool]]:
    def check(entry: Entry) -> tuple[str, bool]:
        per_game = [len(g.events(code)) for g in entry.games]
        return f"`{code}` refusals recorded per game: {per_game}", all(n >= 20 for n in per_game)

    return check


def token_guess(entry: Entry) -> tuple[str, bool]:
    guesses = [r for g in entry.games for r in g.reports("guessed_tokens")]
    second = [r["second_join"] for g in entry.games for r in g.reports("second_join")]
    after = [r["after_match"] for g in entry.games for r in g.reports("after_match")]
    recorded = sum(len(g.events("join_refused")) for g in entry.games)
    ok = (
        len(guesses) == 8
        and all(set(r["guessed_tokens"]) == {"UNAUTHENTICATED"} for r in guesses)
        and second and set(second) == {"ALREADY_EXISTS"}
        and after and set(after) == {"UNAUTHENTICATED"}
        and recorded == 8
    )  # fmt: skip
    statuses = "/".join(sorted({s for r in guesses for s in r["guessed_tokens"]}))
    text = (
        f"{sum(len(r['guessed_tokens']) for r in guesses)} guessed tokens: {statuses}; "
        f"own token again while joined: {'/'.join(sorted(set(second)))} "
        f"({recorded}× `join_refused` in the records); "
        f"own token after the match: {'/'.join(sorted(set(after)))}"
    )
    return text, ok


def oversized(entry: Entry) -> tuple[str, bool]:
    observed, ok = forfeits("protocol", "")(entry)
    if not ok:  # the stream reset by the size limit may also read as the bot's
        observed, ok = forfeits("disconnect", "")(entry)
    statuses = sorted(
        {r["stream"] + ": " + r["details"] for g in entry.played for r in g.reports("stream")} - {"OK: "}
    )
    ok = ok and bool(statuses) and all("larger than max" in s for s in statuses)
    return observed + f"; the bot got {' / '.join(statuses) or '?'}", ok


def reconnect(entry: Entry) -> tuple[str, bool]:
    observed, ok = forfeits("disconnect", "")(entry)
    rejoins = [r["rejoin"] for g in entry.played for r in g.reports("rejoin")]
    recorded = sum(len(g.events("join_refused")) for g in entry.played)
    ok = ok and bool(rejoins) and set(rejoins) == {"ALREADY_EXISTS"} and recorded >= 1
    return observed + f"; rejoin: {'/'.join(sorted(set(rejoins)))}, {recorded}× `join_refused` recorded", ok


def illegal(entry: Entry) -> tuple[str, bool]:
    observed, ok = forfeits("illegal", "3 strikes; last: illegal")(entry)
    defaults = [len(g.defaults(reason="illegal")) for g in entry.played]
    return observed + f"; default moves played per game: {defaults}", ok and all(n >= 3 for n in defaults)


def fork_bomb(entry: Entry) -> tuple[str, bool]:
    reports = [r for g in entry.games for r in g.reports("children")]
    ok = len(reports) == 8 and all(
        0 < r["children"] < PIDS and r["error"] == "BlockingIOError:11" for r in reports
    )
    kids = sorted({r["children"] for r in reports})
    threads = sorted({r.get("new_thread", "?") for r in reports})
    return f"fork refused (EAGAIN) after {kids} children (pids limit {PIDS}); a new thread: {threads}", ok


def cpu_spin(entry: Entry) -> tuple[str, bool]:
    times = [a["ms"] for g in entry.games for a in g.actions()]
    return f"its decisions took at most {max(times, default=0):.0f} ms (move time {MOVE_MS} ms)", bool(times)


def fill_tmp(entry: Entry) -> tuple[str, bool]:
    reports = [r for g in entry.games for r in g.reports("written_bytes")]
    ok = len(reports) == 8 and all(
        r["error"] == "OSError:28" and r["written_bytes"] <= TMPFS_BYTES for r in reports
    )
    written = sorted({r["written_bytes"] for r in reports})
    return f"ENOSPC after {[w >> 20 for w in written]} MiB (tmpfs {TMPFS_BYTES >> 20} MiB)", ok


def network(entry: Entry) -> tuple[str, bool]:
    reports = [r for g in entry.games for r in g.reports("interfaces")]
    ok = len(reports) == 8 and all(
        r["interfaces"] == ["lo"] and set(r["connect"].values()) == {"ConnectionRefusedError"}
        for r in reports
    )
    outcomes = sorted({v for r in reports for v in r["connect"].values()})
    ports = ",".join(sorted(reports[0]["connect"], key=int)) if reports else ""
    return f"interfaces {reports[0]['interfaces'] if reports else '?'}; 127.0.0.1:{{{ports}}}: {outcomes}", ok


def host_files(entry: Entry) -> tuple[str, bool]:
    reports = [r for g in entry.games for r in g.reports("arena_dir")]
    expected = {
        "uid": 10001, "arena_dir": ["referee.sock"], "write_arena": "PermissionError:13",
        "write_root": "OSError:30", "write_etc": "OSError:30", "write_bot": "OSError:30",
        "read_shadow": "PermissionError:13", "docker_socket": [], "root_home": "PermissionError:13",
        "foreign_tokens": 0, "bind_mounts": ["/arena"],
    }  # fmt: skip
    ok = len(reports) == 8 and all(all(r.get(k) == v for k, v in expected.items()) for r in reports)
    r = reports[0] if reports else {}
    text = (
        f"uid {r.get('uid')}; /arena holds {r.get('arena_dir')} and refuses writes ({r.get('write_arena')}); "
        f"/, /etc, /bot read-only ({r.get('write_root')}); no Docker socket; "
        f"{r.get('foreign_tokens')} other seats' tokens among {r.get('processes')} visible process(es)"
    )
    return text, ok


def log_spam(entry: Entry) -> tuple[str, bool]:
    # Past its log cap a seat's output is read at 64 KiB/s (issue 24.7): the spammer's writes block on its own clock.
    observed, ok = forfeits("timeout", "3 strikes; last: timeout")(entry)
    sizes = [len(text.encode()) for g in entry.played for text in g.logs]
    notes = [("[arena:" in text and "dropped" in text) for g in entry.played for text in g.logs]
    ok = ok and bool(sizes) and all(s <= LOG_BYTES + 200 for s in sizes) and all(notes)
    return f"{observed}; each saved log ≤ {max(sizes, default=0)} bytes (cap {LOG_BYTES}) with a “dropped” note", ok


CASES = [
    Case("slow-sometimes", "SDK", "sleeps 0.6 s at its 3rd decision of a game, 1.15 s at its 8th",
         "the first overrun is paid from the bank (no strike); the second is past the bank: `timeout` strike, "
         "default move, its late answer refused (`stale_answer`); games played out",
         played_out(slow_sometimes, strikes=True)),
    Case("slow-always", "SDK", "sleeps 1.5 s before every answer",
         "3 `timeout` strikes: `forfeit:timeout`; disqualified", forfeits("timeout", "3 strikes; last: timeout")),
    Case("silent", "raw gRPC", "joins, never answers",
         "`forfeit:timeout`; disqualified", forfeits("timeout", "3 strikes; last: timeout")),
    Case("twice", "raw gRPC", "sends every answer twice",
         "the second copy refused (`stale_answer`), recorded, no strike; games played out",
         played_out(refused("stale_answer"))),
    Case("out-of-turn", "raw gRPC", "before each answer, answers a request id never sent to it",
         "refused (`out_of_turn`), recorded, no strike; games played out", played_out(refused("out_of_turn"))),
    Case("foreign-request", "raw gRPC",
         "at its first card also answers `request_id - 1`: the request of the seat that moved before it",
         "`forfeit:protocol` (answered another seat's request); disqualified",
         forfeits("protocol", "which was sent to seat")),
    Case("token-guess", "raw gRPC",
         "joins with 4 guessed tokens (3 random, 1 its own with the end changed), joins a second time with its "
         "own token while playing, and again after the match",
         "`UNAUTHENTICATED` for guesses and for the dead token, `ALREADY_EXISTS` (recorded `join_refused`) for "
         "the second join; its games played out normally", played_out(token_guess)),
    Case("garbage", "raw gRPC", "sends bytes that are no protobuf message instead of an answer",
         "stream ended: `forfeit:protocol` (unreadable message); disqualified",
         forfeits("protocol", "unreadable message")),
    Case("oversized", "raw gRPC", "answers with a 100 KiB message (limit 64 KiB)",
         "the size limit ends the stream: `forfeit:protocol` or `forfeit:disconnect`; disqualified", oversized),
    Case("flood", "raw gRPC", "sends 5000 answers to ids never sent, as fast as it can",
         "more than 50 refused messages in a game: `forfeit:protocol`; disqualified",
         forfeits("protocol", "more than 50 refused messages")),
    Case("reconnect", "raw gRPC", "drops its stream after 5 answers (process alive) and joins again",
         "`forfeit:disconnect`; the second join refused `ALREADY_EXISTS` and recorded; disqualified", reconnect),
    Case("illegal", "raw gRPC", "plays a card it may not play, every time",
         "3 `illegal` strikes, each replaced by the default move: `forfeit:illegal`; disqualified", illegal),
    Case("crash", "SDK", "exits with status 3 at its 6th decision (mid-hand)",
         "`forfeit:crash` (exited with code 3); disqualified", forfeits("crash", "exited with code 3")),
    Case("exit0", "SDK", "exits 0 at once, before joining",
         "`forfeit:crash` (exited before joining); disqualified", forfeits("crash", "exited before joining")),
    Case("memory-bomb", "SDK", "allocates and touches memory without end at its 2nd decision",
         "killed by the memory limit (128 MiB): `forfeit:crash` “killed: out of memory”; disqualified",
         forfeits("crash", "killed: out of memory")),
    Case("fork-bomb", "SDK", "at its 2nd decision starts a process that forks sleeping children until refused, "
         "and keeps them", "contained by the pids limit; the bot plays on; games played out", played_out(fork_bomb)),
    Case("cpu-spin", "SDK", "a thread spinning on the CPU from start to end while it answers",
         "contained by the CPU quota (0.5 CPU); games played out", played_out(cpu_spin, strikes=True)),
    Case("fill-tmp", "SDK", "at its 2nd decision writes /tmp full", "ENOSPC at the tmpfs size; games played out",
         played_out(fill_tmp)),
    Case("network", "SDK", "lists its network interfaces; connects to 127.0.0.1 ports 22, 80, 443, 2375, 2376, "
         "50051 (never any other address)", "only `lo`; every connection refused; games played out",
         played_out(network)),
    Case("host-files", "SDK", "looks for host files: /arena, the Docker socket, /etc/shadow, /root, other "
         "processes' tokens; writes outside /tmp", "nothing of the host but the referee's socket; writes "
         "refused; games played out", played_out(host_files)),
    Case("log-spam", "SDK", "writes 256 KiB to stdout (and more to stderr) at every decision, ~7 MiB a game",
         f"the saved log is cut at `log_bytes` ({LOG_BYTES >> 10} KiB) with a note; past the cap its output is "
         "read at 64 KiB/s, its writes block: `forfeit:timeout`; disqualified", log_spam),
]  # fmt: skip


# ---------------------------------------------------------------------- the tournament files


def tournament_file(name: str, tags: dict[str, str], *, hostile: bool) -> str:
    """The tournament file; the baseline is the same without the hostile entries."""
    lines = [
        "[tournament]",
        f'name = "{name}"',
        f'seed = "{SEED}"',
        "deals_per_pairing = 1",
        "concurrency = 2",
        'output = "out"',
        "start_timeout = 20",
        SETTINGS,
        f'[[entry]]\nname = "random"\nbot = "docker:{tags["random"]}"\n',
        f'[[entry]]\nname = "heuristic"\nbot = "docker:{tags["heuristic"]}"\n',
    ]
    if hostile:
        for case in CASES:
            lines.append(
                f'[[entry]]\nname = "{case.behaviour}"\nbot = "docker:{tags["zoo"]}"\n'
                f'env = {{ ARENA_HOSTILE = "{case.behaviour}" }}\nopponents = ["random", "heuristic"]\n'
            )
    return "\n".join(lines)


def run_tournament(directory: Path, text: str, timeout: float) -> tuple[dict[str, Any], float]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "t.toml").write_text(text)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", "t.toml", "--json", "--no-show"],
        cwd=directory, capture_output=True, text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), took


# ---------------------------------------------------------------------- the health probe


class HealthProbe(threading.Thread):
    """Checks the gRPC health service of every running table's referee, over and over.

    The tables' referees live in the tournament process; their sockets are in
    the socket directories mounted into this tournament's containers (found
    through the containers' labels and mounts).  A check that gets no answer
    within ``HEALTH_DEADLINE_S`` is a failure; a referee that is already gone
    (its table ended between listing and checking) is not.
    """

    def __init__(self, client: Any, prefix: str) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.prefix = prefix
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.referees: set[str] = set()
        self.max_round_s = 0.0

    def sockets(self) -> set[str]:
        found = set()
        for c in self.client.containers.list(sparse=True, filters={"label": [LABEL, f"{TEST_LABEL}={TEST_RUN}"]}):
            if not c.attrs.get("Labels", {}).get(MATCH_LABEL, "").startswith(self.prefix):
                continue
            for mount in c.attrs.get("Mounts", []):
                if mount.get("Destination") == SOCKET_DIR_IN_CONTAINER:
                    found.add(f"{mount['Source']}/referee.sock")
        return found

    def check(self, path: str) -> None:
        with grpc.insecure_channel(f"unix:{path}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            started = time.monotonic()
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=HEALTH_DEADLINE_S)
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    self.failures.append(f"{path}: no answer within {HEALTH_DEADLINE_S} s")
                return  # UNAVAILABLE: that table's referee has stopped
            took = time.monotonic() - started
            if reply.status != health_pb2.HealthCheckResponse.SERVING:
                self.failures.append(f"{path}: {reply.status}")
            self.latencies.append(took)
            self.referees.add(path)

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                for path in self.sockets():
                    if os.path.exists(path):
                        self.check(path)
            except Exception as exc:  # the probe must not die silently
                self.failures.append(f"probe error: {type(exc).__name__}: {exc}")
            self.max_round_s = max(self.max_round_s, time.monotonic() - started)
            self.stop.wait(0.3)

    def summary(self) -> str:
        if not self.latencies:
            return "no check answered"
        lat = sorted(self.latencies)
        p95 = lat[int(0.95 * (len(lat) - 1))]
        return (
            f"{len(lat)} checks of {len(self.referees)} table referees answered SERVING; "
            f"median {statistics.median(lat) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
            f"max {lat[-1] * 1000:.1f} ms; "
            f"{len(self.failures)} without an answer within {HEALTH_DEADLINE_S:g} s"
        )


# ---------------------------------------------------------------------- the test


def comparable(row: dict[str, Any], out: Path) -> tuple[Any, ...]:
    """What must not change in an honest game: the result and every decision."""
    record = json.loads((out / row["record"]).read_text())
    moves = [
        (a["seat"], a["kind"], a["action"], a.get("default")) for h in record["hands"] for a in h["actions"]
    ]
    keys = ("game_id", "side0", "side1", "deal_seed", "ending", "winner", "score0", "score1", "hands",
            "strikes0", "strikes1", "decisions")  # fmt: skip
    return tuple(row[k] for k in keys) + (tuple(moves), json.dumps(record["result"], sort_keys=True))


def ours(client: Any) -> list[str]:
    """Containers of these tournaments still on the engine (`docker ps -a --filter label=arena.managed`)."""
    return [
        c.name
        for c in client.containers.list(all=True, sparse=True, filters={"label": [LABEL, f"{TEST_LABEL}={TEST_RUN}"]})
        if c.attrs.get("Labels", {}).get(MATCH_LABEL, "").startswith((f"{NAME}/", f"{BASELINE}/"))
    ]


@pytest.mark.timeout(1500)
def test_a_tournament_of_hostile_bots(docker, images, tmp_path):
    tags = {"random": images["random"], "heuristic": images["heuristic"], "zoo": images["zoo"]}
    assert not ours(docker), "leftovers of an earlier run"

    base_dir = tmp_path / "baseline"
    base_summary, base_took = run_tournament(base_dir, tournament_file(BASELINE, tags, hostile=False), 180)
    assert base_summary["unfinished"] == [] and base_summary["games"] == 2

    hostile_dir = tmp_path / "hostile"
    probe = HealthProbe(docker, f"{NAME}/")
    probe.start()
    try:
        summary, took = run_tournament(
            hostile_dir, tournament_file(NAME, tags, hostile=True), TOURNAMENT_TIMEOUT_S
        )
    finally:
        probe.stop.set()
        probe.join(timeout=30)
    out = hostile_dir / "out"
    rows = load_rows(out)
    with sqlite3.connect(out / "results.sqlite") as db:
        disqualified = dict(db.execute("SELECT entry, reason FROM disqualified").fetchall())

    table: list[tuple[str, str, str, str, str, bool]] = []
    for case in CASES:
        entry = load_entry(out, case.behaviour, rows, disqualified)
        try:
            observed, ok = case.check(entry)
        except Exception as exc:  # a check that cannot read what it needs fails, with the reason
            observed, ok = f"check failed: {type(exc).__name__}: {exc}; {_endings(entry)}", False
        table.append((case.behaviour, case.kind, case.does, case.expected, observed, ok))

    # Games without a hostile bot: the same as in the run without hostile entries.
    base_out = base_dir / "out"
    honest = [r for r in rows if {r["side0"], r["side1"]} == set(HONEST)]
    expected_honest = [comparable(r, base_out) for r in load_rows(base_out)]
    got_honest = [comparable(r, out) for r in honest]
    same = got_honest == expected_honest and len(got_honest) == 2
    endings = ", ".join(f"{r['game_id']}: {r['ending']} {r['score0']}–{r['score1']}" for r in honest)
    honest_strikes = sum(
        (r["strikes0"] if r["side0"] in HONEST else 0) + (r["strikes1"] if r["side1"] in HONEST else 0)
        for r in rows
    )
    honest_forfeits = [r["game_id"] for r in rows if r["forfeit_entry"] in HONEST]
    left = ours(docker)
    expected_total = 2 + 4 * len(CASES)
    forfeiting = {c.behaviour for c in CASES if "disqualified" in c.expected}
    checks = [
        ("honest pairing", "random vs heuristic, both tables",
         "the same results and every decision the same as in a run of the same file without the hostile entries",
         f"{endings}; {'identical' if same else 'DIFFERENT'} to the baseline run", same),
        ("honest seats", "random and heuristic next to every hostile bot",
         "no strike and no forfeit charged to an honest seat",
         f"{honest_strikes} strikes, {len(honest_forfeits)} forfeits", honest_strikes == 0 and not honest_forfeits),
        ("disqualification", f"{len(forfeiting)} entries that forfeit every game",
         "disqualified after 2 forfeited games (share 0.5); their other games stored as `forfeit:disqualified`",
         f"{len(disqualified)} disqualified: {', '.join(sorted(disqualified))}", set(disqualified) == forfeiting),
        ("tournament", f"{len(CASES) + 2} entries, {expected_total} games",
         "finishes; every game stored with its ending",
         f"{len(rows)} games stored, unfinished {summary['unfinished']}, {took:.0f} s",
         len(rows) == expected_total and summary["unfinished"] == [] and not summary["interrupted"]),
        ("containers", "`docker ps -a --filter label=arena.managed` after the run", "no container of the run left",
         f"{len(left)} left" + (f": {left}" if left else ""), not left),
        ("referee health", "gRPC health checks of the table referees every 0.3 s during the run",
         f"every check answers `SERVING` within {HEALTH_DEADLINE_S:g} s",
         probe.summary(), not probe.failures and len(probe.latencies) >= 20),
    ]  # fmt: skip
    for name, does, expected, observed, ok in checks:
        table.append((name, "platform", does, expected, observed, ok))

    text = reliability_doc(table, took, base_took)
    (tmp_path / "reliability.md").write_text(text)
    if os.environ.get("ARENA_WRITE_RELIABILITY") == "1":
        old = DOC.read_text() if DOC.exists() else ""
        DOC.write_text(text + (old[old.index(HAND_WRITTEN):] if HAND_WRITTEN in old else ""))
    print(text)
    failed = [(row[0], row[4]) for row in table if not row[5]]
    assert not failed, failed
    assert not probe.failures, probe.failures[:5]
    assert took < TOURNAMENT_TIMEOUT_S


def reliability_doc(table: list[tuple[str, str, str, str, str, bool]], took: float, base_took: float) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    passed = sum(1 for row in table if row[5])
    lines = [
        "# Reliability: a tournament of hostile bots",
        "",
        "Written by `tests/hostile/test_hostile_tournament.py` from a real run "
        "(`ARENA_WRITE_RELIABILITY=1 .venv/bin/python -m pytest tests/hostile/test_hostile_tournament.py`); "
        "do not edit this part by hand (the part after the line `HAND_WRITTEN` is kept).",
        "",
        f"Run: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"the hostile tournament took {took:.0f} s, the baseline {base_took:.0f} s. "
        f"**{passed} of {len(table)} checks passed.**",
        "",
        "## How it is run",
        "",
        f"One tournament file (`arena tournament run`, in a subprocess): the two honest example bots "
        f"(`random`, `heuristic`) and {len(CASES)} hostile entries, all from ONE image "
        "(`tests/hostile/zoo/`: SDK bots in `bot.py`, raw gRPC in `raw.py`), the behaviour chosen per entry "
        "with `env = { ARENA_HOSTILE = \"...\" }`. Each hostile entry has `opponents = [\"random\", "
        "\"heuristic\"]`; one deal per pairing, played at two duplicate tables (so each hostile entry plays "
        "four games, two with each of its seats' images at N/S). Pagat rules, `max_hands = 2`; "
        f"{MOVE_MS} ms a move, 1 s bank, 2 s hard cap, 3 strikes forfeit a game; containers: 128 MiB, "
        f"0.5 CPU, {PIDS} pids, {TMPFS_BYTES >> 20} MiB tmpfs, logs cut at {LOG_BYTES >> 10} KiB; "
        "an entry forfeiting more than half of at least 2 games is disqualified; concurrency 2.",
        "",
        "Observed outcomes come from the results store (`results.sqlite`: ending, forfeit reason and "
        "detail, strikes, disqualifications), the game records (`records/*.json`: strikes with the "
        "default move, refused messages as `events`, decision times) and the seats' logs, where a "
        "hostile bot prints what the referee or the sandbox answered it (`HOSTILE {...}` lines).",
        "",
        "## Outcomes",
        "",
        "| behaviour | bot | what it does | expected outcome | observed (this run) | pass |",
        "|---|---|---|---|---|---|",
    ]
    for behaviour, kind, does, expected, observed, ok in table:
        lines.append(
            f"| `{behaviour}` | {kind} | {cell(does)} | {cell(expected)} | {cell(observed)} | "
            f"{'yes' if ok else '**NO**'} |"
        )
    lines += [
        "",
        "## Notes",
        "",
        "- **Another seat's request.** Request ids count up through a match and consecutive decisions "
        "belong to different seats, so `request_id - 1` is always the request just sent to another seat: "
        "the bot needs no cooperating partner (containers share nothing but the referee's socket, and "
        "the socket directory is not writable for them).",
        "- **Another seat's token, an earlier match's token.** A bot cannot learn another seat's token: "
        "each container sees only its own processes (`host-files` finds no other token) and tokens are "
        "192 random bits, so the suite guesses (refused), reuses its own token while joined (refused, "
        "recorded) and after its match ended (refused: the token died with the match). Nothing survives "
        "from one match to the next inside the sandbox (a fresh container and tmpfs per table).",
        "- **Network.** Containers run with networking disabled (no endpoint on any Docker network): the only interface is `lo`; the `network` "
        "bot connects to 127.0.0.1 only (the container's own loopback) and resolves no names.",
        "- **Referee health.** Each table runs its own referee in the tournament process; the test process "
        "finds their sockets through the mounts of the tournament's running containers and calls the "
        "standard gRPC health service (`grpc.health.v1.Health/Check`) on each, every 0.3 s.",
        "- **Honest games.** A pairing's deal seeds depend on the tournament seed and the two entry names "
        "only, so the honest pairing is dealt the same cards with or without the hostile entries; the "
        "baseline run uses the same file minus the hostile entries.",
        "",
    ]
    return "\n".join(lines)
