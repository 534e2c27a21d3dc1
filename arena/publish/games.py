"""The published games: ``games.html`` (every game, grouped by pairing) and a replay
page per game and per duplicate pair under ``games/``.

Replay pages share ``games/replay.js`` and ``games/replay.css``; each page holds only
its own game's steps, and a pair page only frames the two game pages, so 10,000 games
stay 10,000 small files plus one listing.
Records are read from the tournament directory; a game whose record is missing or
does not replay is listed with the reason instead of a link (publishing never stops
for one bad record).  Pages are rebuilt only when their record is newer, so
publishing again after more games only does the new ones.

With ``with_logs`` the bots' logs of each game's table are copied under
``games/logs/`` as ``.txt`` files (text only, capped, never inline HTML) and
linked from the game's replay page; publishing without it removes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.publish.model import GameRow, Standings
from arena.publish.rows import all_names
from arena.publish.steps import game_steps
from arena.publish.templating import asset, render
from arena.ratings import Ratings

GAMES_DIR = "games"
GAMES_PAGE = "games.html"
#: The one script of ``games.html`` (inline, admitted by its hash in the page's CSP).
SORT_SCRIPT = "sort.js"
#: Records larger than this are not turned into pages (a real game is well under 1 MB).
MAX_RECORD_BYTES = 50 * 1024 * 1024
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
#: Where published logs go, under ``games/``.
LOGS_DIR = "logs"
#: The most of one log that is published: its end (where a bot's last words are), this many bytes.
MAX_LOG_BYTES = 1 << 20
#: Per duplicate pair, the digest of its log links when its pages were written (``games/.logs.json``).
LOG_LINKS = ".logs.json"


def file_stem(text: str) -> str:
    """A file name for an id: itself when plain, else a cleaned prefix plus a short hash."""
    if text and not _SAFE.search(text) and len(text) <= 100 and not text.startswith("."):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{_SAFE.sub('_', text)[:60].lstrip('.')}-{digest}"


def game_page(game: GameRow) -> str:
    """The replay page of a game, relative to the output directory."""
    return f"{GAMES_DIR}/{file_stem(game.game_id)}.html"


def pair_page(cluster: str) -> str:
    """The side-by-side page of a duplicate pair, relative to the output directory."""
    return f"{GAMES_DIR}/pair-{file_stem(cluster)}.html"


def pairing_anchor(names: list[str], a: str, b: str) -> str:
    """The ``games.html`` anchor of the games between ``a`` and ``b`` (either order)."""
    i, j = sorted((names.index(a) + 1, names.index(b) + 1))
    return f"vs-{i}-{j}"


def margin_for(game: GameRow, entry: str) -> int:
    """``entry``'s game points minus its opponent's in ``game`` (``entry`` must play in it)."""
    return game.scores_a - game.scores_b if entry == game.entry_a else game.scores_b - game.scores_a


def deal_swing(games: list[GameRow], entry: str) -> int | None:
    """How many points ``entry``'s choices gained over its opponent's on one duplicate deal.

    The deal is played at two tables with the partnerships swapped: A vs B at
    one, B vs A at the other, on the same cards.  The swing for A is (A's points
    minus B's at table 1) plus (A's points minus B's at table 2): the luck of the
    cards cancels, what is left is the play.  ``None`` unless the deal has exactly
    two games, neither void, between the same two entries with the sides swapped.
    """
    if len(games) != 2 or any(g.is_void for g in games):
        return None
    first, second = games
    if (first.entry_a, first.entry_b) != (second.entry_b, second.entry_a):
        return None
    if entry not in (first.entry_a, first.entry_b):
        return None
    return margin_for(first, entry) + margin_for(second, entry)


@dataclass(frozen=True)
class PageStatus:
    """What became of one game's replay page: ``ok``, ``kept`` (up to date) or the failure."""

    game_id: str
    ok: bool
    note: str = ""


def _load(path: Path) -> Any:
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError(f"record larger than {MAX_RECORD_BYTES // (1024 * 1024)} MB")
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _fresh(page: Path, record: Path) -> bool:
    try:
        return page.stat().st_mtime_ns >= record.stat().st_mtime_ns
    except OSError:
        return False


def build_cluster(
    games: list[GameRow], source: str, out: str, anchors: Mapping[str, str], with_notes: bool = False,
    force: bool = False, logs: Mapping[str, list[tuple[str, str]]] | None = None,
) -> list[PageStatus]:
    """Write the replay pages of one duplicate pair (and its side-by-side page).

    All or nothing per pair: when every page is newer than its record the pair is
    kept as it is; otherwise each record is replayed again and the pages rewritten.
    The side-by-side page (and links to it) exists only when both games replay.
    ``logs``: per game, the (who, href from ``games/``) of its published logs.
    """
    source_dir, out_dir = Path(source), Path(out)
    pair_path = out_dir / pair_page(games[0].cluster)
    records = {g.game_id: source_dir / g.record for g in games if g.record}
    pages = {g.game_id: out_dir / game_page(g) for g in games}
    if not force and len(records) == len(games) and all(
        _fresh(pages[gid], rec) and (len(games) != 2 or _fresh(pair_path, rec))
        for gid, rec in records.items()
    ):
        return [PageStatus(g.game_id, True, "kept") for g in games]
    statuses: list[PageStatus] = []
    data: dict[str, dict[str, Any]] = {}
    for g in games:
        if g.game_id not in records:
            statuses.append(PageStatus(g.game_id, False, "no record"))
            continue
        try:
            data[g.game_id] = game_steps(_load(records[g.game_id]), with_notes=with_notes)
        except Exception as exc:  # noqa: BLE001 - one bad record must not stop publishing
            reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
            statuses.append(PageStatus(g.game_id, False, f"record not shown: {reason}"))
            continue
        statuses.append(PageStatus(g.game_id, True))
    pair_ok = len(games) == 2 and len(data) == 2
    for g in games:
        if g.game_id in data:
            page = render(
                "replay_game.html",
                game=g,
                steps=data[g.game_id],
                listing=GAMES_PAGE,
                anchor=anchors[g.game_id],
                pair_href=pair_page(g.cluster) if pair_ok else None,
                logs=(logs or {}).get(g.game_id, []),
            )
            _write(pages[g.game_id], page)
    if pair_ok:
        a, b = games
        page = render(
            "replay_pair.html",
            left=a,
            right=b,
            swing=deal_swing(games, a.entry_a),
            left_src=Path(game_page(a)).name,
            right_src=Path(game_page(b)).name,
            listing=GAMES_PAGE,
            anchor=anchors[a.game_id],
        )
        _write(pair_path, page)
    else:
        pair_path.unlink(missing_ok=True)
    return statuses


def _build(
    job: tuple[list[GameRow], str, str, dict[str, str], bool, bool, dict[str, list[tuple[str, str]]]],
) -> list[PageStatus]:
    return build_cluster(*job)


def publish_log(source: Path, target: Path) -> None:
    """Copy one bot log as text: its last :data:`MAX_LOG_BYTES`, undecodable bytes replaced, as ``.txt``.

    Skipped when the copy is newer than the log.  The ``.txt`` name makes
    servers and browsers show it as plain text, whatever a bot wrote in it.
    """
    if _fresh(target, source):
        return
    size = source.stat().st_size
    with source.open("rb") as f:
        if size > MAX_LOG_BYTES:
            f.seek(size - MAX_LOG_BYTES)
        data = f.read(MAX_LOG_BYTES)
    text = data.decode("utf-8", errors="replace")
    if size > MAX_LOG_BYTES:
        text = f"[the first {size - MAX_LOG_BYTES} bytes of this log are not published]\n" + text
    target.parent.mkdir(parents=True, exist_ok=True)
    _write(target, text)


def publish_logs(games: Iterable[GameRow], source_dir: Path, out_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """Copy every game's table logs under ``games/logs/``; per game, (who, href from ``games/``).

    A log that cannot be read is left out (publishing never stops for one file).
    """
    links: dict[str, list[tuple[str, str]]] = {}
    copied: dict[str, str | None] = {}
    for g in games:
        for who, relative in g.logs:
            if relative not in copied:
                href = "/".join([LOGS_DIR, *(file_stem(part) for part in Path(relative).parts[1:])]) + ".txt"
                try:
                    publish_log(source_dir / relative, out_dir / GAMES_DIR / href)
                    copied[relative] = href
                except (OSError, ValueError):
                    copied[relative] = None
            href = copied[relative]
            if href is not None:
                links.setdefault(g.game_id, []).append((who, href))
    return links


def _links_digest(cluster: list[GameRow], links: Mapping[str, list[tuple[str, str]]]) -> str:
    text = json.dumps([links.get(g.game_id, []) for g in cluster])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _clusters(games: Iterable[GameRow]) -> list[list[GameRow]]:
    groups: dict[str, list[GameRow]] = {}
    for g in games:
        groups.setdefault(g.cluster, []).append(g)
    def order(g: GameRow) -> tuple[int, str]:
        return (g.table if g.table is not None else 0, g.game_id)

    return [sorted(gs, key=order) for gs in groups.values()]


def write_games(
    standings: Standings,
    ratings: Ratings,
    out_dir: Path,
    source_dir: Path,
    *,
    workers: int | None = None,
    with_notes: bool = False,
    with_logs: bool = False,
) -> dict[str, Any]:
    """Write ``games.html`` and ``games/`` for every game; returns counts and the page path.

    ``with_notes``: the replay pages show the bots' notes on their decisions
    (a seat's own: off unless the organiser asks).  ``with_logs``: the bots'
    logs are published too and linked from each game's page (off unless the
    organiser asks: logs can hold anything).  Pages published the other way
    are all rebuilt, so no note or log outlives a publication without them.
    """
    out_dir = Path(out_dir)
    (out_dir / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    for name in ("replay.js", "replay.css"):
        _write(out_dir / GAMES_DIR / name, asset(name))
    names = all_names(standings, ratings)
    anchors = {g.game_id: pairing_anchor(names, g.entry_a, g.entry_b) for g in standings.games}
    clusters = _clusters(standings.games)
    workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    statuses: dict[str, PageStatus] = {}
    marker = out_dir / GAMES_DIR / ".notes"
    wanted = ("with notes" if with_notes else "without notes") + ("; with logs" if with_logs else "")
    force = not marker.is_file() or marker.read_text() != wanted
    links_file = out_dir / GAMES_DIR / LOG_LINKS
    if with_logs:
        links = publish_logs(standings.games, Path(source_dir), out_dir)
        try:
            written = {} if force else json.loads(links_file.read_text())
        except (OSError, ValueError):
            written = {}
    else:
        links, written = {}, {}
        shutil.rmtree(out_dir / GAMES_DIR / LOGS_DIR, ignore_errors=True)
        links_file.unlink(missing_ok=True)
    digests = {c[0].cluster: _links_digest(c, links) for c in clusters} if with_logs else {}
    jobs = [
        (
            cluster, str(source_dir), str(out_dir), {g.game_id: anchors[g.game_id] for g in cluster}, with_notes,
            # A pair whose log links changed (its table's logs came since) is written again.
            force or (with_logs and written.get(cluster[0].cluster) != digests[cluster[0].cluster]),
            {g.game_id: links[g.game_id] for g in cluster if g.game_id in links},
        )
        for cluster in clusters
    ]
    if workers > 1 and len(clusters) > 8:
        with ProcessPoolExecutor(workers) as pool:
            for chunk in pool.map(_build, jobs, chunksize=16):
                statuses.update((s.game_id, s) for s in chunk)
    else:
        for job in jobs:
            statuses.update((s.game_id, s) for s in _build(job))
    page = out_dir / GAMES_PAGE
    _write(page, games_html(standings, names, statuses, anchors))
    _write(marker, wanted)
    if with_logs:
        _write(links_file, json.dumps(digests, sort_keys=True))
    return {
        "page": page,
        "replays": sum(1 for s in statuses.values() if s.ok),
        "missing": sum(1 for s in statuses.values() if not s.ok),
    }


@dataclass(frozen=True)
class ListedGame:
    """A row of ``games.html``: the game, its page (None: not shown, ``note`` says why),
    the side-by-side page of its deal (None unless both games of the deal have pages) and
    the deal's swing."""

    game: GameRow
    page: str | None
    note: str
    pair: str | None
    swing: int | None = None
    """The swing of the game's deal for the pairing's first entry (see :func:`deal_swing`)."""


@dataclass(frozen=True)
class Pairing:
    """A section of ``games.html``: the games between two entries, anchored ``#vs-I-J``."""

    anchor: str
    first: str
    second: str
    games: list[ListedGame]


def games_html(
    standings: Standings,
    names: list[str],
    statuses: Mapping[str, PageStatus],
    anchors: Mapping[str, str],
) -> str:
    """``games.html``: one section per pairing (``#vs-I-J``), one row per game
    (``tr[data-game]``) with pairing, deal, table, ending, score and its links."""
    shown: dict[str, int] = {}  # per deal: how many of its games have a page
    deals: dict[str, list[GameRow]] = {}
    for g in standings.games:
        st = statuses.get(g.game_id)
        shown[g.cluster] = shown.get(g.cluster, 0) + (1 if st and st.ok else 9)
        deals.setdefault(g.cluster, []).append(g)
    by_pairing: dict[str, list[ListedGame]] = {}
    for g in standings.games:
        st = statuses.get(g.game_id)
        i, _ = _anchor_numbers(anchors[g.game_id])
        by_pairing.setdefault(anchors[g.game_id], []).append(
            ListedGame(
                g,
                game_page(g) if st and st.ok else None,
                st.note if st else "no record",
                pair_page(g.cluster) if shown.get(g.cluster) == 2 else None,
                deal_swing(deals[g.cluster], names[i - 1]),
            )
        )
    pairings = []
    for anchor in sorted(by_pairing, key=_anchor_numbers):
        i, j = _anchor_numbers(anchor)
        pairings.append(Pairing(anchor, names[i - 1], names[j - 1], by_pairing[anchor]))
    return render("games.html", standings=standings, pairings=pairings, sort_script=SORT_SCRIPT)


def _anchor_numbers(anchor: str) -> tuple[int, int]:
    """The entry numbers in a pairing anchor ``vs-I-J``."""
    i, j = (int(x) for x in anchor.split("-")[1:])
    return i, j
