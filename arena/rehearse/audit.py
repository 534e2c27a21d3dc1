"""After the term: what the stores, the disk, the engine and the samples say, and what needs a human.

The audit reads the ladder's two stores read-only once the server has
stopped.  Its **failures** (the rehearsal's exit status) are a lost or
doubled game, a record not equal to its row, a stored game that changed, an
uncontained hostile upload, and anything left behind (containers with the
ladder's label, the ladder's bot images, ``arena-*`` temporary directories,
processes, files in ``DIR/tmp``).  Its **organiser actions** are what a lecturer would have to
do by hand beyond the restarts: the goal is none.

A term too short for its plan is said so, not failed: a version still in the
build queue at the end that was sent too late to be built (less than
:data:`BUILD_ALLOWANCE_S` plus the build timeout per version still waiting)
is ``unfinished``, neither an uncontained hostile upload nor a stuck version,
and the report's ``term_too_short`` line says how many and how long a term
the plan needs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.rehearse.faults import Struck
from arena.rehearse.monitor import Watched, hash_bytes, row_hash, stored_rows
from arena.rehearse.plan import BUILD_KINDS, REFUSED_KINDS, Plan
from arena.rehearse.tau import kendall_tau
from arena.rehearse.teams import Sent
from arena.rehearse.visitors import Visits

#: Version statuses a term may end in without anyone's help.
SETTLED = ("active", "retired", "suspended", "failed", "disabled")
#: Seconds a version needs beyond its build's timeout (the queue, the validation game) before it settles.
BUILD_ALLOWANCE_S = 60.0
#: The record's team names for side 0 and side 1 (four players; two players: A and B).
SIDES = (("NS", "EW"), ("A", "B"))


@dataclasses.dataclass
class HostileOutcome:
    team: str
    kind: str
    outcome: str  # refused | failed | contained | uncontained
    how: str  # the refusal, the failure's reason, or what the version did


def p95(values: list[float]) -> float | None:
    values = sorted(values)
    return values[min(len(values) - 1, int(0.95 * len(values)))] if values else None


def record_matches_row(record: dict[str, Any], row: dict[str, Any]) -> str | None:
    """Why a game's record differs from its row (None: they agree): id, scores, hands, ending, winner."""
    if record.get("game_id") != row["game_id"]:
        return f"game id {record.get('game_id')!r}"
    result = record.get("result") or {}
    scores = result.get("scores") or {}
    names = next((pair for pair in SIDES if pair[0] in scores), SIDES[0])
    if (scores.get(names[0]), scores.get(names[1])) != (row["score0"], row["score1"]):
        return f"scores {scores} against {row['score0']}:{row['score1']}"
    if result.get("hands") != row["hands"]:
        return f"hands {result.get('hands')} against {row['hands']}"
    if result.get("ending") != row["ending"]:
        return f"ending {result.get('ending')!r} against {row['ending']!r}"
    winner = result.get("winner")
    expected = (
        None if row["winner"] is None else names[0] if row["winner"] == row["side0"] else names[1]
    )
    if winner != expected:
        return f"winner {winner!r} against {row['winner']!r}"
    return None


def _query(path: Path, sql: str) -> list[sqlite3.Row]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        db.row_factory = sqlite3.Row
        return list(db.execute(sql))
    finally:
        db.close()


def left_containers(ladder_id: str, docker_url: str | None = None) -> list[str]:
    """Containers (any state) carrying the ladder's run label, on ``docker_url`` (default: ``DOCKER_HOST``'s engine)."""
    import docker

    client = (
        docker.DockerClient(base_url=docker_url, timeout=60)
        if docker_url
        else docker.from_env(timeout=60)
    )
    try:
        found = client.api.containers(all=True, filters={"label": f"arena.run=ladder-{ladder_id}"})
        return [str((c.get("Names") or [c["Id"][:12]])[0]) for c in found]
    finally:
        client.close()


def left_images(ladder_id: str, docker_url: str | None = None) -> list[str]:
    """The ladder's bot images (tags ``arena-ladder-<id>:...``, no other ladder's) still on the engine."""
    import docker

    repository = f"arena-ladder-{ladder_id}"  # (arena.ladder.versions.builds.image_repository: the audit reads from outside)
    client = docker.DockerClient(base_url=docker_url, timeout=60) if docker_url else docker.from_env(timeout=60)
    try:
        return sorted(t for image in client.images.list(name=repository) for t in image.tags
                      if t.rpartition(":")[0] == repository)  # fmt: skip
    finally:
        client.close()


def left_behind(
    directory: Path, ladder_id: str, sys_tmp: Path, docker_url: str | None, failures: list[str]
) -> dict[str, list[str]]:
    """What the term left after the last stop: the ladder's containers and images, temporary files, processes.

    An engine that cannot be asked is a finding (in ``failures``), not a crash.
    """
    containers: list[str] = []
    images: list[str] = []
    try:
        containers = left_containers(ladder_id, docker_url)
        images = left_images(ladder_id, docker_url)
    except Exception as exc:  # noqa: BLE001 - an engine that cannot be asked is a finding, not a crash
        failures.append(f"could not list containers and images: {exc}")
    tmp = directory / "tmp"
    return {
        "containers": containers,
        "images": images,
        "temp_dirs": sorted(p.name for p in sys_tmp.iterdir()) if sys_tmp.is_dir() else [],
        "tmp_files": sorted(p.name for p in tmp.iterdir()) if tmp.is_dir() else [],
        "processes": left_processes(sys_tmp),
    }


def left_processes(sys_tmp: Path, *, grace: float = 30.0) -> list[str]:
    """Processes of the server's still running ``grace`` seconds after its stop (see :func:`processes_of`).

    A table process finishing its game, or multiprocessing's fork server, ends
    a moment after the server: only what outlives the grace is left behind.
    """
    deadline = time.monotonic() + grace
    while True:
        found = processes_of(sys_tmp)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def processes_of(sys_tmp: Path) -> list[str]:
    """Processes still running with the rehearsal's ``TMPDIR`` or one below it (the server's and its tables')."""
    marker = f"TMPDIR={sys_tmp}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            with contextlib.suppress(OSError):
                if any(
                    v.startswith(marker)
                    for v in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                ):
                    command = (
                        Path(f"/proc/{entry}/cmdline")
                        .read_bytes()
                        .replace(b"\0", b" ")
                        .decode(errors="replace")
                    )
                    found.append(f"{entry}: {command[:120]}")
    return found


def final_standings(directory: Path) -> list[dict[str, Any]]:
    """``arena ladder export --json -``: the standings a lecturer would grade from."""
    done = subprocess.run([sys.executable, "-m", "arena", "ladder", "export", str(directory), "--json", "-"],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"arena ladder export failed: {done.stderr.strip()[-300:]}")
    return list(json.loads(done.stdout)["standings"])


def unfinished_versions(sent: list[Sent], versions: dict[str, sqlite3.Row], seconds: float, build_s: float) -> set[str]:
    """The versions still in the build queue at the term's end that were sent too late to be built."""
    waiting = [s for s in sent if s.entry and versions.get(s.entry) is not None
               and versions[s.entry]["status"] not in SETTLED]  # fmt: skip
    needed = (build_s + BUILD_ALLOWANCE_S) * len(waiting)  # each may wait for the ones before it
    return {str(s.entry) for s in waiting if seconds - s.at < needed}


def term_too_short(unfinished: set[str], seconds: float, build_s: float, uploads: int) -> str | None:
    """The report's line for a term that ended before its uploads were built (None: it did not)."""
    if not unfinished:
        return None
    need = (build_s + BUILD_ALLOWANCE_S) * max(1, uploads) / 60
    return (f"the term ({seconds:.0f} s) ended before {len(unfinished)} upload(s) were built "
            f"({', '.join(sorted(unfinished))}): their outcome is unknown, not a failure; a term for this plan "
            f"needs about {need:.0f} minutes or more (--minutes), or --settle-for to let the builds end")  # fmt: skip


def hostile_outcomes(
    sent: list[Sent], versions: dict[str, sqlite3.Row], problems_of: dict[str, list[str]],
    unfinished: set[str] = frozenset(),  # type: ignore[assignment]
) -> list[HostileOutcome]:
    """How each hostile upload ended: refused at the door, failed its build or validation, or contained
    (``unfinished``: still being built when the term ended, too late to be judged)."""
    outcomes = []
    for s in (s for s in sent if s.upload.hostile):
        kind = s.upload.kind
        if s.status != 201:
            ok = 400 <= s.status < 500 or (
                s.status == 200 and s.detail
            )  # the form page shows the refusal
            outcomes.append(
                HostileOutcome(
                    s.team, kind, "refused" if ok else "uncontained", f"HTTP {s.status}: {s.detail}"
                )
            )
            continue
        version = versions.get(s.entry or "")
        if version is None:
            outcomes.append(
                HostileOutcome(
                    s.team, kind, "uncontained", f"{s.entry}: no such version after the term"
                )
            )
            continue
        status, reason = version["status"], version["reason"] or ""
        if s.entry in unfinished and kind not in REFUSED_KINDS:
            outcomes.append(HostileOutcome(s.team, kind, "unfinished", f"{s.entry} still {status}: the term ended first"))
        elif kind in REFUSED_KINDS:  # the archive should never have made a version
            outcomes.append(
                HostileOutcome(s.team, kind, "uncontained", f"{s.entry} accepted ({status})")
            )
        elif status not in SETTLED:
            outcomes.append(
                HostileOutcome(s.team, kind, "uncontained", f"{s.entry} still {status} at the end")
            )
        elif problems_of.get(s.entry or ""):
            outcomes.append(
                HostileOutcome(s.team, kind, "uncontained", "; ".join(problems_of[s.entry or ""]))
            )
        elif status == "failed":
            outcomes.append(HostileOutcome(s.team, kind, "failed", reason[:200]))
        elif kind in BUILD_KINDS and kind == "build-forever":
            outcomes.append(
                HostileOutcome(
                    s.team,
                    kind,
                    "uncontained",
                    f"{s.entry} built and {status}: the endless build ended",
                )
            )
        else:
            log = version["build_log"] or ""
            outcomes.append(HostileOutcome(s.team, kind, "contained",
                                           f"{s.entry} {status}{': ' + reason[:160] if reason else ''}; build log {len(log)} chars"))  # fmt: skip
    return outcomes


def audit(
    directory: Path,
    plan: Plan,
    sent: list[Sent],
    struck: list[Struck],
    watched: Watched,
    visits: Visits,
    *,
    seconds: float,
    cores: int,
    sys_tmp: Path,
    docker_url: str | None = None,
    build_s: float = 30.0,
) -> dict[str, Any]:
    """The report's figures and findings (a JSON-ready dict; ``failures`` and ``organiser_actions`` lists);
    ``build_s``: the ladder's build timeout (a term too short for its builds is said so)."""
    failures: list[str] = []
    actions: list[str] = []
    results_db, ladder_db = directory / "results.sqlite", directory / "ladder.sqlite"
    ladder_id = str(_query(ladder_db, "SELECT value FROM meta WHERE key='ladder_id'")[0][0])
    rows = stored_rows(directory)
    pairs = _query(results_db, "SELECT seq, first, second, cluster, status, attempts, reason FROM pairs ORDER BY seq")
    games = _games(directory, rows, pairs, watched, failures)
    versions = {
        f"{v['team']}@{v['number']}": v for v in _query(ladder_db, "SELECT * FROM versions")
    }
    unfinished = unfinished_versions(sent, versions, seconds, build_s)
    version_figures = _versions(versions, failures, actions, unfinished)
    forfeited = {(str(r[0]), str(r[1])) for r in _query(results_db, "SELECT game_id, entry FROM forfeits")}
    missed = missed_suspensions(_in_stored_order(results_db, rows), forfeited, versions, suspension_keys(directory))
    version_figures["missed_suspensions"] = missed
    failures += [f"not suspended: {m}" for m in version_figures["missed_suspensions"]]
    outcomes = _uploads(sent, versions, failures, actions, unfinished)
    left = _left(directory, ladder_id, struck, sys_tmp, docker_url, failures, actions)
    truth = {t.name: t.strength for t in plan.teams}
    standings: list[dict[str, Any]] = []
    tau = None
    try:
        standings = final_standings(directory)
        tau = kendall_tau(
            truth, {r["team"]: r["elo"] for r in standings if r.get("elo") is not None}
        )
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        failures.append(str(exc))
    return {
        "format": 1,
        "seed": plan.seed,
        "teams": len(plan.teams),
        "seconds": round(seconds, 1),
        "term_too_short": term_too_short(unfinished, seconds, build_s, len(sent)),
        "cores": cores,
        "games": games,
        "pairs": _pair_figures(pairs, rows, seconds, cores),
        "versions": version_figures,
        "uploads": [
            {"team": s.team, "kind": s.upload.kind, "via": s.upload.via, "at": round(s.at, 1),
             "status": s.status, "entry": s.entry, "detail": s.detail}
            for s in sent
        ],  # fmt: skip
        "hostile": [dataclasses.asdict(o) for o in outcomes],
        "faults": [dataclasses.asdict(s) for s in struck],
        "left_behind": left,
        "build_queue_wait_p95": p95(list(watched.queue_waits.values())),
        "site": _site(visits),
        "peak_memory": max((m for _, m in watched.memory), default=None),
        "peak_disk": max((d for _, d in watched.disk), default=None),
        "tau": tau,
        "tau_rated": sum(1 for r in standings if r.get("elo") is not None),
        "tau_over_time": [{"at": round(a, 1), "tau": t, "rated": n} for a, t, n in watched.tau],
        "games_over_time": [{"at": round(a, 1), "games": g} for a, g in watched.games],
        "memory_over_time": [{"at": round(a, 1), "bytes": m} for a, m in watched.memory],
        "true_order": plan.true_order(),
        "standings": [
            {"rank": r.get("rank"), "entry": r["entry"], "team": r["team"], "elo": r.get("elo"),
             "pairs": r.get("pairs"), "true_strength": truth.get(r["team"])}
            for r in standings
        ],  # fmt: skip
        "failures": failures,
        "organiser_actions": actions,
    }


def _games(
    directory: Path, rows: list[dict[str, Any]], pairs: list[sqlite3.Row], watched: Watched, failures: list[str]
) -> dict[str, Any]:
    """Games stored twice or lost, records unequal to their rows or missing, stored games that changed."""
    tables = Counter((r["cluster"], r["table_no"]) for r in rows)
    doubled = sorted(f"{c} table {t}" for (c, t), n in tables.items() if n > 1)
    failures += [f"game stored twice: {d}" for d in doubled]
    per_cluster = Counter(r["cluster"] for r in rows)
    lost = [f"pair {p['seq']} ({p['cluster']}) done with {per_cluster[p['cluster']]} games" for p in pairs
            if p["status"] == "done" and per_cluster[p["cluster"]] != 2]  # fmt: skip
    failures += [f"game lost: {x}" for x in lost]
    unequal, missing_records = _records(directory, rows)
    failures += [f"record not equal to its row: {x}" for x in unequal]
    failures += [f"record missing: {x}" for x in missing_records]
    changed = _changed(directory, {r["game_id"]: r for r in rows}, watched)
    failures += [f"stored game changed: {x}" for x in changed]
    return {
        "stored": len(rows),
        "doubled": doubled,
        "lost": lost,
        "records_unequal": unequal,
        "records_missing": missing_records,
        "changed_after_stored": changed,
        "checked_for_change": len(watched.first_seen),
    }


def _records(directory: Path, rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The games whose record differs from their row, and those whose record cannot be read."""
    unequal, missing_records = [], []
    for row in rows:
        if not row.get("record"):
            continue
        path = directory / row["record"]
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            missing_records.append(f"{row['game_id']}: {type(exc).__name__}")
            continue
        why = record_matches_row(record, row)
        if why:
            unequal.append(f"{row['game_id']}: {why}")
    return unequal, missing_records


def _changed(directory: Path, by_id: dict[str, dict[str, Any]], watched: Watched) -> list[str]:
    """Games whose row or record changed (or went) since the monitor first saw them stored."""
    changed = []
    for game_id, (first_row, first_record) in watched.first_seen.items():
        row = by_id.get(game_id)
        if row is None:
            changed.append(f"{game_id}: its row is gone")
            continue
        if row_hash(row) != first_row:
            changed.append(f"{game_id}: its row changed")
        if first_record and row.get("record"):
            with contextlib.suppress(OSError):
                if hash_bytes((directory / row["record"]).read_bytes()) != first_record:
                    changed.append(f"{game_id}: its record was rewritten")
    return changed


def _pair_figures(pairs: list[sqlite3.Row], rows: list[dict[str, Any]], seconds: float, cores: int) -> dict[str, Any]:
    """Pairs done, void and left playing, and the pace."""
    hours = max(seconds, 1e-9) / 3600
    done_pairs = sum(1 for p in pairs if p["status"] == "done")
    return {
        "done": done_pairs,
        "void": [
            {"pair": p["seq"], "entries": f"{p['first']} vs {p['second']}", "reason": p["reason"]}
            for p in pairs
            if p["status"] == "void"
        ],
        "left_playing": [p["seq"] for p in pairs if p["status"] == "playing"],
        "per_hour": round(done_pairs / hours, 1),
        "per_hour_per_core": round(done_pairs / hours / max(cores, 1), 1),
        # Hands played at all tables: what scales to a course's longer games (pairs/hour ~ this / (2 x hands a game)).
        "table_hands_per_hour": round(sum(int(r.get("hands") or 0) for r in rows) / hours, 1),
    }


def _in_stored_order(results_db: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` in the order the games were stored: the order the ladder judges a version's last games in
    (pairs end out of order, so the game ids' order is not it)."""
    stored = {str(r[0]): i for i, r in enumerate(_query(results_db, "SELECT game_id FROM games ORDER BY rowid"))}
    return sorted(rows, key=lambda row: stored.get(str(row["game_id"]), 0))


def suspension_keys(directory: Path) -> tuple[int, int, float]:
    """``[ladder]``'s (suspend_after, suspend_window, suspend_share) as the ladder reads them (docs/ladder.md's defaults)."""
    try:
        lad = tomllib.loads((directory / "ladder.toml").read_text()).get("ladder", {})
    except (OSError, tomllib.TOMLDecodeError):
        lad = {}
    return int(lad.get("suspend_after", 4)), int(lad.get("suspend_window", 10)), float(lad.get("suspend_share", 0.5))


def missed_suspensions(
    rows: list[dict[str, Any]],
    forfeited: set[tuple[str, str]],
    versions: Mapping[str, Mapping[str, Any]],
    keys: tuple[int, int, float],
) -> list[str]:
    """Versions still active whose own faults lost the rule's share of their last games (the rule missed them).

    ``rows``: the games, in the order they were stored; ``forfeited``: (game id, entry) charged with a
    forfeit; ``keys``: (suspend_after, suspend_window, suspend_share).
    """
    after, window, share = keys
    recent: dict[str, list[bool]] = {}
    for row in rows:
        if str(row.get("ending") or "").startswith("void"):
            continue
        for side in (row["side0"], row["side1"]):
            recent.setdefault(side, []).append((row["game_id"], side) in forfeited)
    out = []
    for entry, lost in sorted(recent.items()):
        last = lost[-window:]
        status = versions[entry]["status"] if entry in versions else None
        if after and status == "active" and len(last) >= after and sum(last) >= share * len(last):
            out.append(f"{entry} lost {sum(last)} of its last {len(last)} games by its own fault and is still active")
    return out


def _versions(
    versions: dict[str, sqlite3.Row], failures: list[str], actions: list[str], unfinished: set[str]
) -> dict[str, Any]:
    """Versions stuck between statuses (not the ``unfinished``: the term ended first), teams with no active
    version or with two."""
    statuses = Counter(v["status"] for v in versions.values())
    stuck = [f"{e} is {v['status']}" for e, v in versions.items() if v["status"] not in SETTLED and e not in unfinished]
    actions += [f"version stuck: {x}" for x in stuck]
    suspended = [
        {"entry": e, "reason": v["reason"]}
        for e, v in versions.items()
        if v["status"] == "suspended"
    ]
    active_by_team = Counter(v["team"] for v in versions.values() if v["status"] == "active")
    teams_with_versions = {
        v["team"] for v in versions.values() if v["status"] in ("active", "retired", "suspended")
    }
    no_active = sorted(t for t in teams_with_versions if not active_by_team[t])
    actions += [f"team {t} has no active version (a good one was not restored)" for t in no_active]
    doubled_active = sorted(t for t, n in active_by_team.items() if n > 1)
    failures += [f"team {t} has {active_by_team[t]} active versions" for t in doubled_active]
    return {"by_status": dict(statuses), "suspended": suspended, "stuck": stuck}


def _uploads(
    sent: list[Sent], versions: dict[str, sqlite3.Row], failures: list[str], actions: list[str], unfinished: set[str]
) -> list[HostileOutcome]:
    """The hostile uploads' outcomes (one uncontained is a failure); an honest upload refused is an action."""
    outcomes = hostile_outcomes(sent, versions, {}, unfinished)
    failures += [
        f"hostile upload uncontained: {o.team} {o.kind}: {o.how}"
        for o in outcomes
        if o.outcome == "uncontained"
    ]
    honest_lost = [
        f"{s.team} {s.upload.kind}: HTTP {s.status} {s.detail}"
        for s in sent
        if not s.upload.hostile and s.status != 201
    ]
    actions += [f"an honest upload was refused: {x}" for x in honest_lost]
    return outcomes


def _left(
    directory: Path, ladder_id: str, struck: list[Struck], sys_tmp: Path, docker_url: str | None,
    failures: list[str], actions: list[str],
) -> dict[str, list[str]]:
    """What the term left behind (each a failure, and a clean-up for the organiser), and restarts that failed."""
    left = left_behind(directory, ladder_id, sys_tmp, docker_url, failures)
    labels = {"containers": "container left", "images": "image left", "temp_dirs": "temporary file left",
              "tmp_files": "file left in DIR/tmp", "processes": "process left"}  # fmt: skip
    failures += [f"{labels[kind]}: {x}" for kind, found in left.items() for x in found]
    actions += [f"clean up: {x}" for found in left.values() for x in found]
    actions += [
        f"restart after {s.kind} at {s.at:.0f} s failed: {s.error}"
        for s in struck
        if s.restart_seconds is None
    ]
    return left


def _site(visits: Visits) -> dict[str, Any]:
    """The site's latencies, errors and slow clients as the visitors saw them."""
    return {
        "p95": visits.p95(),
        "visits": len(visits.latencies),
        "errors": len(visits.errors),
        "down": visits.down,
        "p95_by_page": {k: visits.p95(k) for k in ("leaderboard", "team", "games", "replay")},
        "slow_client_closed": len(visits.slow_held),
        "slow_client_unclosed": visits.slow_unclosed,
        "slow_client_held_p95": p95(visits.slow_held),
    }


__all__ = ["audit", "hostile_outcomes", "left_images", "kendall_tau", "record_matches_row"]
