"""A :class:`~arena_sdk.sampling.DealSampler` that draws many worlds of one decision cheaply.

``DealSampler.sample_hidden`` works out, for every draw, the ways each group
of hidden cards can be split over the seats that may hold it.  Within one
decision those splits and their weights never change, so :class:`WorldSampler`
works them out once per (group, remaining room) and then draws with one
binary search: the same worlds from the same random numbers (a test checks
it), at about half the cost of a world for Hard.  Four players only; other
tables use the parent's method unchanged.
"""

from __future__ import annotations

import bisect
import random
from typing import Any

from arena_sdk.bots.simulate import Position
from arena_sdk.engine.cards import mask_of
from arena_sdk.sampling import BidModel, DealSampler, Holder, _fast, _randbelow, _shuffle


class WorldSampler(DealSampler):
    """``DealSampler`` with the split options of each draw step remembered (four players)."""

    def __init__(self, view: Any, bid_model: BidModel | None = None, *, oversample: int = 4) -> None:
        super().__init__(view, bid_model, oversample=oversample)
        self._options: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[tuple[Any, ...]]]] = {}
        self._group_cards = [g.cards for g in self.groups]
        self._position: Position | None = None  # the first world's play position (see sample_position)
        self._first_world: Any = None

    def sample_hidden(self, rng: random.Random) -> dict[Holder, list[int]]:
        """One uniform allocation of the hidden cards (the parent's draw, remembered splits)."""
        if self.n != 4:
            return super().sample_hidden(rng)
        caps = (*self.sizes, self.cap)
        holders = self.holders
        if _fast is not None:  # the same draw in the compiled core
            drawn = _fast.sample_groups(rng, self._group_cards, self._options_for, caps, len(holders))
            return dict(zip(holders, drawn))
        out: dict[Holder, list[int]] = {h: [] for h in holders}
        for gi, g in enumerate(self.groups):
            cumulative, rows = self._options_for(gi, caps)
            counts, after = rows[bisect.bisect_right(cumulative, _randbelow(rng, cumulative[-1]))]
            cards = g.cards[:]
            _shuffle(rng, cards)
            pos = 0
            for h, x in enumerate(counts[: len(holders)]):
                if x:
                    out[holders[h]].extend(cards[pos : pos + x])
                    pos += x
            caps = after
        return out

    def _options_for(self, gi: int, caps: tuple[int, ...]) -> tuple[list[int], list[tuple[Any, ...]]]:
        """The split options of group ``gi`` with ``caps`` of room left (worked out once)."""
        key = (gi, caps)
        options = self._options.get(key)
        if options is None:
            options = self._options[key] = self._split_options(gi, self.groups[gi], caps)
        return options

    def sample_position(self, rng: random.Random) -> tuple[Any, Position]:
        """``(world, Position.of(world))`` for a world drawn as :meth:`sample` draws it (the same numbers).

        Within one decision every world is the first one with other hidden
        hands, so after the first the play position is made from the hands
        alone, without a game state; ``world`` is then the first world (only
        what all worlds share may be read from it: bids, scores, the trick).
        """
        if self._position is None or self.n != 4:
            world = self.sample(rng)
            if self.n == 4 and self._template is not None:
                self._first_world, self._position = world, Position.of(world)
            return world, Position.of(world)
        pos = self._position.copy()
        masks = self._draw_in_core(rng) if _fast is not None else None
        if masks is None:
            hands = self._hands(self.sample_allocation(rng))
            masks = _fast.masks_of(hands) if _fast is not None else [mask_of(h) for h in hands]
        pos.hands[:] = masks
        return self._first_world, pos

    def _draw_in_core(self, rng: random.Random) -> list[int] | None:
        """The hands of :meth:`sample_allocation` drawn in the compiled core, or None where it cannot."""
        model = self.bid_model
        sigma = getattr(model, "honour_sigma", None) if model is not None else None
        if model is not None and sigma is None:
            return None  # a bid model of the caller's own: Python calls it
        if self._skip is None:
            self._skip = [s == self.me or self.view.bids[s] is None or bool(self.view.blind[s]) for s in range(self.n)]
            self._played_masks = [mask_of(p) for p in self.played]
            self._bids0 = [b if b is not None else 0 for b in self.view.bids]
        fixed = [mask_of(self.my_hand) if s == self.me and not self.hand_hidden else 0 for s in range(self.n)]
        return _fast.draw_hands(  # type: ignore[no-any-return]
            rng, self._group_cards, self._options_for, (*self.sizes, self.cap), list(self.holders),
            self.oversample, model is not None, self._played_masks, self._bids0, self._skip,
            sigma or 0.0, fixed,
        )  # fmt: skip

    def _split_options(self, gi: int, g: Any, caps: tuple[int, ...]) -> tuple[list[int], list[tuple[Any, ...]]]:
        """Cumulative weights and (counts, room after) of each way to split group ``g``."""
        cumulative: list[int] = []
        rows: list[tuple[Any, ...]] = []
        total = 0
        for counts, coeff in self._compositions(g, caps):
            after = self._after(g, caps, counts)
            w = coeff * self._ways(gi + 1, after)
            if w:
                total += w
                cumulative.append(total)
                rows.append((counts, after))
        return cumulative, rows
