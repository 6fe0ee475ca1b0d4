"""Bets and risk: the bet at each true count, and what the ramp earns at what risk.

From the EV at each true count (:mod:`pontoon.count.curve`: the line from the effects of
removal and the model's share of rounds at each count, or, with ``--rounds``, the simulated
EVs, shares and variances) the Kelly bet at a count is ``kelly * bankroll * EV / variance``
where the EV is positive, the minimum bet where it is not (or nothing: ``--wong-out``, sitting
out under a count), held to the spread and the table's limits and rounded down to chips.
Then, per round with ``f_t`` of the rounds at count ``t``, bet ``b_t``, EV ``e_t`` and
variance ``v_t`` a unit:

- win rate ``W = sum_t f_t b_t e_t``, variance ``V = sum_t f_t b_t^2 (v_t + e_t^2) - W^2``;
- per 100 rounds: ``100 W`` and ``10 sqrt(V)``;
- desirability index ``DI = 1000 W / sqrt(V)``, ``SCORE = DI^2`` (the win per 100 rounds of a
  player betting this ramp scaled to full Kelly on a bankroll of 10,000 units, Schlesinger),
  ``N0 = V / W^2`` (the rounds after which the expected win is one standard deviation);
- risk of ruin, closed form for a random walk with that drift and variance (the diffusion
  approximation, Schlesinger's formula): ``exp(-2 W B / V)`` for a bankroll ``B``, 1 if
  ``W <= 0``; within ``n`` rounds, Brownian motion's first passage: ``Phi((-B - W n) / (s
  sqrt(n))) + exp(-2 W B / V) Phi((-B + W n) / (s sqrt(n)))``, ``s = sqrt(V)``;
- the risk of ruin without end from simulated sessions that stop at ruin or when the bankroll
  has grown ``K``-fold (:func:`ruin_beyond`).

Money stays in cents: the bets are whole chips; the win rate and deviation are expectations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pontoon.count.curve import curve
from pontoon.count.eor import Effects
from pontoon.errors import InputError


@dataclass(frozen=True)
class Table:
    """The betting limits: the minimum bet (cents), the spread (largest / smallest), the chip
    (bets are whole chips), the table maximum, Kelly's fraction, and the count under which the
    player sits out (None: always plays)."""

    minimum: int
    spread: float
    chip: int
    maximum: int
    kelly: float = 1.0
    wong_out: int | None = None
    boxes: tuple[tuple[int, int], ...] = ()  # (true count, boxes played from it up)

    def boxes_at(self, tc: int) -> int:
        """The boxes played at true count ``tc`` (1 unless ``boxes`` says more)."""
        return max([n for t, n in self.boxes if tc >= t], default=1)

    def check(self) -> None:
        if self.minimum < 1 or self.chip < 1:
            raise InputError("--wager and --chip must be positive numbers of cents")
        if self.spread < 1:
            raise InputError(
                f"--spread must be 1 or more (largest bet / smallest), not {self.spread}"
            )
        if not 0 < self.kelly <= 1:
            raise InputError(f"--kelly must be above 0 and at most 1, not {self.kelly}")
        if any(not 1 <= n <= 7 for _, n in self.boxes):
            raise InputError("--boxes-from plays 1 to 7 boxes (15.1)")
        if self.minimum % self.chip:
            raise InputError(
                f"the minimum bet {self.minimum} is not a whole number of {self.chip}-cent chips"
            )


def ramp(
    effects: Effects,
    tags: Mapping[str, float],
    bankroll: int,
    table: Table,
    variance: float,
    simulated: Mapping[str, Any] | None = None,
    covariance: float = 0.0,
) -> dict[str, Any]:
    """The bets and the ramp's figures (module docstring); ``variance``: a round's variance
    per unit wagered (the exact one of the full shoe, :mod:`pontoon.analysis.distribution`),
    used at every count without ``simulated``; ``covariance``: of two boxes at one table, per
    unit squared (they share the dealer's hand), for the counts where ``table`` plays more
    than one box: ``n`` boxes of ``b`` each win ``n b e`` with variance ``b^2 (n v + n (n - 1)
    c)``, and Kelly's bet a box is ``kelly * bankroll * e / (v + (n - 1) c)``."""
    if bankroll < table.minimum:
        raise InputError(f"--bankroll must cover the minimum bet {table.minimum}, not {bankroll}")
    table.check()
    rows = curve(effects, tags, simulated)
    top = min(table.maximum, int(table.minimum * table.spread))
    bets: dict[str, int] = {}
    boxes: dict[str, int] = {}
    win = second = played = 0.0
    source = "simulated" if simulated else "linear"
    for r in rows:
        tc = r["true_count"]
        if simulated:
            if "simulated" not in r or r["rounds"] < 2:
                continue
            e, share = float(r["simulated"]), float(r["rounds"])
            v = float(r["stderr"]) ** 2 * r["rounds"]
        else:
            if r["linear"] is None:
                continue
            e, share, v = float(r["linear"]), float(r["frequency"]), variance
        n = table.boxes_at(tc)
        if table.wong_out is not None and tc < table.wong_out:
            bet = 0
        elif e > 0:
            kelly = table.kelly * bankroll * e / (v + (n - 1) * covariance)
            bet = max(table.minimum, min(top, int(kelly // table.chip) * table.chip))
        else:
            bet = table.minimum
        bets[str(tc)] = bet
        if n > 1:
            boxes[str(tc)] = n
        win += share * n * bet * e
        second += share * bet * bet * (n * v + n * (n - 1) * covariance + (n * e) ** 2)
        played += share
    win /= played
    var = second / played - win * win
    sd = math.sqrt(max(var, 0.0))
    di = 1000 * win / sd if sd > 0 else 0.0
    return {
        "variance": var,
        "bets": bets,
        "boxes": boxes,
        "covariance": covariance,
        "win_per_100": 100 * win,
        "sd_per_100": 10 * sd,
        "score": di * di if win > 0 else 0.0,
        "di": di,
        "n0": var / (win * win) if win > 0 else None,
        "risk_of_ruin": math.exp(-2 * win * bankroll / var) if win > 0 and var > 0 else 1.0,
        "average_bet": sum(
            (float(r["rounds"]) if simulated else float(r["frequency"]))
            * bets[str(r["true_count"])]
            for r in rows
            if str(r["true_count"]) in bets
        )
        / played,
        "bankroll": bankroll,
        "source": source,
        "units": "cents; win and sd per 100 rounds dealt; bets by true count (floored)",
    }


def ruin_within(win: float, var: float, bankroll: float, rounds: int) -> float:
    """The chance a bankroll is lost within ``rounds`` rounds (module docstring)."""
    if rounds < 1 or var <= 0:
        return 0.0
    sd = math.sqrt(var * rounds)

    def phi(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2))

    a = phi((-bankroll - win * rounds) / sd)
    b = phi((-bankroll + win * rounds) / sd)
    return min(1.0, a + math.exp(min(-2 * win * bankroll / var, 700.0)) * b)


def ruin_beyond(p: float, k: int) -> tuple[float, float, float]:
    """The risk of ruin without end ``R`` from ``p``, the chance of ruin before the bankroll
    has grown ``k``-fold: ``R = p + (1 - p) R^k``, the least root. The bets of a ramp depend on
    the count, not on the bankroll, so losing ``k`` bankrolls is losing one ``k`` times in a
    row: ``R(k B) = R(B)^k`` (up to the last bet's overshoot). Returns ``R``, the part beyond
    the goal ``(1 - p) R^k`` and ``dR/dp`` (a standard error of ``p`` times it is ``R``'s).

    >>> r, beyond, scale = ruin_beyond(0.0476, 2)  # Brownian motion: p = R / (1 + R)
    >>> round(r, 4), round(beyond, 5), round(scale, 3)
    (0.05, 0.00238, 1.102)
    >>> ruin_beyond(0.6, 2)[0]  # no root below 1: a losing or even game is ruined for sure
    1.0
    """
    if p >= 1 - 1 / k:
        return 1.0, 1.0 - p, 0.0
    r = p
    for _ in range(1000):
        nxt = p + (1 - p) * r**k
        if abs(nxt - r) < 1e-15:
            break
        r = nxt
    slope = 1 - k * (1 - p) * r ** (k - 1)
    return r, (1 - p) * r**k, (1 - r**k) / slope
