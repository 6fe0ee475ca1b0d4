"""What the certification counts of each shuffled shoe: a few arrays of counts that add up.

A shoe is read in the order its cards leave it: the burnt card first (8.1), then the cards to
be dealt, next card first. Each card is a *kind* (one of the deck's 48 or 52 distinct cards;
a shoe of six decks holds six of each kind), with a rank, a suit and a value.

>>> from pontoon.rules import load_rules
>>> pack = Pack.of(load_rules("nz-pontoon"))
>>> pack.n, len(pack.kinds), pack.rank_names, pack.copies
(288, 48, 'A23456789JQK', 6)
>>> int(pack.low.sum()) * pack.copies, pack.bin_sizes.tolist()  # below the median; 8 bins
(144, [36, 36, 36, 36, 36, 36, 36, 36])
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from pontoon.cards import RANKS, SUITS, Card, pack
from pontoon.rules import RuleSet

Array = np.ndarray[Any, Any]
BINS = 8  # positions are grouped into this many bins of (nearly) equal size


@dataclass(frozen=True)
class Pack:
    """The cards of a shoe as indices: ``kind`` of a card, and each kind's rank, suit and
    value; ``bin`` of each position (0 = the first card out)."""

    n: int
    kinds: tuple[Card, ...]
    index: dict[Card, int]
    rank_names: str
    rank: Array  # kind -> rank index (0 .. ranks-1)
    suit: Array  # kind -> suit index
    value: Array  # kind -> value (1-10)
    low: Array  # kind -> True when its value is below the pack's median value
    bin: Array  # position -> bin
    copies: int  # of each kind

    @classmethod
    def of(cls, rules: RuleSet) -> Pack:
        cards = pack(rules.deck, rules.decks)
        kinds = tuple(dict.fromkeys(cards))
        ranks = sorted({c.rank for c in kinds})
        value = np.array([c.value for c in kinds], np.int64)
        median = float(np.median(np.repeat(value, rules.decks)))
        n = len(cards)
        return cls(
            n=n,
            kinds=kinds,
            index={c: i for i, c in enumerate(kinds)},
            rank_names="".join(RANKS[r - 1] for r in ranks),
            rank=np.array([ranks.index(c.rank) for c in kinds], np.int64),
            suit=np.array([SUITS.index(c.suit) for c in kinds], np.int64),
            value=value,
            low=value < median,
            bin=np.arange(n) * BINS // n,
            copies=rules.decks,
        )

    @property
    def ranks(self) -> int:
        return len(self.rank_names)

    @property
    def bin_sizes(self) -> Array:
        return np.bincount(self.bin, minlength=BINS)

    def rank_counts(self) -> Array:
        """Cards of each rank in the shoe."""
        return np.bincount(self.rank, minlength=self.ranks) * self.copies

    def suit_counts(self) -> Array:
        return np.bincount(self.suit, minlength=len(SUITS)) * self.copies


def _zeros(*shape: int) -> Any:
    return field(default_factory=lambda: np.zeros(shape, np.int64))


@dataclass
class Tally:
    """The counts of some shoes. Integer counts are exact; the two float arrays of the
    consecutive-shoes test are added in chunk order, so a seed always gives the same sums."""

    pack: Pack
    shuffles: int = 0
    position_rank: Array = field(init=False)  # (position, rank)
    position_suit: Array = field(init=False)  # (position, suit)
    kind_bin: Array = field(init=False)  # (kind, bin of its position)
    adjacent: Array = field(init=False)  # (rank, rank of the next card)
    burnt: Array = field(init=False)  # rank of the burnt card
    runs: int = 0  # runs of low / high cards, summed over shoes
    lag_products: int = 0  # sum over shoes of sum_t v[t] * v[t+1]
    ends: int = 0  # sum over shoes of v[first] + v[last]
    cut_off: int = 0  # shoes whose cutting card was not where the rules put it
    carried: Array = field(init=False)  # (bin, bin): kinds carried from a shoe to the next
    carried_cov: Array = field(init=False)  # its covariance, given the shoes
    pairs_of_shoes: int = 0

    def __post_init__(self) -> None:
        p = self.pack
        self.position_rank = np.zeros((p.n, p.ranks), np.int64)
        self.position_suit = np.zeros((p.n, len(SUITS)), np.int64)
        self.kind_bin = np.zeros((len(p.kinds), BINS), np.int64)
        self.adjacent = np.zeros((p.ranks, p.ranks), np.int64)
        self.burnt = np.zeros(p.ranks, np.int64)
        self.carried = np.zeros((BINS, BINS))
        self.carried_cov = np.zeros((BINS * BINS, BINS * BINS))

    def add(self, other: Tally) -> None:
        for f in fields(self):
            if f.name != "pack":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def count(self, shoes: Array, burnt: bool, cut_off: int) -> None:
        """Count ``shoes`` (one row a shoe: the kind of each card, in the order they leave
        it; consecutive rows are consecutive shuffles of one shoe)."""
        p = self.pack
        m, n = shoes.shape
        rank, suit, value = p.rank[shoes], p.suit[shoes], p.value[shoes]
        pos = np.arange(n)
        self.shuffles += m
        self.position_rank += _counts(pos * p.ranks + rank, n * p.ranks).reshape(n, p.ranks)
        self.position_suit += _counts(pos * len(SUITS) + suit, n * len(SUITS)).reshape(n, -1)
        self.kind_bin += _counts(shoes * BINS + p.bin, len(p.kinds) * BINS).reshape(-1, BINS)
        self.adjacent += _counts(rank[:, :-1] * p.ranks + rank[:, 1:], p.ranks**2).reshape(
            p.ranks, p.ranks
        )
        if burnt:
            self.burnt += np.bincount(rank[:, 0], minlength=p.ranks)
        low = p.low[shoes]
        self.runs += m + int((low[:, 1:] != low[:, :-1]).sum())
        self.lag_products += int((value[:, :-1] * value[:, 1:]).sum())
        self.ends += int(value[:, 0].sum() + value[:, -1].sum())
        self.cut_off += cut_off
        self._carry(shoes)

    def _carry(self, shoes: Array) -> None:
        """For each shoe, X[kind, bin]: the copies of the kind in the bin, less their mean
        over kinds. Shoe i and shoe i+1 give S = X_i' X_{i+1} (bin by bin); given both shoes'
        tables, a shuffle that forgets where cards were makes every labelling of the kinds in
        shoe i+1 equally likely, so E[S] = 0 and Cov(S[a,c], S[b,d]) = A[a,b] B[c,d] / (K-1)
        with A = X_i' X_i, B = X_{i+1}' X_{i+1} and K kinds."""
        p = self.pack
        m = shoes.shape[0]
        kinds = len(p.kinds)
        if m < 2:
            return
        flat = (np.arange(m)[:, None] * kinds + shoes) * BINS + p.bin
        x = np.bincount(flat.ravel(), minlength=m * kinds * BINS).reshape(m, kinds, BINS)
        xc = x - p.bin_sizes / kinds
        self.carried += xc[:-1].reshape(-1, BINS).T @ xc[1:].reshape(-1, BINS)
        gram = (xc.transpose(0, 2, 1) @ xc).reshape(m, BINS * BINS)  # (shoe, a*b)
        cov = (gram[:-1].T @ gram[1:]).reshape(BINS, BINS, BINS, BINS)  # (a, b, c, d)
        self.carried_cov += cov.transpose(0, 2, 1, 3).reshape(BINS * BINS, -1) / (kinds - 1)
        self.pairs_of_shoes += m - 1


def _counts(index: Array, size: int) -> Array:
    return np.bincount(index.ravel(), minlength=size)
