"""Splitting pairs, with resplits up to the rules' number of hands (13, 13.5-13.8).

The second cards dealt to split hands decide how many hands there are: a pair card resplits
while fewer than ``split_max_hands`` hands exist (the pair's strategy says split, so it says
resplit too), any other card ends the hand's splitting. By the predictable sampling property of
a shuffled shoe, the second cards can be read as if dealt first, in order, from the shoe; so the
probability of each *pattern* of pair (P) and other (N) second cards is exact, and each hand's
expected value is that of a hand started with the pair card and a second card that is not a
pair card (``N``), or any card once the hands are all made (``x``), with every pair card of
the pattern out of the shoe and the *other* hands' non-pair second cards out too. Those are
unknown cards known not to be pair cards; taking one out is exact by the identity
``V(a, b-1) = v V(a+1, b-1) + (1 - v) V(a, b)`` (``a`` more pair cards and ``b`` non-pair
cards out, ``v`` the chance that a random card is a pair card), solved for ``V(a, b)`` (Eric
Farmer's recursion, ``blackjack_split.pdf``). So split values are exact, resplits included,
at the cost of contexts with up to ``2 * hands - 3`` other pair cards out.

13.7 with ``dealer_natural_takes = "original"``: a dealer pontoon takes at most the original
wager from the hands still standing, however many there are. Each hand's value counts that
loss once per standing hand; :func:`split_value` corrects it with P(pontoon and hand stood)
per hand, taking the hands' chances of all having busted or been paid as independent given
the pattern (the only approximation; see docs/analysts/analysis.md for its measured size).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeVar

import numpy as np

from pontoon.analysis.composition import Floats, comp_of
from pontoon.analysis.game import Context, Game, Values, values_at
from pontoon.analysis.sparse import Dist

Pattern = tuple[float, int, int, int]  # probability, resplits, N hands, x hands
# apply the 13.7 correction (off only to measure its size, docs/analysts/analysis.md)
CAP_13_7 = True
V = TypeVar("V", float, np.ndarray)


def max_hands(game: Game, pair: int) -> int:
    """How many hands a pair may become (13): aces only once unless resplit."""
    r = game.rules
    if r.split_max_hands < 2:
        return 1
    if pair == 1 and not r.resplit_aces:
        return 2
    return r.split_max_hands


def patterns(
    hands: int, pairs_left: float, others_left: float, p_pair: float | None
) -> list[Pattern]:
    """The patterns of second cards: (probability, resplits, N hands, x hands). From a finite
    shoe with ``pairs_left`` pair cards and ``others_left`` others; from the infinite one with
    a pair card's probability ``p_pair``."""
    out: dict[tuple[int, int, int], float] = defaultdict(float)
    stack: list[tuple[int, int, int, int, float]] = [(0, 2, 0, 0, 1.0)]
    while stack:
        i, h, r, n, prob = stack.pop()
        if i == h:
            out[r, n, 0] += prob
            continue
        if h == hands:
            out[r, n, h - i] += prob
            continue
        if p_pair is None:
            left = pairs_left - r + others_left - n
            pp = (pairs_left - r) / left if left > 0 else 0.0
        else:
            pp = p_pair
        pp = min(max(pp, 0.0), 1.0)
        if pp > 0:
            stack.append((i, h + 1, r + 1, n, prob * pp))
        if pp < 1:
            stack.append((i + 1, h, r, n + 1, prob * (1 - pp)))
    return [(p, r, n, x) for (r, n, x), p in sorted(out.items())]


@dataclass
class SplitValue:
    """A split's value per first card (unnormalised in the peek game) and expected hands;
    ``values``: the split-hand contexts as played, by other pair cards out; ``exact``: per
    first card, the two hands' distribution, endings and 13.7 refund where it was enumerated
    (:func:`pontoon.analysis.pairs.two_hands`); ``played``: where the distribution was asked
    for as the pair was valued, each context's hands played forwards
    (:func:`pontoon.analysis.reach.play_splits`)."""

    ev: Floats
    hands: Floats
    values: dict[int, Values] = field(default_factory=dict)
    exact: dict[int, tuple[list[Dist], Floats, float]] = field(default_factory=dict)
    played: dict[int, Floats] = field(default_factory=dict)  # each context played forwards


def pair_cards_left(game: Game, pair: int) -> Floats:
    """(10 up,) cards of the pair's rank left after the dealer's first card and both pair
    cards (for ten-value pairs split by rank, the expected number: the first card's rank is
    not known to the analysis)."""
    shoe = game.shoe
    if shoe.infinite:
        return np.zeros(10)
    counts = shoe.counts - np.eye(10)
    left: Floats = counts[:, pair - 1] - 2
    if pair == 10 and game.rules.split_by == "rank":
        left = np.array([shoe.ten_pairs(u)[1] for u in range(1, 11)])
    return left


def pair_probability(game: Game, pair: int) -> float:
    """Probability that a card is of the pair's rank, in the infinite shoe."""
    p = float(game.shoe.probs()[pair - 1])
    if pair == 10 and game.rules.split_by == "rank":
        p /= game.shoe.ten_ranks()
    return p


def split_value(game: Game, pair: int, values: dict[int, Values]) -> SplitValue:
    """The value of splitting ``pair`` against each first card, the split hands played as
    ``values[j]`` (the split-hand context with ``j`` other pair cards out) says."""
    c = game.comps
    m0 = pair_cards_left(game, pair)
    ev, nh = np.zeros(10), np.zeros(10)
    obo = CAP_13_7 and not game.peek and game.rules.dealer_natural_takes == "original"
    two = np.array([c.index[comp_of([pair, x])] for x in range(1, 11)])
    per_j = {j: _hand_values(game, pair, j, v, two, m0) for j, v in values.items()}
    total = game.shoe.size - 1 - 2  # cards left after the first card and the pair
    for u in range(10):
        for prob, r, n, x in pair_patterns(game, pair, u, m0):
            if prob <= 0:
                continue
            if game.shoe.infinite:
                e_n, s_n, e_x, s_x, pn = (a[u] for a in per_j[1 + r])
            else:
                # Each N hand has the n - 1 other N hands' second cards out, each x hand all n.
                e_n, s_n = _removed(per_j, u, r, max(n - 1, 0), m0[u], total, 1, (0, 1))
                e_x, s_x, pn = _removed(per_j, u, r, n, m0[u], total, 0, (2, 3, 4))
            ev[u] += prob * (n * e_n + x * e_x)
            nh[u] += prob * (n + x)
            if obo and pn > 0:
                none_stood = (1 - s_n / pn) ** n * (1 - s_x / pn) ** x
                ev[u] += prob * (n * s_n + x * s_x - pn + pn * none_stood)
    return SplitValue(ev, nh, dict(values))


def pair_patterns(game: Game, pair: int, u: int, m0: Floats) -> list[Pattern]:
    """The patterns of second cards of a split ``pair`` against first card ``u`` (0-9), with
    ``m0`` (:func:`pair_cards_left`) pair cards left."""
    hands = max_hands(game, pair)
    if game.shoe.infinite:
        return patterns(hands, 0, 0, pair_probability(game, pair))
    total = game.shoe.size - 1 - 2
    return patterns(hands, float(m0[u]), total - float(m0[u]), None)


def _removed(
    per_j: Mapping[int, tuple[Floats, ...]],
    u: int,
    a: int,
    b: int,
    pairs: float,
    total: float,
    own: int,
    fields: tuple[int, ...],
) -> tuple[float, ...]:
    """``fields`` of a split hand against first card ``u`` (see :func:`unknowns_out`)."""

    deepest = max(per_j)

    def leaf(j: int) -> np.ndarray:
        # (an expected shoe's fractions of cards can reach past the last context: the
        # deepest stands for deeper ones, at a weight of those fractions; a shoe of whole
        # cards never gets there)
        return np.array([per_j[min(j, deepest)][f][u] for f in fields])

    return tuple(float(x) for x in unknowns_out(leaf, a, b, pairs, total, own))


def unknowns_out(
    leaf: Callable[[int], V], a: int, b: int, pairs: float, total: float, own: int
) -> V:
    """What ``leaf(j)`` (a split hand's figure, linear in its probabilities, with ``j``
    other pair cards out) becomes with ``a`` more pair cards and ``b`` unknown non-pair cards
    out of the shoe (``pairs`` pair cards and ``total`` cards left before; ``own``: the
    hand's own second card is a known non-pair card). Exact: V(a, b) = (V(a, b-1) -
    v V(a+1, b-1)) / (1 - v), v the chance that a random card of the (a, b-1) shoe is a pair
    card."""
    if b == 0:
        return leaf(1 + a)
    v = (pairs - a) / (total - own - a - (b - 1))
    same = unknowns_out(leaf, a, b - 1, pairs, total, own)
    if v <= 0:
        return same
    more = unknowns_out(leaf, a + 1, b - 1, pairs, total, own)
    out: V = (same - v * more) / (1 - v)
    return out


def split_weights(game: Game, pair: int, j: int, m0: Floats) -> tuple[Floats, Floats, Floats]:
    """(10 up, 10 second card) the second card of an N hand and of an x hand with ``j``
    other pair cards out; (10 up,) P(dealer pontoon) from that shoe."""
    removed = np.zeros(10)
    removed[pair - 1] = 1 + j
    rem = np.clip(game.shoe_after(removed), 0.0, None)  # (10 up, 10 card)
    weights_x = rem / rem.sum(axis=1, keepdims=True)
    non_pair = rem.copy()
    if game.shoe.infinite:
        non_pair[:, pair - 1] -= pair_probability(game, pair)
    else:
        non_pair[:, pair - 1] -= np.maximum(m0 - (j - 1), 0.0)
    non_pair = np.clip(non_pair, 0.0, None)
    weights_n = non_pair / non_pair.sum(axis=1, keepdims=True)
    size = rem.sum(axis=1)
    pn = np.zeros(10)
    pn[0] = rem[0, 9] / size[0]
    pn[9] = rem[9, 0] / size[9]
    return weights_n, weights_x, pn


def _hand_values(
    game: Game, pair: int, j: int, v: Values, two: np.ndarray, m0: Floats
) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """(10 up,) each: value and P(pontoon, stood) of an N hand and of an x hand with ``j``
    other pair cards out, and P(dealer pontoon) from that shoe."""
    weights_n, weights_x, pn = split_weights(game, pair, j, m0)
    arr = values_at(v, "arr1", two).T  # (10 up, 10 second card)
    sarr = values_at(v, "sarr1", two).T
    e_n = (weights_n * arr).sum(axis=1)
    s_n = (weights_n * sarr).sum(axis=1)
    e_x = (weights_x * arr).sum(axis=1)
    s_x = (weights_x * sarr).sum(axis=1)
    return e_n, s_n, e_x, s_x, pn


def split_contexts(game: Game, pair: int) -> list[Context]:
    """The split-hand contexts a pair needs: 1 to ``max_hands - 1`` other pair cards out, and
    for resplits up to ``2 * max_hands - 3`` (for :func:`_removed`), as far as the shoe has
    pair cards."""
    hands = max_hands(game, pair)
    most = hands - 1 if hands <= 2 or game.shoe.infinite else 2 * hands - 3
    if not game.shoe.infinite:
        # (a count's expected shoe holds fractions of cards: with 3.4 pair cards left,
        # unknowns_out reaches 4 more out, the context of 5)
        most = min(most, max(hands - 1, int(np.ceil(np.max(pair_cards_left(game, pair)))) + 1))
    return [Context(pair, j) for j in range(1, most + 1)]


POST_SPLIT: Final = ("cdz", "cdp1", "cdp")
POST_SPLIT_NAMES: Final = {"cdz": "CDZ-", "cdp1": "CDP1", "cdp": "CDP"}


def split_hand_values(
    game: Game,
    pair: int,
    post: Floats,
    post_split: str = "cdz",
    rescue: np.ndarray | None = None,
) -> dict[int, Values]:
    """The split-hand contexts of ``pair`` evaluated, keyed by other pair cards out.

    ``cdz``: played by ``post`` (a chart's scores, or the unsplit hand's best play: CDZ-);
    ``cdp``: each context played best for its own shoe (CDP); ``cdp1``: every context played
    as is best with one other pair card out, the first split (CDP1). Charts use ``cdz``, with
    their ``rescue`` table (12)."""
    ctxs = split_contexts(game, pair)
    if post_split == "cdp":
        return dict(zip((x.extra for x in ctxs), game.evaluate_many(ctxs), strict=True))
    if post_split == "cdp1":
        first = game.evaluate(ctxs[0])
        scores = np.where(np.isfinite(first.act), first.act, -1e9)
        rest = game.evaluate_many(ctxs[1:], scores=scores) if len(ctxs) > 1 else []
        return {1: first} | {x.extra: v for x, v in zip(ctxs[1:], rest, strict=True)}
    if post_split != "cdz":
        raise ValueError(f"unknown post-split strategy {post_split!r}")
    played = game.evaluate_many(ctxs, scores=post, rescue=rescue)
    return dict(zip((x.extra for x in ctxs), played, strict=True))
