"""The forward pass: how a hand played by a fixed policy ends, jointly with the dealer's outcome.

The expected value (:meth:`Game.evaluate`) walks the compositions backwards and keeps, at each,
the action it chose. Here the same choices are played forwards: probability mass enters at the
hands a context starts from and flows, in increasing hard total (one more card always adds to
it), along each hand's choice, until it ends. Every ending (:mod:`pontoon.analysis.endings`)
is recorded jointly with the dealer's outcome, ``J[channel, up, outcome, ending]``; the
mean of ``J`` is the value of the backward walk, the same sums taken in another order.

Several contexts (the unsplit hand and every split hand's) are played at once, as the
backward walk (:mod:`pontoon.analysis.walk`) steps them: their hands are the rows of one set
of arrays, and every row of one hard total is stepped together, reading the dealer's tables
and the shoe's offer for those rows only.

A hand that busts never reaches the dealer's table, yet the dealer's outcome is still
distributed (it matters when two boxes share the dealer, or split hands do). It comes from the
identity that taking one more random card out of a shoe leaves the dealer's distribution as it
was: ``T(i) = Σ_x P(x) T(i + x)``, so the busting cards' share is ``T(i)`` less the tables of
the children that do not bust. A hand that hits records its mass times ``T(i)`` as a bust, and
each child it reaches takes its own arriving mass times ``T(i + x)`` back off when it is
stepped. In the peek game the dealer's pontoon column is left out (those rounds end at the
peek; :mod:`pontoon.analysis.distribution` adds them).

A two-card hand that can make a 6-7-8 or 7-7-7 pays by suits: its suit configurations go
their own ways (each may choose another action when no policy was given, as the backward walk
chose), and the completing card ends the hand at that suit's odds.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Final

import numpy as np

from pontoon.analysis import compiled
from pontoon.analysis.composition import Floats, Ints, comp_of
from pontoon.analysis.dealer import NATURAL
from pontoon.analysis.endings import End, Endings
from pontoon.analysis.game import DOUBLE, HIT, NEG, STAND, SURRENDER, Context, Game, Values
from pontoon.analysis.split import pair_cards_left, split_weights
from pontoon.analysis.suits import Config
from pontoon.analysis.values import values_at
from pontoon.vocab import Ending

UO: Final = np.arange(10)[:, None] * 7 + np.arange(7)[None, :]  # (10 up, 7) flat (up, outcome)
CHUNK: Final = 1024  # rows stepped at once: a step's temporaries stay near 10 MB

Play = tuple[Context, Values]  # a context and the choices its hands follow


class Forward:
    """The hands of ``plays`` played forwards, ``channels`` masses at once (an N and an x
    split hand, say), recording ``mass × dealer table`` at each ending."""

    def __init__(self, game: Game, ends: Endings, plays: Sequence[Play], channels: int = 1):
        self.game, self.ends, self.plays, self.channels = game, ends, list(plays), channels
        c = game.comps
        self.ins = [np.flatnonzero(game.in_play(ctx)) for ctx, _ in self.plays]
        bounds = np.cumsum([0, *(len(i) for i in self.ins)])
        self.comp = np.concatenate(self.ins)  # each row's composition
        self.ctx_of = np.repeat(np.arange(len(self.plays)), np.diff(bounds))
        self.at = np.full((len(self.plays), len(c)), -1, dtype=np.int64)  # each comp's row
        for q, idx in enumerate(self.ins):
            self.at[q, idx] = np.arange(bounds[q], bounds[q + 1])
        offsets = np.array([ctx.offset() for ctx, _ in self.plays], dtype=np.int64)
        self.removed = c.matrix[self.comp] + offsets[self.ctx_of]
        self.ids = None if game.infinite else game.dealer.ids(self.removed)  # (tables')
        self.choice = np.concatenate(
            [values_at(v, "choice", idx) for (_, v), idx in zip(self.plays, self.ins, strict=True)]
        ).astype(np.int64)  # (a slim split hand's are narrower)
        self.rescued = np.concatenate(
            [values_at(v, "rescued", idx) for (_, v), idx in zip(self.plays, self.ins, strict=True)]
        )
        self.nodes: dict[int, tuple[int, tuple[int, int], int]] = {}  # row -> pattern node
        for q, (ctx, _) in enumerate(self.plays):
            for i, hand, third in game.pattern_nodes(ctx):
                if self.at[q, i] >= 0:
                    self.nodes[int(self.at[q, i])] = (i, hand, third)
        self.is_node = np.zeros(len(self.comp), dtype=bool)
        self.is_node[list(self.nodes)] = True
        self._cells = 70 * len(self.plays)  # an ending's share of the flat joint, (q, up, o)
        self._j = np.zeros((channels, len(ends) * self._cells))  # (endings may be added)

    # ------------------------------------------------------------------ recording
    def emit(
        self, q: Ints, mass: Floats, tab: Floats, ev: Ints | int, ups: Ints | None = None
    ) -> None:
        """Record ``mass`` (k, ups, C) of contexts ``q`` (k,) ending as ``ev`` (k, ups, 7 or
        broadcastable) against each dealer outcome, with the dealer's table ``tab`` (k, ups,
        7); a negative mass takes back what was recorded."""
        if not mass.size or not mass.any():
            return
        uo = UO if ups is None else UO[ups]
        flat = np.asarray(ev) * self._cells + q[:, None, None] * 70 + uo[None]
        self._grow()
        size = self._j.shape[1]
        loop = compiled.add_endings
        if loop is not None:  # (the same sums, in place)
            shape = tab.shape
            loop(
                np.ascontiguousarray(np.broadcast_to(flat, shape)),
                np.ascontiguousarray(np.broadcast_to(mass, (*shape[:2], self.channels))),
                np.ascontiguousarray(tab),
                self._j,
            )
            return
        flat = np.broadcast_to(flat, tab.shape).ravel()
        for ch in np.flatnonzero(mass.reshape(-1, self.channels).any(axis=0)).tolist():
            w = mass[:, :, None, ch] * tab
            self._j[ch] += np.bincount(flat, weights=w.ravel(), minlength=size)

    def _grow(self) -> None:
        """Room in the joint for every ending known (a suit's may have been added)."""
        size = len(self.ends) * self._cells
        if size > self._j.shape[1]:
            self._j = np.pad(self._j, [(0, 0), (0, size - self._j.shape[1])])

    def joints(self) -> list[Floats]:
        """Each context's (C, 10 up, 7 outcome, endings): what has been recorded (a bust's
        share taken as a difference is exact but for rounding, which is cut at zero)."""
        out = np.maximum(self._j, 0.0).reshape(self.channels, -1, len(self.plays), 10, 7)
        return [np.moveaxis(out[:, :, q], 1, -1) for q in range(len(self.plays))]

    def tables(self, rows: Ints) -> Floats:
        """The dealer's tables for ``rows`` (k, 10 up, 7), the pontoon column left out in
        the peek game."""
        d = self.game.dealer
        tab: Floats = d.tables(self.removed[rows]) if self.ids is None else d.at(self.ids[rows])
        if self.game.peek:
            tab = tab.copy()
            tab[..., NATURAL] = 0.0
        return tab

    def table_of(self, q: int, i: int) -> Floats:
        """:meth:`tables` for composition ``i`` of context ``q``: (10 up, 7)."""
        offset = np.array(self.plays[q][0].offset(), dtype=np.int64)
        tab: Floats = self.game.dealer.tables((self.game.comps.matrix[i] + offset)[None])[0].copy()
        if self.game.peek:
            tab[..., NATURAL] = 0.0
        return tab

    # ------------------------------------------------------------------ the pass
    def run(
        self, starts: Sequence[Floats], keeps: Sequence[dict[int, Floats] | None] = ()
    ) -> list[Floats]:
        """Play hands arriving with mass ``starts[q]`` (M, 10 up, C) at the compositions of
        context ``q`` (as by a hit); ``keeps[q]``: for a pattern node, the share of each suit
        configuration that plays on (10 up, configs), the rest having split. Returns
        :meth:`joints`."""
        n, shape = len(self.comp), (10, self.channels)
        self.hit_in = np.concatenate([s[idx] for s, idx in zip(starts, self.ins, strict=True)])
        self.hit_in = self.hit_in.astype(np.float64)
        self.dbl_in = np.zeros((n, *shape))  # doubled hands arriving, to settle there
        # of each: what came from a hand a card could bust (its share of the bust goes back)
        self.by_hit = np.zeros((n, *shape))
        self.by_dbl = np.zeros((n, *shape))
        self.keeps = list(keeps) + [None] * (len(self.plays) - len(keeps))
        hard = (self.game.comps.matrix @ np.arange(1, 11))[self.comp]
        order = np.argsort(hard, kind="stable")
        ends = np.searchsorted(hard[order], np.arange(2, 23))
        for lo, hi in pairwise(ends.tolist()):
            for start in range(lo, hi, CHUNK):
                self._step(order[start : min(start + CHUNK, hi)])
        return self.joints()

    def _step(self, rows: Ints) -> None:
        """Settle the hands of ``rows`` (one hard total): those arriving by a double, the 21s,
        and each action the others take; a hit's mass goes on to the children. The step's
        facts are gathered here; :meth:`_settle` (or its compiled twin) does the sums."""
        g, c, e = self.game, self.game.comps, self.ends
        comp, q = self.comp[rows], self.ctx_of[rows]
        tab = self.tables(rows)
        at21 = c.total[comp] == 21  # a 21 stands (or is paid at once: 9.2)
        choice = np.where(at21[:, None], STAND, self.choice[rows])
        ev_stand, ev_double = e.stand1[comp], e.stand2[comp]
        rescued = self.rescued[rows]
        if g.rules.player_21_wins:  # 9.2: paid at once
            ev_stand[at21] = e.paid1[comp[at21]][:, None]
            ev_double[at21] = e.paid2[comp[at21]][:, None]
            rescued = rescued & ~at21[:, None]
        kids = c.child[comp]
        kidrow = np.where(kids >= 0, self.at[q[:, None], np.maximum(kids, 0)], -1)
        node = np.full(len(rows), -1, dtype=np.int64)  # a pattern node's masses
        masses: list[Floats] = []
        for j in np.flatnonzero(self.is_node[rows]).tolist():
            i, hand, third = self.nodes[int(rows[j])]
            nxt = g.offer(self.removed[rows[j : j + 1]], tab[j : j + 1])[0][0]
            busts = (nxt * (kids[j] < 0)).sum(axis=-1) > 0  # a card may bust it
            node[j] = len(masses)
            masses.append(self._pattern(int(q[j]), i, hand, third, self.hit_in[rows[j]], busts))
            kidrow[j, third - 1] = -2  # the completing card is settled by its suit
        self._grow()
        shares = np.array(masses).reshape(-1, 10, 4, self.channels)
        loop = compiled.forward_step
        if loop is None:
            nxt = g.offer(self.removed[rows], tab)[0]
            self._settle(
                rows, q, tab, nxt, choice, node, shares, kidrow, ev_stand, ev_double, rescued
            )
            return
        left = g.shoe.remaining(self.removed[rows].astype(np.float64))
        facts = (rows, q, np.ascontiguousarray(tab), left, g.infinite, choice, node, shares)
        ends = (kidrow, ev_stand, ev_double, rescued.view(np.uint8), e.surrender, *e.bust, e.rescue)
        flows = self.hit_in, self.by_hit, self.dbl_in, self.by_dbl
        loop(*facts, *ends, self._cells, *flows, self._j)

    def _settle(
        self,
        rows: Ints,
        q: Ints,
        tab: Floats,
        nxt: Floats,
        choice: Ints,
        node: Ints,
        shares: Floats,
        kidrow: Ints,
        ev_stand: Ints,
        ev_double: Ints,
        rescued: np.ndarray,
    ) -> None:
        """:func:`pontoon.analysis._compiled.forward_step` by numpy (read its description)."""
        e = self.ends
        actions = np.arange(4)[None, None, :, None]
        masses = self.hit_in[rows][:, :, None, :] * (choice[:, :, None, None] == actions)
        masses[node >= 0] = shares[node[node >= 0]]
        self.emit(q, -self.by_hit[rows], tab, e.bust[0])  # the children's share of a bust
        self.emit(q, -self.by_dbl[rows], tab, e.bust[1])
        doubled = np.where(rescued[:, :, None], e.rescue, ev_double[:, None, :])
        self.emit(q, self.dbl_in[rows], tab, doubled)
        self.emit(q, masses[:, :, STAND], tab, ev_stand[:, None, :])
        self.emit(q, masses[:, :, SURRENDER], tab, e.surrender[None, None, :])
        busts = ((nxt * (kidrow == -1)[:, None, :]).sum(axis=-1) > 0)[..., None]
        hit, dbl = masses[:, :, HIT], masses[:, :, DOUBLE]
        hit_b, dbl_b = hit * busts, dbl * busts
        self.emit(q, hit_b, tab, e.bust[0])  # every card's share; the children take theirs back
        self.emit(q, dbl_b, tab, e.bust[1])
        row, x = np.nonzero(kidrow >= 0)  # every (hand, card) that does not bust
        if not row.size:
            return
        kid = kidrow[row, x]
        p = nxt[row, :, x][..., None]  # (n, 10 up, 1)
        flows = (self.hit_in, hit), (self.by_hit, hit_b), (self.dbl_in, dbl), (self.by_dbl, dbl_b)
        for arr, mass in flows:
            if mass.any():
                _add_rows(arr, kid, mass[row] * p)

    def _pattern(
        self,
        q: int,
        i: int,
        hand: tuple[int, int],
        third: int,
        reach: Floats,
        busts: np.ndarray,
    ) -> Floats:
        """A 6-7, 6-8, 7-8 or 7-7 hand arriving with mass ``reach`` (10 up, C): the masses
        playing each action (10 up, action, C), as its suit configurations play (each its own
        best when no policy was given); the completing card is paid here by its suit (taking
        its share of the bust back, where a card may bust the hand: ``busts`` (10 up,))."""
        g, e = self.game, self.ends
        ctx, vals = self.plays[q]
        child = int(g.comps.child[i, third - 1])
        tab3 = self.table_of(q, child)
        removed = self.removed[self.at[q, i]][None]
        p3s = g.offer(removed, g.dealer.tables(removed))[0][0, :, third - 1]
        keep = (self.keeps[q] or {}).get(i)
        qa = np.array([q])
        masses = np.zeros((10, 4, self.channels))
        for u in range(10):
            picks = suit_picks(g, ctx, vals, i, hand, u)
            share = np.ones(len(picks)) if keep is None else keep[u]
            p3 = p3s[u]
            for k, (conf, pick) in enumerate(picks):
                m = reach[u] * conf.prob * share[k]
                masses[u, pick] += m
                if pick in (HIT, DOUBLE) and p3 > 0:
                    stake = 1 if pick == HIT else 2
                    t = tab3[u][None, None, :]
                    for ps, cents, why in conf.hit if pick == HIT else conf.double:
                        ev = suit_ending(e, cents, why, stake)
                        self.emit(qa, (m * p3 * ps)[None, None, :], t, ev, np.array([u]))
                    if busts[u]:
                        back = -(m * p3)[None, None, :]
                        self.emit(qa, back, t, e.bust[stake - 1], np.array([u]))
        return masses


def split_plays(
    game: Game, pair: int, values: dict[int, Values]
) -> tuple[list[Play], list[Floats]]:
    """A pair's split-hand contexts (one per number of other pair cards out) with the masses
    their hands start from: the pair card and each second card, in two channels (an N hand
    and an x hand: :func:`pontoon.analysis.split.split_weights`)."""
    c = game.comps
    two = np.array([c.index[comp_of([pair, x])] for x in range(1, 11)])
    m0 = pair_cards_left(game, pair)
    plays: list[Play] = []
    starts: list[Floats] = []
    for j, vals in values.items():
        wn, wx, _ = split_weights(game, pair, j, m0)
        start = np.zeros((len(c), 10, 2))
        start[two, :, 0] = wn.T
        start[two, :, 1] = wx.T
        plays.append((Context(pair, j), vals))
        starts.append(start)
    return plays, starts


def play_splits(
    game: Game, ends: Endings, pair: int, values: dict[int, Values]
) -> dict[int, Floats]:
    """Each of a pair's split-hand contexts played forwards together: (2, 10 up, 7, endings)
    per number of other pair cards out."""
    plays, starts = split_plays(game, pair, values)
    joints = Forward(game, ends, plays, 2).run(starts)
    return {ctx.extra: joint for (ctx, _), joint in zip(plays, joints, strict=True)}


def _add_rows(arr: Floats, rows: Ints, vals: Floats) -> None:
    """``arr[rows] += vals``, repeated rows summed (by one bincount over the rows' span)."""
    lo, hi = int(rows.min()), int(rows.max()) + 1
    width = int(np.prod(arr.shape[1:]))
    flat = (rows - lo)[:, None] * width + np.arange(width)[None, :]
    summed = np.bincount(
        flat.ravel(), weights=vals.reshape(len(rows), -1).ravel(), minlength=(hi - lo) * width
    )
    arr[lo:hi] += summed.reshape(hi - lo, *arr.shape[1:])


def suit_picks(
    game: Game, ctx: Context, vals: Values, i: int, hand: tuple[int, int], u: int
) -> list[tuple[Config, int]]:
    """Each suit configuration of pattern node ``i`` against first card ``u`` (0-9) with the
    action it plays: the policy's, or (no policy given) the best for its suits, as
    :meth:`Game.evaluate` chose."""
    confs = game.configs(ctx, u + 1, hand)
    if not vals.by_suits:
        return [(conf, int(vals.choice[i, u])) for conf in confs]
    prem = game.premiums(ctx)[i][u]
    legal = np.isfinite(vals.act[i, u])
    out = []
    for k, conf in enumerate(confs):
        base = vals.act[i, u].copy()
        base[HIT] += prem[k][1] - vals.premium[i][0][u]
        base[DOUBLE] += prem[k][2] - vals.premium[i][1][u]
        out.append((conf, int(np.argmax(np.where(legal, base, NEG)))))
    return out


def suit_ending(ends: Endings, cents: int, why: Ending, stake: int) -> Ints | int:
    """How a 6-7-8 or 7-7-7 paying ``cents`` by its suits ends: at once where 21 wins (9.2)
    and for the Super Bonus, else as a stood 21 against each dealer outcome."""
    if why == Ending.SUPER_BONUS or ends.game.rules.player_21_wins:
        return ends.of(End(cents, why, stake))
    out: Ints = ends.stand_row(21, cents, stake, why)[None, None, :]
    return out
