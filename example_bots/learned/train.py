"""Train the learned bot's networks by self-play, on the CPU, with numpy alone.

    python example_bots/learned/train.py --minutes 10 --out example_bots/learned/policy.npz

One policy plays all four seats of many PettingZoo games at once
(:class:`~arena_sdk.envs.SpadesAECEnv`).  Its networks (``policy.py``) learn
the value of each decision: the points the seat's team makes in the hand
minus the other team's, over 100, with every bag charged its share of the
bag penalty (pagat: a bag is 1 point minus a tenth of 100), so that a bag
costs when it is taken and not only in the hand that crosses ten.

- Card play, by *Deep Monte Carlo* (the method of DouZero for DouDizhu): the
  card network's value of the card played (its row of ``features.py``) is
  regressed on the hand's value.
- Bids, in hindsight: once the hand is over, the tricks each seat took are
  known, so the value every other bid would have earned with the same tricks
  is known too (the engine's own scoring, ``score_team``), and the decision
  network's 14 bid values are regressed on those at once.  Fourteen answers
  per bid instead of one is what lets the bids settle in minutes.
- Other decisions (blind nil, the two-player draw and exchange, when
  training on those presets): Deep Monte Carlo on the decision network.

The seats play the legal action of highest value, or a random legal one with
probability ``--explore``.  Every ``--eval-every`` updates a moving average
of the weights (``--average``: steadier than the last update's) plays
duplicate games against the built-in Easy bot (``evaluate.py``), greedily, and
the best one so far is saved.  ``--minutes`` counts the CPU time of self-play and
updates (evaluations are counted apart).
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
from features import card_features  # noqa: E402
from policy import LearnedPolicy, Params, forward  # noqa: E402

from arena_sdk.engine import Decision, HandResult, Ruleset, TeamHandScore, score_team, team_members  # noqa: E402
from arena_sdk.envs import SpadesAECEnv  # noqa: E402
from arena_sdk.envs.layout import BID_BASE  # noqa: E402

BIDS = np.arange(14)
#: Points to reward: a made bid of 4 against a set bid of 3 is (40 + 30) / 100 = 0.7.
SCALE = 0.01


def charged_points(rules: Ruleset, score: TeamHandScore) -> float:
    """A team's points for a hand with each bag charged its share of the penalty, instead of the penalty itself."""
    share = rules.bag_penalty / rules.bag_threshold if rules.bag_penalty else 0.0
    return score.points - score.penalty_points - share * score.bags


def hand_values(rules: Ruleset, hand: HandResult) -> list[float]:
    """Per seat: its team's charged points for the hand minus the other team's, times :data:`SCALE`."""
    points = [charged_points(rules, t) for t in hand.teams]
    return [(points[s % 2] - points[1 - s % 2]) * SCALE for s in range(rules.players)]


def hindsight_bid_values(rules: Ruleset, hand: HandResult, seat: int) -> np.ndarray:
    """The seat's hand value for each bid 0..13, had it bid that and every seat taken the same tricks."""
    team = seat % 2
    own, other = hand.teams[team], hand.teams[1 - team]
    other_points = charged_points(rules, other)
    bids = list(hand.bids)
    blind = [x and s != seat for s, x in enumerate(hand.blind)]
    out = np.empty(len(BIDS), np.float32)
    for b in BIDS:
        bids[seat] = int(b)
        mine = score_team(rules, team_members(rules.players, team), bids, blind, hand.tricks, 0, own.bags_before)
        out[b] = (charged_points(rules, mine) - other_points) * SCALE
    return out


@dataclass
class Batch:
    """Decisions whose hand has ended, with their targets.

    ``card_rows``/``card_values``: the played card's feature row and the hand's
    value.  ``bid_obs``/``bid_values``: the observation and the 14 values in
    hindsight.  ``obs``/``actions``/``values``: other decisions, the action
    taken and the hand's value.
    """

    card_rows: list[np.ndarray] = field(default_factory=list)
    card_values: list[float] = field(default_factory=list)
    bid_obs: list[np.ndarray] = field(default_factory=list)
    bid_values: list[np.ndarray] = field(default_factory=list)
    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.card_values) + len(self.bid_values) + len(self.values)


class SelfPlay:
    """``tables`` AEC games stepped in lockstep by one policy."""

    def __init__(self, tables: int, rules: str, seed: int) -> None:
        self.envs = [SpadesAECEnv(rules) for _ in range(tables)]
        for i, env in enumerate(self.envs):
            env.reset(seed=seed * 100_003 + i)
        self.rng = np.random.default_rng(seed)
        # Per table and seat: the decisions of the hand in progress, (kind, input, action).
        self.pending: list[list[list[tuple[str, np.ndarray, int]]]] = [
            [[] for _ in env.possible_agents] for env in self.envs
        ]

    def collect(self, policy: LearnedPolicy, decisions: int, explore: float) -> Batch:
        """Play until at least ``decisions`` decisions have their hand's value."""
        batch = Batch()
        while len(batch) < decisions:
            for i, (kind, x, action) in enumerate(self._choose(policy, explore)):
                env = self.envs[i]
                seat = env.possible_agents.index(env.agent_selection)
                self.pending[i][seat].append((kind, x, action))
                hands = len(env.game.hand_results)
                env.step(action)
                if len(env.game.hand_results) > hands:
                    self._credit(i, env, batch)
                if all(env.terminations.values()):
                    env.reset()
        return batch

    def _choose(self, policy: LearnedPolicy, explore: float) -> list[tuple[str, np.ndarray, int]]:
        """Every table's next decision: ``(kind, the network's input, action id)``."""
        chosen: list[tuple[str, np.ndarray, int]] = [("", np.empty(0), 0)] * len(self.envs)
        plays: list[tuple[int, list[int], np.ndarray]] = []
        others: list[tuple[int, dict[str, np.ndarray]]] = []
        for i, env in enumerate(self.envs):
            k = env.knowledge(env.agent_selection)
            if k.kind is Decision.PLAY:
                plays.append((i, *card_features(k)))
            else:
                others.append((i, env.observe(env.agent_selection)))
        if plays:
            values = policy.card_values(np.concatenate([rows for _, _, rows in plays]))
            start = 0
            for i, cards, rows in plays:
                pick = int(np.argmax(values[start : start + len(cards)]))
                if self.rng.random() < explore:
                    pick = int(self.rng.integers(len(cards)))
                chosen[i] = ("card", rows[pick], cards[pick])
                start += len(cards)
        if others:
            obs = np.stack([o["observation"] for _, o in others])
            masks = np.stack([o["action_mask"] for _, o in others])
            actions = policy.best_of(obs, masks)
            for j, (i, _) in enumerate(others):
                action = int(actions[j])
                if self.rng.random() < explore:
                    action = int(self.rng.choice(np.flatnonzero(masks[j])))
                kind = "bid" if BID_BASE <= action < BID_BASE + len(BIDS) else "other"
                chosen[i] = (kind, obs[j], action)
        return chosen

    def _credit(self, i: int, env: SpadesAECEnv, batch: Batch) -> None:
        """A hand was scored: every decision of it gets its target (see the module docstring)."""
        hand = env.game.hand_results[-1]
        values = hand_values(env.rules, hand)
        for seat, decisions in enumerate(self.pending[i]):
            for kind, x, action in decisions:
                if kind == "card":
                    batch.card_rows.append(x)
                    batch.card_values.append(values[seat])
                elif kind == "bid":
                    batch.bid_obs.append(x)
                    batch.bid_values.append(hindsight_bid_values(env.rules, hand, seat))
                else:
                    batch.obs.append(x)
                    batch.actions.append(action)
                    batch.values.append(values[seat])
            decisions.clear()


def backward(params: Params, inputs: list[np.ndarray], d_out: np.ndarray) -> Params:
    """Gradients of a :func:`policy.forward` network, given the loss's gradient at its output."""
    layers = len(params) // 2
    grads: Params = {}
    for i in reversed(range(layers)):
        grads[f"w{i}"] = inputs[i].T @ d_out
        grads[f"b{i}"] = d_out.sum(axis=0)
        if i:
            d_out = (d_out @ params[f"w{i}"].T) * (inputs[i] > 0)
    return grads


def gradients(policy: LearnedPolicy, batch: Batch) -> tuple[dict[str, Params], float, float]:
    """Gradients of each network's mean squared error, and the two losses (cards, decisions)."""
    grads: dict[str, Params] = {}
    card_loss = decision_loss = 0.0
    if batch.card_values:
        rows = np.stack(batch.card_rows)
        values, inputs = forward(policy.nets["cards"], rows)
        error = values[:, 0] - np.asarray(batch.card_values, dtype=np.float32)
        grads["cards"] = backward(policy.nets["cards"], inputs, error[:, None] / len(error))
        card_loss = float(np.mean(error**2))
    bids, plays = len(batch.bid_values), len(batch.values)
    if bids + plays:
        obs = np.stack(batch.bid_obs + batch.obs)
        values, inputs = forward(policy.nets["decisions"], obs)
        d_out = np.zeros_like(values)
        bid_error = values[:bids, BID_BASE : BID_BASE + len(BIDS)] - np.stack(batch.bid_values) if bids else None
        if bid_error is not None:
            d_out[:bids, BID_BASE : BID_BASE + len(BIDS)] = bid_error
        rows = np.arange(bids, bids + plays)
        actions = np.asarray(batch.actions, dtype=np.int64)
        play_error = values[rows, actions] - np.asarray(batch.values, dtype=np.float32)
        d_out[rows, actions] = play_error
        grads["decisions"] = backward(policy.nets["decisions"], inputs, d_out / (bids + plays))
        squared = float(np.sum(play_error**2)) + (float(np.sum(bid_error**2)) / len(BIDS) if bids else 0.0)
        decision_loss = squared / (bids + plays)
    return grads, card_loss, decision_loss


class Adam:
    """Adam over every parameter of the policy's networks."""

    def __init__(self, policy: LearnedPolicy, lr: float) -> None:
        self.lr = lr
        self.m = {net: {k: np.zeros_like(v) for k, v in p.items()} for net, p in policy.nets.items()}
        self.v = {net: {k: np.zeros_like(v) for k, v in p.items()} for net, p in policy.nets.items()}
        self.t = {net: 0 for net in policy.nets}

    def step(self, policy: LearnedPolicy, grads: dict[str, Params]) -> None:
        b1, b2 = 0.9, 0.999
        for net, net_grads in grads.items():
            self.t[net] += 1
            t, m, v, params = self.t[net], self.m[net], self.v[net], policy.nets[net]
            for k, g in net_grads.items():
                m[k] = b1 * m[k] + (1 - b1) * g
                v[k] = b2 * v[k] + (1 - b2) * g * g
                step = self.lr * (m[k] / (1 - b1**t)) / (np.sqrt(v[k] / (1 - b2**t)) + 1e-8)
                params[k] -= step.astype(np.float32)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="CPU minutes of self-play and updates (default 10)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "policy.npz")
    parser.add_argument("--rules", default="pagat", help="preset to train on (default pagat)")
    parser.add_argument("--tables", type=int, default=64, help="games played at once (default 64)")
    parser.add_argument("--batch", type=int, default=2048, help="decisions per update (default 2048)")
    parser.add_argument("--hidden", type=int, default=128, help="units per hidden layer, decisions (default 128)")
    parser.add_argument("--card-hidden", type=int, default=64, help="units per hidden layer, cards (default 64)")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's step size (default 0.001)")
    parser.add_argument("--explore", type=float, default=0.1, help="share of random decisions (default 0.1)")
    parser.add_argument("--eval-every", type=int, default=100, help="updates between evaluations (default 100)")
    parser.add_argument("--eval-deals", type=int, default=60, help="duplicate deals per evaluation (default 60)")
    parser.add_argument("--eval-seed", type=int, default=7, help="the evaluations' deals (default 7)")
    parser.add_argument(
        "--average", type=float, default=0.99,
        help="evaluate and save a moving average of the weights, keeping this much of it per update "
        "(default 0.99; 0: off)",
    )  # fmt: skip
    parser.add_argument("--init", type=Path, help="start from this policy file instead of fresh weights")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.init:
        policy = LearnedPolicy.load(args.init)
    else:
        policy = LearnedPolicy.create(hidden=args.hidden, card_hidden=args.card_hidden, seed=args.seed)
    optimiser = Adam(policy, args.lr)
    average = policy.copy()  # the weights' moving average: steadier play than the last update's
    games = SelfPlay(args.tables, args.rules, args.seed)
    trained = 0.0  # CPU seconds of self-play and updates: a busy machine trains as long, only slower by the clock
    best = -np.inf
    update = decisions = 0
    while trained < args.minutes * 60:
        started = time.process_time()
        batch = games.collect(policy, args.batch, args.explore)
        grads, card_loss, decision_loss = gradients(policy, batch)
        optimiser.step(policy, grads)
        average.move_towards(policy, 1.0 - args.average)
        trained += time.process_time() - started
        update += 1
        decisions += len(batch)
        if update % args.eval_every == 0 or trained >= args.minutes * 60:
            score = duplicate_vs(average, "easy", args.rules, deals=args.eval_deals, seed=args.eval_seed)
            print(
                f"update {update:5d}  {trained / 60:5.1f} CPU min  {decisions:9,d} decisions  "
                f"loss cards {card_loss:.3f} bids {decision_loss:.3f}  vs easy: "
                f"{score.points_per_hand:+6.1f} +- {score.points_per_hand_ci:.1f} points/hand, "
                f"games won {score.share:.2f}",
                flush=True,
            )
            if score.points_per_hand > best:
                best = score.points_per_hand
                average.save(args.out)
    print(f"saved {args.out} (best {best:+.1f} points per hand against easy)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
