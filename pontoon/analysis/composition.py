"""The shoe as counts of card values, and the player's hands as compositions.

A *value* is 1 (ace) to 10; arrays are indexed ``value - 1``. A *composition* is a multiset of
values (a tuple of ten counts): all that decides a hand's play once suits are set aside
(:mod:`pontoon.analysis.suits` puts them back where the odds depend on them).

>>> from pontoon.rules import load_rules
>>> shoe = ShoeModel.of(load_rules("nz-pontoon"))
>>> shoe.counts.tolist()
[24.0, 24.0, 24.0, 24.0, 24.0, 24.0, 24.0, 24.0, 24.0, 72.0]
>>> comps = Compositions.build()
>>> len(comps), int(comps.total[comps.index[(1, 0, 0, 0, 0, 0, 0, 0, 0, 1)]])
(3082, 21)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from pontoon.cards import RANKS, SUITS, Card, pack
from pontoon.errors import InputError
from pontoon.rules import RuleSet

Comp = tuple[int, ...]
Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
VALUES = range(1, 11)
LOG_ZERO = -1.0e4  # log of an impossible count: exp() of anything near it is 0


def safe_log(x: Floats) -> Floats:
    """``log(x)``, with ``LOG_ZERO`` where ``x <= 0`` (a card that is not there)."""
    out = np.full(np.shape(x), LOG_ZERO)
    np.log(x, out=out, where=x > 0)
    return out


Removal = Card | int  # a card, or a card of that rank (1-13) whose suit is not known


@dataclass(frozen=True)
class ShoeModel:
    """The shoe before the deal: ``counts[v-1]`` cards of value ``v`` (finite), or fixed
    probabilities (``infinite``: cards are replaced as dealt). ``rank_counts`` are the cards
    of each rank (index rank - 1), for pairs of ten-value cards split by rank; ``suit_counts``
    (13 ranks, 4 suits ``SHDC``) for the bonuses paid by suit (11.1, 11.2)."""

    counts: Floats
    rank_counts: Floats
    infinite: bool = False
    suit_counts: Floats = field(default_factory=lambda: np.zeros((13, 4)))
    note: str = ""  # what this shoe is, if not the rules' own less some cards

    def scaled(self, by_value: Floats, note: str) -> ShoeModel:
        """This shoe with ``by_value`` cards of each value (fractions allowed: an expected
        shoe), each value's ranks and suits kept in their proportions."""
        per_value = np.concatenate([self.counts[:9], [self.counts[9]]])
        factor = np.divide(by_value, per_value, out=np.zeros(10), where=per_value > 0)
        by_rank = np.concatenate([factor[:9], np.repeat(factor[9], 4)])
        suits = self.suit_counts * by_rank[:, None]
        return ShoeModel(
            np.asarray(by_value, dtype=np.float64), suits.sum(axis=1), self.infinite, suits, note
        )

    @classmethod
    def of(
        cls, rules: RuleSet, infinite: bool = False, removed: Sequence[Removal] = ()
    ) -> ShoeModel:
        """The rules' shoe, less the cards ``removed`` (a card of a rank alone is taken from
        each of its suits alike: a quarter of a card from each)."""
        suits = np.zeros((13, 4))
        for c in pack(rules.deck, rules.decks):
            suits[c.rank - 1, SUITS.index(c.suit)] += 1
        if removed and infinite:
            raise InputError("cards can be removed from a finite shoe only, not --infinite")
        for x in removed:
            if isinstance(x, Card):
                if suits[x.rank - 1, SUITS.index(x.suit)] < 1:
                    raise InputError(f"{_shoe_name(rules)} has no more {x.code} to remove")
                suits[x.rank - 1, SUITS.index(x.suit)] -= 1
            else:
                if suits[x - 1].sum() < 1:
                    raise InputError(f"{_shoe_name(rules)} has no more {RANKS[x - 1]} to remove")
                suits[x - 1] -= suits[x - 1] / suits[x - 1].sum()  # each suit as it is held
        ranks = suits.sum(axis=1)
        counts = np.concatenate([ranks[:9], [ranks[9:].sum()]])
        return cls(counts, ranks, infinite, suits)

    @property
    def size(self) -> float:
        return float(self.counts.sum())

    def probs(self) -> Floats:
        return self.counts / self.size

    def remaining(self, removed: Floats) -> Floats:
        """Counts left after ``removed`` (rows of counts); the infinite shoe never changes:
        its 'counts' are then the probabilities themselves."""
        if self.infinite:
            return np.broadcast_to(self.probs(), np.shape(removed)).copy()
        return self.counts - removed

    def pattern_suits(self) -> dict[tuple[int, str], float]:
        """Cards of each suit of the ranks 6, 7 and 8 (6-7-8, 7-7-7: 11.1, 11.2)."""
        return {
            (r, s): float(self.suit_counts[r - 1, i])
            for r in (6, 7, 8)
            for i, s in enumerate(SUITS)
        }

    def ten_pairs(self, up: int) -> tuple[float, float]:
        """For pairs of ten-value cards split by rank, after the dealer's first card ``up``
        (1-10; a ten-value one of each rank as the shoe holds them): P(two ten-value cards
        are of one rank), and the expected cards of the pair's rank left besides the pair."""
        c = self.rank_counts[9:]
        firsts = (
            [(1.0, c)]
            if up != 10
            else [(x / c.sum(), c - np.eye(len(c))[r]) for r, x in enumerate(c) if x > 0]
        )
        same = left = 0.0
        for w, cr in firsts:
            n = cr.sum()
            pairs = cr * (cr - 1)
            same += w * pairs.sum() / (n * (n - 1))
            left += w * (pairs * (cr - 2)).sum() / (n * (n - 1))
        return same, left / same

    def ten_ranks(self) -> int:
        """How many ranks count ten (3 in a Spanish deck, 4 in a standard one)."""
        return int(np.count_nonzero(self.rank_counts[9:]))


def _shoe_name(rules: RuleSet) -> str:
    return f"the {rules.deck} shoe of {rules.decks} decks"


def comp_of(values: list[int] | tuple[int, ...]) -> Comp:
    """The composition of a list of values."""
    v = [0] * 10
    for x in values:
        v[x - 1] += 1
    return tuple(v)


def hard_of(c: Comp) -> int:
    return sum((i + 1) * n for i, n in enumerate(c))


def total_of(c: Comp) -> tuple[int, bool]:
    """(total, soft) of a composition, as :func:`pontoon.hand.total` counts it."""
    hard = hard_of(c)
    soft = c[0] > 0 and hard <= 11
    return (hard + 10 if soft else hard), soft


@dataclass
class Compositions:
    """Every composition with a hard total of 21 or less (one card or more), indexed, with
    each one's children (one more card; -1 when that card busts)."""

    comps: list[Comp]
    index: dict[Comp, int]
    matrix: Ints  # (M, 10) counts
    total: Ints
    soft: NDArray[np.bool_]
    ncards: Ints
    child: Ints  # (M, 10)
    _groups: list[tuple[bool, int, Ints]] = field(default_factory=list)
    _group_of: Ints | None = None

    @classmethod
    @functools.cache
    def every(cls) -> Compositions:
        """:meth:`build`'s, made once (they depend on nothing: every game shares them, and
        none writes to them)."""
        return cls.build()

    @classmethod
    def build(cls) -> Compositions:
        comps: list[Comp] = []

        def gen(start: int, cards: list[int], hard: int) -> None:
            if cards:
                comps.append(comp_of(cards))
            for v in range(start, 11):
                if hard + v <= 21:
                    gen(v, [*cards, v], hard + v)

        gen(1, [], 0)
        index = {c: i for i, c in enumerate(comps)}
        matrix = np.array(comps, dtype=np.int64)
        hard = matrix @ np.arange(1, 11)
        soft = (matrix[:, 0] > 0) & (hard <= 11)  # as total_of counts
        places = np.int64(1) << (5 * np.arange(10, dtype=np.int64))  # 21 cards at most
        codes = matrix @ places
        order = np.argsort(codes)
        more = codes[:, None] + places  # a card more of each value
        at = np.minimum(np.searchsorted(codes, more, sorter=order), len(codes) - 1)
        child = np.where(codes[order[at]] == more, order[at], -1)
        return cls(
            comps,
            index,
            matrix,
            np.where(soft, hard + 10, hard),
            soft,
            matrix.sum(axis=1),
            child,
        )

    def __len__(self) -> int:
        return len(self.comps)

    def groups(self) -> list[tuple[bool, int, Ints]]:
        """(soft, total, indices) in an order where every hand comes after all the hands one
        more card can make: hard 21 down to 11, soft 21 down to 12 (a soft hand's next card
        makes a higher soft total or a hard 12 or more), then hard 10 down to 2 (an ace makes
        a hard 10 or less soft)."""
        if not self._groups:  # (made whole, then kept: the instance is shared by threads)
            order = [(False, t) for t in range(21, 10, -1)]
            order += [(True, t) for t in range(21, 11, -1)]
            order += [(False, t) for t in range(10, 1, -1)]
            groups = []
            for soft, t in order:
                idx = np.flatnonzero((self.soft == soft) & (self.total == t))
                if idx.size:
                    groups.append((soft, t, idx))
            self._groups = groups
        return self._groups

    @property
    def group_of(self) -> Ints:
        """(M,) each composition's place in :meth:`groups` (-1: a single card, no hand)."""
        if self._group_of is None:
            out = np.full(len(self), -1, dtype=np.int64)
            for g, (_, _, idx) in enumerate(self.groups()):
                out[idx] = g
            self._group_of = out
        return self._group_of

    def containing(self, value: int) -> NDArray[np.bool_]:
        """Mask of the compositions holding at least one card of ``value``."""
        mask: NDArray[np.bool_] = self.matrix[:, value - 1] > 0
        return mask

    def two_card(self) -> Iterator[tuple[int, int, int]]:
        """(index, a, b) for every two-card composition, a <= b."""
        for a in VALUES:
            for b in range(a, 11):
                yield self.index[comp_of([a, b])], a, b
