"""A distribution of money, exactly keyed: sorted whole cents and their probabilities.

Every payment is a whole number of cents (rounded down as the engine rounds), so sums of
hands' nets are exact integers and equal keys merge exactly; no grid is needed, whatever the
wager (an odd one makes a 3:2 win end in an odd cent).

>>> a = Dist.of({-500: 0.5, 750: 0.5})
>>> b = a.convolve(a)
>>> b.keys.tolist(), b.probs.tolist()
([-1000, 250, 1500], [0.25, 0.5, 0.25])
>>> round(b.mean() / 500, 12), round(b.central(2) / 500**2, 12)
(0.5, 3.125)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pontoon.analysis.composition import Floats, Ints


@dataclass(frozen=True)
class Dist:
    """Probability masses (not always summing to 1: a part of a round) at whole cents."""

    keys: Ints
    probs: Floats

    @classmethod
    def of(cls, masses: Mapping[int, float]) -> Dist:
        return cls.merge(np.array(list(masses), dtype=np.int64), np.array(list(masses.values())))

    @classmethod
    def merge(cls, keys: Ints, probs: Floats) -> Dist:
        """The masses ``probs`` at ``keys`` (repeats allowed), summed by key."""
        if not len(keys):
            return EMPTY
        uniq, inv = np.unique(keys, return_inverse=True)
        sums = np.bincount(inv.ravel(), weights=probs.ravel(), minlength=len(uniq))
        return cls(uniq, sums.astype(np.float64, copy=False))

    @classmethod
    def point(cls, cents: int, mass: float = 1.0) -> Dist:
        return cls(np.array([cents], dtype=np.int64), np.array([mass]))

    @classmethod
    def sum(cls, parts: list[Dist]) -> Dist:
        """The masses of all ``parts`` together."""
        if not parts:
            return EMPTY
        return cls.merge(
            np.concatenate([d.keys for d in parts]), np.concatenate([d.probs for d in parts])
        )

    def total(self) -> float:
        return float(self.probs.sum())

    def __add__(self, other: Dist) -> Dist:
        return Dist.merge(
            np.concatenate([self.keys, other.keys]), np.concatenate([self.probs, other.probs])
        )

    def scaled(self, w: float) -> Dist:
        return Dist(self.keys, self.probs * w)

    def shift(self, cents: int) -> Dist:
        return Dist(self.keys + cents, self.probs)

    def convolve(self, other: Dist) -> Dist:
        """The sum of independent amounts drawn from both."""
        if not len(self.keys) or not len(other.keys):
            return EMPTY
        keys = self.keys[:, None] + other.keys[None, :]
        return Dist.merge(keys, self.probs[:, None] * other.probs[None, :])

    def dist(self) -> Dist:
        """Itself (as :meth:`Lattice.dist`: the keyed masses)."""
        return self

    def mean(self) -> float:
        """Σ p·x (not divided by the total mass)."""
        return float(self.probs @ self.keys.astype(np.float64))

    def central(self, k: int, about: float | None = None) -> float:
        """Σ p·(x - about)^k, about the mean by default (of a distribution summing to 1)."""
        m = self.mean() if about is None else about
        return float(self.probs @ (self.keys.astype(np.float64) - m) ** k)


EMPTY = Dist(np.zeros(0, dtype=np.int64), np.zeros(0))


@dataclass(frozen=True)
class Lattice:
    """Masses at whole multiples of ``unit`` cents, dense from ``start`` units: for sums of
    several hands (a split box's), where convolving dense arrays costs far less than merging
    keys. Every key is still a whole number of cents, so the sums are as exact.

    >>> a = Lattice.of(250, np.array([-500, 750]), np.array([0.5, 0.5]))
    >>> b = a.convolve(a).shift(-500)
    >>> b.dist().keys.tolist(), b.dist().probs.tolist()
    ([-1500, -250, 1000], [0.25, 0.5, 0.25])
    """

    unit: int
    start: int
    probs: Floats

    @classmethod
    def of(cls, unit: int, cents: Ints, masses: Floats) -> Lattice:
        """The masses ``masses`` at ``cents`` (multiples of ``unit``; repeats allowed)."""
        k = cents // unit
        lo = int(k.min())
        return cls(unit, lo, np.bincount(k - lo, weights=masses).astype(np.float64, copy=False))

    @classmethod
    def point(cls, unit: int, mass: float = 1.0) -> Lattice:
        """``mass`` at 0 cents."""
        return cls(unit, 0, np.array([mass]))

    def convolve(self, other: Lattice) -> Lattice:
        """The sum of independent amounts drawn from both."""
        return Lattice(self.unit, self.start + other.start, np.convolve(self.probs, other.probs))

    def __add__(self, other: Lattice) -> Lattice:
        lo = min(self.start, other.start)
        hi = max(self.start + len(self.probs), other.start + len(other.probs))
        out = np.zeros(hi - lo)
        for part in (self, other):
            out[part.start - lo : part.start - lo + len(part.probs)] += part.probs
        return Lattice(self.unit, lo, out)

    def scaled(self, w: float) -> Lattice:
        return Lattice(self.unit, self.start, self.probs * w)

    def shift(self, cents: int) -> Lattice:
        """Every amount moved by ``cents`` (a multiple of the unit)."""
        if cents % self.unit:
            raise ValueError(f"{cents} cents is not a whole number of {self.unit}-cent units")
        return Lattice(self.unit, self.start + cents // self.unit, self.probs)

    def dist(self) -> Dist:
        nz = np.flatnonzero(self.probs)
        return Dist((self.start + nz).astype(np.int64) * self.unit, self.probs[nz])
