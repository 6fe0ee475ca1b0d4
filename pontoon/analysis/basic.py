"""The optimal total-dependent basic strategy: the best chart a person can carry.

A chart decides by total (hard or soft) and pair against the dealer's first card, whatever
the cards that make the total. It is found cell by cell, per dealer's first card (each column
only changes that card's rounds): walking the totals in the order hands depend on each other
(:meth:`Compositions.groups`), each cell takes the code whose value, summed over the hands
that reach the cell (weighted by how often the current chart reaches them), is highest; then
each pair's row takes the better of its total's play and the split (its split hands played by
the chart). Rounds repeat until no cell changes. Each change raises the chart's value, so the
result is a chart no single cell change improves. Hands are weighted by their unsplit
reach: after a split the chart is played as it stands.

Under ``double_rescue`` (12) the chart also has the rescue rows ``X6`` ... ``X20``: at the
start of each round every rescue cell (final total of a doubled hand, first card) takes what
is worth more, rescuing (``-1``) or standing, summed over the doubled hands that end on that
total (weighted by how often the current chart doubles into them); that round then plays
them. What standing is worth depends only on the hand, so these cells are optimal for the
chart's own doubles once the chart no longer changes.
"""

from __future__ import annotations

import numpy as np

from pontoon.analysis.chart import (
    RESCUE_TOTALS,
    SCORES,
    TOTAL_CODES,
    Chart,
    pair_row,
    total_row,
)
from pontoon.analysis.composition import Compositions, Floats
from pontoon.analysis.evaluate import same_rank_tens, two_card_hands
from pontoon.analysis.game import DOUBLE, HIT, NEG, SURRENDER, Chooser, Context, Game, Values
from pontoon.analysis.split import max_hands, split_hand_values, split_value

ROUNDS = 8
TOL = 1e-12


def value_under(vals: Floats, code: str) -> Floats:
    """The value of playing ``code`` given action values ``vals`` (..., 4; -inf illegal)."""
    prefs = np.array(SCORES[code])
    pick = np.argmax(np.where(np.isfinite(vals), prefs, NEG), axis=-1)
    out: Floats = np.take_along_axis(vals, pick[..., None], axis=-1)[..., 0]
    return out


def reach(game: Game, played: Values, chart: Chart) -> Floats:
    """(M, 10 up) how often the chart's unsplit hand reaches each composition."""
    c = game.comps
    rows = game.rows(Context())
    hands, probs = two_card_hands(game)
    out = np.zeros((len(c), 10))
    for k, (i, a, b) in enumerate(hands):
        if {a, b} == {1, 10}:
            continue
        w = probs[k].copy()
        if a == b and max_hands(game, a) >= 2:
            code = np.array([chart.code(pair_row(a), u) for u in range(1, 11)])
            w[(code == "P") | (code == "Rp")] = 0.0
        out[i] = w
    hard = c.matrix @ np.arange(1, 11)
    hits = played.choice == HIT
    for h in range(2, 21):
        idx = np.flatnonzero((hard == h) & rows.mask)
        if not idx.size:
            continue
        flow = np.where(hits[idx], out[idx], 0.0)[:, :, None] * rows.nxt[idx]  # (k, up, card)
        ch = c.child[idx]
        for x in range(10):
            ok = ch[:, x] >= 0
            np.add.at(out, ch[ok, x], flow[ok, :, x])
    return out


def optimal_chart(game: Game, rounds: int = ROUNDS) -> Chart:
    """The optimal total-dependent chart for ``game`` (see the module's docstring)."""
    c = game.comps
    rank_tens = game.rules.split_by == "rank"
    rows_of = [chart_rows(c, i, rank_tens) for i in range(len(c))]
    is_pair = np.array([p is not None for _, p in rows_of])
    q = same_rank_tens(game)
    chart = Chart.initial()
    rescuing = game.rules.double_rescue
    if rescuing:
        chart = chart.with_rescues()
    for _ in range(rounds):
        played = game.evaluate(Context(), scores=chart.scores(c, rank_tens), rescue=chart.rescues())
        weights = reach(game, played, chart)
        new = chart.copy()
        if rescuing:
            choose_rescues(game, played, weights, new)
        rescue = new.rescues()
        choose = _chooser(new, weights, rows_of, is_pair)
        base = game.evaluate(Context(), chooser=choose, rescue=rescue)
        post = new.scores(c, rank_tens)
        legal = game.legal(Context())
        for pair in range(1, 11):
            if max_hands(game, pair) < 2:
                continue
            sv = split_value(game, pair, split_hand_values(game, pair, post, rescue=rescue)).ev
            i = c.index[tuple(2 if v == pair else 0 for v in range(1, 11))]
            acts = np.where(legal[i], base.act[i], NEG)
            row = pair_row(pair)
            same = q if pair == 10 else np.ones(10)
            for u in range(1, 11):
                a = acts[u - 1]
                score = {code: float(value_under(a, code)) for code in TOTAL_CODES}
                split = same[u - 1] * sv[u - 1] + (1 - same[u - 1]) * score["S"]
                score["P"] = split
                if np.isfinite(a[SURRENDER]):
                    score["Rp"] = float(a[SURRENDER])
                current = new.code(row, u)
                if current not in score:
                    current = "P"
                best = max(score, key=score.__getitem__)
                if score[best] > score[current] + TOL:
                    new.set(row, u, best)
        if new == chart:
            break
        chart = new
    chart.name = f"basic ({game.rules.name})"
    return chart


def choose_rescues(game: Game, played: Values, weights: Floats, new: Chart) -> None:
    """Set each rescue cell of ``new`` (12) to what the chart's doubled hands ending on that
    total against that first card are worth more doing, summed: rescue or stand."""
    c = game.comps
    rows = game.rows(Context())
    stand2 = np.einsum("kuo,ko->ku", rows.table, game.coef2)
    gain = -rows.f - stand2  # what rescuing adds (units of the wager)
    legal = np.isfinite(played.act[:, :, DOUBLE])
    doubled = _landed(game, np.where(played.choice == DOUBLE, weights, 0.0)) * gain
    could = _landed(game, np.where(legal, weights, 0.0)) * gain
    for t in RESCUE_TOTALS:
        sel = c.total == t
        for u in range(1, 11):
            score = float(doubled[sel, u - 1].sum())
            if score == 0.0:  # the chart doubles into no such hand: as if it doubled all
                score = float(could[sel, u - 1].sum())
            if score > TOL:
                new.set(f"X{t}", u, "R")
            elif score < -TOL:
                new.set(f"X{t}", u, "S")


def _landed(game: Game, doubles: Floats) -> Floats:
    """(M, 10 up) how often a doubled hand ends on each composition, given how often each
    composition is doubled (M, 10 up)."""
    c = game.comps
    flow = doubles[:, :, None] * game.rows(Context()).nxt
    out = np.zeros((len(c), 10))
    for x in range(10):
        ok = c.child[:, x] >= 0
        np.add.at(out, c.child[ok, x], flow[ok, :, x])
    return out


def _chooser(
    new: Chart, weights: Floats, rows_of: list[tuple[str, str | None]], is_pair: np.ndarray
) -> Chooser:
    """The cell-by-cell choice of a round (see :func:`optimal_chart`), writing into ``new``."""
    table = {code: np.array(s) for code, s in SCORES.items()}

    def choose(soft: bool, t: int, idx: np.ndarray, vals: Floats) -> Floats:
        row = total_row(t, soft)
        if t < 21:
            plain = ~is_pair[idx]
            w, v = weights[idx][plain], vals[plain]
            for u in range(1, 11):
                current = new.code(row, u)
                score = {
                    code: float(w[:, u - 1] @ value_under(v[:, u - 1], code))
                    for code in TOTAL_CODES
                }
                best = max(score, key=score.__getitem__)
                if score[best] > score[current] + TOL:
                    new.set(row, u, best)
        out = np.zeros((len(idx), 10, 4))
        for j, i in enumerate(idx):
            total, pair = rows_of[int(i)]
            for u in range(1, 11):
                out[j, u - 1] = table[new.fallback_code(total, pair, u)]
        return out

    return choose


def chart_rows(c: Compositions, i: int, rank_tens: bool) -> tuple[str, str | None]:
    """(total row, pair row or None) of composition ``i``."""
    return Chart().row_of(c, i, rank_tens)
