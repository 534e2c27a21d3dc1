"""Duplicate games of a policy against a bot, in-process (the SDK's local harness).

    python example_bots/learned/evaluate.py --against easy --deals 200

Each deal is played twice with the same cards, the policy's partnership
sitting N/S at one table and E/W at the other, so card luck cancels out.
Printed: the policy's points per hand (its team's final score minus the
other's, summed over both tables, per hand played) and its share of the
games (a win 1, a draw 1/2).  The arena's own duplicate matches
(``arena tournament run``, ``arena sprt``) measure the same through the
referee; docs/learning.md shows both.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot import DEFAULT_POLICY, LearnedBot  # noqa: E402
from policy import LearnedPolicy  # noqa: E402

from arena_sdk.testing import BotArgument, play_game  # noqa: E402


@dataclass(frozen=True)
class Score:
    """The policy's side of a duplicate series."""

    deals: int
    games: int
    hands: int
    points_per_hand: float
    points_per_hand_ci: float
    """Half-width of a 95% interval, by deal (each deal's two tables one sample)."""
    share: float
    """Share of the games won (a draw counts 1/2)."""


def duplicate_vs(
    policy: LearnedPolicy, opponent: BotArgument, rules: str = "pagat", *, deals: int = 100, seed: int = 0
) -> Score:
    """Play ``deals`` duplicate pairs of the policy's greedy bot against ``opponent``."""
    per_deal: list[float] = []
    hands = 0
    won = 0.0
    for d in range(deals):
        game_seed = seed * 1_000_003 + d
        diff = 0
        deal_hands = 0
        for learner_team in (0, 1):
            bots = [LearnedBot(policy), opponent] if learner_team == 0 else [opponent, LearnedBot(policy)]
            result = play_game(bots, rules, seed=game_seed)
            scores = result.scores
            diff += scores[learner_team] - scores[1 - learner_team]
            deal_hands += result.result.hands
            won += 0.5 if result.winner is None else float(result.winner == learner_team)
        per_deal.append(diff / deal_hands)
        hands += deal_hands
    mean = sum(per_deal) / len(per_deal)
    var = sum((x - mean) ** 2 for x in per_deal) / max(1, len(per_deal) - 1)
    return Score(
        deals=deals,
        games=2 * deals,
        hands=hands,
        points_per_hand=mean,
        points_per_hand_ci=1.96 * math.sqrt(var / len(per_deal)),
        share=won / (2 * deals),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, default=DEFAULT_POLICY)
    parser.add_argument("--against", default="easy", help="easy, medium, hard or random (default easy)")
    parser.add_argument("--rules", default="pagat")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    score = duplicate_vs(LearnedPolicy.load(args.policy), args.against, args.rules, deals=args.deals, seed=args.seed)
    print(
        f"{args.policy.name} vs {args.against} ({args.rules}), {score.deals} duplicate deals, "
        f"{score.games} games, {score.hands} hands: {score.points_per_hand:+.1f} "
        f"+- {score.points_per_hand_ci:.1f} points per hand, {score.share:.1%} of the games"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
