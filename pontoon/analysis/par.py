"""The game's mathematics as a regulator's PAR sheet asks for it: the house advantage, the
exact distribution of a round, every paying outcome with its frequency, insurance, the Super
Bonus by band, the volatility and an operator's figures, and the effect of each rule a casino
may vary (:mod:`pontoon.analysis.effects`). :mod:`pontoon.analysis.par_render` writes it as
HTML or PDF; :meth:`ParSheet.to_json` has every figure.

Each figure says how exact it is: "exact" (combinatorial, to floating-point rounding),
"split approximation" (split rounds take the hands as independent given the dealer's first
card and outcome: docs/analysts/analysis.md measures it), or "normal approximation" (a
shift's band).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, Final

import numpy as np

import pontoon
from pontoon.analysis.covariance import Covariance
from pontoon.analysis.dealer import OUTCOMES
from pontoon.analysis.distribution import RoundDistribution, round_distribution
from pontoon.analysis.evaluate import two_card_hands
from pontoon.analysis.game import Context
from pontoon.analysis.report import Report
from pontoon.errors import InputError, PontoonError
from pontoon.settlement import odds_text, super_bonus_amount
from pontoon.vocab import Ending

EXACT: Final = "exact"
MODEL: Final = (
    "the model: boxes independent given the dealer's first card and outcome (it leaves out "
    "the cards each box takes from the other's shoe: a thousandth or two high)"
)
SPLITS: Final = "split approximation"
NORMAL: Final = "normal approximation"
Z: Final = {"90": 1.6448536269514722, "95": 1.959963984540054, "99": 2.5758293035489004}
# What the split approximation was measured to be against Eric Farmer's exact split-once
# distributions (tests/test_analysis_distribution.py): the variance 3.6e-5 to 5.0e-5 high.
SPLIT_ERROR: Final = "split rounds: variance within 1e-4, each probability within 2e-5"
NAMES: Final = {
    Ending.PONTOON: "pontoon (9.1)",
    Ending.TWENTY_ONE: "21 of two to four cards (9.2)",
    Ending.FIVE_CARD_21: "five-card 21 (11.1)",
    Ending.SIX_CARD_21: "six-card 21 (11.1)",
    Ending.SEVEN_CARD_21: "seven-card 21 (11.1)",
    Ending.MIXED_678: "6-7-8 mixed suits (11.1)",
    Ending.SUITED_678: "6-7-8 one suit (11.1)",
    Ending.SPADES_678: "6-7-8 spades (11.1)",
    Ending.MIXED_777: "7-7-7 mixed suits (11.1)",
    Ending.SUITED_777: "7-7-7 one suit (11.1)",
    Ending.SPADES_777: "7-7-7 spades (11.1)",
    Ending.SUPER_BONUS: "Super Bonus (11.2)",
    Ending.WIN: "win on a higher total",
    Ending.DEALER_BUST: "win, dealer busts",
    Ending.PUSH: "push",
    Ending.LOSS: "loss on a lower total",
    Ending.DEALER_PONTOON: "loss to a dealer pontoon",
    Ending.BUST: "bust",
    Ending.SURRENDER: "surrender (9.3)",
    Ending.RESCUE: "rescue (12)",
}


@dataclass(frozen=True)
class Operator:
    """The table an operator runs: rounds an hour, boxes in play, average wager (cents),
    hours in a shift."""

    rounds_per_hour: int = 60
    boxes: int = 7
    wager: int = 500
    hours: float = 8.0

    def check(self) -> None:
        if self.rounds_per_hour < 1 or not 1 <= self.boxes <= 7 or self.wager < 1:
            raise InputError("--rounds-per-hour, --boxes (1-7) and --wager must be positive")
        if not 0 < self.hours <= 24:
            raise InputError(f"--hours must be above 0 and at most 24, not {self.hours}")


@dataclass
class ParSheet:
    """Every figure of the report (see the module's docstring)."""

    report: Report
    dist: RoundDistribution
    operator: Operator
    effects: list[dict[str, Any]] = field(default_factory=list)
    created: str = ""
    simulated: Covariance | None = None  # two boxes' covariance from the simulator

    @property
    def rules(self) -> Any:
        return self.report.rules

    def summary(self) -> dict[str, Any]:
        d = self.dist
        _mean, var, skew, kurt = d.moments()
        win, push, loss = d.chances()
        wagered = d.wagered
        return {
            "ev": self.report.ev,
            "house_edge": -self.report.ev,
            "variance": var,
            "sd": math.sqrt(var),
            "skewness": skew,
            "excess_kurtosis": kurt,
            "p_win": win,
            "p_push": push,
            "p_loss": loss,
            "wagered": wagered,
            "element_of_risk": -self.report.ev / wagered,
            # the two boxes' covariance the sheet uses (the k-box variances, the bands): the
            # simulated one where there is one; the exact model's, a thousandth or two high,
            # beside it
            "covariance": d.covariance() if self.simulated is None else self.simulated.value,
            "covariance_model": d.covariance(),
            "split_probability": d.split_mass,
            "approximated_probability": d.approximate_mass,
            "volatility_index": {k: z * math.sqrt(var) for k, z in Z.items()},
        }

    def precision(self) -> dict[str, str]:
        spread = SPLITS if self.dist.approximate_mass > 0 else EXACT
        return {
            "ev": EXACT,
            "house_edge": EXACT,
            "variance": spread,
            "sd": spread,
            "skewness": spread,
            "distribution": spread,
            "p_win": spread,
            "outcomes": EXACT,
            "insurance": EXACT,
            "covariance": MODEL
            if self.simulated is None
            else f"simulated, ± {self.simulated.se:.4f} (each box's cards out of the other's shoe)",
            "covariance_model": MODEL,
            "covariance_simulated": "simulated: each box's cards out of the other's shoe",
            "shift_band": NORMAL,
            "rule_effects": f"ev {EXACT}, variance {spread}",
            "split_error": SPLIT_ERROR,
        }

    def distribution(self) -> list[dict[str, Any]]:
        d = self.dist.dist
        w = self.dist.wager
        return [
            {"net": float(Fraction(int(k), w)), "cents": int(k), "probability": float(p)}
            for k, p in zip(d.keys[::-1], d.probs[::-1], strict=True)
            if p > 0
        ]

    def outcomes(self) -> list[dict[str, Any]]:
        """Every way a hand ends, with its frequency (expected hands per round), payout (in
        initial wagers), return (frequency x payout), share of the paid return, and 1 in N;
        and 13.7's line, what a dealer pontoon gives back to the split hands standing. Each
        row is computed from the distribution's own parts, the 13.7 line included
        (:attr:`RoundDistribution.refund`), none from the expected value: that they add up
        to it is a check (:func:`check_outcomes`)."""
        w = self.dist.wager
        rows: list[dict[str, Any]] = []
        ordered = sorted(self.dist.endings(), key=lambda e: (-(e[1] > 0), -e[1] / e[2], -e[3]))
        for why, cents, stake, n in ordered:
            rows.append(
                {
                    "name": NAMES[why],
                    "ending": str(why),
                    "stake": stake,
                    "payout": cents / w,
                    "probability": n,
                    "return": n * cents / w,
                    "one_in": 1.0 / n,
                }
            )
        paid = sum(r["return"] for r in rows if r["return"] > 0)
        for r in rows:
            r["share"] = r["return"] / paid if r["return"] > 0 else 0.0
        back = self.dist.refund / w  # 13.7, from the split hands' own chances
        if back > 0:  # one wager taken from all the split hands standing
            rows.append(
                {
                    "name": "13.7: a dealer pontoon takes one wager from the split hands",
                    "ending": "13.7_refund",
                    "stake": 0,
                    "payout": None,
                    "probability": None,
                    "return": back,
                    "one_in": None,
                    "share": 0.0,
                }
            )
        check_outcomes(rows, self.report.ev)
        return rows

    def dealer(self) -> dict[str, float]:
        """P(the dealer's hand ends each way), over all rounds (played out or not)."""
        out = np.zeros(7)
        for row in self.dist.parts:
            for o, d in enumerate(row):
                out[o] += d.total()
        return {name: float(p) for name, p in zip(OUTCOMES, out, strict=True)}

    def insurance(self) -> dict[str, Any] | None:
        """The insurance wager (10) against a dealer's ace, at the player's two cards: how
        often it is offered, how often it wins, its expected value and variance per unit
        insured (it pays ``insurance_pays``)."""
        r = self.rules
        if not r.insurance:
            return None
        game = self.report.game
        assert game is not None
        hands, probs = two_card_hands(game)
        pn = game.rows(Context()).pn
        p = float(sum(probs[k, 0] * pn[i, 0] for k, (i, _a, _b) in enumerate(hands)))
        pays = float(r.insurance_pays)
        return {
            "offered": float(self.report.outcome.up_prob[0]),
            "pays": odds_text(r.insurance_pays),
            "max": odds_text(r.insurance_max),
            "p_win": p,
            "ev": pays * p - (1 - p),
            "variance": (1 + pays) ** 2 * p * (1 - p),
            "one_in": 1 / p if p else None,
        }

    def super_bonus(self) -> dict[str, Any] | None:
        """The Super Bonus (11.2) by payout band, at this strategy's frequency, and what it
        pays each other box."""
        r = self.rules
        if not r.super_bonus:
            return None
        n = sum(c for why, _, _, c in self.dist.endings() if why == Ending.SUPER_BONUS)
        bands = [
            {"from": 0, "to": r.super_bonus_min - 1, "pays": "11.1 odds (7-7-7)"},
            {
                "from": r.super_bonus_min,
                "to": r.super_bonus_threshold - 1,
                "pays": r.super_bonus_small,
            },
            {"from": r.super_bonus_threshold, "to": r.table_max, "pays": r.super_bonus_large},
        ]
        here = super_bonus_amount(r, self.dist.wager)
        return {
            "probability": n,
            "one_in": 1 / n if n else None,
            "bands": bands,
            "at_wager": here,
            "others_each": r.super_bonus_others,
            "others_expected_per_round": n * r.super_bonus_others,
            "display_odds": bool(n) and 1 / n > 1e8,
        }

    def shift(self) -> dict[str, Any]:
        """The operator's figures: theoretical win per hour and a shift's result bands."""
        op = self.operator
        table = self.boxes()[op.boxes - 1]  # the players' nets, 11.2's payments included
        per_round = table["variance_with_others"]  # wagers²
        rounds = op.rounds_per_hour * op.hours
        edge = -table["ev_with_others"]  # the table's win per round, in wagers
        win_hour = edge * op.wager * op.rounds_per_hour
        mean = edge * op.wager * rounds
        sd = math.sqrt(per_round * rounds) * op.wager
        return {
            "rounds_per_hour": op.rounds_per_hour,
            "boxes": op.boxes,
            "wager": op.wager,
            "hours": op.hours,
            "theoretical_win_per_hour": round(win_hour),
            "theoretical_win_per_shift": round(mean),
            "shift_sd": round(sd),
            "band95": [round(mean - Z["95"] * sd), round(mean + Z["95"] * sd)],
            "band99": [round(mean - Z["99"] * sd), round(mean + Z["99"] * sd)],
        }

    def boxes(self) -> list[dict[str, Any]]:
        """A round of k boxes (one player each): the variance of the players' total, and the
        same with 11.2's payment to the other boxes counted (what the table pays)."""
        return [dict(row) for row in self._boxes]

    @cached_property
    def _boxes(self) -> list[dict[str, Any]]:
        v = self.dist.variance
        out = []
        for k in range(1, 8):
            _, var = self.dist.box_moments(k)
            ev_paid, var_paid = self.dist.box_moments(k, others=True)
            extra = var_paid - var  # 11.2's payments to the others
            if self.simulated is not None:  # the simulated covariance where there is one
                var = k * v + k * (k - 1) * self.simulated.value
            out.append(
                {
                    "boxes": k,
                    "variance": var,
                    "ev_with_others": ev_paid,
                    "variance_with_others": var + extra,
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        s = self.summary()
        return {
            "title": f"PAR sheet: {self.rules.name}",
            "version": pontoon.__version__,
            "created": self.created,
            "rules": self.rules.to_dict(),
            "strategy": self.report.strategy,
            "post_split": self.report.post_split,
            "method": self.report.method,
            "wager": self.dist.wager,
            **s,
            "precision": self.precision(),
            "distribution": self.distribution(),
            "outcomes": self.outcomes(),
            "dealer": self.dealer(),
            "insurance": self.insurance(),
            "super_bonus": self.super_bonus(),
            "operator": self.shift(),
            "boxes": self.boxes(),
            "covariance_simulated": None
            if self.simulated is None
            else {
                "value": self.simulated.value,
                "se": self.simulated.se,
                "rounds": self.simulated.rounds,
                "seed": self.simulated.seed,
            },
            "rule_effects": self.effects,
        }


ADDS_UP: Final = 1e-9  # the outcome table's returns against the expected value: float sums


class OutcomesError(PontoonError):
    """The outcome table does not add up to the expected value: a figure is wrong."""


def check_outcomes(rows: list[dict[str, Any]], ev: float) -> None:
    """:class:`OutcomesError` unless the outcome table's returns, each computed on its own,
    add up to ``ev``, the expected value computed apart (within :data:`ADDS_UP`): a check
    that an error in any row's frequency or payout would fail.

    >>> check_outcomes([{"return": 0.25}, {"return": -0.5}], -0.25)
    >>> try:
    ...     check_outcomes([{"return": 0.25}, {"return": -0.5}], -0.2)
    ... except OutcomesError as e:
    ...     print(e)
    the outcome table adds up to -0.250000000000, not the expected value -0.200000000000
    """
    total = math.fsum(r["return"] for r in rows)
    if abs(total - ev) > ADDS_UP:
        raise OutcomesError(
            f"the outcome table adds up to {total:.12f}, not the expected value {ev:.12f}"
        )


def created_now() -> str:
    """The report's date (UTC), or ``SOURCE_DATE_EPOCH``'s for a reproducible build."""
    stamp = float(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def par_sheet(
    report: Report,
    operator: Operator,
    effects: list[dict[str, Any]],
    simulated: Covariance | None = None,
) -> ParSheet:
    """The PAR sheet of an analysed strategy."""
    operator.check()
    dist = round_distribution(report)
    return ParSheet(report, dist, operator, effects, created_now(), simulated)


__all__ = ["Operator", "OutcomesError", "ParSheet", "check_outcomes", "par_sheet"]
