"""Blackjack 1996 (nz-blackjack): irregularities 15.5-15.11 and the Super Sevens wager."""

from __future__ import annotations

import pytest

from pontoon.cards import parse_cards
from pontoon.errors import IllegalAction
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.replay import replay
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import ScriptedCards
from tests.helpers import codes, start

BJ = "nz-blackjack"
SUP = "supervisor"


def _omitted(cards: str, wagers: list[tuple[int, str, int]]) -> Round:
    """A round dealt with the dealer's first card omitted (15.5): ``cards`` as they fell."""
    rnd = Round(load_rules(BJ), ScriptedCards(parse_cards(cards)))
    for box, player, amount in wagers:
        rnd.place_wager(box, player, amount)
    rnd.deal(omit_dealer_card=True)
    return rnd


def _replays(rnd: Round) -> None:
    again = replay([Event.from_json(e.to_json()) for e in rnd.events])
    assert again.events == rnd.events and again.balance == rnd.balance


def test_15_5_omitted_first_card_noticed_before_decisions_is_reconstructed() -> None:
    # As they fell: ana 9S, ben 5D, (no dealer card), ana 7H, ben 8D; the next card is TC.
    rnd = _omitted("9S 5D 7H 8D TC 9C 4S", [(1, "ana", 1000), (2, "ben", 1000)])
    assert rnd.dealer == []
    rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by=SUP))
    assert codes(rnd.dealer) == ["7H"]  # as it should have been dealt
    assert [codes(b.hands[0].cards) for b in rnd.order] == [["9S", "8D"], ["5D", "TC"]]
    rnd.apply(Move("stand", 1))
    rnd.apply(Move("stand", 2))
    assert codes(rnd.dealer) == ["7H", "9C", "4S"]
    _replays(rnd)


def test_15_5_after_decisions_each_seated_player_chooses_void_or_complete() -> None:
    wagers = [(1, "ana", 1000), (2, "ben", 1000), (3, "cat", 1000)]
    rnd = _omitted("9S 5D 9C 7H 8D 8C TC AS KD", wagers)
    rnd.apply(Move("stand", 1))  # ana stands on 16
    rnd.apply(Move("hit", 2))  # ben 5 8 T = 23: bust
    rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by=SUP))
    with pytest.raises(IllegalAction, match=r"15\.5 the seated players of boxes 1, 2, 3 first"):
        rnd.apply(Move("stand", 3))
    rnd.apply(Move("complete", 1))
    rnd.apply(Move("void", 2))  # void even though ben's hand exceeded 21 (15.5(a))
    rnd.apply(Move("complete", 3))
    assert rnd.net("ben") == 0
    rnd.apply(Move("stand", 3))  # cat 17
    # the dealer takes the next cards as the hand: A K = 21 but not blackjack
    assert codes(rnd.dealer) == ["AS", "KD"]
    assert rnd.net("ana") == -1000 and rnd.net("cat") == -1000
    assert rnd.order[0].hands[0].wagers[0].outcome == "lose"
    _replays(rnd)


def test_15_5_refused_once_the_round_is_over() -> None:
    rnd = _omitted("9S 7H TC 9D", [(1, "ana", 1000)])
    rnd.apply(Move("stand", 1))
    assert rnd.over
    with pytest.raises(IllegalAction, match=r"15\.5 the round is over"):
        rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by=SUP))


def test_15_5_dealer_ace_ten_after_omission_counts_21_not_blackjack() -> None:
    rnd = _omitted("TS 9D 7H 8C 4S AS KD", [(1, "ana", 1000), (2, "ben", 1000)])
    rnd.apply(Move("hit", 1))  # ana T 7 4 = 21
    rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by=SUP))
    rnd.apply_defaults()  # both complete their hands
    rnd.apply(Move("stand", 2))  # ben 17
    assert codes(rnd.dealer) == ["AS", "KD"]
    assert rnd.net("ana") == 0 and rnd.net("ben") == -1000  # 21, not a blackjack


def test_15_5_needs_a_supervisor_and_an_omission() -> None:
    rnd = start("9S 7H 8D", preset=BJ)
    with pytest.raises(IllegalAction, match=r"15\.5 a supervisor"):
        rnd.apply_irregularity(Irregularity("dealer-first-card-omitted"))
    with pytest.raises(IllegalAction, match=r"15\.5 the dealer's first card was dealt"):
        rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by=SUP))


def test_15_5_is_not_a_pontoon_procedure() -> None:
    rnd = Round(load_rules("nz-pontoon"), ScriptedCards(parse_cards("9S 7H 8D")))
    rnd.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match=r"15\.5"):
        rnd.deal(omit_dealer_card=True)


def test_15_6_exposed_card_dealt_to_dealers_hand_is_discarded() -> None:
    rnd = start("9S 7H 8D 5C 9C 2S", preset=BJ)
    rnd.apply_irregularity(Irregularity("exposed-to-dealer"))  # any time in Blackjack
    rnd.apply(Move("stand", 1))
    assert codes(rnd.dealer) == ["7H", "9C", "2S"]
    assert [e.rule for e in rnd.events if e.kind == "irregularity"] == ["15.6"]


def test_15_7_exposed_card_refused_by_all_is_dealers_second_card() -> None:
    rnd = start("9S 7H 8D TC 2S", preset=BJ)
    rnd.apply_irregularity(Irregularity("exposed-card"))
    rnd.apply(Move("refuse", 1))
    assert codes(rnd.dealer) == ["7H", "TC"] and rnd.net("ana") == 0
    assert [e.rule for e in rnd.events if e.kind == "action"][-1] == "15.7"


def test_15_8_reconstruction_refused_once_the_hand_has_a_decision() -> None:
    rnd = start("2S 3D 7H 5C 4C 9C 9D", [(1, "ana", 1000), (2, "ben", 1000)], preset=BJ)
    rnd.apply(Move("hit", 1))
    with pytest.raises(IllegalAction, match=r"15\.8 a decision has been made"):
        rnd.apply_irregularity(Irregularity("reconstruct", by=SUP, box=1))
    rnd.apply_irregularity(Irregularity("reconstruct", by=SUP, box=2))
    rnd.apply_irregularity(Irregularity("void", by=SUP, box=1))
    assert rnd.net("ana") == 0


def test_15_9_absent_player_drawn_while_hard_total_is_11_or_less() -> None:
    rnd = start("AS 7H 5D 3C TC 9D 2C", preset=BJ)  # soft 16 is a hard 6: draw
    rnd.apply_irregularity(Irregularity("absent", by=SUP))
    assert codes(rnd.order[0].hands[0].cards) == ["AS", "5D", "3C", "TC"]  # hard 19


def test_15_10_scripted_shoe_exhausted() -> None:
    rnd = start("9S 7H 8D KC", preset=BJ)
    rnd.apply_irregularity(Irregularity("shoe-exhausted"))
    assert [e.rule for e in rnd.events if e.kind == "shuffle"] == ["15.10"]


def test_15_11_damaged_cards_replaced_by_a_supervisor() -> None:
    rnd = start("9S 7H 8D KC", preset=BJ)
    with pytest.raises(IllegalAction, match=r"15\.11 a supervisor"):
        rnd.apply_irregularity(Irregularity("damaged", card="7H"))
    rnd.apply_irregularity(Irregularity("damaged", card="7H", by=SUP))
    rnd.apply(Move("stand", 1))
    assert [(e.card, e.rule) for e in rnd.events if e.kind == "replace"] == [("7H", "15.11")]


def _sevens(cards: str, moves: list[str], amount: int = 100) -> Round:
    rnd = Round(load_rules(BJ), ScriptedCards(parse_cards(cards)))
    rnd.place_wager(1, "ana", 1000)
    rnd.place_side_wager(1, "ana", amount)
    rnd.deal()
    for m in moves:
        rnd.apply(Move(m, 1))
    return rnd


@pytest.mark.parametrize(
    ("cards", "moves", "side_net"),
    [
        ("8S 9H 7D TC", ["stand"], -100),  # first card not a 7
        ("7S 9H 8D TC", ["stand"], 300),  # a 7 then not: 3:1
        ("7S 9H 7D 2C 8C", ["hit", "stand"], 5000),  # 7-7 unsuited, third not a 7: 50:1
        ("7S 9H 7S 2C 8C", ["hit", "stand"], 10000),  # 7-7 suited: 100:1
        ("7S 9H 7D 7C 8C", ["hit"], 50000),  # 7-7-7 unsuited: 500:1 (21 stands)
        ("7S 9H 7S 7S 8C", ["hit"], 500000),  # 7-7-7 suited: 5000:1
        ("7S 9H 7D 8C", ["stand"], 5000),  # 7-7 and no third card: 50:1 at the stand
    ],
)
def test_super_sevens_pay_table(cards: str, moves: list[str], side_net: int) -> None:
    rnd = _sevens(cards, moves)
    assert rnd.order[0].sevens["ana"].net == side_net


def test_super_sevens_settled_as_the_cards_fall() -> None:
    rnd = _sevens("8S 9H 7D TC", [])
    assert rnd.order[0].sevens["ana"].settled  # lost on the first card, before any decision


def test_super_sevens_limits_and_availability() -> None:
    rnd = Round(load_rules(BJ), ScriptedCards(parse_cards("7S 9H 7D")))
    with pytest.raises(IllegalAction, match="has no wager on this box"):
        rnd.place_side_wager(1, "ana", 100)
    rnd.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match=r"the wager must be \$1\.00 to \$25\.00"):
        rnd.place_side_wager(1, "ana", 5000)
    pontoon = Round(load_rules("nz-pontoon"), ScriptedCards([]))
    pontoon.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match="not offered here"):
        pontoon.place_side_wager(1, "ana", 100)
