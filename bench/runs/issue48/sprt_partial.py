"""Summary of a stopped `arena sprt` run's finished pairs (issue 48): scores, game points, CPU per decision."""
import json, sqlite3, sys, statistics

def summary(path):
    db = sqlite3.connect(path)
    games = db.execute("select deal, side0, side1, winner, score0, score1, hands from games where ending not like 'forfeit%'").fetchall()
    by_deal = {}
    for deal, s0, s1, winner, a, b, hands in games:
        new_side = 0 if "(new)" in s0 else 1
        diff = (a - b) if new_side == 0 else (b - a)
        pts = 1.0 if winner and "(new)" in winner else (0.5 if winner is None else 0.0)
        by_deal.setdefault(deal, []).append((diff, pts, hands))
    pairs = {d: v for d, v in by_deal.items() if len(v) == 2}
    per_hand = [sum(x[0] for x in v) / sum(x[2] for x in v) for v in pairs.values()]
    share = [sum(x[1] for x in v) / 2 for v in pairs.values()]
    cpu = {}
    for entry, cpu_s, dec in db.execute("select entry, sum(cpu_s), sum(cpu_decisions) from side_times group by entry"):
        cpu[entry] = round(1000 * cpu_s / dec, 1) if dec else None
    out = {"games": len(games), "pairs": len(pairs), "new_game_point_share": round(statistics.fmean(share), 3) if share else None,
           "new_score_diff_per_table_hand": round(statistics.fmean(per_hand), 2) if per_hand else None,
           "pair_shares": share, "cpu_ms_per_decision": cpu}
    return out

for p in sys.argv[1:]:
    print(p, json.dumps(summary(p)))
