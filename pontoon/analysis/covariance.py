"""The covariance of two boxes at one table, simulated: the exact distribution takes two boxes
as independent given the dealer's first card and outcome, which leaves out that each box's
cards come out of the other's shoe (it overstates the covariance by a few thousandths:
docs/analysts/par.md). Where the strategy is a chart, the compiled simulator plays two boxes from a
fresh shoe every round and the covariance of their own nets (11.2's payment to the other box
left out) is estimated directly, with its standard error.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.rules import RuleSet


@dataclass(frozen=True)
class Covariance:
    """Cov(box one, box two) per initial wager², its standard error and the rounds."""

    value: float
    se: float
    rounds: int
    seed: int


def _chunk(args: tuple[RuleSet, Chart, int, int, int]) -> np.ndarray:
    from pontoon.sim.job import Job, run_chunk

    rules, chart, wager, key, rounds = args
    job = Job.build(rules, chart, boxes=2, wager=wager, others=False)
    _, nets = run_chunk(job, key, rounds, trace=True)
    x = nets[:, 0] / wager
    y = nets[:, 1] / wager
    return np.array([len(x), x.sum(), y.sum(), (x * y).sum(), ((x * y) ** 2).sum()])


def simulated_covariance(
    rules: RuleSet, chart: Chart, wager: int, rounds: int, seed: int, workers: int
) -> Covariance:
    """Two boxes of ``chart``, ``rounds`` rounds, each from a fresh shoe (the exact analysis
    is off the top)."""
    from pontoon.sim.job import Job
    from pontoon.sim.runner import chunk_keys

    fresh = rules.replace(penetration=0.01)
    sizes = Job.build(fresh, chart, boxes=2, wager=wager, others=False).chunk_rounds(rounds)
    tasks = [
        (fresh, chart, wager, k, n)
        for k, n in zip(chunk_keys(seed, len(sizes)), sizes, strict=True)
    ]
    if workers == 1 or len(tasks) == 1:
        parts = [_chunk(t) for t in tasks]
    else:  # (imported here: a PAR sheet without the simulation does without them)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx) as pool:
            parts = list(pool.map(_chunk, tasks))
    n, sx, sy, sxy, sxy2 = np.sum(parts, axis=0)
    mx, my, mxy = sx / n, sy / n, sxy / n
    value = mxy - mx * my
    se = math.sqrt(max(sxy2 / n - mxy * mxy, 0.0) / n)  # the product's mean dominates
    return Covariance(float(value), float(se), int(n), seed)
