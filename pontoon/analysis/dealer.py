"""The dealer's final total, exactly, for any shoe: 17-21, bust or pontoon (a natural).

For each first card the dealer's possible draws are enumerated once: every multiset ``D`` of
cards after which the dealer stops (14.3: hard 17 or more, soft 18 or more, soft 17 too unless
the dealer hits it), with the number of orders in which the dealer can draw it. From a shoe of
counts ``n`` (``N`` cards) each order has probability ``prod_v n_v^(d_v) / N^(|D|)`` (falling
powers); the infinite shoe uses ``prod_v p_v^d_v``. The hands are walked as a trie of draws
(:class:`_Trie`), products of ratios shared by every hand with the same first draws, for
thousands of shoes at once; :func:`dealer_tables` does every first card in one walk of the
whole hands (first card included), then divides by the first card's probability.

>>> import numpy as np
>>> paths = dealer_paths(6, hits_soft_17=True)
>>> table = dealer_table(paths, np.array([[4.0] * 9 + [16.0]]), infinite=False)
>>> round(float(table.sum()), 12), round(float(table[0, BUST]), 4)
(1.0, 0.4386)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Final

import numpy as np

from pontoon.analysis import compiled
from pontoon.analysis.composition import Floats, Ints

OUTCOMES: Final = ("17", "18", "19", "20", "21", "bust", "pontoon")
BUST: Final = 5
NATURAL: Final = 6


@dataclass(frozen=True)
class DealerPaths:
    """Every way the dealer's hand can end after first card ``up``."""

    up: int
    hits_soft_17: bool
    counts: Ints  # (D, 10): cards drawn after the first card
    log_weight: Floats  # (D,): log of the number of orders
    outcome: Ints  # (D,): index into OUTCOMES
    orders: Floats  # (D,): the number of orders


@cache
def dealer_paths(up: int, hits_soft_17: bool) -> DealerPaths:
    """The dealer's stopping hands after first card ``up`` (14.3), each with its number of
    orders: counted card by card over the hands still drawing (a hand reached in several
    orders is one state), not order by order, a level of cards at a time."""
    # A hand is coded as an integer, four bits per value (the dealer never holds 16 of one);
    # its hard total and whether it holds an ace go with it.
    places = np.int64(1) << (4 * np.arange(10, dtype=np.int64))
    code = np.zeros(1, dtype=np.int64)
    hard = np.array([up], dtype=np.int64)
    ace = np.array([up == 1])
    ways = np.ones(1, dtype=np.int64)
    done_codes, done_ways = [], []
    while True:
        soft = ace & (hard <= 11)
        total = np.where(soft, hard + 10, hard)
        stop = (total > 17) | ((total == 17) & ~(soft & hits_soft_17))
        done_codes.append(code[stop])
        done_ways.append(ways[stop])
        go = ~stop
        if not go.any():
            break
        code = (code[go, None] + places[None, :]).ravel()
        hard = (hard[go, None] + np.arange(1, 11)[None, :]).ravel()
        ace = (ace[go, None] | (np.arange(10) == 0)[None, :]).ravel()
        ways = np.repeat(ways[go], 10)
        order = np.argsort(code, kind="stable")  # one state for each hand (code)
        code, hard, ace, ways = code[order], hard[order], ace[order], ways[order]
        first = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1])))
        code, hard, ace = code[first], hard[first], ace[first]
        ways = np.add.reduceat(ways, first)
    codes = np.concatenate(done_codes)
    counted = np.concatenate(done_ways)
    held = (codes[:, None] >> (4 * np.arange(10))) & 15
    order = np.lexsort(held.T[::-1])  # by counts, as tuples sort
    counts = np.ascontiguousarray(held[order])
    orders = counted[order].astype(np.float64)
    hards = up + counts @ np.arange(1, 11)
    softs = ((up == 1) | (counts[:, 0] > 0)) & (hards <= 11)
    totals = np.where(softs, hards + 10, hards)
    outcome = np.where(totals > 21, BUST, totals - 17)
    # the dealer's first two cards: A and a ten-value card
    outcome[(totals == 21) & (counts.sum(axis=1) == 1)] = NATURAL
    return DealerPaths(up, hits_soft_17, counts, np.log(orders), outcome, orders)


Draw = tuple[int, int, int]  # value index, cards before it, cards of that value


@dataclass(frozen=True)
class _Trie:
    """Dealer's hands as a trie of *draws*: a draw is ``d`` cards of one value taken after
    ``c`` cards (values in descending order, which shares the most prefixes). A node's
    probability is its parent's times its draw's factor ``prod_{i<d} (n_v - i) / (N - c -
    i)``, the falling powers of the module's docstring one card at a time. Nodes come by
    depth (every parent before its children); ``weight[r, k]``: what the ``k``-th hand
    (node ``leaf[k]``) adds to row ``r`` of the result (its number of orders)."""

    value: Ints  # (draws,) the value index of each distinct draw
    before: Ints  # (draws,) cards drawn before it
    cards: Ints  # (draws,) cards in it
    parent: Ints  # (nodes,) the parent node (node 0 is the root: no card drawn)
    draw: Ints  # (nodes,) the node's draw
    depths: tuple[tuple[int, int], ...]  # node ranges [lo, hi) of depths 1, 2, ...
    leaf: Ints  # (hands,) each hand's node, the hands grouped by outcome
    blocks: tuple[tuple[int, int, int], ...]  # (outcome, lo, hi): the hands of each outcome
    weight: Floats  # (rows, hands)

    @cached_property
    def flat(self) -> tuple[Ints, Ints, Ints, Ints, Ints, Ints, Ints, Ints, Ints, Floats]:
        """The arrays as the compiled loop takes them: the draws, the nodes' parents and
        draws, then the weights as sums, one per row and outcome (row, outcome, end of its
        entries), and the entries, one per nonzero weight (the hand's node, the weight)."""
        rows, outcomes, ends, nodes, weights = [], [], [], [], []
        for o, a, b in self.blocks:
            for r in range(self.weight.shape[0]):
                ks = a + np.flatnonzero(self.weight[r, a:b])
                if len(ks):
                    rows.append(r)
                    outcomes.append(o)
                    nodes.extend(self.leaf[ks].tolist())
                    weights.extend(self.weight[r, ks].tolist())
                    ends.append(len(nodes))
        row, outcome, end, node = (
            np.array(x, dtype=np.int64) for x in (rows, outcomes, ends, nodes)
        )
        return (
            self.value,
            self.before,
            self.cards,
            self.parent,
            self.draw,
            row,
            outcome,
            end,
            node,
            np.array(weights),
        )


ORDER: Final = tuple(range(9, -1, -1))  # tens first: the fewest nodes
CELLS: Final = 1 << 18  # nodes x shoes evaluated at once (2 MB)


def _build(hands: list[tuple[int, ...]], outcome: list[int], weight: Floats) -> _Trie:
    """The trie of ``hands`` (counts by value), each of ``outcome``, ``weight`` (rows,
    hands)."""
    draws: dict[Draw, int] = {}
    levels: list[dict[tuple[Draw, ...], int]] = []
    ends: list[tuple[Draw, ...]] = []
    for hand in hands:
        prefix: tuple[Draw, ...] = ()
        drawn = 0
        for v in ORDER:
            d = hand[v]
            if d:
                draw = (v, drawn, d)
                prefix = (*prefix, draw)
                if len(levels) < len(prefix):
                    levels.append({})
                levels[len(prefix) - 1].setdefault(prefix, draws.setdefault(draw, len(draws)))
                drawn += d
        ends.append(prefix)
    index: dict[tuple[Draw, ...], int] = {(): 0}
    parent, code, depths = [0], [0], []
    for level in levels:
        lo = len(parent)
        for prefix, k in level.items():
            index[prefix] = len(parent)
            parent.append(index[prefix[:-1]])
            code.append(k)
        depths.append((lo, len(parent)))
    order = sorted(range(len(hands)), key=lambda h: outcome[h])
    blocks = []
    for o in sorted(set(outcome)):
        ks = [j for j, h in enumerate(order) if outcome[h] == o]
        blocks.append((o, ks[0], ks[-1] + 1))
    keys = sorted(draws, key=lambda k: (-k[2], k[0], k[1]))  # the longest draws first
    renumber = np.empty(len(keys), dtype=np.int64)
    renumber[[draws[k] for k in keys]] = np.arange(len(keys))
    return _Trie(
        np.array([v for v, _, _ in keys], dtype=np.int64),
        np.array([c for _, c, _ in keys], dtype=np.int64),
        np.array([d for _, _, d in keys], dtype=np.int64),
        np.array(parent, dtype=np.int64),
        renumber[np.array(code, dtype=np.int64)],
        tuple(depths),
        np.array([index[ends[h]] for h in order], dtype=np.int64),
        tuple(blocks),
        np.ascontiguousarray(weight[:, order]),
    )


@cache
def _trie(up: int, hits_soft_17: bool) -> _Trie:
    """The cards ``up``'s dealer draws in the hands that do not bust (a bust's probability
    is what the others leave: every shoe here holds enough cards for the dealer to finish,
    and this halves the work); one row of weights, the number of orders."""
    paths = dealer_paths(up, hits_soft_17)
    keep = np.flatnonzero(paths.outcome != BUST)
    hands = [tuple(int(x) for x in paths.counts[p]) for p in keep]
    return _build(hands, [int(paths.outcome[p]) for p in keep], paths.orders[keep][None, :])


@cache
def _full_trie(hits_soft_17: bool) -> _Trie:
    """Every first card's hands that do not bust, first card included, as one trie: a hand
    of cards ``H`` is the same whichever of its cards came first. Row ``up - 1`` of the
    weights: its number of orders starting with ``up`` (0 if ``up`` is not in it)."""
    orders: dict[tuple[int, ...], list[float]] = {}
    outcome: dict[tuple[int, ...], int] = {}
    for up in range(1, 11):
        paths = dealer_paths(up, hits_soft_17)
        kept = paths.outcome != BUST
        for hand, ways, end in zip(
            paths.counts[kept].tolist(),
            paths.orders[kept].tolist(),
            paths.outcome[kept].tolist(),
            strict=True,
        ):
            hand[up - 1] += 1
            key = tuple(hand)
            orders.setdefault(key, [0.0] * 10)[up - 1] += ways
            outcome[key] = end  # the cards decide the outcome
    hands = list(orders)
    weight = np.array([orders[h] for h in hands]).T
    return _build(hands, [outcome[h] for h in hands], weight)


def dealer_table(paths: DealerPaths, shoes: Floats, *, infinite: bool) -> Floats:
    """Probabilities of each of :data:`OUTCOMES` (columns) for each shoe (rows of counts
    left after the dealer's first card and the player's cards; for the infinite shoe, rows of
    probabilities)."""
    shoes = np.atleast_2d(np.asarray(shoes, dtype=np.float64))
    out: Floats = _evaluate(_trie(paths.up, paths.hits_soft_17), shoes, infinite)[:, 0]
    return out


def dealer_tables(hits_soft_17: bool, shoes: Floats, *, infinite: bool) -> Floats:
    """(shoes, 10 first cards, outcomes): :func:`dealer_table` for every first card at once,
    from rows of counts (or probabilities) *before* the dealer's first card: each hand of
    the dealer's is worked out once, for all of its cards that may have come first, then
    divided by that card's probability. A first card the shoe does not hold takes
    :func:`dealer_table` of the shoe with that card taken out anyway, as before."""
    shoes = np.atleast_2d(np.asarray(shoes, dtype=np.float64))
    out = _evaluate(_full_trie(hits_soft_17), shoes, infinite, first_card=True)
    for u in np.flatnonzero(~(shoes > 0).all(axis=0)):
        rows = np.flatnonzero(shoes[:, u] <= 0)
        left = shoes[rows].copy()
        left[:, u] = (shoes[rows, u] - 1) if not infinite else shoes[rows, u]
        out[rows, u] = dealer_table(dealer_paths(int(u) + 1, hits_soft_17), left, infinite=infinite)
    return out


def _evaluate(
    trie: _Trie, shoes: Floats, infinite: bool, first_card: bool = False, fast: bool = True
) -> Floats:
    """(shoes, weight rows, outcomes) the probabilities of the trie's hands, weighted and
    summed by outcome; with ``first_card``, each row ``r`` divided by the probability of
    the first card ``r`` where the shoe holds one (see :func:`dealer_tables`); the bust
    column what the others leave. By the compiled loop where the package was built with it
    (``fast``), else a block of shoes at a time by numpy."""
    loop = compiled.dealer_trie if fast else None
    if loop is not None:
        out = np.empty((shoes.shape[0], trie.weight.shape[0], len(OUTCOMES)))
        loop(*trie.flat, np.ascontiguousarray(shoes), infinite, first_card, BUST, out)
        return out
    out = np.zeros((shoes.shape[0], trie.weight.shape[0], len(OUTCOMES)))
    nodes = len(trie.parent)
    step = max(1, CELLS // nodes)
    vals = np.empty((nodes, min(step, shoes.shape[0])))
    for lo in range(0, shoes.shape[0], step):
        part = shoes[lo : lo + step]
        factor = _draw_factors(trie, part, infinite)
        v = vals[:, : part.shape[0]]
        v[0] = 1.0
        for a, b in trie.depths:
            np.multiply(v[trie.parent[a:b]], factor[trie.draw[a:b]], out=v[a:b])
        ends = v[trie.leaf]
        for o, a, b in trie.blocks:
            out[lo : lo + step, :, o] = (trie.weight[:, a:b] @ ends[a:b]).T
    if first_card:
        first = shoes if infinite else shoes / shoes.sum(axis=1, keepdims=True)
        out /= np.where(first > 0, first, 1.0)[:, :, None]
    out[:, :, BUST] = 1.0 - (out.sum(axis=2) - out[:, :, BUST])
    return out


def _draw_factors(trie: _Trie, shoes: Floats, infinite: bool) -> Floats:
    """(draws, shoes) each draw's probability factor (see :class:`_Trie`); a card that is
    not there makes it 0. The draws come longest first, so the ones with more than ``i``
    cards are a leading block."""
    n = shoes.T[trie.value]  # (draws, shoes)
    total = shoes.sum(axis=1)
    guard = not infinite and float(total.min()) <= float(np.max(trie.before + trie.cards))
    out = np.empty_like(n)
    for i in range(int(trie.cards[0])):
        k = int(np.searchsorted(-trie.cards, -i, side="left"))  # draws of more than i cards
        num = np.maximum(n[:k] if infinite else n[:k] - i, 0.0)
        if not infinite:
            den = total[None, :] - (trie.before[:k, None] + i)
            if guard:  # too few cards for the dealer to finish: never in a real shoe
                num = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
            else:
                num /= den
        if i == 0:
            out[:] = num
        else:
            out[:k] *= num
    return out


CODE_BITS: Final = 6  # cards of one value out of the shoe, in a cache key (up to 63)
_PLACES: Final = np.int64(1) << (CODE_BITS * np.arange(10, dtype=np.int64))


class DealerCache:
    """:func:`dealer_tables` by cards out of one shoe, each computed once: the cards out
    (whole counts, below ``2 ** CODE_BITS`` of a value) coded as one integer, the codes kept
    sorted beside the tables' rows, so a batch of shoes is looked up at once. The tables stay
    in the blocks they were worked out in (never copied to grow)."""

    def __init__(self, counts: Floats, infinite: bool, hits_soft_17: bool) -> None:
        self.counts = counts
        self.infinite = infinite
        self.hits_soft_17 = hits_soft_17
        self._codes = np.zeros(0, dtype=np.int64)  # sorted
        self._rows = np.zeros(0, dtype=np.int64)  # each code's row, counted over the blocks
        self._blocks: list[Floats] = []
        self._starts = np.zeros(0, dtype=np.int64)  # each block's first row
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def tables(self, removed: Floats | Ints) -> Floats:
        """(len(removed), 10 first cards, outcomes) for the shoe less each row of
        ``removed`` (counts by value, besides the dealer's first card)."""
        if self.infinite:  # the infinite shoe never changes
            if not self._size:
                one = dealer_tables(self.hits_soft_17, self.counts[None], infinite=True)
                self._append(np.zeros(1, dtype=np.int64), one)
            return np.broadcast_to(self._blocks[0][0], (len(removed), 10, len(OUTCOMES)))
        return self.at(self.ids(removed))

    def ids(self, removed: Floats | Ints) -> Ints:
        """The places of the tables of ``removed`` (worked out if not yet known), for
        :meth:`at`: they stay while the tables are kept (:meth:`release`). Finite shoes."""
        pos = self.fill(removed)  # (before reading _rows: filling replaces it)
        return self._rows[pos]

    def at(self, rows: Ints) -> Floats:
        """The tables at places ``rows`` (:meth:`ids`): (len(rows), 10 first cards,
        outcomes)."""
        block = np.searchsorted(self._starts, rows, side="right") - 1
        if len(rows) and block.min() == block.max():
            b = int(block[0])
            out: Floats = self._blocks[b][rows - self._starts[b]]
            return out
        out = np.empty((len(rows), 10, len(OUTCOMES)))
        for j in np.flatnonzero(np.bincount(block)).tolist():  # (the blocks read, in order)
            sel = block == j
            out[sel] = self._blocks[j][rows[sel] - self._starts[j]]
        return out

    def fill(self, removed: Floats | Ints) -> Ints:
        """Work out the tables of ``removed`` not yet known, all in one go; the places of
        their codes among the sorted codes."""
        out = np.asarray(removed).astype(np.int64)
        if len(out) and (out.min() < 0 or out.max() >= 1 << CODE_BITS):
            raise ValueError("cards out of the shoe beyond the dealer cache's key")
        codes = out @ _PLACES
        pos = np.searchsorted(self._codes, codes)
        found = np.zeros(len(codes), dtype=bool)
        inside = pos < self._size
        found[inside] = self._codes[pos[inside]] == codes[inside]
        if not found.all():
            fresh, first = np.unique(codes[~found], return_index=True)
            shoes = self.counts - out[~found][first]
            self._append(fresh, dealer_tables(self.hits_soft_17, shoes, infinite=False))
            pos = np.searchsorted(self._codes, codes)
        return pos

    def mark(self) -> int:
        """A point to :meth:`release` back to: the tables worked out so far."""
        return len(self._blocks)

    def release(self, mark: int) -> None:
        """Forget the tables worked out since ``mark`` (a pair's split hands, in a one-shot
        analysis that reads them no more): their memory goes back."""
        if mark >= len(self._blocks):
            return
        size = int(self._starts[mark])
        kept = self._rows < size
        self._codes, self._rows = self._codes[kept], self._rows[kept]
        del self._blocks[mark:]
        self._starts = self._starts[:mark]
        self._size = size

    def _append(self, codes: Ints, tables: Floats) -> None:
        self._blocks.append(tables)
        self._starts = np.append(self._starts, self._size)
        rows = np.arange(self._size, self._size + len(codes))
        self._size += len(codes)
        merged = np.concatenate([self._codes, codes])
        order = np.argsort(merged, kind="stable")
        self._codes = merged[order]
        self._rows = np.concatenate([self._rows, rows])[order]
