"""Splitting pairs, with resplits up to the rules' number of hands (13, 13.5-13.8).

The second cards dealt to split hands decide how many hands there are: a pair card resplits
while fewer than ``split_max_hands`` hands exist (the pair's strategy says split, so it says
resplit too), any other card ends the hand's splitting. By the predictable sampling property of
a shuffled shoe, the second cards can be read as if dealt first, in order, from the shoe; so the
probability of each *pattern* of pair (P) and other (N) second cards is exact, and each hand's
expected value is that of a hand started with the pair card and a second card that is not a
pair card (``N``), or any card once the hands are all made (``x``), with every pair card of the
pattern out of the shoe. The one approximation: the *other* split hands' non-pair cards are not
taken out of the shoe a hand is played from (they are unknown, so by exchangeability only their
number matters, and that changes the shoe by far less than one card does). With no resplits
(two hands) the split value is exact.

13.7 with ``dealer_natural_takes = "original"``: a dealer pontoon takes at most the original
wager from the hands still standing, however many there are. Each hand's value counts that
loss once per standing hand; :func:`split_value` corrects it with P(pontoon and hand stood)
per hand, taking the hands' chances of all having busted or been paid as independent given
the pattern (the only other approximation; see docs/analysis.md for sizes).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from pontoon.analysis.composition import Floats, comp_of
from pontoon.analysis.game import Context, Game, Values

Pattern = tuple[float, int, int, int]  # probability, resplits, N hands, x hands
CAP_13_7 = True  # apply the 13.7 correction (off only to measure its size, docs/analysis.md)


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
    """A split's value per first card (unnormalised in the peek game) and expected hands."""

    ev: Floats
    hands: Floats


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
        per_rank = shoe.counts[9] / shoe.ten_ranks()
        share = (per_rank - 2) / (shoe.counts[9] - 2)
        left = per_rank - 2 - np.where(np.arange(1, 11) == 10, share, 0.0)
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
    hands = max_hands(game, pair)
    m0 = pair_cards_left(game, pair)
    ev, nh = np.zeros(10), np.zeros(10)
    obo = CAP_13_7 and not game.peek and game.rules.dealer_natural_takes == "original"
    two = np.array([c.index[comp_of([pair, x])] for x in range(1, 11)])
    per_j = {j: _hand_values(game, pair, j, values[j], two, m0) for j in range(1, hands)}
    for u in range(10):
        if game.shoe.infinite:
            pats = patterns(hands, 0, 0, pair_probability(game, pair))
            ratio = 0.0
        else:
            total = game.shoe.size - 1 - 2
            pats = patterns(hands, float(m0[u]), total - float(m0[u]), None)
            ratio = float(m0[u]) / (total - float(m0[u]))
        for prob, r, n, x in pats:
            e_n, s_n, e_x, s_x, pn = (a[u] for a in per_j[1 + r])
            # The other N hands' second cards, not pair cards, are out of the shoe too: to
            # first order, taking out a card that is not a pair card is putting back
            # ratio = pairs / others of a pair card (taking out a random card changes no
            # expectation).
            if n and ratio:
                lo, hi = (r, r + 1) if 2 + r < hands else (r - 1, r)
                if lo >= 0 and hi != lo:
                    slope_n = per_j[1 + hi][0][u] - per_j[1 + lo][0][u]
                    slope_x = per_j[1 + hi][2][u] - per_j[1 + lo][2][u]
                    e_n -= (n - 1) * ratio * slope_n
                    e_x -= n * ratio * slope_x
            ev[u] += prob * (n * e_n + x * e_x)
            nh[u] += prob * (n + x)
            if obo and pn > 0:
                none_stood = (1 - s_n / pn) ** n * (1 - s_x / pn) ** x
                ev[u] += prob * (n * s_n + x * s_x - pn + pn * none_stood)
    return SplitValue(ev, nh)


def _hand_values(
    game: Game, pair: int, j: int, v: Values, two: np.ndarray, m0: Floats
) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """(10 up,) each: value and P(pontoon, stood) of an N hand and of an x hand with ``j``
    other pair cards out, and P(dealer pontoon) from that shoe."""
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
    arr = v.arr1[two].T  # (10 up, 10 second card)
    sarr = v.sarr1[two].T
    e_n = (weights_n * arr).sum(axis=1)
    s_n = (weights_n * sarr).sum(axis=1)
    e_x = (weights_x * arr).sum(axis=1)
    s_x = (weights_x * sarr).sum(axis=1)
    size = rem.sum(axis=1)
    pn = np.zeros(10)
    pn[0] = rem[0, 9] / size[0]
    pn[9] = rem[9, 0] / size[9]
    return e_n, s_n, e_x, s_x, pn


def split_contexts(game: Game, pair: int) -> list[Context]:
    """The split-hand contexts a pair needs: 1 to ``max_hands - 1`` other pair cards out."""
    return [Context(pair, j) for j in range(1, max_hands(game, pair))]
