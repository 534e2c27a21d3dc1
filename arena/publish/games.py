"""The published games: ``games.html`` (every game, grouped by pairing) and a replay
page per game and per duplicate pair under ``games/``.

Replay pages share ``games/replay.js`` and ``games/replay.css``; each page holds only
its own game's steps, and a pair page only frames the two game pages, so 10,000 games
stay 10,000 small files plus one listing.
Records are read from the tournament directory; a game whose record is missing or
does not replay is listed with the reason instead of a link (publishing never stops
for one bad record).  Pages are rebuilt only when their record is newer, so
publishing again after more games only does the new ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from arena.publish.model import GameRow, Standings
from arena.publish.rows import all_names, fmt_score
from arena.publish.steps import game_steps
from arena.publish.viewer import asset, pair_html, shared_html
from arena.ratings import Ratings

GAMES_DIR = "games"
GAMES_PAGE = "games.html"
#: Records larger than this are not turned into pages (a real game is well under 1 MB).
MAX_RECORD_BYTES = 50 * 1024 * 1024
CSP = "default-src 'none'; style-src 'unsafe-inline'"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _e(text: object) -> str:
    return escape(str(text), quote=True)


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


def _nav(game: GameRow, pair_ok: bool, anchor: str) -> str:
    links = [
        '<a href="../index.html">leaderboard</a>',
        f'<a href="../{GAMES_PAGE}#{_e(anchor)}">games of this pairing</a>',
    ]
    if pair_ok:
        links.append(f'<a href="../{_e(pair_page(game.cluster))}">same deal, both tables</a>')
    where = f"deal {game.deal}, table {game.table}" if game.deal is not None else game.cluster
    return (
        f'<p class="meta">{" · ".join(links)}</p>\n'
        f'<p class="meta"><b>{_e(game.entry_a)}</b> vs <b>{_e(game.entry_b)}</b> · {_e(where)}'
        f" · {_e(game.ending)}</p>"
    )


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
    games: list[GameRow], source: str, out: str, anchors: Mapping[str, str]
) -> list[PageStatus]:
    """Write the replay pages of one duplicate pair (and its side-by-side page).

    All or nothing per pair: when every page is newer than its record the pair is
    kept as it is; otherwise each record is replayed again and the pages rewritten.
    The side-by-side page (and links to it) exists only when both games replay.
    """
    source_dir, out_dir = Path(source), Path(out)
    pair_path = out_dir / pair_page(games[0].cluster)
    records = {g.game_id: source_dir / g.record for g in games if g.record}
    pages = {g.game_id: out_dir / game_page(g) for g in games}
    if len(records) == len(games) and all(
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
            data[g.game_id] = game_steps(_load(records[g.game_id]))
        except Exception as exc:  # noqa: BLE001 - one bad record must not stop publishing
            reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
            statuses.append(PageStatus(g.game_id, False, f"record not shown: {reason}"))
            continue
        statuses.append(PageStatus(g.game_id, True))
    pair_ok = len(games) == 2 and len(data) == 2
    for g in games:
        if g.game_id in data:
            title = f"{g.entry_a} vs {g.entry_b}: {g.game_id}"
            nav = _nav(g, pair_ok, anchors[g.game_id])
            _write(pages[g.game_id], shared_html(data[g.game_id], title=title, nav=nav))
    if pair_ok:
        a, b = games
        nav = (
            '<p class="meta"><a href="../index.html">leaderboard</a> · '
            f'<a href="../{GAMES_PAGE}#{_e(anchors[a.game_id])}">games of this pairing</a></p>\n'
            f"<h1>Same deal at both tables: {_e(a.game_id)} and {_e(b.game_id)}</h1>\n"
            f'<p class="meta">Left: <b>{_e(a.entry_a)}</b> vs <b>{_e(a.entry_b)}</b>. '
            f"Right: <b>{_e(b.entry_a)}</b> vs <b>{_e(b.entry_b)}</b>. The same cards are dealt "
            "to the same seats; the partnerships have swapped places.</p>"
        )
        left, right = (Path(game_page(g)).name for g in (a, b))
        _write(pair_path, pair_html(left, right, title=f"Duplicate pair {a.cluster}", nav=nav))
    else:
        pair_path.unlink(missing_ok=True)
    return statuses


def _build(job: tuple[list[GameRow], str, str, dict[str, str]]) -> list[PageStatus]:
    return build_cluster(*job)


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
) -> dict[str, Any]:
    """Write ``games.html`` and ``games/`` for every game; returns counts and the page path."""
    out_dir = Path(out_dir)
    (out_dir / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    for name in ("replay.js", "replay.css"):
        _write(out_dir / GAMES_DIR / name, asset(name))
    names = all_names(standings, ratings)
    anchors = {g.game_id: pairing_anchor(names, g.entry_a, g.entry_b) for g in standings.games}
    clusters = _clusters(standings.games)
    workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    statuses: dict[str, PageStatus] = {}
    jobs = [
        (cluster, str(source_dir), str(out_dir), {g.game_id: anchors[g.game_id] for g in cluster})
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
    return {
        "page": page,
        "replays": sum(1 for s in statuses.values() if s.ok),
        "missing": sum(1 for s in statuses.values() if not s.ok),
    }


def games_html(
    standings: Standings,
    names: list[str],
    statuses: Mapping[str, PageStatus],
    anchors: Mapping[str, str],
) -> str:
    """``games.html``: one section per pairing (``#vs-I-J``), one row per game
    (``tr[data-game]``) with pairing, deal, table, ending, score and its links."""
    by_pairing: dict[str, list[GameRow]] = {}
    for g in standings.games:
        by_pairing.setdefault(anchors[g.game_id], []).append(g)
    sections = []
    clusters: dict[str, int] = {}
    for g in standings.games:
        st = statuses.get(g.game_id)
        clusters[g.cluster] = clusters.get(g.cluster, 0) + (1 if st and st.ok else 9)
    index = []
    for anchor in sorted(by_pairing, key=lambda a: tuple(int(x) for x in a.split("-")[1:])):
        games = by_pairing[anchor]
        i, j = (int(x) for x in anchor.split("-")[1:])
        head = f"{_e(names[i - 1])} vs {_e(names[j - 1])}"
        index.append(f'<li><a href="#{anchor}">{head}</a> ({len(games)})</li>')
        rows = []
        for g in games:
            st = statuses.get(g.game_id)
            link = (
                f'<a class="replay" href="{_e(game_page(g))}">{_e(g.game_id)}</a>'
                if st and st.ok
                else f'{_e(g.game_id)} '
                f'<span class="note">({_e(st.note if st else "no record")})</span>'
            )
            pair = ""
            if clusters.get(g.cluster) == 2:  # both games of the deal have their pages
                pair = f'<a class="pair" href="{_e(pair_page(g.cluster))}">both tables</a>'
            rows.append(
                f'<tr data-game="{_e(g.game_id)}"><td class="game">{link}</td>'
                f'<td class="entry">{_e(g.entry_a)}</td><td class="entry">{_e(g.entry_b)}</td>'
                f'<td class="num">{"" if g.deal is None else g.deal}</td>'
                f'<td class="num">{"" if g.table is None else g.table}</td>'
                f'<td class="ending">{_e(g.ending)}</td>'
                f'<td class="num result">{fmt_score(g.score)}</td>'
                f'<td class="num score">{g.scores_a} : {g.scores_b}</td><td>{pair}</td></tr>'
            )
        sections.append(
            f'<h2 id="{anchor}">{head}</h2>\n<table class="games">\n<thead><tr><th>Game</th>'
            "<th>First side</th><th>Second side</th><th>Deal</th><th>Table</th><th>Ending</th>"
            "<th>Result (first side)</th><th>Score</th><th>Same deal</th></tr></thead>\n<tbody>\n"
            + "\n".join(rows)
            + "\n</tbody></table>"
        )
    title = _e(standings.title)
    body = (
        f'<p class="meta"><a href="index.html">leaderboard</a></p>\n<h1>{title}: games</h1>\n'
        f'<p class="meta">{len(standings.games)} games. Each pairing plays every deal twice '
        "(duplicate tables, the sides swapped); “both tables” opens the two games of a deal "
        'side by side. The first side holds N/S (A in the two-player game).</p>\n'
        f'<ul class="pairings">{"".join(index)}</ul>\n' + "\n".join(sections)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f"<title>{title}: games</title>\n<style>{asset('replay.css')}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
