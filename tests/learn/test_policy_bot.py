"""PolicyBot: a policy over the environments' observations plays through the SDK, every decision kind."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from learn_support import RULESETS, short

from arena_sdk.envs import PolicyBot
from arena_sdk.envs.bot import PolicyError
from arena_sdk.testing import play_game


class RandomPolicy(PolicyBot):
    """Random legal action ids, with the observations it was shown kept for the test."""

    name = "random-policy"

    def __init__(self) -> None:
        super().__init__()
        self.kinds: set[int] = set()
        self.seen = 0

    def choose(self, observation: np.ndarray, mask: np.ndarray) -> int:
        assert observation.shape == (750,) and observation.dtype == np.float32
        self.seen += 1
        legal = np.flatnonzero(mask)
        self.kinds.update(int(a) for a in legal if a >= 66)
        return int(self.rng.choice(list(legal)))


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_a_policy_bot_plays_whole_games_in_every_preset(rules_name):
    rules = short(RULESETS[rules_name], hands=4)
    bots = [RandomPolicy() for _ in range(rules.players)]
    result = play_game(bots, rules, seed=3)  # strict: any illegal answer would raise
    assert result.result.hands == 4 or result.result.ending != "max_hands"
    assert all(b.seen > 0 for b in bots)
    kinds = set().union(*(b.kinds for b in bots))
    if rules.players == 2:
        assert {68, 69} <= kinds  # the draw was asked
    if rules.blind_nil != "off" and rules.blind_nil_min_deficit == 0:
        assert {66, 67} <= kinds  # blind nil was asked


def test_exchange_goes_through_the_policy_a_card_at_a_time():
    class BlindExchanger(PolicyBot):
        name = "blind-exchanger"

        def __init__(self) -> None:
            super().__init__()
            self.exchanges: list[list[int]] = []

        def choose(self, observation, mask):
            legal = [int(a) for a in np.flatnonzero(mask)]
            if 67 in legal:
                return 67  # always blind nil: every hand has an exchange
            if 70 in legal:
                chosen = [c for c in legal if c < 52]
                return chosen[0] if len(self.exchanges) % 2 == 0 and chosen else 70
            return legal[0]

        def exchange(self, view):
            cards = super().exchange(view)
            self.exchanges.append([int(c) for c in cards])
            return cards

    bot = BlindExchanger()
    play_game([bot, "random"], short(RULESETS["two-player"], hands=4), seed=5)
    assert bot.exchanges and any(len(e) == 3 for e in bot.exchanges)


def test_a_policy_that_picks_an_illegal_action_is_told_which_were_legal():
    class Wrong(PolicyBot):
        name = "wrong"

        def choose(self, observation, mask):
            return int(np.flatnonzero(mask == 0)[0])

    with pytest.raises(PolicyError, match=r"not legal now \(legal: bid 0, bid 1"):
        play_game([Wrong(), "random"], "pagat", seed=1)


def test_in_the_arena_a_broken_policy_is_a_strike_not_a_crash():
    class Wrong(PolicyBot):
        name = "wrong"

        def choose(self, observation, mask):
            return 999

    result = play_game([Wrong(), "random"], short(RULESETS["pagat"], hands=1), seed=1, strict=False)
    assert result.defaults[0] > 0 and result.defaults[1] == 0


def test_choose_must_be_implemented():
    with pytest.raises(NotImplementedError, match="implement choose"):
        play_game([PolicyBot(), "random"], short(RULESETS["pagat"], hands=1), seed=1)


def test_the_bot_side_imports_neither_gymnasium_nor_pettingzoo_and_the_sdk_not_numpy():
    code = (
        "import sys\n"
        "import arena_sdk, arena_sdk.bot, arena_sdk.testing, arena_sdk.bots\n"
        "assert 'numpy' not in sys.modules, 'the SDK without envs must not need numpy'\n"
        "import arena_sdk.envs.bot, arena_sdk.envs.observation\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'pettingzoo', 'arena'))\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_missing_extra_is_named_in_the_error(monkeypatch):
    code = (
        "import sys\n"
        "sys.modules['pettingzoo'] = None  # as if the extra were not installed\n"
        "import arena_sdk.envs\n"
        "try:\n"
        "    arena_sdk.envs.SpadesAECEnv\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'arena-sdk[envs]'" in out.stdout, (out.stdout, out.stderr)
