"""The shoe: seeded shuffles, the cutting card, conservation of cards, 16.7."""

from __future__ import annotations

import random
import secrets
from collections import Counter

import numpy as np

from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded


def _order(seed: int) -> list[str]:
    shoe = Shoe(load_rules("nz-pontoon", {"decks": 2}), seeded(seed))
    shoe.start_round()
    return [c.code for c in shoe.remaining]


def test_7_same_seed_same_shuffle_other_seed_other_shuffle() -> None:
    assert _order(42) == _order(42)
    assert _order(42) != _order(43)


def test_7_secure_generator_when_no_seed() -> None:
    assert isinstance(seeded(None), secrets.SystemRandom)
    shoe = Shoe(load_rules(), None)
    assert isinstance(shoe.rng, secrets.SystemRandom)


def test_7_any_generator_with_shuffle_works() -> None:
    shoe = Shoe(load_rules("nz-pontoon", {"decks": 1}), random.Random(1))
    shoe.start_round()
    assert len(shoe.remaining) == 47


def test_7_cutting_card_at_the_penetration() -> None:
    rules = load_rules("nz-pontoon", {"decks": 4, "penetration": 0.75, "burn_card": False})
    shoe = Shoe(rules, seeded(1))
    shoe.start_round()
    assert shoe.behind_cut == 192 - 144


def _play_rounds(knobs: dict[str, object], rounds: int, boxes: int = 7) -> tuple[Shoe, list[str]]:
    rules = load_rules("nz-pontoon", knobs)
    shoe = Shoe(rules, np.random.default_rng(9))
    shuffles: list[str] = []
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        for b in range(1, boxes + 1):
            rnd.place_wager(b, f"p{b}", 1000)
        rnd.deal()
        while not rnd.over:
            moves = rnd.legal_moves()
            hits = [m for m in moves if m.action == "hit"]
            rnd.apply(hits[0] if hits else moves[0])
            layout = rnd.cards_on_layout()
            assert Counter(shoe.remaining + layout + shoe.discards) == Counter(shoe.full_pack)
        shuffles += [e.rule or "" for e in rnd.events if e.kind == "shuffle"]
    return shoe, shuffles


def test_cards_are_conserved_round_after_round() -> None:
    shoe, shuffles = _play_rounds({"decks": 2}, 60, boxes=3)
    assert Counter(shoe.remaining + shoe.discards) == Counter(shoe.full_pack)
    assert shuffles.count("8.7") + shuffles.count("8.8") >= 3


def test_16_7_shoe_runs_out_mid_round_discards_are_shuffled_and_play_goes_on() -> None:
    # One deck, cutting card at the very end, seven boxes hitting to bust: the shoe runs dry.
    _, shuffles = _play_rounds({"decks": 1, "penetration": 1.0, "boxes_per_player": 1}, 30)
    assert "16.7" in shuffles
