"""Train the learned bot's policy by self-play, on the CPU, with numpy alone.

    python example_bots/learned/train.py --minutes 10 --out example_bots/learned/policy.npz

One network plays all four seats of many PettingZoo games at once
(:class:`~arena_sdk.envs.SpadesAECEnv`, rewards per hand).  Every decision of
a hand is credited with that hand's reward for the seat's team (its points
minus the other team's, divided by 100); the update is an advantage
actor-critic step (policy gradient with the network's own value as the
baseline, an entropy bonus, Adam).  Every ``--eval-every`` updates the
greedy policy plays duplicate games against the built-in Easy bot
(``evaluate.py``) and the best one so far is saved.
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
from policy import MLPPolicy, masked_softmax  # noqa: E402

from arena_sdk.envs import SpadesAECEnv  # noqa: E402


@dataclass
class Batch:
    """Decisions waiting for their hand to end, and those whose return is known."""

    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.returns)


class SelfPlay:
    """``tables`` AEC games stepped in lockstep by one network; decisions collected per seat."""

    def __init__(self, tables: int, rules: str, seed: int) -> None:
        self.envs = [SpadesAECEnv(rules, reward="hand") for _ in range(tables)]
        for i, env in enumerate(self.envs):
            env.reset(seed=seed * 100_003 + i)
        self.rng = np.random.default_rng(seed)
        # Per table and agent: the decisions of the hand in progress (obs, mask, action).
        self.pending = [{a: [] for a in env.possible_agents} for env in self.envs]
        self.hands_seen = [0] * tables

    def collect(self, policy: MLPPolicy, decisions: int) -> Batch:
        """Play until at least ``decisions`` decisions have a known return."""
        batch = Batch()
        while len(batch) < decisions:
            observations = [env.observe(env.agent_selection) for env in self.envs]
            obs = np.stack([o["observation"] for o in observations])
            masks = np.stack([o["action_mask"] for o in observations])
            logits, _, _ = policy.forward(obs)
            probs = masked_softmax(logits, masks)
            cumulative = probs.cumsum(axis=1)
            draws = self.rng.random((len(self.envs), 1))
            actions = np.minimum((cumulative < draws).sum(axis=1), probs.shape[1] - 1)
            for i, env in enumerate(self.envs):
                agent = env.agent_selection
                self.pending[i][agent].append((obs[i], masks[i], int(actions[i])))
                env.step(int(actions[i]))
                self._settle(i, env, batch)
        return batch

    def _settle(self, i: int, env: SpadesAECEnv, batch: Batch) -> None:
        """When a hand ended, credit each seat's decisions of it with the seat's hand reward."""
        info = env.infos[env.possible_agents[0]]
        if info["hands_completed"] > self.hands_seen[i]:
            for agent, decisions in self.pending[i].items():
                for obs, mask, action in decisions:
                    batch.obs.append(obs)
                    batch.masks.append(mask)
                    batch.actions.append(action)
                    batch.returns.append(env.rewards[agent])
                decisions.clear()
        self.hands_seen[i] = info["hands_completed"]
        if all(env.terminations.values()):
            env.reset()
            self.hands_seen[i] = 0


class Adam:
    """Adam over the policy's parameters."""

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


def gradients(
    policy: MLPPolicy, batch: Batch, entropy_coef: float, value_coef: float
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The actor-critic loss's gradients for one batch, and a few statistics."""
    p = policy.params
    obs = np.stack(batch.obs)
    masks = np.stack(batch.masks)
    actions = np.asarray(batch.actions)
    returns = np.asarray(batch.returns, dtype=np.float32)
    n = len(actions)
    logits, values, (h1, h2) = policy.forward(obs)
    probs = masked_softmax(logits, masks)
    advantages = returns - values
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-6)
    logp = np.log(np.maximum(probs, 1e-12))
    entropy = -(probs * logp).sum(axis=1)
    # d(loss)/d(logits): policy gradient, minus the entropy bonus's gradient.
    onehot = np.zeros_like(probs)
    onehot[np.arange(n), actions] = 1.0
    d_logits = -(advantages[:, None] * (onehot - probs)) / n
    d_logits += entropy_coef * probs * (logp + entropy[:, None]) / n
    d_logits *= masks
    d_values = 2 * value_coef * (values - returns) / n
    grads = {
        "wp": h2.T @ d_logits, "bp": d_logits.sum(axis=0),
        "wv": h2.T @ d_values[:, None], "bv": np.array([d_values.sum()], np.float32),
    }  # fmt: skip
    d_h2 = (d_logits @ p["wp"].T + d_values[:, None] @ p["wv"].T) * (h2 > 0)
    grads["w2"], grads["b2"] = h1.T @ d_h2, d_h2.sum(axis=0)
    d_h1 = (d_h2 @ p["w2"].T) * (h1 > 0)
    grads["w1"], grads["b1"] = obs.T @ d_h1, d_h1.sum(axis=0)
    stats = {
        "return": float(returns.mean()),
        "value_error": float(np.mean((values - returns) ** 2)),
        "entropy": float(entropy.mean()),
    }
    return {k: g.astype(np.float32) for k, g in grads.items()}, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="training time (default 10)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "policy.npz")
    parser.add_argument("--rules", default="pagat", help="preset to train on (default pagat)")
    parser.add_argument("--tables", type=int, default=64, help="games played at once (default 64)")
    parser.add_argument("--batch", type=int, default=4096, help="decisions per update (default 4096)")
    parser.add_argument("--hidden", type=int, default=128, help="units per hidden layer (default 128)")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's step size (default 0.001)")
    parser.add_argument("--entropy", type=float, default=0.01, help="entropy bonus (default 0.01)")
    parser.add_argument("--eval-every", type=int, default=25, help="updates between evaluations (default 25)")
    parser.add_argument("--eval-deals", type=int, default=40, help="duplicate deals per evaluation (default 40)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    policy = MLPPolicy.create(hidden=args.hidden, seed=args.seed)
    optimiser = Adam(policy.params, args.lr)
    games = SelfPlay(args.tables, args.rules, args.seed)
    started = time.monotonic()
    best = -np.inf
    update = 0
    decisions = 0
    while time.monotonic() - started < args.minutes * 60:
        batch = games.collect(policy, args.batch)
        grads, stats = gradients(policy, batch, args.entropy, value_coef=0.5)
        optimiser.step(policy.params, grads)
        update += 1
        decisions += len(batch)
        if update % args.eval_every == 0:
            score = duplicate_vs(policy, "easy", args.rules, deals=args.eval_deals, seed=10_000 + update)
            elapsed = time.monotonic() - started
            print(
                f"update {update:5d}  {elapsed / 60:5.1f} min  {decisions / elapsed:6.0f} decisions/s  "
                f"return {stats['return']:+.3f}  entropy {stats['entropy']:.2f}  "
                f"vs easy: {score.points_per_hand:+6.1f} points/hand, game share {score.share:.2f}",
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
