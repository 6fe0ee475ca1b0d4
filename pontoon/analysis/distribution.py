"""The distribution of a round's net for one box, exactly where it can be: every distinct net
(in cents) with its probability, jointly with the dealer's first card and outcome.

A strategy's :class:`~pontoon.analysis.evaluate.Outcome` holds every choice the expected value
made; here they are played forwards (:mod:`pontoon.analysis.reach`). An unsplit hand's
distribution is exact. A split box is the sum of its hands: each hand's distribution given
the pattern of second cards, the first card and the dealer's outcome is exact (the unknown
cards come out by the recursion the expected value uses), and the hands are taken as
independent given those, which is also how the expected value's 13.7 correction treats them.
So every mean, frequency and marginal is exact, and the mean is the expected value; the
spread of split rounds is approximate (docs/analysis.md measures by how much).

>>> from pontoon.rules import load_rules
>>> from pontoon.analysis.report import analyze
>>> rep = analyze(load_rules("classic-blackjack", {"decks": 1, "split_max_hands": 1}),
...               "composition", infinite=True)
>>> d = round_distribution(rep)
>>> round(d.ev - rep.ev, 12), round(d.total - 1, 12)
(0.0, 0.0)
>>> round(d.variance, 4)
1.231
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Final, Protocol, TypeVar

import numpy as np

from pontoon.analysis.composition import Floats, comp_of
from pontoon.analysis.dealer import NATURAL
from pontoon.analysis.endings import End, Endings, endings_of
from pontoon.analysis.evaluate import Outcome, same_rank_tens
from pontoon.analysis.game import NEG, SURRENDER, Context, Game
from pontoon.analysis.pairs import enumerated, two_hands
from pontoon.analysis.reach import Forward
from pontoon.analysis.report import Report
from pontoon.analysis.sparse import EMPTY, Dist, Lattice
from pontoon.analysis.split import (
    CAP_13_7,
    SplitValue,
    pair_cards_left,
    pair_patterns,
    split_weights,
    unknowns_out,
)
from pontoon.vocab import Ending

Parts = list[list[Dist]]  # [up][dealer outcome]: the masses of a round's nets


@dataclass
class RoundDistribution:
    """A round's net for one box: ``parts[u][o]`` the masses of its nets in cents given the
    dealer's first card ``u`` (weighted by its probability) ending in outcome ``o``
    (:data:`pontoon.analysis.dealer.OUTCOMES`); ``counts``: the expected number of hands per
    round ending each way (``ends``)."""

    wager: int
    parts: Parts
    ends: list[End]
    counts: Floats
    split_mass: float  # P(the box splits)
    super_cents: int | None = None  # the Super Bonus at this wager (11.2), a net of its own
    super_others: int = 0  # what it pays each other box
    approximate_mass: float = 0.0  # P(a split the approximation plays: three or four hands)

    @cached_property
    def dist(self) -> Dist:
        """The masses of the round's nets, every first card and outcome together."""
        return Dist.sum([d for row in self.parts for d in row])

    @property
    def total(self) -> float:
        return self.dist.total()

    @property
    def ev(self) -> float:
        return self.dist.mean() / self.wager

    @property
    def variance(self) -> float:
        d = self.dist
        return d.central(2) / self.wager**2

    def moments(self) -> tuple[float, float, float, float]:
        """(mean, variance, skewness, excess kurtosis) per unit of wager."""
        d = self.dist
        mean = d.mean()
        var = d.central(2, mean)
        sd = var**0.5
        skew = d.central(3, mean) / sd**3
        kurt = d.central(4, mean) / var**2 - 3.0
        return mean / self.wager, var / self.wager**2, skew, kurt

    def chances(self) -> tuple[float, float, float]:
        """P(the box wins), P(it pushes), P(it loses) on the round's net (a surrender or a
        rescue is a loss)."""
        d = self.dist
        return (
            float(d.probs[d.keys > 0].sum()),
            float(d.probs[d.keys == 0].sum()),
            float(d.probs[d.keys < 0].sum()),
        )

    @property
    def wagered(self) -> float:
        """The expected total wagered per round, in initial wagers: the initial wager, the
        doubles, the split hands and their doubles (a rescued double counts both wagers)."""
        stakes = np.array([e.stake for e in self.ends], dtype=np.float64)
        return float(self.counts @ stakes)

    def endings(self) -> list[tuple[Ending, int, int, float]]:
        """(why, cents, stake, expected hands per round) of every ending that happens, by
        frequency."""
        rows: dict[tuple[Ending, int, int], float] = {}
        for e, n in zip(self.ends, self.counts, strict=True):
            if n > 0:
                key = (e.why, e.cents, e.stake)
                rows[key] = rows.get(key, 0.0) + float(n)
        return sorted(((*k, n) for k, n in rows.items()), key=lambda r: -r[3])

    def by_up(self, u: int) -> Dist:
        return Dist.sum(self.parts[u])

    def boxes(self, k: int, others: bool = False) -> Dist:
        """The masses of the sum of ``k`` boxes' nets at one table, the boxes independent
        given the dealer's first card and outcome, as :meth:`covariance`; ``others``: with
        the Super Bonus's payment to each other box (11.2) counted in their nets."""
        out = EMPTY
        extra = (k - 1) * self.super_others if others and self.super_cents is not None else 0
        for row in self.parts:
            for d in row:
                mass = d.total()
                if mass > 0:
                    one = d.scaled(1 / mass)
                    if extra:  # a Super Bonus box also pays each of the k - 1 others
                        one = Dist.merge(
                            np.where(one.keys == self.super_cents, one.keys + extra, one.keys),
                            one.probs,
                        )
                    total = one
                    for _ in range(k - 1):
                        total = total.convolve(one)
                    out = out + total.scaled(mass)
        return out

    def covariance(self) -> float:
        """Cov of two boxes' nets at one table, per unit wager squared, taking them as
        independent given the dealer's first card and outcome (the cards one box takes from
        the other's shoe are left out)."""
        ev = self.ev * self.wager
        second = 0.0
        for row in self.parts:
            for d in row:
                if d.total() > 0:
                    second += d.mean() ** 2 / d.total()
        return (second - ev * ev) / self.wager**2


def round_distribution(report: Report) -> RoundDistribution:
    """The distribution of the round ``report`` analysed, played as it was."""
    game = report.game or Game(report.rules, report.wager, infinite=report.infinite)
    return distribution_of(game, report.outcome)


def distribution_of(game: Game, outcome: Outcome) -> RoundDistribution:
    """The distribution of a round played by ``outcome``'s choices in ``game``."""
    ends = endings_of(game)
    root, split_share = _root(game, ends, outcome)
    splits = {
        pair: _split_parts(game, ends, pair, sv, split_share[pair] > 0)
        for pair, sv in outcome.splits.items()
        if split_share[pair].any()
    }
    e = len(ends)
    cents = np.array([x.cents for x in ends.ends], dtype=np.int64)
    j = _pad(root, e)[0]  # (10, 7, E)
    up = outcome.up_prob
    parts: Parts = []
    counts = np.zeros(e)
    for u in range(10):
        row = []
        for o in range(7):
            d = _dist(cents, j[u, o])
            for pair, (sp, _) in splits.items():
                if split_share[pair][u] > 0:
                    d = d + sp[u][o].scaled(split_share[pair][u])
            row.append(d.scaled(up[u]))
        parts.append(row)
        counts += up[u] * j[u].sum(axis=0)
        for pair, (_, cnt) in splits.items():
            counts += up[u] * split_share[pair][u] * _pad1(cnt[u], e)
    split_mass = float(sum(up @ s for s in split_share.values()))
    approximate = float(
        sum(up @ s for pair, s in split_share.items() if not _exact_pair(game, pair))
    )
    sb = game.pay.super_bonus
    return RoundDistribution(
        game.wager,
        parts,
        list(ends.ends),
        counts,
        split_mass,
        None if sb is None or not game.rules.super_bonus else game.pay.cents(sb),
        game.rules.super_bonus_others,
        approximate,
    )


def _exact_pair(game: Game, pair: int) -> bool:
    """Whether a pair's splits are exact: enumerated, or from the infinite shoe (whose hands
    are independent given the dealer's outcome)."""
    return game.shoe.infinite or enumerated(game, pair)


def _pad(a: Floats, e: int) -> Floats:
    return np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, e - a.shape[-1])])


def _pad1(a: Floats, e: int) -> Floats:
    return np.pad(a, (0, e - len(a)))


def _dist(cents: np.ndarray, masses: Floats) -> Dist:
    nz = np.flatnonzero(masses)
    return Dist.merge(cents[: len(masses)][nz], masses[nz])


def _root(game: Game, ends: Endings, outcome: Outcome) -> tuple[Floats, dict[int, Floats]]:
    """The unsplit hands played forwards from the deal, the naturals and (in the peek game)
    the rounds ending at the peek; and per pair, the share of its deals that split (10 up)."""
    r, c = game.rules, game.comps
    fw = Forward(game, ends, Context(), outcome.base)
    table = game.rows(Context()).table
    at_peek = np.zeros_like(table)
    at_peek[..., NATURAL] = table[..., NATURAL]
    legal = game.legal(Context())
    q = same_rank_tens(game)
    w = game.wager
    start = np.zeros((len(c), 10, 1))
    keep: dict[int, Floats] = {}
    share = {pair: np.zeros(10) for pair in outcome.splits}
    natural = ends.of(End(game.pay.cents(game.pay.natural), Ending.PONTOON, 1))
    push = ends.of(End(0, Ending.PUSH, 1))
    lost = ends.of(End(-w, Ending.DEALER_PONTOON, 1))
    for k, (i, a, b) in enumerate(outcome.hands):
        pk = outcome.deal_prob[k][None, :, None]  # (1, 10 up, 1)
        if {a, b} == {1, 10}:
            if game.peek or not r.player_21_wins:  # paid if the dealer has none (9.1)
                fw.emit(pk, fw.tab[i][None] if game.peek else _no_pontoon(table[i])[None], natural)
                fw.emit(pk, at_peek[i][None], natural if (game.peek and r.player_21_wins) else push)
            else:
                fw.emit(pk, table[i][None], natural)
            continue
        if game.peek:
            fw.emit(pk, at_peek[i][None], lost)
        sv = outcome.splits.get(a) if a == b else None
        split = np.zeros(10)
        if sv is not None:
            split = _split_choice(game, outcome, sv, i, a, q, legal, keep)
            if outcome.chart is not None:
                surr = _chart_surrenders(outcome, a, legal[i])
                fw.emit(pk * surr[None, :, None], fw.tab[i][None], ends.surrender[None, None, :])
                split = np.where(surr, 0.0, split)
                start[i, :, 0] -= outcome.deal_prob[k] * surr
            share[a] += outcome.deal_prob[k] * split
        start[i, :, 0] += outcome.deal_prob[k] * (1.0 if i in keep else 1.0 - split)
    joint = fw.run(start, keep)
    return joint, share


def _no_pontoon(t: Floats) -> Floats:
    out = t.copy()
    out[..., NATURAL] = 0.0
    return out


def _chart_surrenders(outcome: Outcome, pair: int, legal: np.ndarray) -> np.ndarray:
    """(10 up,) where a chart's pair row says Rp and surrender is allowed."""
    chart = outcome.chart
    assert chart is not None
    row = "PA" if pair == 1 else "PT" if pair == 10 else f"P{pair}"
    return np.array(
        [chart.code(row, u) == "Rp" and bool(legal[u - 1, SURRENDER]) for u in range(1, 11)]
    )


def _split_choice(
    game: Game,
    outcome: Outcome,
    sv: SplitValue,
    i: int,
    pair: int,
    q: Floats,
    legal: np.ndarray,
    keep: dict[int, Floats],
) -> Floats:
    """(10 up,) the share of a pair's deals that split, as :func:`evaluate._with_split`
    chose; a 7-7 played by its suits splits in some suit configurations (``keep`` gets the
    share of each configuration that plays on)."""
    same = q if pair == 10 else np.ones(10)
    base = outcome.base
    chart = outcome.chart
    if chart is not None:
        row = "PA" if pair == 1 else "PT" if pair == 10 else f"P{pair}"
        codes = [chart.code(row, u) for u in range(1, 11)]
        return np.array([same[u] if codes[u] in ("P", "Rp") else 0.0 for u in range(10)])
    if i not in base.premium or not base.by_suits:
        return np.where(sv.ev > base.node[i], same, 0.0)
    prem = game.premiums(Context())[i]
    acts = np.where(legal[i], base.act[i], NEG)
    share = np.zeros(10)
    stay = np.ones((10, len(prem[0])))
    for u in range(10):
        plain = acts[u].copy()
        plain[1] -= base.premium[i][0][u]
        plain[2] -= base.premium[i][1][u]
        for k, (p, h, d) in enumerate(prem[u]):
            cand = plain + np.array([0.0, h, d, 0.0])
            if sv.ev[u] > float(np.max(cand)):
                stay[u, k] = 0.0
                share[u] += p
    keep[i] = stay
    return share


def _split_parts(
    game: Game, ends: Endings, pair: int, sv: SplitValue, ups: np.ndarray
) -> tuple[Parts, Floats]:
    """Per first card and dealer outcome, the masses of a split box's nets; and (10 up, E)
    the expected number of its hands ending each way, for one split deal (against the first
    cards ``ups`` at least)."""
    if enumerated(game, pair):
        return _two_hand_parts(game, ends, pair, sv, ups)
    c = game.comps
    two = np.array([c.index[comp_of([pair, x])] for x in range(1, 11)])
    m0 = pair_cards_left(game, pair)
    joints: dict[int, Floats] = {}
    for j, vals in sv.values.items():
        wn, wx, _ = split_weights(game, pair, j, m0)
        start = np.zeros((len(c), 10, 2))
        start[two, :, 0] = wn.T
        start[two, :, 1] = wx.T
        joints[j] = Forward(game, ends, Context(pair, j), vals, 2).run(start)
    e = len(ends)
    joints = {j: _pad(a, e) for j, a in joints.items()}
    cents = np.array([x.cents for x in ends.ends], dtype=np.int64)
    stood = np.array([x.stood for x in ends.ends])
    obo = CAP_13_7 and not game.peek and game.rules.dealer_natural_takes == "original"
    parts: Parts = [[EMPTY] * 7 for _ in range(10)]
    counts = np.zeros((10, e))
    total = game.shoe.size - 1 - 2  # cards left after the first card and the pair
    for u in range(10):
        boxes: list[list[Dist]] = [[] for _ in range(7)]
        for prob, r, n, x in pair_patterns(game, pair, u, m0):
            if prob <= 0:
                continue
            if game.shoe.infinite:
                qn, qx = joints[1 + r][0, u], joints[1 + r][1, u]
            else:
                qn = unknowns_out(_leaf(joints, 0, u), r, max(n - 1, 0), m0[u], total, 1)
                qx = unknowns_out(_leaf(joints, 1, u), r, n, m0[u], total, 0)
            counts[u] += prob * (n * qn.sum(axis=0) + x * qx.sum(axis=0))
            for o in range(7):
                box = _box(cents, stood, qn[o], qx[o], n, x, obo and o == NATURAL, game.wager)
                boxes[o].append(box.scaled(prob))
        for o in range(7):
            parts[u][o] = Dist.sum(boxes[o])
    return parts, counts


def _two_hand_parts(
    game: Game, ends: Endings, pair: int, sv: SplitValue, ups: np.ndarray
) -> tuple[Parts, Floats]:
    """:func:`_split_parts` for a pair that becomes two hands at most: exact
    (:mod:`pontoon.analysis.pairs`)."""
    done = [
        sv.exact[u]
        if u in sv.exact
        else two_hands(game, ends, pair, sv.values[1], u)
        if ups[u]
        else ([EMPTY] * 7, np.zeros(0))
        for u in range(10)
    ]
    e = len(ends)
    return [d for d, _ in done], np.stack([_pad1(cnt, e) for _, cnt in done])


def _leaf(joints: dict[int, Floats], ch: int, u: int) -> Callable[[int], Floats]:
    def leaf(j: int) -> Floats:
        out: Floats = joints[j][ch, u]
        return out

    return leaf


LATTICE_SPAN: Final = 200  # a hand's nets this many units apart at most: summed densely


class _Masses(Protocol):
    """What :func:`_box` does with a hand's masses: :class:`Dist` or :class:`Lattice`."""

    def convolve(self: M, other: M, /) -> M: ...
    def __add__(self: M, other: M, /) -> M: ...
    def scaled(self: M, w: float, /) -> M: ...
    def shift(self: M, cents: int, /) -> M: ...
    def dist(self) -> Dist: ...


M = TypeVar("M", bound=_Masses)


def _box(
    cents: np.ndarray, stood: np.ndarray, qn: Floats, qx: Floats, n: int, x: int, cap: bool, w: int
) -> Dist:
    """The masses of a box of ``n`` N hands and ``x`` x hands for one dealer outcome, the
    hands independent given it; ``cap`` (13.7, ``original``): the dealer's pontoon takes one
    original wager from all the hands still standing, however many. The hands' nets are
    summed on a lattice of whole units of cents, or keyed where the unit is too fine for one
    (an odd wager: nets a cent apart)."""
    mass = (qx if x else qn).sum()
    if mass <= 0:
        return EMPTY
    unit = int(np.gcd.reduce(np.append(cents, w)))  # every net and the wager: whole units
    hands = [qn / qn.sum()] * n + [qx / qx.sum()] * x
    if (int(cents.max()) - int(cents.min())) // unit <= LATTICE_SPAN:
        lattice = _summed(
            lambda q: Lattice.of(unit, cents, q),
            lambda m: Lattice.point(unit, m),
            Lattice.point(unit, 0.0),
            hands,
            stood,
            cap,
            w,
        )
        return lattice.scaled(mass).dist()
    keyed = _summed(
        lambda q: _dist(cents, q), lambda m: Dist.point(0, m), EMPTY, hands, stood, cap, w
    )
    return keyed.scaled(mass)


def _summed(
    of: Callable[[Floats], M],
    point: Callable[[float], M],
    empty: M,
    hands: list[Floats],
    stood: np.ndarray,
    cap: bool,
    w: int,
) -> M:
    """The sum of independent ``hands`` (masses over the endings, ``of`` made into masses by
    net): :func:`_box`'s arithmetic, whichever kind of masses."""
    if not cap:
        out = point(1.0)
        for h in hands:
            out = out.convolve(of(h))
        return out
    none, some = point(1.0), empty  # no hand stood yet / some hand stood (its loss aside)
    for h in hands:
        played = of(np.where(stood, 0.0, h))
        s = float(h[stood].sum())
        some = some.convolve(played + point(s)) + none.scaled(s)
        none = none.convolve(played)
    return none + some.shift(-w)
