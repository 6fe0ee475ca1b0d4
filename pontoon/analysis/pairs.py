"""A split into two hands, exactly: every pair of the hands' card sequences, with the dealer's
outcome from the shoe both leave.

A pair that can become only two hands (aces unless resplit, every pair when
``split_max_hands`` is 2) is played out as Eric Farmer's analyser does it: each hand's card
sequences are enumerated, played by the split hand's policy, and grouped by the multiset of
cards they take (the busting card included) with the number of sequences reaching it. Any
ordered sequence from a shuffled shoe has probability ``ff(S, U) / ff(N, |U|)`` (falling
factorials of the counts ``S``, ``N`` cards, ``U`` the cards taken), so two hands' sequences
have the probability of their union, and the dealer's outcome is exact for the shoe without
both. Their nets add per dealer outcome, 13.7's one wager taken once. The one approximation
left: the suits of a 6-7-8 or 7-7-7 on both hands are taken as independent.
"""

from __future__ import annotations

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import Floats, Ints, comp_of
from pontoon.analysis.dealer import NATURAL
from pontoon.analysis.endings import Endings, endings_of
from pontoon.analysis.game import DOUBLE, HIT, STAND, Context, Game, Values
from pontoon.analysis.reach import suit_ending, suit_picks
from pontoon.analysis.sparse import Dist
from pontoon.analysis.split import CAP_13_7, SplitValue, max_hands
from pontoon.analysis.suits import Config

Paths = tuple[Ints, Floats, Ints]  # cards taken (n, 10), sequences (n,), endings (n, 7)
EXACT_TWO_HANDS = True  # enumerate two-hand splits (off only to measure the approximation)
CHUNK = 1 << 20  # pairs of hands at a time


def hand_paths(game: Game, ends: Endings, ctx: Context, vals: Values, u: int) -> Paths:
    """Every way a split hand of ``ctx`` ends against first card ``u`` (0-9): the cards it
    takes after its pair card (second card, draws, a busting card), the number of card
    sequences (weighted by suit configurations where they matter) and its ending against
    each dealer outcome."""
    assert ctx.pair is not None
    c, e, r = game.comps, ends, game.rules
    nodes = {i: (hand, third) for i, hand, third in game.pattern_nodes(ctx)}
    out_cards: list[tuple[int, ...]] = []
    out_w: list[float] = []
    out_ev: list[Ints] = []

    def end(cards: tuple[int, ...], w: float, ev: Ints | int) -> None:
        out_cards.append(cards)
        out_w.append(w)
        out_ev.append(np.broadcast_to(np.asarray(ev), (7,)))

    def taken(cards: tuple[int, ...], x: int) -> tuple[int, ...]:
        return (*cards[: x - 1], cards[x - 1] + 1, *cards[x:])

    def arrive(i: int, cards: tuple[int, ...], w: float) -> None:
        if c.total[i] == 21:
            end(cards, w, e.paid1[i] if r.player_21_wins else e.stand1[i])
        elif i in nodes:
            hand, third = nodes[i]
            for conf, pick in suit_picks(game, ctx, vals, i, hand, u):
                act(i, pick, cards, w * conf.prob, conf, third)
        else:
            act(i, int(vals.choice[i, u]), cards, w, None, 0)

    def act(
        i: int, a: int, cards: tuple[int, ...], w: float, conf: Config | None, third: int
    ) -> None:
        if a == STAND:
            end(cards, w, e.stand1[i])
            return
        if a not in (HIT, DOUBLE):
            end(cards, w, e.surrender)
            return
        for x in range(1, 11):
            more = taken(cards, x)
            kid = int(c.child[i, x - 1])
            stake = 1 if a == HIT else 2
            if kid < 0:
                end(more, w, e.bust[stake - 1])
            elif x == third and conf is not None:
                paid = conf.hit if a == HIT else conf.double
                for ps, cents, why in paid:
                    end(more, w * ps, np.asarray(suit_ending(e, cents, why, stake)).ravel())
            elif a == HIT:
                arrive(kid, more, w)
            elif r.player_21_wins and c.total[kid] == 21:
                end(more, w, e.paid2[kid])
            else:
                end(more, w, e.rescue if vals.rescued[kid, u] else e.stand2[kid])

    zero = (0,) * 10
    for s in range(1, 11):
        arrive(c.index[comp_of([ctx.pair, s])], taken(zero, s), 1.0)
    merged: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}
    for cards, w, ev in zip(out_cards, out_w, out_ev, strict=True):
        key = (cards, tuple(int(x) for x in ev))
        merged[key] = merged.get(key, 0.0) + w
    keys = list(merged)
    return (
        np.array([k[0] for k in keys], dtype=np.int64),
        np.array(list(merged.values())),
        np.array([k[1] for k in keys], dtype=np.int64),
    )


def _log_ff_table(counts: Floats, most: int) -> Floats:
    """(len(counts), most + 1): log of each count's falling factorial n (n - 1) ... (n - k + 1)
    for k = 0 ... most (-inf where it is 0)."""
    k = np.arange(most + 1)
    terms = np.log(np.maximum(counts[:, None] - k[None, :-1], 1e-300))
    table = np.zeros((len(counts), most + 1))
    table[:, 1:] = np.cumsum(np.where(counts[:, None] - k[None, :-1] > 0, terms, -np.inf), axis=1)
    return table


def two_hands(
    game: Game, ends: Endings, pair: int, vals: Values, u: int
) -> tuple[list[Dist], Floats, float]:
    """Per dealer outcome, the masses of the two hands' net (given the pair and first card
    ``u``, 0-9); the expected number of hands ending each way (``len(ends)``); and what 13.7
    gives back to the two against a dealer pontoon, in cents (the stood hands' losses less
    the one wager it takes, over the pairs of the hands' endings)."""
    cards, w, ev = hand_paths(game, ends, Context(pair, 1), vals, u)
    shoe = game.shoe.counts.copy()
    shoe[u] -= 1
    shoe[pair - 1] -= 2
    e = len(ends)
    most = 2 * int(cards.max()) + 1
    per_value = _log_ff_table(shoe, most)
    log_all = _log_ff_table(np.array([shoe.sum()]), 2 * int(cards.sum(axis=1).max()))[0]
    pair2 = np.zeros(10, dtype=np.int64)
    pair2[pair - 1] = 2
    acc = np.zeros((7, e * e))  # P(hand one ends so, hand two so, the dealer so)
    a_all, b_all = np.triu_indices(len(w))  # unordered pairs: (a, b) and (b, a) alike
    for lo in range(0, len(a_all), CHUNK):
        a, b = a_all[lo : lo + CHUNK], b_all[lo : lo + CHUNK]
        union = cards[a] + cards[b]
        ok = (union <= shoe).all(axis=1)
        a, b, union = a[ok], b[ok], union[ok]
        logp = per_value[np.arange(10), union].sum(axis=1) - log_all[union.sum(axis=1)]
        prob = w[a] * w[b] * np.exp(logp) * np.where(a == b, 1.0, 2.0)
        codes = (union * (64 ** np.arange(10))).sum(axis=1)
        _, first, inv = np.unique(codes, return_index=True, return_inverse=True)
        table = game.dealer.tables(pair2 + union[first])[:, u].copy()  # (shared by every u)
        if game.peek:
            table[:, NATURAL] = 0.0
        for o in range(7):
            pe = ev[a, o] * e + ev[b, o]
            acc[o] += np.bincount(pe, prob * table[inv.ravel(), o], e * e)
    cents = np.array([x.cents for x in ends.ends], dtype=np.int64)
    stood = np.array([x.stood for x in ends.ends])
    cap = not game.peek and game.rules.dealer_natural_takes == "original"
    out = []
    counts = np.zeros(e)
    refund = 0.0
    for o in range(7):
        net = cents[:, None] + cents[None, :]
        mass = acc[o].reshape(e, e)
        if cap and o == NATURAL:  # 13.7: one original wager from the hands standing
            kept = np.where(stood, 0, cents)
            capped = kept[:, None] + kept[None, :] - game.wager * (stood[:, None] | stood[None, :])
            refund = float((mass * (capped - net)).sum())
            net = capped
        nz = mass.ravel() != 0
        out.append(Dist.merge(net.ravel()[nz], mass.ravel()[nz]))
        counts += mass.sum(axis=0) + mass.sum(axis=1)
    return out, counts, refund


def exact_split_value(game: Game, pair: int, sv: SplitValue, needed: np.ndarray) -> SplitValue:
    """``sv`` with its value made exact, against the first cards ``needed`` (10,), where the
    expected value's 13.7 treatment is not and this module's is: a pair that becomes two
    hands at most, in a game without a peek whose dealer pontoon takes only the original
    wager (13.7: P(no hand stood) is then counted, not taken as a product of the hands'
    chances). The enumeration is kept in ``exact`` for the distribution."""
    r = game.rules
    if not CAP_13_7 or game.peek or r.dealer_natural_takes != "original":
        return sv
    if not enumerated(game, pair):
        return sv
    ends = endings_of(game)
    ev = sv.ev.copy()
    exact = dict(sv.exact)
    for u in np.flatnonzero(needed):
        exact[int(u)] = two_hands(game, ends, pair, sv.values[1], int(u))
        ev[u] = sum(d.mean() for d in exact[int(u)][0]) / game.wager
    return SplitValue(ev, sv.hands, sv.values, exact)


def enumerated(game: Game, pair: int) -> bool:
    """Whether a pair's splits are enumerated: two hands at most, from a finite shoe, and not
    split aces that may draw (14.1(c): a hand of aces then ends in some 4,000 ways, and the
    pairs of them take minutes; they keep the approximation)."""
    return (
        EXACT_TWO_HANDS
        and not game.shoe.infinite
        and max_hands(game, pair) == 2
        and not (pair == 1 and game.rules.hit_split_aces)
    )


def split_considered(
    game: Game, base: Values, chart: Chart | None, pair: int, sv: SplitValue
) -> np.ndarray:
    """(10 up,) where a strategy splits ``pair`` or nearly would (within 1e-6 of the value of
    not splitting: more than the 13.7 approximation's size), by the approximate values."""
    i = game.comps.index[comp_of([pair, pair])]
    if chart is not None:
        row = "PA" if pair == 1 else "PT" if pair == 10 else f"P{pair}"
        return np.array([chart.code(row, u) in ("P", "Rp") for u in range(1, 11)])
    if i in base.premium and base.by_suits:  # a 7-7 splits by its suits: every first card
        return np.ones(10, dtype=bool)
    out: np.ndarray = sv.ev > base.node[i] - 1e-6
    return out
