"""What a walk over the compositions leaves for each context (:class:`Values`): the action
values, the choices and the values of arriving at a composition, as arrays over every
composition (an unsplit hand's) or over the compositions in play only (a split hand's, made
dense when first read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from pontoon.analysis.composition import Floats

STAND, HIT, DOUBLE, SURRENDER = range(4)  # the action columns
NEG: Final = -np.inf


@dataclass(frozen=True)
class Context:
    """An unsplit hand (``pair`` None) or a split hand of ``pair`` with ``extra`` other cards
    of that value out of the shoe."""

    pair: int | None = None
    extra: int = 0

    def offset(self) -> tuple[int, ...]:
        """The cards out of the shoe besides the hand's own, by value."""
        v = [0] * 10
        if self.pair is not None:
            v[self.pair - 1] = self.extra
        return tuple(v)


@dataclass
class Values:
    """Every composition's action values (``act``, -inf when illegal), its value under the
    policy (``node``), and the value of arriving at it by a hit (``arr1``; ``sarr1``: the
    same for P(dealer pontoon and the hand stood)); ``rescued``: where a doubled hand ending
    on that composition is rescued (12); ``by_suits``: a 6-7/6-8/7-8/7-7 hand plays best for
    its suits (no policy was given)."""

    act: Floats  # (M, 10, 4)
    choice: np.ndarray  # (M, 10)
    node: Floats
    arr1: Floats
    sarr1: Floats
    premium: dict[int, tuple[Floats, Floats]]  # composition -> average (hit, double) premium
    rescued: np.ndarray  # (M, 10) bool
    by_suits: bool = False

    def slim(self) -> Values:
        """These values as playing the hands forwards reads them: an unsplit hand's, all."""
        return self


FILL: Final = {"act": NEG, "rescued": False}  # out of play; every other array holds 0


def dense(rows: np.ndarray, every: np.ndarray, m: int, name: str) -> np.ndarray:
    """A Values array over all ``m`` compositions from its ``rows`` in play (``every``)."""
    out = np.full((m, *rows.shape[1:]), FILL.get(name, 0), dtype=rows.dtype)
    out[every] = rows
    return out


class LazyValues(Values):
    """The :class:`Values` of a split hand, kept as the rows of the compositions in play
    (those holding the pair card: a third of them on average). Each field becomes the
    usual array over every composition when first read, and stays; :func:`values_at`
    reads rows without that."""

    def __init__(
        self,
        every: np.ndarray,
        m: int,
        compact: dict[str, np.ndarray],
        premium: dict[int, tuple[Floats, Floats]],
        by_suits: bool,
    ) -> None:
        self._every = every
        self._m = m
        self._compact = compact
        self._inv = np.full(m, -1, dtype=np.int64)
        self._inv[every] = np.arange(len(every))
        self.premium = premium
        self.by_suits = by_suits

    def slim(self) -> LazyValues:
        """These values as playing the hands forwards reads them (:mod:`pontoon.analysis.reach`,
        :mod:`pontoon.analysis.pairs`): the choices, the rescues (12), and the action values
        only where the suits decide the play; the rest is dropped."""
        keep = {
            "choice": self._compact["choice"].astype(np.int8),
            "rescued": self._compact["rescued"].copy(),
        }
        if self.premium and self.by_suits:
            keep["act"] = self._compact["act"]
        return LazyValues(self._every, self._m, keep, self.premium, self.by_suits)

    def __getattr__(self, name: str) -> np.ndarray:
        compact = self.__dict__.get("_compact")  # (not there while unpickling)
        if compact is None or name not in compact:
            raise AttributeError(name)
        out = dense(compact[name], self._every, self._m, name)
        setattr(self, name, out)
        return out


def values_at(v: Values, name: str, idx: np.ndarray) -> np.ndarray:
    """``getattr(v, name)[idx]``, without making a split hand's whole array."""
    if isinstance(v, LazyValues) and name not in v.__dict__:
        at = v._inv[idx]
        out: np.ndarray = v._compact[name][np.where(at < 0, 0, at)]
        out[at < 0] = FILL.get(name, 0)
        return out
    rows: np.ndarray = getattr(v, name)[idx]
    return rows
