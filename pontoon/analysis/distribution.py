"""The distribution of a round's net for one box, exactly where it can be: every distinct net
(in cents) with its probability, jointly with the dealer's first card and outcome.

A strategy's :class:`~pontoon.analysis.evaluate.Outcome` holds every choice the expected value
made; here they are played forwards (:mod:`pontoon.analysis.reach`). An unsplit hand's
distribution is exact. A split box is the sum of its hands: each hand's distribution given
the pattern of second cards, the first card and the dealer's outcome is exact (the unknown
cards come out by the recursion the expected value uses), and the hands are taken as
independent given those, which is also how the expected value's 13.7 correction treats them.
So every mean, frequency and marginal is exact, and the mean is the expected value; the
spread of split rounds is approximate (docs/analysts/analysis.md measures by how much).

>>> from pontoon.rules import load_rules
>>> from pontoon.analysis.report import analyze
>>> rep = analyze(load_rules("classic-blackjack", {"decks": 1, "split_max_hands": 1}),
...               "composition", infinite=True)
>>> d = round_distribution(rep)
>>> abs(round(d.ev - rep.ev, 12)), abs(round(d.total - 1, 12))
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

from pontoon.analysis.composition import Floats, Ints
from pontoon.analysis.dealer import NATURAL
from pontoon.analysis.endings import End, Endings, endings_of
from pontoon.analysis.evaluate import Outcome, same_rank_tens
from pontoon.analysis.game import NEG, SURRENDER, Context, Game
from pontoon.analysis.pairs import enumerated, two_hands
from pontoon.analysis.reach import Forward, Play, split_plays
from pontoon.analysis.report import Report
from pontoon.analysis.sparse import EMPTY, Dist, Lattice
from pontoon.analysis.split import (
    CAP_13_7,
    SplitValue,
    pair_cards_left,
    pair_patterns,
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
    # 13.7: what a dealer pontoon gives back to the split hands standing, per round, in cents
    # (their original wagers less the one it takes), from the split hands' own chances
    refund: float = 0.0

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

    def box_moments(self, k: int, others: bool = False) -> tuple[float, float]:
        """(mean, variance) of :meth:`boxes`'s sum, per unit wager, without its convolutions:
        ``k`` boxes alike and independent given the dealer's first card and outcome have,
        given it, ``k`` times one box's mean and ``k`` times its variance."""
        extra = (k - 1) * self.super_others if others and self.super_cents is not None else 0
        first = second = 0.0
        for row in self.parts:
            for d in row:
                mass = d.total()
                if mass > 0:
                    keys = (
                        d.keys
                        if not extra
                        else np.where(d.keys == self.super_cents, d.keys + extra, d.keys)
                    )
                    x = keys.astype(np.float64) / self.wager
                    mean = float(d.probs @ x) / mass
                    var = float(d.probs @ (x - mean) ** 2) / mass
                    first += mass * k * mean
                    second += mass * (k * var + (k * mean) ** 2)
        return first, second - first * first

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
    deal = _deal(game, ends, outcome)
    split_share = deal.share
    played = {pair: sv for pair, sv in outcome.splits.items() if split_share[pair].any()}
    plays: list[Play] = [(Context(), outcome.base)]
    starts = [np.pad(deal.start, [(0, 0), (0, 0), (0, 1)])]
    for pair, sv in played.items():  # the split hands not played forwards yet
        if not enumerated(game, pair) and not sv.played:
            more, their = split_plays(game, pair, sv.values)
            plays += more
            starts += their
    fw = Forward(game, ends, plays, 2)
    zero = np.zeros(1, dtype=np.int64)
    for mass, tab, ev in deal.settled:
        fw.emit(zero, np.pad(mass, [(0, 0), (0, 0), (0, 1)]), tab, ev)
    joints = fw.run(starts, [deal.keep])
    e = len(ends)
    by_ctx = {ctx: _pad(joint, e) for (ctx, _), joint in zip(plays, joints, strict=True)}
    for pair, sv in played.items():
        by_ctx.update({Context(pair, j): _pad(joint, e) for j, joint in sv.played.items()})
    splits = {
        pair: _split_parts(game, ends, pair, sv, split_share[pair] > 0, by_ctx)
        for pair, sv in played.items()
    }

    cents = np.array([x.cents for x in ends.ends], dtype=np.int64)
    j = by_ctx[Context()][0]  # (10, 7, E)
    up = outcome.up_prob
    refund = sum(float(up @ (split_share[p] * back)) for p, (_, _, back) in splits.items())
    parts: Parts = []
    counts = np.zeros(e)
    for u in range(10):
        row = []
        for o in range(7):
            d = _dist(cents, j[u, o])
            for pair, (sp, _, _) in splits.items():
                if split_share[pair][u] > 0:
                    d = d + sp[u][o].scaled(split_share[pair][u])
            row.append(d.scaled(up[u]))
        parts.append(row)
        counts += up[u] * j[u].sum(axis=0)
        for pair, (_, cnt, _) in splits.items():
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
        refund,
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


@dataclass
class _Deal:
    """The round as dealt: the masses of the unsplit hands that play on (``start``, (M, 10
    up, 1)); what settles at the deal (the naturals, the rounds ending at the peek, a chart's
    surrendered pairs: (mass, dealer table, ending)); per pair, the share of its deals that
    split (10 up,); per 7-7 played by its suits, the share of each configuration that plays
    on (``keep``)."""

    start: Floats
    settled: list[tuple[Floats, Floats, Ints | int]]
    share: dict[int, Floats]
    keep: dict[int, Floats]


def _deal(game: Game, ends: Endings, outcome: Outcome) -> _Deal:
    """Every initial deal's hand: settled at once, split, or played on."""
    r, c = game.rules, game.comps
    table = game.rows(Context()).table
    played = _no_pontoon(table) if game.peek else table  # (the peek game: as Forward reads it)
    at_peek = np.zeros_like(table)
    at_peek[..., NATURAL] = table[..., NATURAL]
    legal = game.legal(Context())
    q = same_rank_tens(game)
    w = game.wager
    deal = _Deal(np.zeros((len(c), 10, 1)), [], {p: np.zeros(10) for p in outcome.splits}, {})
    natural = ends.of(End(game.pay.cents(game.pay.natural), Ending.PONTOON, 1))
    push = ends.of(End(0, Ending.PUSH, 1))
    lost = ends.of(End(-w, Ending.DEALER_PONTOON, 1))
    settle = deal.settled.append
    for k, (i, a, b) in enumerate(outcome.hands):
        pk = outcome.deal_prob[k][None, :, None]  # (1, 10 up, 1)
        if {a, b} == {1, 10}:
            if game.peek or not r.player_21_wins:  # paid if the dealer has none (9.1)
                settle((pk, _no_pontoon(table[i])[None], natural))
                settle(
                    (pk, at_peek[i][None], natural if (game.peek and r.player_21_wins) else push)
                )
            else:
                settle((pk, table[i][None], natural))
            continue
        if game.peek:
            settle((pk, at_peek[i][None], lost))
        sv = outcome.splits.get(a) if a == b else None
        split = np.zeros(10)
        if sv is not None:
            split = _split_choice(game, outcome, sv, i, a, q, legal, deal.keep)
            if outcome.chart is not None:
                surr = _chart_surrenders(outcome, a, legal[i])
                settle((pk * surr[None, :, None], played[i][None], ends.surrender[None, None, :]))
                split = np.where(surr, 0.0, split)
                deal.start[i, :, 0] -= outcome.deal_prob[k] * surr
            deal.share[a] += outcome.deal_prob[k] * split
        deal.start[i, :, 0] += outcome.deal_prob[k] * (1.0 if i in deal.keep else 1.0 - split)
    return deal


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
    game: Game,
    ends: Endings,
    pair: int,
    sv: SplitValue,
    ups: np.ndarray,
    joints_of: dict[Context, Floats],
) -> tuple[Parts, Floats, Floats]:
    """Per first card and dealer outcome, the masses of a split box's nets; (10 up, E) the
    expected number of its hands ending each way; and (10 up,) 13.7's refund in cents
    (:func:`_refund`), each for one split deal (against the first cards ``ups`` at least);
    ``joints_of``: each split hand's played forwards."""
    if enumerated(game, pair):
        return _two_hand_parts(game, ends, pair, sv, ups)
    joints = {j: joints_of[Context(pair, j)] for j in sv.values}
    m0 = pair_cards_left(game, pair)
    e = len(ends)
    cents = np.array([x.cents for x in ends.ends], dtype=np.int64)
    stood = np.array([x.stood for x in ends.ends])
    w = game.wager
    obo = CAP_13_7 and not game.peek and game.rules.dealer_natural_takes == "original"
    cap = np.arange(7) == NATURAL if obo else np.zeros(7, dtype=bool)
    unit = int(np.gcd.reduce(np.append(cents, w)))  # every net and the wager: whole units
    dense = (int(cents.max()) - int(cents.min())) // unit <= LATTICE_SPAN
    parts: Parts = [[EMPTY] * 7 for _ in range(10)]
    counts = np.zeros((10, e))
    refunds = np.zeros(10)
    total = game.shoe.size - 1 - 2  # cards left after the first card and the pair
    for u in np.flatnonzero(ups).tolist():
        summed: Lattice | None = None
        keyed: list[list[Dist]] = [[] for _ in range(7)]
        for prob, r, n, x in pair_patterns(game, pair, u, m0):
            if prob <= 0:
                continue
            if game.shoe.infinite:
                qn, qx = joints[1 + r][0, u], joints[1 + r][1, u]
            else:
                qn = unknowns_out(_leaf(joints, 0, u), r, max(n - 1, 0), m0[u], total, 1)
                qx = unknowns_out(_leaf(joints, 1, u), r, n, m0[u], total, 0)
            counts[u] += prob * (n * qn.sum(axis=0) + x * qx.sum(axis=0))
            if obo:
                refunds[u] += prob * _refund(cents, stood, qn[NATURAL], qx[NATURAL], n, x, w)
            if dense:
                box = _lattice_box(unit, cents, stood, qn, qx, n, x, cap, w).scaled(prob)
                summed = box if summed is None else summed + box
                continue
            for o in range(7):
                keyed[o].append(
                    _keyed_box(cents, stood, qn[o], qx[o], n, x, cap[o], w).scaled(prob)
                )
        if summed is not None:
            parts[u] = [summed.dist(o) for o in range(7)]
        elif not dense:
            parts[u] = [Dist.sum(k) for k in keyed]
    return parts, counts, refunds


def _refund(
    cents: Ints, stood: np.ndarray, qn: Floats, qx: Floats, n: int, x: int, w: int
) -> float:
    """13.7 (``original``): what a dealer pontoon gives back to a box of ``n`` N hands and
    ``x`` x hands (masses over the endings jointly with the pontoon, (E,)), in cents: each
    hand standing would lose its stake, and the pontoon takes one original wager from them
    all — the hands' stood losses less ``w`` times P(some hand stood), the hands independent
    given the pontoon as the box's masses take them."""
    mass, hands = _hands(qn, qx, n, x)
    if mass <= 0:
        return 0.0
    lost = sum(float(h[stood] @ -cents[stood]) for h in hands)
    none = float(np.prod([1.0 - float(h[stood].sum()) for h in hands]))
    return float(mass) * (lost - w * (1.0 - none))


def _two_hand_parts(
    game: Game, ends: Endings, pair: int, sv: SplitValue, ups: np.ndarray
) -> tuple[Parts, Floats, Floats]:
    """:func:`_split_parts` for a pair that becomes two hands at most: exact
    (:mod:`pontoon.analysis.pairs`)."""
    done = [
        sv.exact[u]
        if u in sv.exact
        else two_hands(game, ends, pair, sv.values[1], u)
        if ups[u]
        else ([EMPTY] * 7, np.zeros(0), 0.0)
        for u in range(10)
    ]
    e = len(ends)
    counts = np.stack([_pad1(cnt, e) for _, cnt, _ in done])
    backs = np.array([back for _, _, back in done], dtype=np.float64)
    return [d for d, _, _ in done], counts, backs


def _leaf(joints: dict[int, Floats], ch: int, u: int) -> Callable[[int], Floats]:
    def leaf(j: int) -> Floats:
        out: Floats = joints[j][ch, u]
        return out

    return leaf


LATTICE_SPAN: Final = 200  # a hand's nets this many units apart at most: summed densely


class _Masses(Protocol):
    """What :func:`_summed` does with a hand's masses: :class:`Dist` or :class:`Lattice`."""

    def convolve(self: M, other: M, /) -> M: ...
    def __add__(self: M, other: M, /) -> M: ...
    def scaled(self: M, w: Floats, /) -> M: ...
    def shift(self: M, cents: int, /) -> M: ...


M = TypeVar("M", bound=_Masses)


def _hands(qn: Floats, qx: Floats, n: int, x: int) -> tuple[Floats, list[Floats]]:
    """A box of ``n`` N hands and ``x`` x hands given the dealer's outcome (masses over
    the endings jointly with it, (..., E)): P(the outcome) (...,) and each hand's masses
    given it."""
    mass: Floats = (qx if x else qn).sum(axis=-1)

    def given(q: Floats) -> Floats:
        size = q.sum(axis=-1, keepdims=True)
        out: Floats = np.divide(q, size, out=np.zeros_like(q), where=size > 0)
        return out

    return mass, [given(qn)] * n + [given(qx)] * x


def _lattice_box(
    unit: int,
    cents: Ints,
    stood: np.ndarray,
    qn: Floats,
    qx: Floats,
    n: int,
    x: int,
    cap: np.ndarray,
    w: int,
) -> Lattice:
    """The masses of a box of ``n`` N hands and ``x`` x hands for each dealer outcome (a
    row each; ``qn``, ``qx`` (7, E)), the hands independent given it, summed on a lattice
    of ``unit`` cents; ``cap`` (13.7, ``original``; per outcome): the dealer's pontoon takes
    one original wager from all the hands still standing, however many."""
    mass, hands = _hands(qn, qx, n, x)
    args = (
        lambda q: Lattice.of(unit, cents, q),
        lambda m: Lattice.point(unit, m),
        Lattice.point(unit, 0.0),
        hands,
        stood,
    )
    out = _summed(*args, False, w)
    if cap.any():
        out = out.scaled(~cap) + _summed(*args, True, w).scaled(cap)
    return out.scaled(mass)


def _keyed_box(
    cents: Ints, stood: np.ndarray, qn: Floats, qx: Floats, n: int, x: int, cap: bool, w: int
) -> Dist:
    """:func:`_lattice_box` for one dealer outcome (``qn``, ``qx`` (E,)), keyed by cents:
    where the unit is too fine for a lattice (an odd wager: nets a cent apart)."""
    mass, hands = _hands(qn, qx, n, x)
    if mass <= 0:
        return EMPTY
    return _summed(
        lambda q: _dist(cents, q), lambda m: Dist.point(0, m), EMPTY, hands, stood, cap, w
    ).scaled(float(mass))


def _summed(
    of: Callable[[Floats], M],
    point: Callable[[Floats | float], M],
    empty: M,
    hands: list[Floats],
    stood: np.ndarray,
    cap: bool,
    w: int,
) -> M:
    """The sum of independent ``hands`` (masses over the endings, ``of`` made into masses by
    net): a box's arithmetic, whichever kind of masses (and row by row, a lattice's rows)."""
    if not cap:
        made = {id(h): of(h) for h in hands}  # (a box's hands are a few arrays repeated)
        out = made[id(hands[0])] if hands else point(1.0)
        for h in hands[1:]:
            out = out.convolve(made[id(h)])
        return out
    none, some = point(1.0), empty  # no hand stood yet / some hand stood (its loss aside)
    for h in hands:
        played = of(np.where(stood, 0.0, h))
        s = h[..., stood].sum(axis=-1)  # P(this hand stood): a number, or one per row
        some = some.convolve(played + point(s)) + none.scaled(s)
        none = none.convolve(played)
    return none + some.shift(-w)
