"""Strategy indices by simulation, as the leading simulator suites find them: the EV of each
play accumulated by true count over many rounds.

Rounds are dealt from the real shoe (cutting card, burn card, reshuffles) with the count kept
and the full shoe's optimal chart played, one box, a flat bet. At each box's first decision
(two cards, before any split) the kernel plays one of the legal plays drawn at random instead
of the chart's (the rest of the hand follows the chart) and adds the box's net to that cell,
play and true count (:class:`pontoon.sim.job.Job`'s ``probing``). A random play is as good as
a controlled experiment: the mean net of each play in a bin is that play's EV at that count,
with the standard error of a mean. For each cell, the gain of each other play over the
chart's, bin by bin, is fitted with a straight line in the true count (weighted by each bin's
variance, bins of at least :data:`MIN_ROUNDS` rounds a play); where the line crosses zero
within -10..+10, and its slope is more than two standard errors from zero, the crossing is
the index (the one nearest 0 if several plays cross), with its standard error by the delta
method. Insurance is not played by the simulator: its index stays the exact one.
"""

from __future__ import annotations

import math
import time
from typing import Any, Final

import numpy as np

from pontoon.analysis.chart import pair_row, total_row
from pontoon.count.indices import Indices
from pontoon.errors import InputError
from pontoon.rules import RuleSet
from pontoon.sim.counting import Counting

MIN_ROUNDS: Final = 30  # a play's rounds in a true-count bin for the bin to count
LETTER: Final = ("H", "S", "D", "P", "R")  # the kernel's action numbers (sim.compiled)
METHOD: Final = (
    "simulation: each box's first decision a random legal play, the box's net by cell, play "
    "and true count, the gain over the chart's play fitted by a line (docs/analysts/count.md)"
)


def simulated_indices(
    rules: RuleSet,
    counting: Counting,
    count: str,
    *,
    rounds: int,
    seed: int,
    wager: int = 500,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
) -> Indices:
    """Every first-decision cell's index for ``counting``'s tags (module docstring)."""
    from pontoon.analysis.report import analyze
    from pontoon.sim.job import Job
    from pontoon.sim.runner import simulate

    if rounds < 1:
        raise InputError(f"--rounds must be at least 1, not {rounds}")
    start = time.perf_counter()
    chart = analyze(rules, "basic", wager=wager).chart
    assert chart is not None
    flat = Counting.from_dict({"tags": counting.table["tags"], "ramp": {"0": 1}}, counting.name)
    job = Job.build(rules, chart, wager=wager, counting=flat, probing=True)
    run = simulate(job, rounds, seed, workers=workers, scheduler=scheduler, progress=progress)
    probes = run.result.probes
    from pontoon.sim import kernel as K

    out = []
    for soft in (0, 1):
        for t in range(4 if not soft else 12, 21):
            row = total_row(t, bool(soft))
            for up in range(1, 11):
                play = int(job.moves[0, K.FIRST, soft, t, up - 1])
                found = _index(probes[(soft * 22 + t) * 10 + up - 1], play)
                if found is not None:
                    out.append(_entry(row, up, found))
    for v in range(1, 11):
        for up in range(1, 11):
            play = int(job.pair_moves[0, K.FIRST, v - 1, up - 1])
            found = _index(probes[(44 + v - 1) * 10 + up - 1], play)
            if found is not None:
                out.append(_entry(pair_row(v), up, found))
    return Indices(rules, count, (), out, time.perf_counter() - start, chart, METHOD, rounds)


def _entry(row: str, up: int, found: tuple[float, float, str, str, int]) -> dict[str, Any]:
    x, se, below, above, n = found
    dealer = "A" if up == 1 else "T" if up == 10 else str(up)
    cell = {"cell": row, "dealer": dealer, "below": below, "above": above}
    return cell | {"index": round(x), "crossing": x, "stderr": se, "rounds": n}


def _index(cell: np.ndarray, play: int) -> tuple[float, float, str, str, int] | None:
    """(crossing, its standard error, below, above, rounds) of a cell's probes
    (``cell[play, true count bin, (sum, squares, n)]``) against the chart's ``play``."""
    best: tuple[float, float, str, str, int] | None = None
    for other in range(cell.shape[0]):
        if other == play:
            continue
        line = _gain_line(cell[other], cell[play])
        if line is None:
            continue
        a, b, cov = line  # gain = a + b tc; cov: the fit's covariance
        if b == 0 or abs(b) <= 2 * math.sqrt(cov[1, 1]):
            continue
        x = -a / b
        if not -10 <= x <= 10:
            continue
        g = np.array([-1 / b, a / b**2])  # d x / d (a, b)
        se = float(math.sqrt(max(g @ cov @ g, 0.0)))
        below, above = (play, other) if b > 0 else (other, play)
        n = int(cell[other, :, 2].sum() + cell[play, :, 2].sum())
        if best is None or abs(x) < abs(best[0]):
            best = (float(x), se, LETTER[below], LETTER[above], n)
    return best


def _gain_line(other: np.ndarray, mine: np.ndarray) -> tuple[float, float, Any] | None:
    """The weighted least-squares line of (other's mean - mine's) by true count over the bins
    both have :data:`MIN_ROUNDS` rounds in: (intercept, slope, covariance), or None."""
    tcs, gains, weights = [], [], []
    for k in range(other.shape[0]):
        (s1, q1, n1), (s0, q0, n0) = other[k], mine[k]
        if n1 < MIN_ROUNDS or n0 < MIN_ROUNDS:
            continue
        m1, m0 = s1 / n1, s0 / n0
        var = (q1 / n1 - m1 * m1) / (n1 - 1) + (q0 / n0 - m0 * m0) / (n0 - 1)
        if var <= 0:
            continue
        tcs.append(k - 10)
        gains.append(m1 - m0)
        weights.append(1 / var)
    if len(tcs) < 3:
        return None
    x = np.column_stack([np.ones(len(tcs)), np.array(tcs, float)])
    w = np.array(weights)
    cov = np.linalg.inv(x.T @ (x * w[:, None]))
    a, b = cov @ (x.T @ (w * np.array(gains)))
    return float(a), float(b), cov
