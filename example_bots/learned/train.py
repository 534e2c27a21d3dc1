"""Train the learned bot's network by self-play, on the CPU, with numpy alone.

    python example_bots/learned/train.py --minutes 10 --out example_bots/learned/policy.npz

One network plays all four seats of many PettingZoo games at once
(:class:`~arena_sdk.envs.SpadesAECEnv`, rewards per hand).  It learns the
value of each action: the reward the seat's team gets for the hand (its
points minus the other team's, divided by 100).

- Card play, by *Deep Monte Carlo* (the method of DouZero for DouDizhu): the
  value of the card played is regressed on the hand's reward, plus
  ``--trick-bonus`` times the tricks the team won from that trick on minus
  those the other team won, over 13 (a denser signal: which card won or lost
  tricks shows at once, while the hand's reward mixes in every other decision).
- Bids, in hindsight: once the hand is over, the tricks each seat took are
  known, so the reward every other bid would have earned with the same
  tricks is known too (the engine's own scoring, ``score_team``), and all 14
  bid values are regressed on those rewards at once.  Fourteen answers per
  bid instead of one is what lets the bids settle in minutes.

The seats play the legal action of highest value, or a random legal one with
probability ``--explore``.  Every ``--eval-every`` updates the greedy policy
plays duplicate games against the built-in Easy bot (``evaluate.py``) and the
best one so far is saved.  ``--minutes`` counts this process's CPU time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# One BLAS thread: these matrices are small, and on a busy machine (or in a container
# with one CPU) more threads make each product many times slower, not faster.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate import duplicate_vs  # noqa: E402
from policy import MLPPolicy  # noqa: E402

from arena_sdk.engine import HandResult, score_team, team_members, team_of  # noqa: E402
from arena_sdk.envs import SpadesAECEnv  # noqa: E402
from arena_sdk.envs.layout import BID_BASE  # noqa: E402

BIDS = np.arange(14)


@dataclass
class Batch:
    """Decisions whose hand has ended, with their targets.

    Plays: the observation, the action taken, the hand's reward.  Bids: the
    observation and the reward of each of the 14 bids in hindsight.
    """

    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    bid_obs: list[np.ndarray] = field(default_factory=list)
    bid_returns: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.returns) + len(self.bid_returns)


def hindsight_bid_rewards(env: SpadesAECEnv, hand: HandResult, seat: int) -> np.ndarray:
    """The seat's reward for each bid 0..13, had it bid that and every seat taken the same tricks."""
    rules = env.rules
    n = rules.players
    team = team_of(n, seat)
    own, other = hand.teams[team], hand.teams[1 - team]
    other_points = other.score_after - other.score_before
    out = np.empty(len(BIDS), np.float32)
    bids = list(hand.bids)
    for b in BIDS:
        bids[seat] = int(b)
        blind = [x and s != seat for s, x in enumerate(hand.blind)]
        mine = score_team(rules, team_members(n, team), bids, blind, hand.tricks, own.score_before, own.bags_before)
        out[b] = (mine.score_after - mine.score_before - other_points) * env.table.hand_reward_scale
    return out


class SelfPlay:
    """``tables`` AEC games stepped in lockstep by one network."""

    def __init__(self, tables: int, rules: str, seed: int, play_share: float = 1.0, trick_bonus: float = 0.0) -> None:
        self.trick_bonus = trick_bonus
        #: Share of card-play decisions kept for training: the plays of one hand share one
        #: reward, so a sample of them teaches nearly as much at a fraction of the cost.
        self.play_share = play_share
        self.envs = [SpadesAECEnv(rules, reward="hand") for _ in range(tables)]
        for i, env in enumerate(self.envs):
            env.reset(seed=seed * 100_003 + i)
        self.rng = np.random.default_rng(seed)
        # Per table and agent: the decisions of the hand in progress (observation, action).
        self.pending = [{a: [] for a in env.possible_agents} for env in self.envs]

    def collect(self, policy: MLPPolicy, decisions: int, explore: float) -> Batch:
        """Play until at least ``decisions`` decisions have their hand's reward."""
        batch = Batch()
        while len(batch) < decisions:
            observations = [env.observe(env.agent_selection) for env in self.envs]
            obs = np.stack([o["observation"] for o in observations])
            masks = np.stack([o["action_mask"] for o in observations])
            actions = policy.best_of(obs, masks)
            for i in np.flatnonzero(self.rng.random(len(self.envs)) < explore):
                actions[i] = self.rng.choice(np.flatnonzero(masks[i]))
            for i, env in enumerate(self.envs):
                trick = len(env.game.tricks)  # which trick of the hand this decision is in (hindsight only)
                self.pending[i][env.agent_selection].append((obs[i], int(actions[i]), trick))
                hands = env.infos[env.agent_selection]["hands_completed"]
                env.step(int(actions[i]))
                if env.infos[env.possible_agents[0]]["hands_completed"] > hands:
                    self._credit(i, env, batch)
                if all(env.terminations.values()):
                    env.reset()
        return batch

    def _credit(self, i: int, env: SpadesAECEnv, batch: Batch) -> None:
        """A hand was scored: every decision of it gets its targets (see the module docstring)."""
        hand = env.game.hand_results[-1]
        n = env.rules.players
        winners = [team_of(n, t.winner) for t in hand.played]
        for seat, (agent, decisions) in enumerate(self.pending[i].items()):
            team = team_of(n, seat)
            # From each trick on: tricks this team won minus the other team's, over 13.
            later = np.cumsum([1.0 if w == team else -1.0 for w in winners][::-1])[::-1] / 13
            for obs, action, trick in decisions:
                if BID_BASE <= action < BID_BASE + len(BIDS):
                    batch.bid_obs.append(obs)
                    batch.bid_returns.append(hindsight_bid_rewards(env, hand, seat))
                elif self.play_share >= 1.0 or self.rng.random() < self.play_share:
                    batch.obs.append(obs)
                    batch.actions.append(action)
                    batch.returns.append(env.rewards[agent] + self.trick_bonus * later[min(trick, 12)])
            decisions.clear()


class Adam:
    """Adam over the network's parameters."""

    def __init__(self, params: dict[str, np.ndarray], lr: float) -> None:
        self.lr = lr
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            m_hat = self.m[k] / (1 - b1**self.t)
            v_hat = self.v[k] / (1 - b2**self.t)
            params[k] -= (self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)


def gradients(policy: MLPPolicy, batch: Batch) -> tuple[dict[str, np.ndarray], float]:
    """Gradients of the mean squared error between the values and their targets.

    Play rows compare the taken action's value with the hand's reward; bid rows
    compare all 14 bid values with their rewards in hindsight.
    """
    p = policy.params
    plays, bids = len(batch.returns), len(batch.bid_returns)
    obs = np.stack(batch.obs + batch.bid_obs)
    values, (h1, h2) = policy.forward(obs)
    d_out = np.zeros_like(values)
    rows = np.arange(plays)
    actions = np.asarray(batch.actions, dtype=np.int64)
    play_error = values[rows, actions] - np.asarray(batch.returns, dtype=np.float32)
    d_out[rows, actions] = play_error
    bid_error = values[plays:, BID_BASE : BID_BASE + len(BIDS)] - np.stack(batch.bid_returns) if bids else None
    if bid_error is not None:
        d_out[plays:, BID_BASE : BID_BASE + len(BIDS)] = bid_error
    d_out /= plays + bids
    grads = {"wq": h2.T @ d_out, "bq": d_out.sum(axis=0)}
    d_h2 = (d_out @ p["wq"].T) * (h2 > 0)
    grads["w2"], grads["b2"] = h1.T @ d_h2, d_h2.sum(axis=0)
    d_h1 = (d_h2 @ p["w2"].T) * (h1 > 0)
    grads["w1"], grads["b1"] = obs.T @ d_h1, d_h1.sum(axis=0)
    squared = float(np.sum(play_error**2)) + (float(np.sum(bid_error**2)) / len(BIDS) if bid_error is not None else 0.0)
    return {k: g.astype(np.float32) for k, g in grads.items()}, squared / (plays + bids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="training time in CPU minutes of this process (default 10)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "policy.npz")
    parser.add_argument("--rules", default="pagat", help="preset to train on (default pagat)")
    parser.add_argument("--tables", type=int, default=64, help="games played at once (default 64)")
    parser.add_argument("--batch", type=int, default=2048, help="decisions per update (default 2048)")
    parser.add_argument("--hidden", type=int, default=128, help="units per hidden layer (default 128)")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's step size (default 0.001)")
    parser.add_argument("--explore", type=float, default=0.1, help="share of random decisions (default 0.1)")
    parser.add_argument("--eval-every", type=int, default=50, help="updates between evaluations (default 50)")
    parser.add_argument("--eval-deals", type=int, default=30, help="duplicate deals per evaluation (default 30)")
    parser.add_argument(
        "--play-share", type=float, default=0.25, help="share of card plays trained on (default 0.25; bids: all)"
    )
    parser.add_argument(
        "--trick-bonus", type=float, default=0.5, help="weight of the tricks won from a play on (default 0.5)"
    )
    parser.add_argument("--init", type=Path, help="start from this policy file instead of fresh weights")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    policy = MLPPolicy.load(args.init) if args.init else MLPPolicy.create(hidden=args.hidden, seed=args.seed)
    optimiser = Adam(policy.params, args.lr)
    games = SelfPlay(args.tables, args.rules, args.seed, args.play_share, args.trick_bonus)
    started = time.process_time()  # CPU time: a busy machine trains as long, only slower by the clock
    best = -np.inf
    update = decisions = 0
    while time.process_time() - started < args.minutes * 60:
        batch = games.collect(policy, args.batch, args.explore)
        grads, loss = gradients(policy, batch)
        optimiser.step(policy.params, grads)
        update += 1
        decisions += len(batch)
        if update % args.eval_every == 0:
            score = duplicate_vs(policy, "easy", args.rules, deals=args.eval_deals, seed=update)
            elapsed = time.process_time() - started
            print(
                f"update {update:5d}  {elapsed / 60:5.1f} CPU min  {decisions:9,d} decisions  "
                f"loss {loss:.3f}  vs easy: {score.points_per_hand:+6.1f} points/hand, "
                f"game share {score.share:.2f}",
                flush=True,
            )
            if score.points_per_hand > best:
                best = score.points_per_hand
                policy.save(args.out)
    if best == -np.inf:
        policy.save(args.out)
    print(f"saved {args.out} (best {best:+.1f} points per hand against easy)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
