"""The dealer's final total, exactly, for any shoe: 17-21, bust or pontoon (a natural).

For each first card the dealer's possible draws are enumerated once: every multiset ``D`` of
cards after which the dealer stops (14.3: hard 17 or more, soft 18 or more, soft 17 too unless
the dealer hits it), with the number of orders in which the dealer can draw it. From a shoe of
counts ``n`` (``N`` cards) each order has probability ``prod_v n_v^(d_v) / N^(|D|)`` (falling
powers), so one matrix product over all shoes at once gives every probability; the infinite
shoe uses ``prod_v p_v^d_v``.

>>> import numpy as np
>>> paths = dealer_paths(6, hits_soft_17=True)
>>> table = dealer_table(paths, np.array([[4.0] * 9 + [16.0]]), infinite=False)
>>> round(float(table.sum()), 12), round(float(table[0, BUST]), 4)
(1.0, 0.4386)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np

from pontoon.analysis.composition import Floats, Ints, safe_log

OUTCOMES: Final = ("17", "18", "19", "20", "21", "bust", "pontoon")
BUST: Final = 5
NATURAL: Final = 6
CHUNK: Final = 2048


@dataclass(frozen=True)
class DealerPaths:
    """Every way the dealer's hand can end after first card ``up``."""

    up: int
    hits_soft_17: bool
    counts: Ints  # (D, 10): cards drawn after the first card
    log_weight: Floats  # (D,): log of the number of orders
    outcome: Ints  # (D,): index into OUTCOMES


@cache
def dealer_paths(up: int, hits_soft_17: bool) -> DealerPaths:
    """The dealer's stopping hands after first card ``up`` (14.3)."""
    found: Counter[tuple[int, ...]] = Counter()

    def rec(counts: list[int], hard: int, ncards: int) -> None:
        soft = counts[0] > 0 or up == 1
        total = hard + 10 if soft and hard <= 11 else hard
        is_soft = soft and hard <= 11
        if total > 21 or total > 17 or (total == 17 and not (is_soft and hits_soft_17)):
            found[tuple(counts)] += 1
            return
        for v in range(1, 11):
            counts[v - 1] += 1
            rec(counts, hard + v, ncards + 1)
            counts[v - 1] -= 1

    rec([0] * 10, up, 1)
    keys = sorted(found)
    counts = np.array(keys, dtype=np.int64)
    outcome = np.empty(len(keys), dtype=np.int64)
    for i, k in enumerate(keys):
        hard = up + sum((v + 1) * n for v, n in enumerate(k))
        soft = (up == 1 or k[0] > 0) and hard <= 11
        total = hard + 10 if soft else hard
        if total > 21:
            outcome[i] = BUST
        elif total == 21 and sum(k) == 1:
            outcome[i] = NATURAL  # the dealer's first two cards: A and a ten-value card
        else:
            outcome[i] = total - 17
    weight = np.log(np.array([found[k] for k in keys], dtype=np.float64))
    return DealerPaths(up, hits_soft_17, counts, weight, outcome)


def _design(paths: DealerPaths) -> tuple[Ints, Floats]:
    """For each value the most cards of it any path draws, and the 0/1 design matrix:
    column (v, j) is 1 when the path draws more than j cards of value v, the last columns
    (j) are -1 when it draws more than j cards in all."""
    most = paths.counts.max(axis=0)
    longest = int(paths.counts.sum(axis=1).max())
    cols = []
    for v in range(10):
        for j in range(int(most[v])):
            cols.append((paths.counts[:, v] > j).astype(np.float64))
    ncards = paths.counts.sum(axis=1)
    for j in range(longest):
        cols.append(-(ncards > j).astype(np.float64))
    return most, np.stack(cols, axis=1)


@cache
def _cached_design(up: int, hits_soft_17: bool) -> tuple[Ints, Floats, Floats, Floats]:
    """The design, log weights and outcome columns of the paths that do not bust: a bust's
    probability is what the others leave (every shoe here holds enough cards for the dealer
    to finish), which halves the work."""
    paths = dealer_paths(up, hits_soft_17)
    most, design = _design(paths)
    keep = paths.outcome != BUST
    onehot = np.zeros((int(keep.sum()), len(OUTCOMES)))
    onehot[np.arange(int(keep.sum())), paths.outcome[keep]] = 1.0
    return most, design[keep], paths.log_weight[keep], onehot


def dealer_table(paths: DealerPaths, shoes: Floats, *, infinite: bool) -> Floats:
    """Probabilities of each of :data:`OUTCOMES` (columns) for each shoe (rows of counts
    left after the dealer's first card and the player's cards; for the infinite shoe, rows of
    probabilities)."""
    most, design, log_weight, onehot = _cached_design(paths.up, paths.hits_soft_17)
    shoes = np.atleast_2d(np.asarray(shoes, dtype=np.float64))
    out = np.empty((shoes.shape[0], len(OUTCOMES)))
    for lo in range(0, shoes.shape[0], CHUNK):
        part = shoes[lo : lo + CHUNK]
        feats = _features(part, most, design.shape[1], infinite)
        logp = feats @ design.T + log_weight
        out[lo : lo + CHUNK] = np.exp(logp) @ onehot
    out[:, BUST] = 1.0 - (out.sum(axis=1) - out[:, BUST])
    return out


def _features(shoes: Floats, most: Ints, width: int, infinite: bool) -> Floats:
    cols = []
    total = shoes.sum(axis=1)
    for v in range(10):
        for j in range(int(most[v])):
            cols.append(safe_log(shoes[:, v] if infinite else shoes[:, v] - j))
    for j in range(width - len(cols)):
        cols.append(np.zeros(len(total)) if infinite else safe_log(total - j))
    return np.stack(cols, axis=1)
