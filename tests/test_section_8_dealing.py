"""Section 8: dealing of cards, the shoe, the cutting card."""

from __future__ import annotations

import numpy as np
import pytest

from pontoon.errors import IllegalAction
from pontoon.events import Event
from pontoon.replay import replay
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe
from tests.helpers import codes, play, start


def test_8_1_first_card_after_shuffle_is_burnt_face_down() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1})
    shoe = Shoe(rules, np.random.default_rng(3))
    rnd = Round(rules, shoe)
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    burns = [e for e in rnd.events if e.kind == "burn"]
    assert len(burns) == 1 and burns[0].rule == "8.1"
    assert codes(shoe.discards) == [burns[0].card]


def test_8_1_burn_card_is_a_knob() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1, "burn_card": False})
    shoe = Shoe(rules, np.random.default_rng(3))
    shoe.start_round()
    assert len(shoe.remaining) == 48 and shoe.discards == []


def test_8_2_deal_order_box_by_box_then_dealer_then_second_cards() -> None:
    rnd = start("2S 3S 4S 5S 6S 7S 8S 9S", [(1, "ana", 1000), (3, "ben", 1000), (2, "cat", 1000)])
    deals = [(e.box, e.card) for e in rnd.events if e.kind == "deal"]
    assert deals == [(1, "2S"), (2, "3S"), (3, "4S"), (None, "5S"), (1, "6S"), (2, "7S"), (3, "8S")]
    assert [e.rule for e in rnd.events if e.kind == "deal"][:4] == ["8.2(a)"] * 3 + ["8.2(b)"]


def test_8_2_no_bets_after_no_more_bets() -> None:
    rnd = start("9S 7H KD 8C 5C")
    with pytest.raises(IllegalAction, match=r"8\.2"):
        rnd.place_wager(2, "ben", 1000)


def test_8_2_a_box_without_wager_gets_no_card() -> None:
    rnd = start("9S 7H KD 8C 5C", [(4, "ana", 1000)])
    assert [b.number for b in rnd.order] == [4]


def test_8_2_dealing_needs_a_wager() -> None:
    rnd = Round(load_rules("nz-pontoon"), Shoe(load_rules("nz-pontoon")))
    with pytest.raises(IllegalAction, match=r"8\.2"):
        rnd.deal()


def test_8_3_boxes_decide_in_turn_from_dealers_left() -> None:
    rnd = start("9S 9H 7H KD 8C 5C 5D", [(1, "ana", 1000), (2, "ben", 1000)])
    with pytest.raises(IllegalAction, match=r"rule 8\.3 box 1 is to act first"):
        rnd.apply(Move("stand", 2))
    rnd.apply(Move("stand", 1))
    assert rnd.current() is not None and rnd.current()[0].number == 2  # type: ignore[index]


def test_8_4_each_decision_is_given_effect_at_once() -> None:
    rnd = start("9S 7H 2D 4C 8S 9D")
    rnd.apply(Move("hit", 1))
    assert codes(rnd.order[0].hands[0].cards) == ["9S", "2D", "4C"]


def test_8_5_no_hole_card_dealer_second_card_after_players() -> None:
    rnd = start("9S 7H KD 8C 5C")
    assert codes(rnd.dealer) == ["7H"] and rnd.hole is None
    rnd.apply(Move("stand", 1))
    assert codes(rnd.dealer) == ["7H", "8C", "5C"]
    second = next(e for e in rnd.events if e.kind == "deal" and e.box is None and e.card == "8C")
    assert second.rule == "8.5"


def test_8_5_peek_game_has_a_hole_card_hidden_until_needed() -> None:
    rnd = start("TS 9H 7D 8C", preset="classic-blackjack")
    assert codes(rnd.dealer) == ["9H"] and str(rnd.hole) == "8C"
    rnd.apply(Move("stand", 1))
    assert codes(rnd.dealer) == ["9H", "8C"] and rnd.net("ana") == 0


def test_8_6_round_is_reconstructed_from_its_log() -> None:
    rnd = play("8S 7H 8D 9C 9S 4H 9D", ["split", "stand", "stand"])
    again = replay([Event.from_json(e.to_json()) for e in rnd.events])
    assert again.events == rnd.events
    assert [codes(h.cards) for h in again.order[0].hands] == [["8S", "9C"], ["8D", "9S"]]


def test_8_6_cards_collected_in_order_to_the_discard_rack() -> None:
    rnd = play("9S 7H KD 8C 5C", ["stand"])
    assert codes(rnd.source.discards) == ["9S", "KD", "7H", "8C", "5C"]  # type: ignore[attr-defined]


def _shoe_rounds(rules_knobs: dict[str, object], rounds: int) -> list[Event]:
    rules = load_rules("nz-pontoon", rules_knobs)
    shoe = Shoe(rules, np.random.default_rng(11))
    events: list[Event] = []
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        rnd.place_wager(1, "ana", 1000)
        rnd.deal()
        while not rnd.over:
            moves = rnd.legal_moves()
            stand = [m for m in moves if m.action == "stand"]
            rnd.apply(stand[0] if stand else moves[0])
        events += rnd.events
    return events


def test_8_7_cutting_card_reached_during_round_reshuffle_after_it() -> None:
    events = _shoe_rounds({"decks": 1, "penetration": 0.5}, 20)
    rules = [e.rule for e in events if e.kind == "shuffle"]
    assert rules[0] == "7" and "8.7" in rules


def test_8_7_round_in_progress_is_completed_after_cutting_card() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1, "penetration": 0.1})
    shoe = Shoe(rules, np.random.default_rng(5))
    shoe.start_round()
    shoe.behind_cut = len(shoe.remaining) - 2  # the cutting card comes out in the deal
    rnd = Round(rules, shoe)
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    while not rnd.over:
        rnd.apply(next(m for m in rnd.legal_moves() if m.action in ("hit", "stand")))
    assert shoe.cut_reached
    assert not [e for e in rnd.events if e.kind == "shuffle" and e.rule != "7"]


def test_8_8_cutting_card_as_first_card_of_round_reshuffles_at_once() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1})
    shoe = Shoe(rules, np.random.default_rng(5))
    shoe.start_round()
    shoe.behind_cut = len(shoe.remaining)  # the cutting card is the next card
    rnd = Round(rules, shoe)
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    assert [e.rule for e in rnd.events if e.kind == "shuffle"] == ["8.8"]


def test_8_9_players_compute_their_own_totals_the_engine_announces_them() -> None:
    rnd = start("AS 7H 6D 8C")
    hand = rnd.order[0].hands[0]
    assert hand.total == 17  # soft 17, announced; the player may still draw (8.9)
    assert "hit" in [m.action for m in rnd.legal_moves()]
