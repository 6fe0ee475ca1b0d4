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

import functools
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
    def point(cls, cents: int, mass: float | Floats = 1.0) -> Dist:
        return cls(np.array([cents], dtype=np.int64), np.array([mass], dtype=np.float64).ravel())

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

    def scaled(self, w: float | Floats) -> Dist:
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
    keys. Every key is still a whole number of cents, so the sums are as exact. ``probs``
    may have leading axes (a row per dealer outcome, say): each row is a distribution, and
    every operation works row by row.

    >>> a = Lattice.of(250, np.array([-500, 750]), np.array([0.5, 0.5]))
    >>> b = a.convolve(a).shift(-500)
    >>> b.dist().keys.tolist(), b.dist().probs.tolist()
    ([-1500, -250, 1000], [0.25, 0.5, 0.25])
    >>> rows = Lattice.of(250, np.array([-500, 750]), np.array([[0.5, 0.5], [1.0, 0.0]]))
    >>> [rows.convolve(a).dist(k).probs.tolist() for k in (0, 1)]
    [[0.25, 0.5, 0.25], [0.5, 0.5]]
    """

    unit: int
    start: int
    probs: Floats  # (..., span)

    @classmethod
    def of(cls, unit: int, cents: Ints, masses: Floats) -> Lattice:
        """The masses ``masses`` (..., len(cents)) at ``cents`` (multiples of ``unit``;
        repeats allowed)."""
        lo, onto = _onto(unit, np.asarray(cents, dtype=np.int64).tobytes())
        return cls(unit, lo, masses @ onto)

    @classmethod
    def point(cls, unit: int, mass: float | Floats = 1.0) -> Lattice:
        """``mass`` at 0 cents (a row of it per entry of an array)."""
        return cls(unit, 0, np.asarray(mass, dtype=np.float64)[..., None])

    def convolve(self, other: Lattice) -> Lattice:
        """The sum of independent amounts drawn from both (row by row)."""
        a, b = self.probs, other.probs
        start = self.start + other.start
        if a.ndim == b.ndim == 1:
            return Lattice(self.unit, start, np.convolve(a, b))
        if a.shape[-1] < b.shape[-1]:
            a, b = b, a
        width = a.shape[-1]
        lead = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
        out = np.zeros((*lead, width + b.shape[-1] - 1))
        for j in range(b.shape[-1]):  # the shorter one's places
            out[..., j : j + width] += a * b[..., j : j + 1]
        return Lattice(self.unit, start, out)

    def __add__(self, other: Lattice) -> Lattice:
        lo = min(self.start, other.start)
        hi = max(self.start + self.probs.shape[-1], other.start + other.probs.shape[-1])
        lead = np.broadcast_shapes(self.probs.shape[:-1], other.probs.shape[:-1])
        out = np.zeros((*lead, hi - lo))
        for part in (self, other):
            out[..., part.start - lo : part.start - lo + part.probs.shape[-1]] += part.probs
        return Lattice(self.unit, lo, out)

    def scaled(self, w: float | Floats) -> Lattice:
        """Every mass times ``w`` (a number, or one per row)."""
        return Lattice(self.unit, self.start, self.probs * np.asarray(w)[..., None])

    def shift(self, cents: int) -> Lattice:
        """Every amount moved by ``cents`` (a multiple of the unit)."""
        if cents % self.unit:
            raise ValueError(f"{cents} cents is not a whole number of {self.unit}-cent units")
        return Lattice(self.unit, self.start + cents // self.unit, self.probs)

    def dist(self, *row: int) -> Dist:
        """The keyed masses (of row ``row``, where there are rows)."""
        probs = self.probs[row]
        nz = np.flatnonzero(probs)
        return Dist((self.start + nz).astype(np.int64) * self.unit, probs[nz])


@functools.lru_cache(maxsize=64)
def _onto(unit: int, cents: bytes) -> tuple[int, Floats]:
    """:meth:`Lattice.of`'s first place and its matrix from each of ``cents`` (int64
    bytes: a key) to its place, made once for the many boxes that share them."""
    k = np.frombuffer(cents, dtype=np.int64) // unit
    lo = int(k.min())
    onto = np.zeros((len(k), int(k.max()) - lo + 1))
    onto[np.arange(len(k)), k - lo] = 1.0
    onto.flags.writeable = False
    return lo, onto
