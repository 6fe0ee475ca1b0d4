"""A round's EV as a function of the true count: the linear estimate from the effects of
removal, and the simulator's curve, on one plot.

The linear estimate: a shoe's EV moves from the full shoe's by the effects of removal of the
cards out (:mod:`pontoon.count.eor`); written in the remaining cards' proportions ``q`` it is
``EV0 - (N - 1) * sum_r (q_r - p_r) * e_r`` (``p``: the full shoe's proportions, ``e``: the
effects). The true count (running count per deck left, as ``simulate --count`` keeps it, ``D``
cards a deck, ``R`` cards left) is ``F + D * tbar * (N / R - 1)``, where ``tbar`` is the mean
tag (0 for a balanced count; hi-lo on the Spanish deck is not) and ``F = -D * sum_r (q_r -
p_r) * (t_r - tbar)`` the part that moves with the cards. Regressing the EV on ``F`` over the shoe's
fluctuations gives ``EV0 + s * F`` with

    s = (N - 1) * sum_r p_r t'_r e_r / (D * sum_r p_r t'_r^2),  t' = t - tbar,

and ``F`` is about normal with mean 0 and variance ``D^2 (N - R) / (R (N - 1)) sum_r p_r
t'_r^2`` at a depth of ``R`` cards left. The line for a bin of true counts is the mean of
``EV0 + s * F`` over the rounds whose true count falls in it: the shoe dealt evenly to its
penetration, each depth weighed by the chance of that bin there. A balanced count's line is
then straight, ``EV0 + s * TC``; an unbalanced one's true count drifts up as the shoe is dealt
(``tbar > 0``), and its high counts are partly only deep shoes.
Insurance (10), for a player who insures the most allowed from a true count ``I`` on (as
``simulate --indices`` and ``count judge --rounds`` play it): in a bin from ``I`` up the line
gains ``P(ace) * m * (IE0 + s' * F)``, ``m`` the largest insurance as a part of the wager,
``IE0`` insurance's EV per unit insured against an ace of the full shoe and ``s'`` the same
regression on insurance's effects of removal (:func:`pontoon.count.judge.insurance_eor`); the
chance of the ace is the full shoe's (its change with the count is of the second order).
The simulated curve is ``simulate --count``'s: each round played flat at one wager, binned by
the true count at the deal, rounded down (so bin ``k`` holds counts in [k, k+1), compared with
the line at ``k + 1/2``), with each bin's standard error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from pontoon.analysis.composition import Floats
from pontoon.count.eor import KEYS, Effects
from pontoon.errors import InputError
from pontoon.output import save_figure


def slope(
    effects: Effects, tags: Mapping[str, float], eor: Mapping[str, float] | None = None
) -> float:
    """The linear estimate's change in EV per unit of true count (module docstring), of the
    round's EV, or of another EV whose effects of removal are ``eor``."""
    e = effects.eor if eor is None else eor
    n = sum(effects.cards.values())
    p = {k: effects.cards[k] / n for k in KEYS}
    mean = sum(p[k] * tags[k] for k in KEYS)
    centred = {k: tags[k] - mean for k in KEYS}
    den = sum(p[k] * centred[k] ** 2 for k in KEYS)
    if den <= 0:
        raise InputError("a count whose tags are all alike counts nothing")
    num = sum(p[k] * centred[k] * e[k] for k in KEYS)
    return (n - 1) * num / (n / effects.rules.decks * den)


def insurance_line(effects: Effects, tags: Mapping[str, float]) -> tuple[float, float]:
    """What insuring the most allowed adds to a round's EV (per unit wagered), as ``(a, b)``:
    ``a + b * F`` (module docstring), ``F`` the part of the true count that moves with the
    cards.

    >>> from pontoon.count.eor import Effects
    >>> from pontoon.rules import load_rules
    >>> rules = load_rules("classic-blackjack")  # 6 decks: 24 aces, 96 tens of 312
    >>> cards = {k: 24.0 for k in "A23456789"} | {"T": 96.0}
    >>> effects = Effects(rules, "basic", 0.0, dict.fromkeys(cards, 0.0), {}, cards, 0.0)
    >>> a, b = insurance_line(effects, {k: 0 for k in "A789"} | {k: 1 for k in "23456"}
    ...                       | {"T": -1})
    >>> round(a * 312 / 24 * 2 * 311, 6)  # P(ace) * 1/2 * (3 * 96 - 311) / 311
    -23.0
    >>> b > 0  # a higher hi-lo count: more tens left, insurance worth more
    True
    """
    from pontoon.count.judge import insurance_eor

    rules = effects.rules
    n = sum(effects.cards.values())
    tens = effects.cards["T"]
    full = (float(rules.insurance_pays) + 1) * tens / (n - 1) - 1  # (the dealer's ace out)
    weight = effects.cards["A"] / n * float(rules.insurance_max)
    return weight * full, weight * slope(effects, tags, insurance_eor(effects))


def curve(
    effects: Effects,
    tags: Mapping[str, float],
    simulated: Mapping[str, Any] | None = None,
    insure_from: int | None = None,
) -> list[dict[str, Any]]:
    """Per true count bin ``[k, k + 1)``: the linear estimate (module docstring), with
    insurance from the true count ``insure_from`` on where it is given, and (``simulated``:
    ``simulate --count``'s ``ev_by_true_count``) the simulated EV with its standard error
    and rounds."""
    n = sum(effects.cards.values())
    p = {k: effects.cards[k] / n for k in KEYS}
    mean = sum(p[k] * tags[k] for k in KEYS)
    spread = sum(p[k] * (tags[k] - mean) ** 2 for k in KEYS)
    deck = n / effects.rules.decks
    s = slope(effects, tags)
    insures = insure_from if effects.rules.insurance else None  # (10: from this count on)
    ins, ins_slope = insurance_line(effects, tags) if insures is not None else (0.0, 0.0)
    dealt = np.linspace(1, float(effects.rules.penetration) * n, 400)  # cards out: the depths
    left = n - dealt
    drift = deck * mean * (n / left - 1)
    sd = deck * np.sqrt((n - left) / (left * (n - 1)) * spread)
    out = []
    for tc in range(-10, 11):
        a, b = (tc - drift) / sd, (tc + 1 - drift) / sd
        chance = float((_cdf(b) - _cdf(a)).sum())
        tail = float((sd * (_pdf(a) - _pdf(b))).sum())  # E[F ; bin], over the depths
        row: dict[str, Any] = {"true_count": tc, "frequency": chance / len(dealt)}
        row["linear"] = effects.ev + s * tail / chance if chance > 1e-300 else None
        if row["linear"] is not None and insures is not None and tc >= insures:
            row["linear"] += ins + ins_slope * tail / chance
        if simulated is not None and str(tc) in simulated:
            sim = simulated[str(tc)]
            row |= {"simulated": sim["ev"], "stderr": sim["stderr"], "rounds": sim["rounds"]}
        out.append(row)
    return out


_erfc = np.vectorize(math.erfc)


def _cdf(x: Floats) -> Floats:
    out: Floats = 0.5 * _erfc(-x / math.sqrt(2))
    return out


def _pdf(x: Floats) -> Floats:
    out: Floats = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    return out


def plot(rows: list[dict[str, Any]], title: str, path: str) -> None:
    """The curve as a PNG: the line where 1 round in 10,000 or more falls, and the simulated
    points with two standard errors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    line = [r for r in rows if r["linear"] is not None and r["frequency"] >= 1e-4]
    xs = [r["true_count"] + 0.5 for r in line]
    ax.plot(xs, [r["linear"] * 100 for r in line], label="linear, from the effects of removal")
    sim = [r for r in rows if "simulated" in r and r["rounds"] >= 1000]
    if sim:
        ax.errorbar(
            [r["true_count"] + 0.5 for r in sim],
            [r["simulated"] * 100 for r in sim],
            yerr=[2 * r["stderr"] * 100 for r in sim],
            fmt="o",
            ms=4,
            capsize=3,
            label="simulated (± 2 standard errors)",
        )
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xlabel("true count (bins [k, k+1) at k + 1/2)")
    ax.set_ylabel("EV of a round, % of the wager")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path)
