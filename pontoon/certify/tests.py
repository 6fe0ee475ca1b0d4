"""The statistical tests of a :class:`~pontoon.certify.tally.Tally`, each at the 99 % level.

Every null hypothesis is the same: each shuffle puts the shoe's cards in one of its orders,
every order equally likely, whatever the order before. Each statistic's exact mean and
covariance for one shoe under that hypothesis are worked out below (a shoe is a random
arrangement of a *multiset*: 24 aces, 24 twos, ...), and the shoes are independent, so the
sum over many shoes is normal (central limit theorem) and its quadratic form chi-square.
The formulas and their sources are in docs/operators/certification.md.

>>> from pontoon.certify.run import certify
>>> from pontoon.rules import load_rules
>>> run = certify(load_rules("nz-pontoon", {"decks": 1}), 300, seed=3, workers=1)
>>> [(r.name, r.passed) for r in battery(run.tally, run.rules)]  # doctest: +NORMALIZE_WHITESPACE
[('position-rank', True), ('position-suit', True), ('card-position', True), ('runs', True),
 ('serial-correlation', True), ('adjacent-pairs', True), ('consecutive-shoes', True),
 ('burn-card', True), ('cutting-card', True)]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import prod, sqrt
from typing import Any

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

from pontoon.rules import RuleSet

from .tally import Array, Tally

LEVEL = 0.99  # each test passes when p >= 1 - LEVEL


@dataclass(frozen=True)
class Result:
    name: str
    statistic: float
    p_value: float | None  # None: a deterministic check, not a statistical test
    passed: bool
    df: int | None  # degrees of freedom of a chi-square; None for a normal z
    tests: str  # what it tests, in words
    detail: str  # the figure behind it, in words

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _result(name: str, stat: float, p: float, df: int | None, tests: str, detail: str) -> Result:
    p = float(min(max(p, 0.0), 1.0))
    return Result(name, float(stat), p, p >= 1 - LEVEL, df, tests, detail)


def battery(tally: Tally, rules: RuleSet) -> list[Result]:
    """Every test, in the order the report shows them."""
    out = [
        table_test(
            "position-rank",
            tally.position_rank,
            tally.pack.n,
            "each rank equally likely at each position of the shoe",
        ),
        table_test(
            "position-suit",
            tally.position_suit,
            tally.pack.n,
            "each suit equally likely at each position of the shoe",
        ),
        table_test(
            "card-position",
            tally.kind_bin,
            tally.pack.n,
            "each card (48 or 52 kinds) equally likely in each eighth of the shoe",
        ),
        runs_test(tally),
        serial_test(tally),
        adjacent_test(tally),
        carried_test(tally),
    ]
    if rules.burn_card:
        out.append(burn_test(tally))
    out.append(cut_check(tally, rules))
    return out


def table_test(name: str, observed: Array, n: int, tests: str) -> Result:
    """Pearson's chi-square of a table whose margins every shoe fixes (positions or bins of
    positions by ranks, suits or cards). Within one shoe the counts are drawn without
    replacement, which makes the statistic n/(n-1) times a chi-square with
    (rows-1)(columns-1) degrees of freedom: it is scaled back by (n-1)/n."""
    x2, _, df, expected = stats.chi2_contingency(observed, correction=False)
    stat = float(x2) * (n - 1) / n
    worst = np.abs((observed - expected) / np.sqrt(expected)).max()
    detail = f"smallest expected count {expected.min():.1f}, largest |residual| {worst:.2f}"
    return _result(name, stat, stats.chi2.sf(stat, df), int(df), tests, detail)


def runs_test(tally: Tally) -> Result:
    """Wald-Wolfowitz: runs of cards below / at or above the median value within each shoe.
    With n1 low and n2 high cards, runs have mean 1 + 2 n1 n2 / n and variance
    2 n1 n2 (2 n1 n2 - n) / (n^2 (n-1)); summed over independent shoes, z is normal."""
    p, m = tally.pack, tally.shuffles
    n1 = int(p.low.sum()) * p.copies
    n2 = p.n - n1
    mean = 1 + 2 * n1 * n2 / p.n
    var = 2 * n1 * n2 * (2 * n1 * n2 - p.n) / (p.n**2 * (p.n - 1))
    z = (tally.runs - m * mean) / sqrt(m * var)
    detail = f"{tally.runs / m:.3f} runs a shoe (fair: {mean:.3f}); {n1} low, {n2} high"
    tests = "runs of low and high cards in a shoe, as many as chance makes"
    return _result("runs", z, 2 * stats.norm.sf(abs(z)), None, tests, detail)


def serial_moments(values: Array) -> tuple[float, float]:
    """Mean and variance of S = sum_t a[t] a[t+1] over a random order of ``values`` less
    their mean (a): E[S] = -p2/n, E[S^2] = (p2^2 - p4)/n + (p2^2 - 2 p4)/(n (n-1)), with
    p_k = sum a^k.

    >>> serial_moments(np.array([1, 2, 3]))   # S over the 6 orders: 0 twice, -1 four times
    (-0.6666666666666666, 0.2222222222222222)
    """
    a = values - values.mean()
    n = len(a)
    p2, p4 = float((a**2).sum()), float((a**4).sum())
    mean = -p2 / n
    second = (p2**2 - p4) / n + (p2**2 - 2 * p4) / (n * (n - 1))
    return mean, second - mean**2


def serial_test(tally: Tally) -> Result:
    """Lag-1 serial correlation of card values within a shoe: its exact mean and variance
    for a random order (serial_moments), summed over independent shoes."""
    p, m = tally.pack, tally.shuffles
    values = np.repeat(p.value, p.copies).astype(float)
    mu, total = values.mean(), values.sum()
    s = tally.lag_products - mu * (2 * total * m - tally.ends) + m * (p.n - 1) * mu**2
    mean, var = serial_moments(values)
    z = (s - m * mean) / sqrt(m * var)
    p2 = float(((values - mu) ** 2).sum())
    detail = f"mean lag-1 correlation {s / m / p2:+.5f} (fair: {mean / p2:+.5f})"
    tests = "each card's value independent of the next card's in the shoe"
    return _result("serial-correlation", z, 2 * stats.norm.sf(abs(z)), None, tests, detail)


def adjacent_moments(counts: Array) -> tuple[Array, Array]:
    """Mean (r, s) and covariance (r*s, r*s) of the counts of adjacent ranks (a card of rank r
    followed by one of rank s) in a random order of a shoe with ``counts`` cards of each
    rank. Pairs overlap, so the covariance has terms for the same pair, pairs sharing a
    card and disjoint pairs; each is a probability of drawing ranks without replacement.

    >>> mean, cov = adjacent_moments(np.array([1, 1]))   # orders AB and BA
    >>> mean.tolist(), cov.diagonal().tolist()
    ([[0.0, 0.5], [0.5, 0.0]], [0.0, 0.25, 0.25, 0.0])
    """
    r, n = len(counts), int(counts.sum())
    falling = np.array([[prod(c - j for j in range(k)) for k in range(5)] for c in counts], float)
    eye = np.eye(r, dtype=np.int64)

    def prob(k: int) -> Array:
        """P(k given positions hold ranks a, b, ...), one axis per position."""
        if k > n:
            return np.zeros((r,) * k)
        mult = eye[np.indices((r,) * k)].sum(axis=0)  # (a, b, ..., rank): multiplicities
        out: Array = np.prod(falling[np.arange(r), mult], axis=-1)
        return out / prod(n - j for j in range(k))

    p2, p3, p4 = prob(2), prob(3), prob(4)
    mean = (n - 1) * p2
    second = (n - 2) * (n - 3) * p4
    a, b = np.indices((r, r))
    second[a, b, a, b] += (n - 1) * p2  # the same pair
    a, b, c = np.indices((r, r, r))
    second[a, b, b, c] += (n - 2) * p3[a, b, c]  # (a b) then (b c): one card shared
    second[b, c, a, b] += (n - 2) * p3[a, b, c]  # (a b) before (b c), the other way
    cov = second.reshape(r * r, r * r) - np.outer(mean, mean)
    return mean, cov


def quadratic_form(deviation: Array, cov: Array) -> tuple[float, int]:
    """d' C^+ d and the rank of C: chi-square with that many degrees of freedom when d is
    normal with covariance C."""
    lam, vec = np.linalg.eigh(cov)
    keep = lam > lam.max() * 1e-10
    proj = vec[:, keep].T @ deviation
    return float((proj**2 / lam[keep]).sum()), int(keep.sum())


def adjacent_test(tally: Tally) -> Result:
    """Chi-square of the adjacent rank pairs against their exact mean and covariance."""
    m = tally.shuffles
    mean, cov = adjacent_moments(tally.pack.rank_counts())
    d = (tally.adjacent - m * mean).ravel()
    stat, df = quadratic_form(d, m * cov)
    ratio = tally.adjacent.trace() / (m * mean.trace())
    detail = f"same rank twice in a row {ratio:.4f} times as often as a fair shuffle expects"
    tests = "each pair of adjacent ranks as frequent as drawing without replacement makes it"
    return _result("adjacent-pairs", stat, stats.chi2.sf(stat, df), df, tests, detail)


def carried_test(tally: Tally) -> Result:
    """Whether a card's place in one shoe tells where it lies in the next: the bin-by-bin
    covariance of each card's copies from shoe to shoe (Tally._carry), a chi-square with
    (bins-1)^2 degrees of freedom."""
    stat, df = quadratic_form(tally.carried.ravel(), tally.carried_cov)
    cov = tally.carried_cov.diagonal().reshape(tally.carried.shape)
    z = tally.carried / np.sqrt(np.where(cov > 0, cov, 1))
    detail = f"{tally.pairs_of_shoes:,} pairs of shoes; largest bin-to-bin |z| {abs(z).max():.2f}"
    tests = "where a card lies in a shoe independent of where it lay in the shoe before"
    return _result("consecutive-shoes", stat, stats.chi2.sf(stat, df), df, tests, detail)


def burn_test(tally: Tally) -> Result:
    """Pearson's chi-square of the burnt card's rank against the shoe's rank frequencies."""
    p = tally.pack
    expected = tally.shuffles * p.rank_counts() / p.n
    stat, pv = stats.chisquare(tally.burnt, expected)
    detail = f"most frequent rank {p.rank_names[int(tally.burnt.argmax())]}"
    tests = "each rank equally likely to be burnt (8.1)"
    return _result("burn-card", stat, pv, p.ranks - 1, tests, detail)


def cut_check(tally: Tally, rules: RuleSet) -> Result:
    """The cutting card is placed by count, not drawn: checked in every shoe, not tested."""
    n = tally.pack.n
    front = round(n * rules.penetration)
    detail = (
        f"after card {front} of {n} (penetration {rules.penetration:g}) in "
        f"{tally.shuffles - tally.cut_off:,} of {tally.shuffles:,} shoes; deterministic, "
        "so no p-value"
    )
    tests = "the cutting card where the rules place it (7), every shoe"
    return Result("cutting-card", tally.cut_off, None, tally.cut_off == 0, None, tests, detail)


def verdict(results: list[Result]) -> dict[str, Any]:
    """The certification passes when every test passes at 99 % and every check holds. With k
    independent tests a fair shuffle still fails one with probability 1 - 0.99^k."""
    k = sum(r.p_value is not None for r in results)
    return {
        "passed": all(r.passed for r in results),
        "level": LEVEL,
        "statistical_tests": k,
        "family_false_failure": 1 - LEVEL**k,
        "min_p_value": min(r.p_value for r in results if r.p_value is not None),
    }
