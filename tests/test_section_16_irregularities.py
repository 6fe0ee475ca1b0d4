"""Section 16: irregularities, each a checked procedure recorded in the round's log."""

from __future__ import annotations

import numpy as np
import pytest

from pontoon.errors import IllegalAction
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.replay import replay
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe
from tests.helpers import codes, play, start

TWO = [(1, "ana", 1000), (2, "ben", 1000)]


def _same_after_replay(rnd: Round) -> None:
    again = replay([Event.from_json(e.to_json()) for e in rnd.events])
    assert again.events == rnd.events
    assert again.balance == rnd.balance


def test_16_procedures_are_for_the_dealer_or_supervisor_only() -> None:
    rnd = start("9S 7H 8D 5C 5D")
    with pytest.raises(IllegalAction, match=r"rule 16\.1 only the dealer or a supervisor"):
        rnd.apply_irregularity(Irregularity("face-up-in-shoe", by="ana"))
    with pytest.raises(IllegalAction, match=r"rule 16\.5 a supervisor applies"):
        rnd.apply_irregularity(Irregularity("void", by="dealer"))


def test_16_unknown_procedure_refused() -> None:
    rnd = start("9S 7H 8D")
    with pytest.raises(IllegalAction, match="unknown procedure"):
        rnd.apply_irregularity(Irregularity("spilled-drink"))


def test_16_1_card_face_up_in_shoe_goes_to_discard_rack() -> None:
    rnd = start("9S 7H 8D 5C 4D 6S")
    rnd.apply_irregularity(Irregularity("face-up-in-shoe"))
    assert codes(rnd.source.discards) == ["5C"]  # type: ignore[attr-defined]
    rnd.apply(Move("stand", 1))
    assert codes(rnd.dealer) == ["7H", "4D", "6S"]  # 5C never played
    event = next(e for e in rnd.events if e.kind == "irregularity")
    assert (event.detail, event.card, event.rule, event.by) == (
        "face-up-in-shoe",
        "5C",
        "16.1",
        "dealer",
    )
    _same_after_replay(rnd)


def test_16_2_card_drawn_unexposed_is_used_as_next_card() -> None:
    rnd = start("9S 7H 8D 5C 4D 2C")
    rnd.apply_irregularity(Irregularity("drawn-unexposed"))
    rnd.apply(Move("stand", 1))
    assert codes(rnd.dealer) == ["7H", "5C", "4D", "2C"]
    _same_after_replay(rnd)


def test_16_3_exposed_card_to_completed_dealer_hand_is_discarded() -> None:
    rnd = play("9S 7H 8D KC 2S", ["stand"])
    assert rnd.over
    rnd.apply_irregularity(Irregularity("exposed-to-dealer"))
    assert codes(rnd.source.discards)[-1] == "2S"  # type: ignore[attr-defined]
    assert rnd.net("ana") == 0  # 17 v 17: the exposed card changes nothing
    _same_after_replay(rnd)


def test_16_3_refused_before_dealer_hand_is_completed() -> None:
    rnd = start("9S 7H 8D KC 2S")
    with pytest.raises(IllegalAction, match=r"16\.3 only once the dealer's hand is completed"):
        rnd.apply_irregularity(Irregularity("exposed-to-dealer"))
    assert [e.kind for e in rnd.events].count("irregularity") == 0


def test_16_4_exposed_card_offered_in_turn_taken_by_first_box() -> None:
    rnd = start("9S 5D 7H 3C 8D 4C KS", TWO)
    rnd.apply_irregularity(Irregularity("exposed-card"))
    assert rnd.exposed is not None and rnd.exposed.code == "4C"
    rnd.apply(Move("hit", 1))  # ana takes the exposed 4C: 9 3 4 = 16
    assert codes(rnd.order[0].hands[0].cards) == ["9S", "3C", "4C"]
    _same_after_replay(rnd)


def test_16_4_refusing_player_gets_no_more_cards_this_round() -> None:
    rnd = start("9S 5D 7H 3C 8D 4C KS 2H", TWO)
    rnd.apply_irregularity(Irregularity("exposed-card"))
    rnd.apply(Move("refuse", 1))
    with pytest.raises(IllegalAction, match=r"16\.4 the hand refused an exposed card"):
        rnd.apply(Move("hit", 1, hand=0))
    rnd.apply(Move("hit", 2))  # ben takes the exposed 4C: 5 8 4 = 17
    assert codes(rnd.order[1].hands[0].cards) == ["5D", "8D", "4C"]


def test_16_4_refused_by_all_it_becomes_dealers_second_card() -> None:
    rnd = start("9S 5D 7H 3C 8D 4C KS 2H", TWO)
    rnd.apply_irregularity(Irregularity("exposed-card"))
    rnd.apply(Move("refuse", 1))
    rnd.apply(Move("refuse", 2))
    assert codes(rnd.dealer)[:2] == ["7H", "4C"]
    second = [e for e in rnd.events if e.kind == "deal" and e.box is None][1]
    assert second.rule == "16.4"
    _same_after_replay(rnd)


def test_16_4_refusal_overrides_must_draw() -> None:
    rnd = start("5S 7H 4D 9C KS 2H")
    rnd.apply_irregularity(Irregularity("exposed-card"))
    rnd.apply(Move("refuse", 1))  # 9: 14.1(d) would force a draw, 16.4 stops all draws
    assert codes(rnd.order[0].hands[0].cards) == ["5S", "4D"]
    assert rnd.over and codes(rnd.dealer) == ["7H", "9C", "KS"]  # dealer busts
    assert rnd.net("ana") == 1000


def test_16_4_refuse_without_an_exposed_card_is_illegal() -> None:
    rnd = start("9S 7H 8D")
    with pytest.raises(IllegalAction, match=r"16\.4 no card is exposed"):
        rnd.apply(Move("refuse", 1))


def test_16_5_reconstruction_recorded_round_goes_on() -> None:
    rnd = start("9S 7H 8D KC")
    rnd.apply_irregularity(Irregularity("reconstruct", by="supervisor"))
    rnd.apply(Move("stand", 1))
    assert rnd.over and rnd.net("ana") == 0
    _same_after_replay(rnd)


def test_16_5_whole_round_void_wagers_returned() -> None:
    rnd = start("9S 7H 8D KC", [(1, "ana", 1000), (1, "ben", 500)])
    rnd.apply_irregularity(Irregularity("void", by="supervisor"))
    assert rnd.over and rnd.net("ana") == 0 and rnd.net("ben") == 0
    assert {w.outcome for w in rnd.order[0].hands[0].wagers} == {"void"}
    _same_after_replay(rnd)


def test_16_5_affected_hand_void_later_hands_stand_as_dealt() -> None:
    rnd = start("9S 5D 7H 3C 8D KC 4S", TWO)
    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=1))
    assert rnd.net("ana") == 0 and rnd.order[0].hands[0].discarded
    rnd.apply(Move("stand", 2))
    assert rnd.over and rnd.net("ben") == -1000  # 13 v 7 K = 17: played as dealt
    _same_after_replay(rnd)


def test_16_5_void_round_returns_exactly_every_wager_even_one_already_paid() -> None:
    rnd = start("AS 9D 7H KC 8D", TWO)  # ana's pontoon paid at once
    assert rnd.net("ana") == 1500
    rnd.apply_irregularity(Irregularity("void", by="supervisor"))
    assert rnd.net("ana") == 0 and rnd.net("ben") == 0 and rnd.house == 0
    _same_after_replay(rnd)


def test_16_6_absent_player_drawn_to_12_or_more() -> None:
    rnd = start("2S 7H 3D 4C 5S 9D KC")
    rnd.apply_irregularity(Irregularity("absent", by="supervisor"))
    assert codes(rnd.order[0].hands[0].cards) == ["2S", "3D", "4C", "5S"]  # 14
    assert rnd.over


def test_16_6_absent_player_with_12_or_more_just_stands() -> None:
    rnd = start("KS 7H 2D 9C KC")
    rnd.apply_irregularity(Irregularity("absent", by="supervisor"))
    assert codes(rnd.order[0].hands[0].cards) == ["KS", "2D"]


def test_16_6_only_the_box_in_turn() -> None:
    rnd = start("9S 5D 7H 3C 8D", TWO)
    with pytest.raises(IllegalAction, match=r"16\.6 only the box in turn"):
        rnd.apply_irregularity(Irregularity("absent", by="supervisor", box=2))


def test_16_7_real_shoe_does_it_by_itself() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1})
    rnd = Round(rules, Shoe(rules, np.random.default_rng(1)))
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    if not rnd.over:
        with pytest.raises(IllegalAction, match=r"16\.7 a real shoe"):
            rnd.apply_irregularity(Irregularity("shoe-exhausted"))


def test_16_7_scripted_shoe_exhausted_records_the_shuffle() -> None:
    rnd = start("9S 7H 8D 5C 4D 2C")
    rnd.apply_irregularity(Irregularity("shoe-exhausted"))
    assert [e.rule for e in rnd.events if e.kind == "shuffle"] == ["16.7"]
    rnd.apply(Move("stand", 1))
    _same_after_replay(rnd)


def test_16_8_damaged_card_replaced_at_end_of_round() -> None:
    rnd = start("9S 7H 8D 5C 4D 2C")
    rnd.apply_irregularity(Irregularity("damaged", card="8D"))
    assert not [e for e in rnd.events if e.kind == "replace"]
    rnd.apply(Move("stand", 1))
    replaced = [e for e in rnd.events if e.kind == "replace"]
    assert [(e.card, e.rule) for e in replaced] == [("8D", "16.8")]
    assert rnd.events[-1].kind == "end"
    _same_after_replay(rnd)


def test_16_8_damaged_needs_a_real_card() -> None:
    rnd = start("9S 7H 8D")
    with pytest.raises(IllegalAction, match=r"16\.8 a spanish deck has no TD"):
        rnd.apply_irregularity(Irregularity("damaged", card="TD"))


def _shoe_round(**knobs: object) -> tuple[Shoe, Round]:
    rules = load_rules("nz-pontoon", {"decks": 1, **knobs})
    shoe = Shoe(rules, np.random.default_rng(4))
    rnd = Round(rules, shoe)
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    return shoe, rnd


def _finish(rnd: Round) -> None:
    while not rnd.over:
        moves = rnd.legal_moves()
        rnd.apply(next((m for m in moves if m.action == "stand"), moves[0]))


def test_16_9_missed_reshuffle_shuffles_when_round_ends() -> None:
    shoe, rnd = _shoe_round()
    with pytest.raises(IllegalAction, match=r"16\.9 the cutting card has not come out"):
        rnd.apply_irregularity(Irregularity("missed-reshuffle"))
    shoe.cut_reached = True  # the cutting card came out and nobody reshuffled
    if rnd.over:
        return
    rnd.apply_irregularity(Irregularity("missed-reshuffle"))
    _finish(rnd)
    assert [e.rule for e in rnd.events if e.kind == "shuffle"][-1] == "16.9"
    assert not shoe.cut_reached and len(shoe.remaining) == 47


def test_16_10_missing_cutting_card_reshuffle_at_end_of_round() -> None:
    shoe, rnd = _shoe_round()
    if rnd.over:
        return
    rnd.apply_irregularity(Irregularity("missing-cutting-card"))
    _finish(rnd)
    assert [e.rule for e in rnd.events if e.kind == "shuffle"][-1] == "16.10"
    assert len(shoe.remaining) + len(shoe.discards) == 48 and len(shoe.remaining) == 47


def test_16_11_missed_insurance_still_open_before_dealers_second_card() -> None:
    rnd = start("9S AH 8D KC")
    rnd.apply_irregularity(Irregularity("missed-insurance", box=1, player="ana"))
    rnd.apply(Move("insure", 1, amount=500))
    rnd.apply(Move("stand", 1))
    assert rnd.net("ana") == 0  # loses 1000 to the pontoon, insurance wins 1000


def test_16_11_missed_insurance_too_late_after_second_card() -> None:
    rnd = play("9S AH 8D 5C 3C", ["stand"])
    with pytest.raises(IllegalAction, match=r"16\.11 noticed after the dealer's second card"):
        rnd.apply_irregularity(Irregularity("missed-insurance", box=1, player="ana"))


def test_16_12_missed_surrender_honoured_after_standing() -> None:
    rnd = start("9S 9H KH 8D 8C KC 5C", TWO)
    rnd.apply(Move("stand", 1))  # ana was never offered surrender
    rnd.apply_irregularity(Irregularity("missed-surrender", box=1))
    rnd.apply(Move("surrender", 1))
    rnd.apply(Move("stand", 2))
    assert rnd.net("ana") == -500
    _same_after_replay(rnd)


def test_16_12_missed_surrender_too_late_after_further_cards() -> None:
    rnd = start("5S 9H KH 3D 4C 7C 8C", TWO)
    rnd.apply(Move("hit", 1))
    with pytest.raises(IllegalAction, match=r"16\.12 noticed after further cards"):
        rnd.apply_irregularity(Irregularity("missed-surrender", box=1))


def test_16_procedures_outside_the_pontoon_book_refused_in_blackjack() -> None:
    rnd = start("9S 7H 8D 5C", preset="nz-blackjack")
    with pytest.raises(IllegalAction, match="the blackjack rules have no such procedure"):
        rnd.apply_irregularity(Irregularity("face-up-in-shoe"))


def test_16_5_void_while_players_behind_choose_closes_their_choice() -> None:
    rnd = start("5S 9D 6H JC 8D 7S 9S", [(1, "ana", 1000), (1, "ben", 1000), (2, "cat", 1000)])
    rnd.apply(Move("double", 1))
    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=1))
    assert rnd.follow_ups is None and rnd.net("ana") == 0 and rnd.net("ben") == 0
    rnd.apply(Move("stand", 2))
    assert rnd.over and rnd.table == 0
    _same_after_replay(rnd)


def test_16_5_void_insured_box_insurance_not_settled_again() -> None:
    rnd = start("9S 8D AH 8C 9C 5C 3C", TWO)
    rnd.apply(Move("insure", 1, amount=500))
    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=1))
    rnd.apply(Move("stand", 2))
    assert rnd.over and rnd.net("ana") == 0 and rnd.table == 0


def test_16_5_void_split_hand_waiting_for_its_card_loses_no_card() -> None:
    rnd = start("8S 9D 7H 8H 9C 5S 4H 2D", [(1, "ana", 1000), (2, "ben", 1000)])
    rnd.apply(Move("split", 1))
    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=1))
    assert [len(h.cards) for h in rnd.order[0].hands] == [2, 1]
    _same_after_replay(rnd)


def test_16_12_no_late_surrender_once_the_hand_is_void() -> None:
    rnd = start("9S 9H KH 8D 8C KC 5C", TWO)
    rnd.apply(Move("stand", 1))
    rnd.apply_irregularity(Irregularity("missed-surrender", box=1))
    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=1))
    with pytest.raises(IllegalAction, match=r"9\.3 the hand is settled"):
        rnd.apply(Move("surrender", 1))


def test_16_6_absent_draws_nothing_more_to_a_doubled_hand() -> None:
    rnd = start("5S 9H 4D 2C 8S 9C", double_rescue=True)
    rnd.apply(Move("double", 1))
    rnd.apply_irregularity(Irregularity("absent", by="supervisor"))
    assert codes(rnd.order[0].hands[0].cards) == ["5S", "4D", "2C"]  # 14.1(b)


def _bare_shoe(rules_name: str, cards: str, discards: str = "") -> tuple[Round, Shoe]:
    """A shoe holding only ``cards`` (next first) and a rack of ``discards``: the rest of the
    pack is, in effect, on the layout."""
    from pontoon.cards import parse_cards
    from pontoon.shoe import ShoeState

    rules = load_rules(rules_name, {"decks": 1})
    state = ShoeState(tuple(parse_cards(cards)), tuple(parse_cards(discards)), 0, False, 1)
    shoe = Shoe.from_state(rules, state, np.random.default_rng(5))
    return Round(rules, shoe), shoe


def _frozen(rnd: Round, shoe: Shoe) -> tuple[object, ...]:
    hands = [(b.number, [(codes(h.cards), h.acted) for h in b.hands]) for b in rnd.order]
    return (list(rnd.events), dict(rnd.balance), rnd.phase, hands, codes(rnd.dealer), shoe.state())


def test_16_7_no_card_left_anywhere_refuses_the_hit_and_changes_nothing() -> None:
    rnd, shoe = _bare_shoe("nz-pontoon", "TS 9D 6H")
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    before = _frozen(rnd, shoe)
    with pytest.raises(IllegalAction, match=r"rule 16\.7 no card is left .* voided \(16\.5\)"):
        rnd.apply(Move("hit", 1))
    assert _frozen(rnd, shoe) == before
    rnd.apply_irregularity(Irregularity("void", by="supervisor"))  # 16.5: the way out
    assert rnd.over and rnd.net("ana") == 0
    _same_after_replay(rnd)


def test_16_7_dealer_runs_out_after_a_16_7_shuffle_the_stand_is_refused_shoe_restored() -> None:
    # The stand sends the dealer to draw: one card from the shoe, then the rack (2S) is
    # shuffled in (16.7) and drawn, and then there is nothing left.
    rnd, shoe = _bare_shoe("nz-pontoon", "TS 2D 9H 3C", discards="2S")
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    before = _frozen(rnd, shoe)
    with pytest.raises(IllegalAction, match=r"rule 16\.7"):
        rnd.apply(Move("stand", 1))
    assert _frozen(rnd, shoe) == before
    assert codes(shoe.remaining) == ["3C"] and codes(shoe.discards) == ["2S"]
    assert not any(e.kind == "shuffle" for e in rnd.events)


def test_15_10_blackjack_book_names_its_own_rules_when_the_pack_is_exhausted() -> None:
    rnd, _ = _bare_shoe("nz-blackjack", "TS 9D 6H")
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    with pytest.raises(IllegalAction, match=r"rule 15\.10 .* voided \(15\.8\)"):
        rnd.apply(Move("hit", 1))
