"""A count judged against the game's effects of removal (:mod:`pontoon.count.eor`).

*Betting correlation*: the correlation, over the full shoe's cards, between each card's tag
and its effect of removal on the round's EV. *Insurance correlation*: the same with the
effect of removal on insurance's EV against a dealer's ace (10), which only the ten-value
cards' share decides. *Playing efficiency* (Griffin, *The Theory of Blackjack*, ch. 5): for
every decision of the chart (two-card hand against a first card), the effects of removal of
what the better of the other plays gains over the chart's play; a count that knew every card
would gain, on a shoe with ``n`` of the ``N`` cards left, the expected positive part of a
normal with that mean and the standard deviation of the linear estimate; a count whose tags
correlate ``ρ`` with those effects, of one with ``ρ`` times that deviation. The efficiency is
the sum of the second over the first, each decision weighed by how often it arises.

The best simple count of a level ``L`` is the integer tags in ``-L..L`` most correlated with
the effects of removal: each scale of the effects rounded, the best kept.

>>> round(correlation([1, 1, 2], [1, 2, 3], [2, 4, 6]), 12)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from pontoon.count.eor import KEYS, Effects

DEPTH: Final = 0.5  # the part of the shoe left where playing efficiency is measured


def correlation(weights: Sequence[float], x: Sequence[float], y: Sequence[float]) -> float:
    """The correlation of ``x`` and ``y`` over items of ``weights`` (a card's count)."""
    w, a, b = (np.asarray(v, dtype=np.float64) for v in (weights, x, y))
    w = w / w.sum()
    da, db = a - w @ a, b - w @ b
    den = math.sqrt(float(w @ (da * da)) * float(w @ (db * db)))
    return float(w @ (da * db)) / den if den > 0 else 0.0


def insurance_eor(effects: Effects) -> dict[str, float]:
    """The change in insurance's EV (per unit insured, 10) against an ace when one card of
    each key leaves the shoe besides the ace."""
    pays = float(effects.rules.insurance_pays)
    cards = dict(effects.cards)
    cards["A"] -= 1
    n = sum(cards.values())
    tens = cards["T"]
    base = (pays + 1) * tens / n - 1
    return {k: (pays + 1) * (tens - (k == "T")) / (n - 1) - 1 - base for k in KEYS}


def normal_gain(mean: float, sd: float) -> float:
    """E[max(X, 0)] for X normal with ``mean`` and ``sd``."""
    if sd <= 0:
        return max(mean, 0.0)
    z = mean / sd
    return mean * 0.5 * math.erfc(-z / math.sqrt(2)) + sd * math.exp(-z * z / 2) / math.sqrt(
        2 * math.pi
    )


def playing_efficiency(effects: Effects, tags: Mapping[str, float], depth: float = DEPTH) -> float:
    """Griffin's playing efficiency of ``tags`` (see the module's docstring), on a shoe with
    ``depth`` of its cards left."""
    weights = [effects.cards[k] for k in KEYS]
    total = sum(weights)
    left = depth * total
    spread = (total - left) / (left * (total - 1))  # the variance of a mean of `left` cards
    t = [tags[k] for k in KEYS]
    perfect = achieved = 0.0
    for cell in effects.decisions:
        eor = [cell.eor[k] for k in KEYS]
        w = np.asarray(weights) / total
        e = np.asarray(eor)
        var = float(w @ (e - w @ e) ** 2) * spread * left * left
        sd = math.sqrt(var)
        rho = abs(correlation(weights, t, eor))
        perfect += cell.frequency * normal_gain(cell.gain, sd)
        achieved += cell.frequency * normal_gain(cell.gain, rho * sd)
    base = sum(c.frequency * max(c.gain, 0.0) for c in effects.decisions)
    return (achieved - base) / (perfect - base) if perfect > base else 0.0


def best_count(effects: Effects, level: int) -> dict[str, int]:
    """The integer tags in ``-level..level`` most correlated with the effects of removal."""
    weights = [effects.cards[k] for k in KEYS]
    e = np.array([effects.eor[k] for k in KEYS])
    top = float(np.max(np.abs(e)))
    best: tuple[float, dict[str, int]] = (-2.0, {})
    for step in np.linspace(0.5, level + 0.5, 200):
        tags = np.clip(np.round(e / top * step), -level, level).astype(int)
        rho = correlation(weights, tags.tolist(), e.tolist())
        if rho > best[0] + 1e-12:
            best = (rho, {k: int(x) for k, x in zip(KEYS, tags, strict=True)})
    return best[1]


def judge(effects: Effects, tags: Mapping[str, float]) -> dict[str, Any]:
    """The three figures of a count, and the best simple counts of levels 1 to 3."""
    weights = [effects.cards[k] for k in KEYS]
    t = [tags[k] for k in KEYS]
    ins = insurance_eor(effects)
    return {
        "betting_correlation": correlation(weights, t, [effects.eor[k] for k in KEYS]),
        "playing_efficiency": playing_efficiency(effects, tags),
        "insurance_correlation": correlation(weights, t, [ins[k] for k in KEYS]),
        "best_counts": {str(level): _best(effects, level) for level in (1, 2, 3)},
        "depth": DEPTH,
    }


def _best(effects: Effects, level: int) -> dict[str, Any]:
    tags = best_count(effects, level)
    weights = [effects.cards[k] for k in KEYS]
    rho = correlation(weights, [tags[k] for k in KEYS], [effects.eor[k] for k in KEYS])
    return {"tags": tags, "betting_correlation": rho}
