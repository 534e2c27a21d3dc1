"""Synthetic tournaments from known strengths, for the ratings tests."""

from __future__ import annotations

import math
import random

from arena.ratings import ELO_PER_LOGIT, Result


def p_win(elo_a: float, elo_b: float) -> float:
    """Bradley–Terry expected score of a against b."""
    return 1.0 / (1.0 + math.exp(-(elo_a - elo_b) / ELO_PER_LOGIT))


def play(rng: random.Random, p: float, draw_rate: float) -> float:
    """One game's score with expected value ``p`` (so Bradley–Terry holds with draws).

    A draw happens with probability ``draw_rate · 2·min(p, 1−p)`` (``draw_rate`` for
    equal players), and the win probability is adjusted to keep the mean at ``p``.
    """
    q = draw_rate * 2.0 * min(p, 1.0 - p)
    if rng.random() < q:
        return 0.5
    return 1.0 if rng.random() < (p - 0.5 * q) / (1.0 - q) else 0.0


def duplicate_round_robin(
    strengths: dict[str, float], pairs_per_pairing: int, *, seed: int, draw_rate: float = 0.0
) -> list[Result]:
    """Every pairing plays ``pairs_per_pairing`` duplicate pairs (two games, sides swapped).

    The two games of a pair are drawn independently (see :func:`play` for draws).
    """
    rng = random.Random(seed)
    names = sorted(strengths)
    out: list[Result] = []
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            p = p_win(strengths[a], strengths[b])
            for k in range(pairs_per_pairing):
                cluster = f"{a}|{b}|{k}"
                for first, second in ((a, b), (b, a)):
                    score = play(rng, p if first == a else 1.0 - p, draw_rate)
                    out.append(Result(first, second, score, cluster))
    return out


def random_games(
    n_players: int, n_games: int, *, seed: int, spread: float = 200.0
) -> tuple[list[Result], dict[str, float]]:
    """``n_games`` games (in duplicate pairs) between random pairings of ``n_players``."""
    rng = random.Random(seed)
    strengths = {f"bot{i:02d}": rng.gauss(1500.0, spread) for i in range(n_players)}
    names = sorted(strengths)
    out: list[Result] = []
    for k in range(n_games // 2):
        a, b = rng.sample(names, 2)
        p = p_win(strengths[a], strengths[b])
        for first, second in ((a, b), (b, a)):
            score = play(rng, p if first == a else 1.0 - p, 0.1)
            out.append(Result(first, second, score, f"c{k}"))
    return out, strengths
