"""Backward induction over the compositions (:meth:`Game.evaluate_many`): the hands of every
context walked are the rows of one set of arrays, and a group of hands (one soft or hard
total) is stepped at once, from the highest totals down, so every hand's children are known
when the hand is. A group is stepped in chunks of :data:`CHUNK` rows (its hands do not read
each other), which bounds the step's temporaries; a chooser (a chart being optimised) sees
its whole group at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

import numpy as np

from pontoon.analysis import compiled
from pontoon.analysis.composition import Compositions, Floats, Ints, ShoeModel
from pontoon.analysis.dealer import NATURAL, DealerCache
from pontoon.analysis.payoffs import Payoffs
from pontoon.analysis.values import DOUBLE, HIT, NEG, Context, LazyValues, Values, dense
from pontoon.rules import RuleSet

Premiums = dict[int, list[list[tuple[float, float, float]]]]  # Game.premiums
Average = dict[int, tuple[Floats, Floats]]  # composition -> average (hit, double) premium
Chooser = Callable[[bool, int, np.ndarray, Floats], Floats]  # (soft, total, hands, values)


class Walked(Protocol):
    """What the walk reads of a game (:class:`pontoon.analysis.game.Game`)."""

    rules: RuleSet
    pay: Payoffs
    comps: Compositions
    shoe: ShoeModel
    dealer: DealerCache
    peek: bool
    infinite: bool
    coef1: Floats  # (M, 7): what standing wins against each dealer outcome
    coef2: Floats  # the same, doubled
    win1: Floats  # (M,): a 21's odds
    win2: Floats

    def in_play(self, ctx: Context) -> np.ndarray: ...
    def legal(self, ctx: Context) -> np.ndarray: ...
    def premiums(self, ctx: Context) -> Premiums: ...
    def offer(self, removed: Ints, table: Floats) -> tuple[Floats, Floats, Floats]: ...
    def naturals_after_draw(self, removed: Ints) -> list[tuple[int, Floats]]: ...


ARR1, ARR2, SARR1, SARR2 = range(4)  # the channels of _Walk.arrive
Sums = tuple[Floats, Floats, Floats, Floats]  # _Walk._sums: stand1, stand2, came, lost
CHUNK: Final = 256  # rows stepped at once: a step's temporaries stay near 3 MB


def evaluate_many(
    game: Walked,
    ctxs: list[Context],
    scores: Floats | None,
    chooser: Chooser | None,
    rescue: np.ndarray | None,
) -> list[Values]:
    """The :class:`Values` of each of ``ctxs``, played by ``scores`` (or optimally; a
    ``chooser`` sets the scores of each group from its action values; ``rescue``: see
    :meth:`Game.evaluate`)."""
    if chooser is not None and len(ctxs) != 1:
        raise ValueError("a chooser optimises one context")
    walk = _Walk(game, ctxs, scores, chooser, rescue)
    for g, (soft, total, _) in enumerate(game.comps.groups()):
        rows = walk.rows_of(g)
        step = len(rows) if chooser is not None else CHUNK
        for lo in range(0, len(rows), max(step, 1)):
            walk.step(rows[lo : lo + step], soft, total)
    return walk.values()


class _Walk:
    """The arrays of one walk: a row per (context, composition in play)."""

    def __init__(
        self,
        game: Walked,
        ctxs: list[Context],
        scores: Floats | None,
        chooser: Chooser | None,
        rescue: np.ndarray | None,
    ) -> None:
        self.game, self.ctxs = game, ctxs
        self.scores, self.chooser, self.rescue = scores, chooser, rescue
        c = game.comps
        m = len(c)
        self.ins = [np.flatnonzero(game.in_play(x)) for x in ctxs]
        self.bounds = np.cumsum([0, *(len(i) for i in self.ins)])
        self.comp = np.concatenate(self.ins)  # each row's composition
        self.ctx_of = np.repeat(np.arange(len(ctxs)), np.diff(self.bounds))
        self.at = np.full((len(ctxs), m), -1, dtype=np.int64)  # each composition's row
        for q, idx in enumerate(self.ins):
            self.at[q, idx] = np.arange(self.bounds[q], self.bounds[q + 1])
        offsets = np.array([x.offset() for x in ctxs])
        self.removed = c.matrix[self.comp] + offsets[self.ctx_of]
        # every table the walk reads, worked out in one go (None: the infinite shoe's one)
        self.ids = None if game.infinite else game.dealer.ids(self.removed)
        self.legal = np.concatenate(
            [game.legal(x)[idx] for x, idx in zip(ctxs, self.ins, strict=True)]
        )
        self.prem = [game.premiums(x) for x in ctxs]
        self.avg_prem: list[Average] = [
            {
                i: (
                    np.array([sum(p * h for p, h, _ in confs) for confs in per_up]),
                    np.array([sum(p * d for p, _, d in confs) for confs in per_up]),
                )
                for i, per_up in pq.items()
            }
            for pq in self.prem
        ]
        self.node_rows = np.zeros(len(self.comp), dtype=bool)  # rows of pattern nodes
        for q, pq in enumerate(self.prem):
            rows = self.at[q, list(pq)]
            self.node_rows[rows[rows >= 0]] = True  # (the hand calculator's may be out of play)
        k = len(self.comp)
        self.act = np.full((k, 10, 4), NEG)
        self.choice = np.zeros((k, 10), dtype=np.int64)
        self.node = np.zeros((k, 10))
        # the value of arriving at a row by a hit (and by a double), and P(dealer pontoon and
        # the hand stood) likewise; one more row of zeros, where a bust arrives
        self.arrive = np.zeros((k + 1, 4, 10))
        self.rescued = np.zeros((k, 10), dtype=bool)
        groups = c.group_of[self.comp]
        self._by_group = np.argsort(groups, kind="stable")
        self._ends = np.searchsorted(groups[self._by_group], np.arange(len(c.groups()) + 1))

    def rows_of(self, g: int) -> np.ndarray:
        """The rows of group ``g``'s compositions."""
        out: np.ndarray = self._by_group[self._ends[g] : self._ends[g + 1]]
        return out

    def step(self, at_g: np.ndarray, soft: bool, t: int) -> None:
        """Every action's value for rows ``at_g`` (one group's), their choice, and the values
        of arriving at them."""
        if not at_g.size:
            return
        game = self.game
        idx = self.comp[at_g]
        d = game.dealer
        tab = d.tables(self.removed[at_g]) if self.ids is None else d.at(self.ids[at_g])
        pn = tab[..., NATURAL]
        f = 1.0 - pn if game.peek else np.ones_like(pn)  # the weight of a settlement now
        sums = self._sums(at_g, idx, tab, f, t < 21)
        loop = compiled.walk_choose
        if loop is not None and self.chooser is None:
            self._choose_compiled(loop, at_g, soft, t, idx, tab, f, sums)
        else:
            self._choose(at_g, soft, t, idx, pn, f, sums)

    def _choose_compiled(
        self,
        loop: Callable[..., None],
        at_g: Ints,
        soft: bool,
        t: int,
        idx: Ints,
        tab: Floats,
        f: Floats,
        sums: Sums,
    ) -> None:
        """:meth:`_choose` by :func:`pontoon.analysis._compiled.walk_choose` (``loop``)."""
        game, r = self.game, self.game.rules
        stand1, stand2, came, lost = (np.ascontiguousarray(a) for a in sums)
        nodes = np.flatnonzero(self.node_rows[at_g])
        node_of = np.full(len(at_g), -1, dtype=np.int64)
        node_of[nodes] = np.arange(len(nodes))
        prem = np.zeros((len(nodes), 10, 2))
        for n, j in enumerate(nodes.tolist()):
            prem[n] = np.stack(self.avg_prem[self.ctx_of[at_g[j]]][int(idx[j])], axis=-1)
        void = r.surrender == "void-on-pontoon"  # 9.4
        surrender = 1 if game.peek else 2 if void else 0  # (walk_choose's codes)
        rescue, row = 0, np.zeros(10, dtype=np.uint8)
        if r.double_rescue:  # 12: forfeit the original wager instead of standing
            rescue = 1 if self.rescue is None else 2
            if self.rescue is not None:
                row = self.rescue[int(soft), t].astype(np.uint8)
        scores = np.zeros((0, 10, 4)) if self.scores is None else self.scores
        loop(
            *(at_g, idx, np.ascontiguousarray(tab), np.ascontiguousarray(f)),
            *(stand1, stand2, came, lost, t < 21, node_of, prem),
            *(self.legal.view(np.uint8), scores, surrender, game.pay.surrender_loss),
            *(t == 21, r.player_21_wins, game.win1, game.win2, rescue, row),
            *(self.act, self.choice, self.node, self.arrive, self.rescued.view(np.uint8)),
        )
        if self.scores is None:  # a pattern node played best for its suits
            for j in nodes.tolist():
                q, i, at = self.ctx_of[at_g[j]], int(idx[j]), at_g[j]
                lg = self.legal[at]
                v = _best_by_suits(self.act[at], lg, self.avg_prem[q][i], self.prem[q][i])
                self.node[at] = v
                self.arrive[at, ARR1] = v

    def _choose(
        self, at_g: Ints, soft: bool, t: int, idx: Ints, pn: Floats, f: Floats, sums: Sums
    ) -> None:
        """Every action's value for rows ``at_g`` from :meth:`_sums`, their choice, and the
        values of arriving at them."""
        game, r = self.game, self.game.rules
        stand1, stand2, came, lost = sums
        hit = np.full_like(stand1, NEG)
        dbl = np.full_like(stand1, NEG)
        shit = np.zeros_like(stand1)
        sdbl = np.zeros_like(stand1)
        if t < 21:
            hit, dbl = came[:, ARR1] - lost, came[:, ARR2] - 2.0 * lost
            shit, sdbl = came[:, SARR1], came[:, SARR2]
        loss = game.pay.surrender_loss
        if game.peek:
            surr = -loss * (1.0 - pn)
        elif r.surrender == "void-on-pontoon":  # 9.4
            surr = -pn - (1.0 - pn) * loss
        else:
            surr = np.full_like(pn, -loss)
        vals = np.stack([stand1, hit, dbl, surr], axis=-1)
        nodes = np.flatnonzero(self.node_rows[at_g])
        for j in nodes:
            avg = self.avg_prem[self.ctx_of[at_g[j]]][int(idx[j])]
            vals[j, :, HIT] += avg[0]
            vals[j, :, DOUBLE] += avg[1]
        svals = np.stack([pn, shit, sdbl, np.zeros_like(pn)], axis=-1)
        lg = self.legal[at_g]
        key = vals if self.scores is None else self.scores[idx]
        if self.chooser is not None:
            key = self.chooser(soft, t, idx, np.where(lg, vals, NEG))
        pick = np.argmax(np.where(lg, key, NEG), axis=-1)
        v = np.take_along_axis(vals, pick[..., None], axis=-1)[..., 0]
        sv = np.take_along_axis(svals, pick[..., None], axis=-1)[..., 0]
        if self.scores is None and self.chooser is None:
            for j in nodes:
                q, i = self.ctx_of[at_g[j]], int(idx[j])
                v[j] = _best_by_suits(vals[j], lg[j], self.avg_prem[q][i], self.prem[q][i])
        self.act[at_g] = np.where(lg, vals, NEG)
        self.choice[at_g] = pick
        self.node[at_g] = v
        arrive = self.arrive
        if t == 21:
            if r.player_21_wins:  # 9.2: paid at once
                arrive[at_g, ARR1] = game.win1[idx][:, None] * f
                arrive[at_g, ARR2] = game.win2[idx][:, None] * f
            else:
                arrive[at_g, ARR1], arrive[at_g, SARR1] = stand1, pn
                arrive[at_g, ARR2], arrive[at_g, SARR2] = stand2, pn
            return
        arrive[at_g, ARR1], arrive[at_g, SARR1] = v, sv
        arrive[at_g, ARR2], arrive[at_g, SARR2] = stand2, pn
        if r.double_rescue:  # 12: forfeit the original wager instead of standing
            forfeit = -f
            if self.rescue is None:
                better = forfeit > stand2
            else:
                better = np.broadcast_to(self.rescue[int(soft), t][None, :], stand2.shape)
            arrive[at_g, ARR2] = np.where(better, forfeit, stand2)
            arrive[at_g, SARR2] = np.where(better, 0.0, pn)
            self.rescued[at_g] = better

    def _sums(self, at_g: Ints, idx: Ints, tab: Floats, f: Floats, draws: bool) -> Sums:
        """Standing's value at both stakes (k, 10 up); where the hands may draw, the value of
        what a card brings (k, channel, 10 up: the children's arrivals) and the wager lost to
        a busting card (k, 10 up; ``f``: the weight of a settlement now). Compiled where the
        package has it, else by numpy (which gathers every child's arrivals first)."""
        game, k = self.game, len(at_g)
        removed = self.removed[at_g]
        kids = np.zeros((0, 10), dtype=np.int64)
        if draws:
            child = game.comps.child[idx]
            bust = child < 0
            kids = self.at[self.ctx_of[at_g][:, None], np.where(bust, 0, child)]
            kids[kids < 0] = len(self.comp)  # the row of zeros: a child out of play
        loop = compiled.walk_sums
        if loop is not None:
            stand1, stand2 = np.empty((k, 10)), np.empty((k, 10))
            fresh = np.empty if draws else np.zeros  # (left alone where no card is drawn)
            came, lost = fresh((k, 4, 10)), fresh((k, 10))
            if draws:
                kids[bust] = -1  # (a busting card)
            left = game.shoe.remaining(removed.astype(np.float64))
            shoe = (left, game.infinite, game.peek, np.ascontiguousarray(f))
            args = (np.ascontiguousarray(tab), game.coef1, game.coef2, idx, *shoe, self.arrive)
            loop(*args, kids, stand1, stand2, came, lost)
            return stand1, stand2, came, lost
        stand1 = np.einsum("kuo,ko->ku", tab, game.coef1[idx])
        stand2 = np.einsum("kuo,ko->ku", tab, game.coef2[idx])
        if not draws:
            return stand1, stand2, np.zeros((k, 4, 10)), np.zeros((k, 10))
        nxt = game.offer(removed, tab)[0]
        kids[bust] = len(self.comp)  # a bust arrives nowhere
        came = np.einsum("kuc,kcxu->kxu", nxt, self.arrive[kids])  # (k, channel, 10 up)
        lost = np.einsum("kuc,kc->ku", nxt, bust) * f
        for u, pn_x in game.naturals_after_draw(removed):  # (the peek game: 1 - pn is f)
            lost[:, u] = np.einsum("kc,kc->k", nxt[:, u], (1.0 - pn_x) * bust)
        return stand1, stand2, came, lost

    def values(self) -> list[Values]:
        """Each context's :class:`Values` (a split hand's kept as its rows in play)."""
        by_suits = self.scores is None and self.chooser is None
        arrays = dict(
            act=self.act,
            choice=self.choice,
            node=self.node,
            arr1=np.ascontiguousarray(self.arrive[:-1, ARR1]),
            sarr1=np.ascontiguousarray(self.arrive[:-1, SARR1]),
            rescued=self.rescued,
        )
        m = len(self.game.comps)
        out: list[Values] = []
        for q, (x, idx) in enumerate(zip(self.ctxs, self.ins, strict=True)):
            part = {name: a[self.bounds[q] : self.bounds[q + 1]] for name, a in arrays.items()}
            if x.pair is None:  # the unsplit hand's: read everywhere
                full = {name: dense(a, idx, m, name) for name, a in part.items()}
                out.append(Values(**full, premium=self.avg_prem[q], by_suits=by_suits))
            else:
                out.append(LazyValues(idx, m, part, self.avg_prem[q], by_suits))
        return out


def _best_by_suits(
    vals: Floats,
    legal: np.ndarray,
    avg: tuple[Floats, Floats],
    per_up: list[list[tuple[float, float, float]]],
) -> Floats:
    """The value of a pattern node played best for its suits (10 up,)."""
    out = np.zeros(10)
    for u in range(10):
        base = vals[u].copy()
        base[HIT] -= avg[0][u]
        base[DOUBLE] -= avg[1][u]
        total = 0.0
        for p, h, d in per_up[u]:
            cand = base + np.array([0.0, h, d, 0.0])
            total += p * float(np.max(np.where(legal[u], cand, NEG)))
        out[u] = total
    return out


__all__ = ["CHUNK", "evaluate_many"]
