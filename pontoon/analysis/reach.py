"""The forward pass: how a hand played by a fixed policy ends, jointly with the dealer's outcome.

The expected value (:meth:`Game.evaluate`) walks the compositions backwards and keeps, at each,
the action it chose. Here the same choices are played forwards: probability mass enters at the
hands a context starts from and flows, in increasing hard total (one more card always adds to
it), along each hand's choice, until it ends. Every ending (:mod:`pontoon.analysis.endings`)
is recorded jointly with the dealer's outcome, ``J[channel, up, outcome, ending]``; the
mean of ``J`` is the value of the backward walk, the same sums taken in another order.

A hand that busts never reaches the dealer's table, yet the dealer's outcome is still
distributed (it matters when two boxes share the dealer, or split hands do). It comes from the
identity that taking one more random card out of a shoe leaves the dealer's distribution as it
was: ``T(i) = Σ_x P(x) T(i + x)``, so the busting cards' share is ``T(i)`` less the tables of
the children that do not bust. In the peek game the dealer's pontoon column is left out (those
rounds end at the peek; :mod:`pontoon.analysis.distribution` adds them).

A two-card hand that can make a 6-7-8 or 7-7-7 pays by suits: its suit configurations go
their own ways (each may choose another action when no policy was given, as the backward walk
chose), and the completing card ends the hand at that suit's odds.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from pontoon.analysis.composition import Floats, Ints
from pontoon.analysis.dealer import NATURAL
from pontoon.analysis.endings import End, Endings
from pontoon.analysis.game import DOUBLE, HIT, NEG, STAND, SURRENDER, Context, Game, Values
from pontoon.analysis.suits import Config
from pontoon.vocab import Ending

UO: Final = np.arange(10)[:, None] * 7 + np.arange(7)[None, :]  # (10 up, 7) flat (up, outcome)


class Forward:
    """One context's hands played forwards by ``vals``, in ``channels`` at once (an N and an
    x split hand, say), recording ``mass × dealer table`` at each ending."""

    def __init__(self, game: Game, ends: Endings, ctx: Context, vals: Values, channels: int = 1):
        self.game, self.ends, self.ctx, self.vals = game, ends, ctx, vals
        self.rows = game.rows(ctx)
        self.channels = channels
        tab = self.rows.table.copy()
        if game.peek:
            tab[..., NATURAL] = 0.0
        self.tab = tab
        self._uo: list[Ints] = []
        self._ev: list[Ints] = []
        self._w: list[Floats] = []

    # ------------------------------------------------------------------ recording
    def emit(self, mass: Floats, tab: Floats, ev: Ints | int, ups: Ints | None = None) -> None:
        """Record ``mass`` (k, ups, C) ending as ``ev`` (k, ups, 7 or broadcastable) against
        each dealer outcome, with the dealer's table ``tab`` (k, ups, 7)."""
        if not mass.size or not mass.any():
            return
        w = mass[:, :, None, :] * tab[:, :, :, None]
        uo = UO if ups is None else UO[ups]
        self._uo.append(np.broadcast_to(uo[None], tab.shape).ravel())
        self._ev.append(np.broadcast_to(np.asarray(ev), tab.shape).ravel())
        self._w.append(w.reshape(-1, self.channels))

    def joint(self) -> Floats:
        """(C, 10 up, 7 outcome, endings) what has been recorded."""
        e = len(self.ends)
        out = np.zeros((self.channels, 70 * e))
        if self._uo:
            flat = np.concatenate(self._uo) * e + np.concatenate(self._ev)
            w = np.concatenate(self._w)
            for ch in range(self.channels):
                out[ch] = np.bincount(flat, weights=w[:, ch], minlength=70 * e)
        return out.reshape(self.channels, 10, 7, e)

    # ------------------------------------------------------------------ the pass
    def run(self, start: Floats, keep: dict[int, Floats] | None = None) -> Floats:
        """Play hands arriving at the compositions with mass ``start`` (M, 10 up, C) (as by a
        hit); ``keep``: for a pattern node, the share of each suit configuration that plays on
        (10 up, configs), the rest having split. Returns :meth:`joint`."""
        g, c, rows = self.game, self.game.comps, self.rows
        reach = start.astype(np.float64).copy()
        hard = c.matrix @ np.arange(1, 11)
        nodes = {i: (hand, third) for i, hand, third in g.pattern_nodes(self.ctx)}
        for h in range(2, 22):
            idx = np.flatnonzero((hard == h) & rows.mask)
            if not idx.size:
                continue
            bust = self._bust_joint(idx)
            at = c.total[idx] == 21
            if at.any():
                i21 = idx[at]
                if g.rules.player_21_wins:  # 9.2: paid at once
                    ev: Ints = np.broadcast_to(
                        self.ends.paid1[i21][:, None, None], (len(i21), 10, 7)
                    )
                else:
                    ev = self.ends.stand1[i21][:, None, :]
                self.emit(reach[i21], self.tab[i21], ev)
            plain = ~at & ~np.isin(idx, list(nodes))
            ip = idx[plain]
            ch = self.vals.choice[ip]
            masses = {a: reach[ip] * (ch == a)[..., None] for a in (STAND, HIT, DOUBLE, SURRENDER)}
            self._act(ip, masses, bust[plain], reach)
            for j in np.flatnonzero(np.isin(idx, list(nodes))):
                i = int(idx[j])
                hand, third = nodes[i]
                self._pattern(i, hand, third, reach, bust[j : j + 1], (keep or {}).get(i))
        return self.joint()

    def _bust_joint(self, idx: Ints) -> Floats:
        """(k, 10 up, 7) P(next card busts ∧ dealer outcome) for compositions ``idx``."""
        rows = self.rows
        kids = self.game.comps.child[idx]
        safe = np.where(kids < 0, 0, kids)
        nxt = np.where((kids >= 0)[:, None, :], rows.nxt[idx], 0.0)
        out: Floats = self.tab[idx] - np.einsum("kux,kxuo->kuo", nxt, self.tab[safe])
        busts = (rows.nxt[idx] * (kids < 0)[:, None, :]).sum(axis=-1) > 0  # (k, 10 up)
        return np.where(busts[..., None], np.maximum(out, 0.0), 0.0)

    def _act(
        self,
        idx: Ints,
        masses: dict[int, Floats],
        bust: Floats,
        reach: Floats,
        skip: int | None = None,
    ) -> None:
        """Compositions ``idx`` taking each action with mass ``masses[action]`` (k, 10, C);
        ``skip``: a card whose draws the caller settles itself (a pattern's completing card)."""
        g, c, e = self.game, self.game.comps, self.ends
        if not idx.size:
            return
        self.emit(masses[STAND], self.tab[idx], e.stand1[idx][:, None, :])
        self.emit(masses[SURRENDER], self.tab[idx], e.surrender[None, None, :])
        kids = c.child[idx]
        nxt = self.rows.nxt[idx]
        hit, dbl = masses[HIT], masses[DOUBLE]
        self.emit(hit, bust, e.bust[0])
        self.emit(dbl, bust, e.bust[1])
        ok = kids >= 0
        if skip is not None:
            ok[:, skip - 1] = False
        row, x = np.nonzero(ok)  # every (composition, card) that does not bust
        if not row.size:
            return
        kid = kids[row, x]
        p = nxt[row, :, x][..., None]  # (n, 10 up, 1)
        if hit.any():
            np.add.at(reach, kid, hit[row] * p)
        if dbl.any():
            ev = np.broadcast_to(e.stand2[kid][:, None, :], (len(kid), 10, 7)).copy()
            ev = np.where(self.vals.rescued[kid][:, :, None], e.rescue, ev)
            if g.rules.player_21_wins:
                at = c.total[kid] == 21
                ev[at] = e.paid2[kid[at]][:, None, None]
            self.emit(dbl[row] * p, self.tab[kid], ev)

    def _pattern(
        self,
        i: int,
        hand: tuple[int, int],
        third: int,
        reach: Floats,
        bust: Floats,
        keep: Floats | None,
    ) -> None:
        """A 6-7, 6-8, 7-8 or 7-7 hand: each suit configuration plays its action (its own
        best when no policy was given), and the completing card pays by its suit."""
        g, e = self.game, self.ends
        rows = self.rows
        child = int(g.comps.child[i, third - 1])
        masses = {a: np.zeros((1, 10, self.channels)) for a in (STAND, HIT, DOUBLE, SURRENDER)}
        for u in range(10):
            picks = suit_picks(g, self.ctx, self.vals, i, hand, u)
            share = np.ones(len(picks)) if keep is None else keep[u]
            p3 = rows.nxt[i, u, third - 1]
            for k, (conf, pick) in enumerate(picks):
                m = reach[i, u] * conf.prob * share[k]
                masses[pick][0, u] += m
                if pick in (HIT, DOUBLE) and p3 > 0:
                    stake = 1 if pick == HIT else 2
                    for ps, cents, why in conf.hit if pick == HIT else conf.double:
                        ev = suit_ending(e, cents, why, stake)
                        mass = (m * p3 * ps)[None, None, :]
                        self.emit(mass, self.tab[child][u][None, None, :], ev, np.array([u]))
        self._act(np.array([i]), masses, bust, reach, skip=third)


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
