"""The stored shoe's text is made again only when the shoe has moved (``Shoe.position``): after
any sequence of draws, discards, rollbacks, shuffles and rounds it is the text made afresh."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pontoon.rules import load_rules
from pontoon.shoe import Shoe
from pontoon.store.shoestate import _text, restore, snapshot

OPS = st.lists(
    st.sampled_from(["draw", "discard", "mark", "rollback", "round", "shuffle", "same"]),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(OPS, st.integers(0, 2**32 - 1))
def test_the_snapshot_is_always_the_shoe_as_it_is(ops: list[str], seed: int) -> None:
    rules = load_rules("nz-pontoon", {"decks": "1"})
    shoe = Shoe(rules, np.random.default_rng(seed))
    shoe.start_round()
    layout: list = []
    mark = None
    for op in ops:
        if op == "draw":
            layout.append(shoe.draw())
        elif op == "discard":
            shoe.discard(layout)
            layout = []
        elif op == "mark":
            mark = shoe.checkpoint()
        elif op == "rollback" and mark is not None:
            shoe.rollback(mark)
            mark = None
            layout = []  # (the cards drawn since went back)
        elif op == "round":
            shoe.start_round()
        elif op == "shuffle":
            shoe.discard(layout)
            layout, mark = [], None
            shoe.shuffle()
        text = snapshot(shoe)
        rng = dict(shoe.rng.bit_generator.state)  # type: ignore[attr-defined]
        assert text == _text(shoe, rng)
        twin = restore(rules, text, None)
        assert twin.remaining == shoe.remaining and twin.discards == shoe.discards
