"""A strategy's expected value: every initial deal, weighted by its probability.

The round starts with the dealer's first card and the player's two cards, all three from the
full shoe. A pontoon is paid at once (9.1); every other hand is played by the strategy, a pair
perhaps split (:mod:`pontoon.analysis.split`). In the peek game the rounds where the dealer has
a pontoon end at the peek (the player loses the wager, or pushes or is paid a pontoon), and the
hand values, unnormalised, cover the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import Floats
from pontoon.analysis.endings import endings_of
from pontoon.analysis.game import (
    DOUBLE,
    HIT,
    NEG,
    STAND,
    SURRENDER,
    Context,
    Game,
    Values,
)
from pontoon.analysis.pairs import enumerated, exact_split_value, split_considered
from pontoon.analysis.reach import play_splits
from pontoon.analysis.split import SplitValue, max_hands, split_hand_values, split_value

SPLIT = 4
ACTION_NAMES = ("stand", "hit", "double", "surrender", "split")


@dataclass
class Outcome:
    """What a strategy is worth: ``ev`` per unit wager; per first card; and for every
    two-card hand (``hands``: composition index, first value, second value) each action's
    value given that deal (``actions``: NaN when not allowed; in the peek game given that the
    dealer has no pontoon) and the strategy's choice."""

    ev: float
    ev_by_up: Floats
    up_prob: Floats
    hands: list[tuple[int, int, int]]
    deal_prob: Floats  # (hands, 10 up): P(hand | first card)
    actions: Floats  # (hands, 10 up, 5)
    choice: np.ndarray  # (hands, 10 up)
    base: Values
    splits: dict[int, SplitValue] = field(default_factory=dict)
    chart: Chart | None = None


def two_card_hands(game: Game) -> tuple[list[tuple[int, int, int]], Floats]:
    """The two-card hands and P(hand | dealer's first card) (hands, 10 up)."""
    hands = list(game.comps.two_card())
    rem = game.shoe.remaining(np.eye(10))  # (10 up, 10 card)
    size = rem.sum(axis=1)
    probs = np.zeros((len(hands), 10))
    for k, (_, a, b) in enumerate(hands):
        if game.shoe.infinite:
            pa, pb = rem[:, a - 1], rem[:, b - 1]
            probs[k] = pa * pb * (1 if a == b else 2)
        elif a == b:
            probs[k] = rem[:, a - 1] * (rem[:, a - 1] - 1) / (size * (size - 1))
        else:
            probs[k] = 2 * rem[:, a - 1] * rem[:, b - 1] / (size * (size - 1))
    return hands, probs


def up_probabilities(game: Game) -> Floats:
    return game.shoe.probs()


def same_rank_tens(game: Game) -> Floats:
    """(10 up,) P(two ten-value cards are of one rank) when pairs are split by rank, else 1."""
    if game.rules.split_by != "rank":
        return np.ones(10)
    if game.shoe.infinite:
        return np.full(10, 1 / game.shoe.ten_ranks())
    return np.array([game.shoe.ten_pairs(u)[0] for u in range(1, 11)])


def composition_scores(base: Values) -> Floats:
    """The post-split policy of the composition-dependent strategy (CDZ-): a split hand is
    played as an unsplit hand of the same cards would be, among the actions it has."""
    return np.where(np.isfinite(base.act), base.act, -1e9)


def evaluate(
    game: Game,
    chart: Chart | None = None,
    post_split: str = "cdz",
    *,
    one_shot: bool = False,
    forward: bool = False,
) -> Outcome:
    """The expected value of ``chart`` (None: the composition-dependent optimum, played after
    splits as ``post_split`` says: ``cdz`` CDZ-, ``cdp1`` or ``cdp``; a chart is played as
    written after splits too). ``one_shot``: no other analysis of this shoe follows in this
    process, so each pair's split-hand dealer tables are let go once the pair is valued
    (the memory of the largest pair's instead of every pair's); ``forward``: the
    distribution follows, so each pair's split hands are played forwards while its tables
    are there (:attr:`SplitValue.played`)."""
    rank_tens = game.rules.split_by == "rank"
    rescue = None
    if chart is None:
        base = game.evaluate(Context())
        post = composition_scores(base)
    else:
        post = chart.scores(game.comps, rank_tens)
        rescue = chart.rescues()
        base = game.evaluate(Context(), scores=post, rescue=rescue)
        post_split = "cdz"
    splits = {}
    for pair in range(1, 11):
        if max_hands(game, pair) >= 2:
            mark = game.dealer.mark()
            values = split_hand_values(game, pair, post, post_split, rescue)
            sv = split_value(game, pair, values)
            needed = split_considered(game, base, chart, pair, sv)
            sv = exact_split_value(game, pair, sv, needed)
            slim = {j: v.slim() for j, v in sv.values.items()}  # what replaying needs
            played = {}
            if forward and needed.any() and not enumerated(game, pair):
                played = play_splits(game, endings_of(game), pair, slim)
            splits[pair] = SplitValue(sv.ev, sv.hands, slim, sv.exact, played)
            if one_shot:
                game.dealer.release(mark)
    return assemble(game, base, splits, chart)


def assemble(
    game: Game, base: Values, splits: dict[int, SplitValue], chart: Chart | None
) -> Outcome:
    """Weigh every initial deal by its probability."""
    r = game.rules
    pay = game.pay
    hands, probs = two_card_hands(game)
    naturals = game.naturals(Context())
    legal = game.legal(Context())
    q = same_rank_tens(game)
    actions = np.full((len(hands), 10, 5), np.nan)
    choice = np.full((len(hands), 10), -1, dtype=np.int64)
    ev_up = np.zeros(10)
    for k, (i, a, b) in enumerate(hands):
        pn = naturals[i]
        norm = 1.0 - pn if game.peek else np.ones(10)
        natural = {a, b} == {1, 10}
        if natural:
            if game.peek or r.player_21_wins:
                value = pay.natural * (1.0 - pn) if game.peek else np.full(10, pay.natural)
            else:
                value = pay.natural * (1.0 - pn)  # waits: pushes a dealer pontoon
        else:
            acts = np.where(legal[i], base.act[i], NEG)
            value = base.node[i].copy()
            choice[k] = base.choice[i]
            sv = splits.get(a) if a == b else None
            if sv is not None:
                actions[k, :, SPLIT] = sv.ev / np.where(norm > 0, norm, 1.0)
                value, picked = _with_split(game, chart, base, i, a, value, acts, sv.ev, q)
                choice[k] = np.where(picked, SPLIT, choice[k])
            safe = np.where(norm > 0, norm, 1.0)
            actions[k, :, :4] = np.where(np.isfinite(acts), acts / safe[:, None], np.nan)
        if game.peek:
            nat = pay.natural if (natural and r.player_21_wins) else (0.0 if natural else -1.0)
            value = value + pn * nat
        ev_up += probs[k] * value
    up = up_probabilities(game)
    return Outcome(float(up @ ev_up), ev_up, up, hands, probs, actions, choice, base, splits, chart)


def _with_split(
    game: Game,
    chart: Chart | None,
    base: Values,
    i: int,
    pair: int,
    value: Floats,
    acts: Floats,
    split: Floats,
    q: Floats,
) -> tuple[Floats, np.ndarray]:
    """A pair's value with the split on offer: (value, split chosen) per first card."""
    same = q if pair == 10 else np.ones(10)
    picked = np.zeros(10, dtype=bool)
    out = value.copy()
    for u in range(10):
        if chart is None:
            best = max(float(value[u]), float(split[u]))
            if i in base.premium:  # a 7-7 decides by its suits; the split is one option
                best = game_best_with_split(game, base, i, u, acts, float(split[u]))
            picked[u] = split[u] > value[u]
            out[u] = same[u] * best + (1 - same[u]) * value[u]
        else:
            code = chart.code("PA" if pair == 1 else "PT" if pair == 10 else f"P{pair}", u + 1)
            use = code == "P" or (code == "Rp" and not np.isfinite(acts[u, SURRENDER]))
            if code == "Rp" and np.isfinite(acts[u, SURRENDER]):
                out[u] = acts[u, SURRENDER]
            elif use:
                picked[u] = True
                out[u] = same[u] * split[u] + (1 - same[u]) * value[u]
    return out, picked


def game_best_with_split(
    game: Game, base: Values, i: int, u: int, acts: Floats, split: float
) -> float:
    """A pattern pair (7-7) played best for its suits, splitting an option."""
    prem = game.premiums(Context())[i][u]
    avg_h, avg_d = base.premium[i][0][u], base.premium[i][1][u]
    plain = acts[u].copy()
    plain[HIT] -= avg_h
    plain[DOUBLE] -= avg_d
    total = 0.0
    for p, h, d in prem:
        cand = plain + np.array([0.0, h, d, 0.0])
        total += p * max(float(np.max(cand)), split)
    return total


__all__ = ["ACTION_NAMES", "DOUBLE", "HIT", "SPLIT", "STAND", "SURRENDER", "Outcome", "evaluate"]
