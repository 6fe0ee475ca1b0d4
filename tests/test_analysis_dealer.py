"""The dealer's outcome table (pontoon/analysis/dealer.py) against exact rational arithmetic:
every stopping hand's probability summed as a fraction, for real and depleted shoes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from pontoon.analysis.dealer import (
    BUST,
    OUTCOMES,
    DealerCache,
    dealer_paths,
    dealer_table,
    dealer_tables,
)


def exact_table(up: int, h17: bool, shoe: list[int]) -> list[Fraction]:
    """P(each outcome) by the falling powers of dealer.py's docstring, in fractions."""
    paths = dealer_paths(up, h17)
    total = sum(shoe)
    out = [Fraction(0)] * len(OUTCOMES)
    for counts, orders, outcome in zip(paths.counts, paths.orders, paths.outcome, strict=True):
        p = Fraction(int(orders))
        drawn = 0
        for v, d in enumerate(counts):
            for i in range(int(d)):
                p *= Fraction(max(shoe[v] - i, 0), total - drawn)
                drawn += 1
        out[int(outcome)] += p
    return out


SHOES = [
    [24] * 9 + [96],  # six decks
    [4, 3, 4, 4, 2, 4, 4, 4, 4, 14],  # one deck, a few cards out
    [1, 0, 2, 4, 4, 4, 0, 4, 4, 16],  # none left of two values
]


@pytest.mark.parametrize("h17", [False, True])
@pytest.mark.parametrize("shoe", SHOES)
def test_dealer_table_is_exact(h17: bool, shoe: list[int]) -> None:
    for up in range(1, 11):
        left = list(shoe)
        if left[up - 1] == 0:
            continue
        left[up - 1] -= 1
        table = dealer_table(dealer_paths(up, h17), np.array([left], dtype=float), infinite=False)
        exact = exact_table(up, h17, left)
        assert np.allclose(table[0], [float(x) for x in exact], rtol=0, atol=2e-15)
        assert abs(float(table[0].sum()) - 1.0) < 1e-14
        assert table[0, BUST] == pytest.approx(float(exact[BUST]), abs=2e-15)


def test_many_shoes_at_once_equal_one_at_a_time() -> None:
    """Shoes are evaluated in blocks: a shoe's row does not depend on the others (beyond the
    order in which BLAS sums)."""
    rng = np.random.default_rng(7)
    shoes = np.array([24.0] * 9 + [96.0]) - rng.integers(0, 6, (3000, 10))
    paths = dealer_paths(2, False)
    together = dealer_table(paths, shoes, infinite=False)
    for k in (0, 1234, 2999):
        alone = dealer_table(paths, shoes[k : k + 1], infinite=False)
        assert np.allclose(together[k], alone[0], rtol=0, atol=1e-15)


def test_infinite_shoe() -> None:
    probs = np.array([1.0] * 9 + [4.0]) / 13
    for up in (1, 6, 10):
        inf = dealer_table(dealer_paths(up, False), probs[None], infinite=True)[0]
        big = dealer_table(dealer_paths(up, False), (probs * 52e6)[None], infinite=False)[0]
        assert np.allclose(inf, big, atol=1e-6)
        assert abs(float(inf.sum()) - 1.0) < 1e-14


@pytest.mark.parametrize("h17", [False, True])
@pytest.mark.parametrize("infinite", [False, True])
def test_every_first_card_at_once(h17: bool, infinite: bool) -> None:
    """dealer_tables (one trie of whole hands for every first card) equals dealer_table of
    each first card, shoes without some value included."""
    rng = np.random.default_rng(11)
    shoes = np.array([24.0] * 9 + [96.0]) - rng.integers(0, 8, (400, 10))
    shoes[:3, 0] = 0.0  # no ace left: an ace first card is impossible
    shoes[3:5, 4] = 0.0
    shoes[5, 9] = 0.5  # a fraction of a card (expected counts)
    if infinite:
        shoes = shoes / shoes.sum(axis=1, keepdims=True)
    together = dealer_tables(h17, shoes, infinite=infinite)
    for up in range(1, 11):
        left = shoes.copy()
        if not infinite:
            left[:, up - 1] -= 1
        alone = dealer_table(dealer_paths(up, h17), left, infinite=infinite)
        assert np.allclose(together[:, up - 1], alone, rtol=0, atol=2e-15)


def test_the_cache_gives_each_shoe_its_own_table_however_it_is_asked() -> None:
    """DealerCache: batches with known and new shoes, in any order, read back exactly what
    dealer_tables gives each shoe (the sorted codes move as new shoes come in)."""
    counts = np.array([24.0] * 9 + [96.0])
    cache = DealerCache(counts, False, True)
    rng = np.random.default_rng(7)
    seen: list[np.ndarray] = []
    for size in (5, 3, 8, 1, 6):
        fresh = rng.integers(0, 4, size=(size, 10))
        old = [seen[i] for i in rng.integers(0, len(seen), size=3)] if seen else []
        batch = np.array([*fresh, *old])[rng.permutation(size + len(old))]
        seen += list(fresh)
        got = cache.tables(batch)
        want = dealer_tables(True, counts - batch, infinite=False)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)  # (batches round apart)


def test_released_tables_are_forgotten_and_worked_out_again_the_same() -> None:
    """DealerCache.release: the tables worked out since a mark are let go (the cache is as
    it was at the mark) and come back, equal, when asked for again."""
    counts = np.array([24.0] * 9 + [96.0])
    cache = DealerCache(counts, False, False)
    kept = np.array([[1, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0, 2, 0, 0, 0, 0, 0, 0, 0, 0]])
    first = cache.tables(kept).copy()
    mark = cache.mark()
    later = np.array([[0, 0, 3, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]])
    again = cache.tables(later).copy()
    assert len(cache) == 4
    cache.release(mark)
    assert len(cache) == 2
    np.testing.assert_array_equal(cache.tables(kept), first)
    assert len(cache) == 2  # the kept shoes were not worked out again
    np.testing.assert_array_equal(cache.tables(later), again)
    assert len(cache) == 4


def test_the_compiled_loops_are_built() -> None:
    """The install builds the analysis's compiled loops (pyproject.toml): without them it
    falls back to numpy and runs at a fraction of the speed, silently."""
    from pontoon.analysis import compiled

    loops = (compiled.dealer_trie, compiled.walk_sums, compiled.add_endings, compiled.forward_step)
    assert all(loop is not None for loop in loops)


@pytest.mark.parametrize("h17", [False, True])
@pytest.mark.parametrize("infinite", [False, True])
def test_the_compiled_loop_equals_numpy(h17: bool, infinite: bool) -> None:
    """The compiled walk of the trie gives numpy's values to a few roundings, for every
    first card at once (divided by the first card's probability, or not) and for one first
    card's trie, on full, depleted and nearly empty shoes (too few cards for the dealer to
    finish: those hands count 0 in both; a first card the shoe lacks: its row undivided)."""
    from pontoon.analysis.dealer import _evaluate, _full_trie, _trie

    rng = np.random.default_rng(7)
    shoes = rng.integers(0, 30, size=(400, 10)).astype(float)
    shoes[:, 9] *= 4
    shoes[:40] = rng.integers(0, 2, size=(40, 10))  # a handful of cards
    shoes[40] = [24] * 9 + [96]
    if infinite:
        shoes = (shoes + 0.5) / (shoes + 0.5).sum(axis=1, keepdims=True)
    for trie, first_card in [
        (_full_trie(h17), True),
        (_full_trie(h17), False),
        (_trie(1, h17), False),
        (_trie(10, h17), False),
    ]:
        fast = _evaluate(trie, shoes, infinite, first_card)
        slow = _evaluate(trie, shoes, infinite, first_card, fast=False)
        assert np.isfinite(fast).all()
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-14)


def orders_by_hand(up: int, h17: bool) -> dict[tuple[int, ...], int]:
    """Every order in which the dealer can draw after first card ``up`` (14.3: stand on 17 or
    more, on soft 17 unless hitting it), one card at a time: its multiset's count."""
    out: dict[tuple[int, ...], int] = {}

    def draw(cards: list[int], drawn: list[int]) -> None:
        hard = sum(cards)
        soft = 1 in cards and hard <= 11
        best = hard + 10 if soft else hard
        if best > 17 or (best == 17 and not (soft and h17)):
            key = tuple(drawn)
            out[key] = out.get(key, 0) + 1
            return
        for v in range(1, 11):
            drawn[v - 1] += 1
            draw([*cards, v], drawn)
            drawn[v - 1] -= 1

    draw([up], [0] * 10)
    return out


@pytest.mark.parametrize("h17", [False, True])
@pytest.mark.parametrize("up", [1, 2, 6, 10])
def test_dealer_paths_count_every_order_of_drawing(up: int, h17: bool) -> None:
    """:func:`dealer_paths` (counted a level of cards at a time) against the orders counted
    one sequence at a time."""
    paths = dealer_paths(up, h17)
    got = {
        tuple(int(x) for x in c): int(o) for c, o in zip(paths.counts, paths.orders, strict=True)
    }
    assert got == orders_by_hand(up, h17)
