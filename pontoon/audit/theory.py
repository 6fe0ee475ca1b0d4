"""A rule set's theory for the table reports: the house edge of the optimal chart, per unit
of initial wager, and the variance of one box (the PAR sheet's figures:
:mod:`pontoon.analysis.par`), and the covariance of two boxes at one table, simulated with its
standard error (:data:`COVARIANCE_ROUNDS` rounds of the chart's two boxes, each from a fresh
shoe, seed 1: the exact model leaves out the cards each box takes from the other's shoe and is
a thousandth or two high). Each rule set is analysed once per process.

A round's theoretical win is the edge times its initial wagers; its variance, with ``W_b``
the initial wagers on box ``b`` (a seated player's and those behind, who mostly share the
box's fate), is ``σ² Σ W_b² + c Σ_{b≠b'} W_b W_b'``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from pontoon.analysis.chart import Chart
from pontoon.rules import RuleSet, rules_from_dict

COVARIANCE_ROUNDS = 1_000_000  # its standard error: about 0.0013 a unit squared


@dataclass(frozen=True)
class Theory:
    rules: RuleSet
    edge: float  # the house's expected win per unit of initial wager (−EV of the chart)
    variance: float  # of one box's net, per unit of initial wager squared
    covariance: float  # of two boxes' nets at one table, likewise (simulated)
    exact: str  # how exact the variance is (the PAR sheet's words)
    chart: Chart  # the optimal chart the edge is of
    covariance_se: float = 0.0  # the covariance's standard error

    def round_variance(self, boxes: list[int]) -> float:
        """The variance of a round's house win, in cents², from each box's initial wagers.

        >>> t = Theory(None, 0.01, 1.0, 0.5, "exact", None)  # type: ignore[arg-type]
        >>> t.round_variance([100, 100])        # 100² + 100² + 2·0.5·100·100
        30000.0
        """
        total = sum(boxes)
        squares = sum(w * w for w in boxes)
        return self.variance * squares + self.covariance * (total * total - squares)


def theory(rules_json: str) -> Theory:
    """The theory of the rule set a round's ``rules`` event records (its JSON)."""
    return _theory(json.dumps(json.loads(rules_json), sort_keys=True))


@cache
def _theory(canonical: str) -> Theory:
    from pontoon.analysis.covariance import simulated_covariance
    from pontoon.analysis.distribution import round_distribution
    from pontoon.analysis.par import EXACT, SPLITS
    from pontoon.analysis.report import analyze

    rules = rules_from_dict(json.loads(canonical))
    report = analyze(rules, "basic", wager=rules.table_min, one_shot=True, forward=True)
    dist = round_distribution(report)
    assert report.chart is not None  # "basic": the optimal chart
    cov = simulated_covariance(rules, report.chart, rules.table_min, COVARIANCE_ROUNDS, 1, 1)
    return Theory(
        rules,
        -report.ev,
        dist.variance,
        cov.value,
        SPLITS if dist.approximate_mass > 0 else EXACT,
        report.chart,
        cov.se,
    )


__all__ = ["COVARIANCE_ROUNDS", "Theory", "theory"]
