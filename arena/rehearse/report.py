"""A rehearsal's report: the console summary (rich), and a self-contained HTML page with its plots.

The HTML page has no script and loads nothing from anywhere (the plots are
inline SVG, the style inline): it can be mailed or opened from disk.  Every
text that came from the ladder (reasons, details, names) is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.text import safe_text


def _mib(n: int | None) -> str:
    return "–" if n is None else f"{n / 2**20:.0f} MiB"


def _sec(s: float | None) -> str:
    return "–" if s is None else f"{s:.2f} s"


def _elo(elo: float | None) -> str:
    return "–" if elo is None else f"{elo:.0f}"


def _tau(t: float | None) -> str:
    return "–" if t is None else f"{t:+.2f}"


def headline(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The report's key figures as (label, value) rows (the console and the page show the same)."""
    games, pairs, site = report["games"], report["pairs"], report["site"]
    left = report["left_behind"]
    hostile = report["hostile"]
    contained = sum(1 for h in hostile if h["outcome"] != "uncontained")
    return [
        (
            "teams, term",
            f"{report['teams']} teams, {report['seconds'] / 60:.1f} min on {report['cores']} cores",
        ),
        (
            "games stored",
            f"{games['stored']} ({len(games['doubled'])} doubled, {len(games['lost'])} lost)",
        ),
        (
            "records equal to their rows",
            f"{games['stored'] - len(games['records_unequal']) - len(games['records_missing'])} of {games['stored']}",
        ),
        (
            "stored games changed later",
            f"{len(games['changed_after_stored'])} of {games['checked_for_change']} watched",
        ),
        (
            "pairs done, voided",
            f"{pairs['done']} done, {len(pairs['void'])} void, {len(pairs['left_playing'])} to finish at the next start",
        ),
        ("pairs per hour", f"{pairs['per_hour']:.0f} ({pairs['per_hour_per_core']:.0f} per core; "
                           f"{pairs.get('table_hands_per_hour', 0):.0f} table-hands)"),
        ("hostile uploads contained", f"{contained} of {len(hostile)}"),
        ("versions suspended", f"{len(report['versions']['suspended'])} "
                               f"({len(report['versions'].get('missed_suspensions', []))} missed by the rule)"),
        (
            "faults (restarts)",
            f"{len(report['faults'])} ({report.get('server_starts', 0)} server starts)",
        ),
        (
            "left behind",
            (
                f"{len(left['containers'])} containers, {len(left.get('images', []))} images, "
                f"{len(left['temp_dirs'])} temp dirs, "
                f"{len(left['tmp_files'])} files in DIR/tmp, {len(left['processes'])} processes"
            ),
        ),
        ("build queue wait p95", _sec(report["build_queue_wait_p95"])),
        (
            "site p95 (visits)",
            f"{_sec(site['p95'])} ({site['visits']} visits, {site['down']} found it down)",
        ),
        (
            "slow client",
            f"{site['slow_client_closed']} half-sent requests closed by the server, {site['slow_client_unclosed']} not",
        ),
        ("peak memory, disk", f"{_mib(report['peak_memory'])}, {_mib(report['peak_disk'])}"),
        (
            "Kendall τ (final standings)",
            f"{_tau(report['tau'])} over {report.get('tau_rated', 0)} rated teams",
        ),
        ("organiser actions needed", str(len(report["organiser_actions"]))),
    ]


def print_report(report: dict[str, Any], console: Console) -> None:
    """The summary, the hostile uploads, the voids, and every failure and organiser action, one line each."""
    table = Table(title=f"rehearsal, seed {report['seed']}", show_header=False)
    table.add_column("what")
    table.add_column("figure", justify="right")
    for label, value in headline(report):
        table.add_row(label, Text(value))
    console.print(table)
    if report["hostile"]:
        hostile = Table(title="hostile uploads")
        for column in ("team", "kind", "outcome", "how"):
            hostile.add_column(column)
        for h in report["hostile"]:
            style = "red" if h["outcome"] == "uncontained" else ""
            hostile.add_row(
                Text(h["team"]),
                h["kind"],
                Text(h["outcome"], style=style),
                Text(safe_text(h["how"])[:160]),
            )
        console.print(hostile)
    for v in report["pairs"]["void"]:
        console.print(
            Text(f"void pair {v['pair']} {v['entries']}: {safe_text(v['reason'])}", style="yellow")
        )
    if report.get("term_too_short"):
        console.print(Text(f"term too short: {safe_text(report['term_too_short'])}", style="yellow"))
    for line in report["failures"]:
        console.print(Text(f"FAILURE: {safe_text(line)}", style="bold red"))
    for line in report["organiser_actions"]:
        console.print(Text(f"organiser action: {safe_text(line)}", style="yellow"))


# ------------------------------------------------------------------ HTML


def svg_plot(points: list[tuple[float, float]], *, title: str, y_label: str, y_range: tuple[float, float] | None = None,
             width: int = 560, height: int = 220) -> str:  # fmt: skip
    """A line plot as inline SVG (no script): ``points`` as (x seconds, y)."""
    pad_left, pad_bottom, pad_top, pad_right = 56, 30, 24, 12
    if not points:
        return f"<figure><figcaption>{html.escape(title)}: no samples</figcaption></figure>"
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1e-9)
    y0, y1 = y_range if y_range else (min(ys), max(ys))
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 1, y1 + 1
    w, h = width - pad_left - pad_right, height - pad_top - pad_bottom

    def at(x: float, y: float) -> str:
        return f"{pad_left + (x - x0) / (x1 - x0) * w:.1f},{pad_top + (1 - (y - y0) / (y1 - y0)) * h:.1f}"

    line = " ".join(at(x, y) for x, y in points)
    ticks = "".join(
        f'<text x="{pad_left - 6}" y="{pad_top + (1 - f) * h + 4:.1f}" text-anchor="end">{y0 + f * (y1 - y0):.3g}</text>'
        for f in (0.0, 0.5, 1.0)
    )
    return (
        f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape(title)}" font-size="11" font-family="sans-serif">'
        f'<rect x="{pad_left}" y="{pad_top}" width="{w}" height="{h}" fill="none" stroke="#999"/>'
        f'<polyline points="{line}" fill="none" stroke="#2a6fbb" stroke-width="2"/>{ticks}'
        f'<text x="{pad_left}" y="{height - 8}">{x0 / 60:.1f} min</text>'
        f'<text x="{pad_left + w}" y="{height - 8}" text-anchor="end">{x1 / 60:.1f} min</text>'
        f'<text x="{pad_left}" y="14">{html.escape(y_label)}</text></svg>'
        f"<figcaption>{html.escape(title)}</figcaption></figure>"
    )


def html_report(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline SVG plots, no script, no outside origin)."""
    e = html.escape
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in headline(report))
    tau = [(p["at"], p["tau"]) for p in report["tau_over_time"] if p["tau"] is not None]
    games = [(p["at"], p["games"]) for p in report["games_over_time"]]
    memory = [(p["at"], p["bytes"] / 2**20) for p in report["memory_over_time"]]
    plots = (
        svg_plot(
            tau,
            title="Kendall τ of the standings against the true order, over the term",
            y_label="τ",
            y_range=(-1, 1),
        )
        + svg_plot(games, title="games stored", y_label="games")
        + svg_plot(memory, title="the server's memory (its process tree, resident)", y_label="MiB")
    )

    def listing(title: str, items: list[str]) -> str:
        body = "".join(f"<li>{e(safe_text(str(i)))}</li>" for i in items) or "<li>none</li>"
        return f"<h2>{e(title)}</h2><ul>{body}</ul>"

    hostile = "".join(
        f"<tr><td>{e(h['team'])}</td><td>{e(h['kind'])}</td><td class='{e(h['outcome'])}'>{e(h['outcome'])}</td>"
        f"<td>{e(safe_text(h['how'])[:300])}</td></tr>"
        for h in report["hostile"]
    )
    standings = "".join(
        f"<tr><td>{e(str(r['rank'] or '–'))}</td><td>{e(r['entry'])}</td><td>{_elo(r['elo'])}</td>"
        f"<td>{e(str(r['pairs']))}</td><td>{e(str(r['true_strength']))}</td></tr>"
        for r in report["standings"]
    )
    faults = [f"{f['kind']} at {f['at']:.0f} s aimed at {f['target']} ({'caught' if f['caught'] else 'not caught'}), "
              + (f"{f['detail']}, " if f.get('detail') else "")
              + ("restart failed: " + f['error'] if f['restart_seconds'] is None
                 else "no restart needed" if f['restart_seconds'] == 0 else f"restart in {f['restart_seconds']:.1f} s")
              for f in report["faults"]]  # fmt: skip
    voids = [f"pair {v['pair']} {v['entries']}: {v['reason']}" for v in report["pairs"]["void"]]
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>Rehearsal, seed {e(str(report['seed']))}</title><style>"
        "body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left}"
        ".uncontained{color:#b00;font-weight:bold}figure{display:inline-block;margin:0.5em}"
        "</style></head><body>"
        f"<h1>Rehearsal of a term: {report['teams']} teams, seed {e(str(report['seed']))}</h1>"
        f"<table>{rows}</table>{plots}"
        + listing("Failures (the exit status)", report["failures"])
        + listing("Organiser actions needed (goal: none)", report["organiser_actions"])
        + f"<h2>Hostile uploads</h2><table><tr><th>team</th><th>kind</th><th>outcome</th><th>how</th></tr>{hostile}</table>"
        + listing("Faults", faults)
        + listing("Voided pairs", voids)
        + listing(
            "Versions suspended",
            [f"{s['entry']}: {s['reason']}" for s in report["versions"]["suspended"]],
        )
        + f"<h2>Final standings</h2><table><tr><th>rank</th><th>entry</th><th>Elo</th><th>pairs</th><th>true strength</th></tr>{standings}</table>"
        + listing("Not rehearsed", report.get("not_rehearsed", []))
        + "</body></html>\n"
    )


__all__ = ["headline", "html_report", "print_report", "svg_plot"]
