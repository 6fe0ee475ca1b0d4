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


def test_the_snapshot_names_its_rules_by_digest_and_older_shoes_still_match() -> None:
    """The stored shoe says which rule set it belongs to by the SHA-256 of the rules' JSON,
    not the JSON itself: a six-deck shoe's text stays under PostgreSQL's TOAST threshold
    (2 KB; sealed, the text grows by a third), so rewriting it on every event is one row's
    update. A shoe stored with the whole rules (before) still matches them."""
    import hashlib
    import json

    from pontoon.rules import rules_json
    from pontoon.store.shoestate import matches

    rules = load_rules("nz-pontoon")
    shoe = Shoe(rules, np.random.default_rng(5))
    shoe.start_round()
    text = snapshot(shoe)
    data = json.loads(text)
    assert "rules" not in data
    sorted_json = rules_json(rules, sort_keys=True)
    assert data["rules_sha256"] == hashlib.sha256(sorted_json.encode()).hexdigest()
    assert len(text) * 4 / 3 + 60 < 2000  # sealed (Fernet: base64 of it and 57 bytes)
    assert matches(rules, text)
    assert not matches(load_rules("nz-pontoon", {"decks": "5"}), text)
    rest = {k: v for k, v in data.items() if k != "rules_sha256"}
    older = json.dumps({"rules": sorted_json, **rest})
    assert matches(rules, older) and not matches(load_rules("nz-pontoon", {"decks": "5"}), older)
    assert restore(rules, older, None).remaining == shoe.remaining


def test_each_tables_rules_are_written_out_once_for_a_thousand_tables() -> None:
    """A server holds one rule set per table (its limits); the rules' JSON and digest, which
    every shoe written needs, are made once per rule set however many tables there are (a
    cache of 256 once cleared itself on every write at 330 tables)."""
    import pontoon.rules as rules_module
    from pontoon.server.table import with_limits
    from pontoon.store.shoestate import _DIGESTS

    base = load_rules("nz-pontoon")
    tables = [with_limits(base, 100 + i, 100_000) for i in range(1000)]
    memo = rules_module._JSON[True]
    made, digests = memo.made, _DIGESTS.made
    shoes = []
    for rules in tables:
        shoe = Shoe(rules, np.random.default_rng(1))
        shoe.start_round()
        shoes.append(shoe)
    for _ in range(3):
        for shoe in shoes:
            shoe.draw()
            snapshot(shoe)
    assert memo.made - made == 1000 and _DIGESTS.made - digests == 1000
