"""A table's shoe in the store: written whole (sealed, ``shoe_states``) when it is shuffled
or its rack changes, and — while only cards are drawn from it — as the count of cards drawn
since, in the table's row that every write updates anyway (``tables.shoe_drawn``, schema
0009), so that a write does not seal and store 1.5 KB again for one card. Read back, the shoe
is exactly the one the table holds (16.5: an interrupted round resumes with the same cards).
On SQLite and, when ``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.shoestate import advance, restore, snapshot
from pontoon.store.verify import verify
from tests.test_store import simple_move
from tests.test_store import url as url  # the fixture: both back ends

RULES = load_rules("nz-pontoon")


def _row(store: Store, table: str = "t1") -> tuple[int, str, int]:
    """The table's shoe as stored: (seq, the whole shoe sealed, cards drawn since)."""
    with store.read() as conn:
        q = text(
            "SELECT t.shoe_seq, s.state, t.shoe_drawn FROM tables t "
            "JOIN shoe_states s ON s.table_id = t.id WHERE t.id = :t"
        )
        seq, state, drawn = conn.execute(q, {"t": table}).one()
    return int(seq), str(state), int(drawn)


def _read_back(url: str, table: str = "t1") -> tuple[int, str]:
    """The table's shoe as a new writer (a restarted server) reads it."""
    with Store(url) as store:
        state = TableLog(store, table).shoe_state
    assert state is not None
    return state


def _play(url: str, seed: int, rounds: int) -> Iterator[tuple[Store, TableLog, Shoe]]:
    """``rounds`` rounds of two boxes at table t1, committed action by action (as the server
    commits them); yields after every commit."""
    shoe = Shoe(RULES, seeded(seed))
    with Store(url) as store:
        log = TableLog(store, "t1")
        log.deposit("ana", 100_000)
        for _ in range(rounds):
            rnd = Round(RULES, shoe)
            rl = log.start(rnd)
            rnd.place_wager(1, "ana", 1000)
            rnd.place_wager(2, "ana", 1000)
            rnd.deal()
            rl.commit(shoe)
            yield store, log, shoe
            while not rnd.over:
                rnd.apply(simple_move(rnd))
                rl.commit(shoe)
                yield store, log, shoe


def test_16_5_a_shoe_only_drawn_from_is_written_as_a_count_and_read_back_whole(url: str) -> None:
    whole = counted = 0
    last: tuple[int, str, int] | None = None
    for store, log, shoe in _play(url, seed=11, rounds=6):
        seq, sealed, drawn = row = _row(store)
        assert seq == log.head_seq and _read_back(url) == (seq, snapshot(shoe))
        assert log.shoe_state == (seq, snapshot(shoe))  # the writer's own idea of it too
        if last is None or sealed != last[1]:
            whole += 1
            assert drawn == 0
        else:  # the same sealed shoe: more cards drawn from it
            counted += 1
            assert drawn >= last[2]
        last = row
    assert counted > whole > 6  # most writes only drew cards
    with Store(url) as store:
        assert verify(store).ok


def test_16_5_a_round_resumed_after_cards_were_drawn_deals_the_same_cards(url: str) -> None:
    checked = 0
    for store, _, shoe in _play(url, seed=4, rounds=4):
        if _row(store)[2] > 0:  # the shoe stored as a count of cards drawn
            twin = restore(RULES, _read_back(url)[1], None)
            n = min(30, len(shoe.remaining))
            assert [twin.draw() for _ in range(n)] == shoe.remaining[:n]
            checked += 1
    assert checked > 3


@settings(max_examples=60, deadline=None)
@given(
    decks=st.integers(1, 2),
    seed=st.integers(0, 2**32),
    rounds=st.integers(0, 12),
    drawn=st.integers(0, 104),
)
def test_advance_is_the_shoe_after_its_draws(
    decks: int, seed: int, rounds: int, drawn: int
) -> None:
    """:func:`advance` on the stored text gives what :func:`snapshot` gives after the same
    draws — the cards, and the cutting card reached as the shoe reaches it (8.7)."""
    rules = load_rules("nz-pontoon", {"decks": str(decks)})
    shoe = Shoe(rules, np.random.default_rng(seed))
    for _ in range(rounds):
        shoe.start_round()
        shoe.discard([shoe.draw() for _ in range(9)])
    shoe.start_round()
    here, before = shoe.place(), snapshot(shoe)
    drawn = min(drawn, len(shoe.remaining))
    for _ in range(drawn):
        shoe.draw()
    assert shoe.drawn_since(here) == drawn
    assert advance(before, drawn) == snapshot(shoe)


@pytest.mark.parametrize("past", [-1, 0, 1])
def test_8_7_advance_reaches_the_cutting_card_where_the_shoe_does(past: int) -> None:
    """Drawn down to ``behind_cut`` cards the cutting card is not reached yet; the next card
    reaches it (8.7: the shoe is shuffled before the next round)."""
    shoe = Shoe(RULES, seeded(8))
    shoe.start_round()
    before = snapshot(shoe)
    drawn = len(shoe.remaining) - shoe.behind_cut + past
    for _ in range(drawn):
        shoe.draw()
    assert shoe.state().cut_reached == (past > 0)
    assert advance(before, drawn) == snapshot(shoe)


def test_a_shoe_written_before_0009_reads_whole_at_its_own_seq(url: str) -> None:
    """A table whose shoe was last written before schema 0009 has no ``shoe_seq``: its shoe is
    ``shoe_states`` whole, at ``shoe_states.seq``; its next write goes on from there."""
    shoe = Shoe(RULES, seeded(6))
    with Store(url) as store:
        log = TableLog(store, "t1")
        log.deposit("ana", 10_000)
        rnd = Round(RULES, shoe)
        rl = log.start(rnd)
        rnd.place_wager(1, "ana", 1000)
        rnd.deal()
        rl.commit(shoe)
        with store.write() as conn:  # as the upgrade leaves such a table
            conn.execute(text("UPDATE tables SET shoe_seq = NULL, shoe_drawn = 0"))
        seq = log.head_seq
        log.deposit("ana", 500)  # a write without the shoe: the head moves on, not the shoe
        assert _read_back(url) == (seq, snapshot(shoe)) and log.head_seq > seq
        log = TableLog(store, "t1")
        rl.log = log
        while not rnd.over:
            rnd.apply(simple_move(rnd))
            rl.commit(shoe)
            assert _read_back(url) == (log.head_seq, snapshot(shoe))
