"""The round's query API, which every front end reads (README, "The engine as a library"):
who must act now and on what (8.2, 8.3, 10, 15.3, 15.5), each player's legal moves, the
money a move takes, the insurance maximum (10), and the events a move adds."""

from __future__ import annotations

import pytest

from pontoon.cards import parse_cards
from pontoon.errors import IllegalAction
from pontoon.irregularities import Irregularity
from pontoon.layout import Move, Turn
from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import ScriptedCards
from pontoon.vocab import Action, Follow, TurnKind
from tests.helpers import start

BEHIND = ((1, "ana", 1000), (1, "ben", 600))


def test_8_2_before_the_deal_the_round_waits_for_wagers() -> None:
    rnd = Round(load_rules("nz-pontoon"), ScriptedCards(parse_cards("9S 7H 8D TC")))
    rnd.place_wager(2, "cat", 500)
    rnd.place_wager(1, "ana", 500)
    assert rnd.to_act() == Turn(TurnKind.BETTING, ("ana", "cat"))
    assert rnd.to_act().to_dict() == {"kind": "betting", "players": ["ana", "cat"]}  # type: ignore[union-attr]


def test_8_3_the_seated_player_of_the_box_in_turn_decides() -> None:
    rnd = start("9S 7H 8D TC 2C", [(1, "ana", 1000), (2, "ben", 1000)])  # dealer 8D
    assert rnd.to_act() == Turn(TurnKind.DECIDE, ("ana",), box=1, hand=0)
    legal = [Action.HIT, Action.STAND, Action.DOUBLE]  # ana 9 T = 19
    assert [m.action for m in rnd.legal_moves("ana")] == legal
    assert rnd.legal_moves("ben") == []
    rnd.apply(Move(Action.STAND, 1))
    assert rnd.to_act() == Turn(TurnKind.DECIDE, ("ben",), box=2, hand=0)


def test_15_3_c_players_behind_follow_a_double_and_it_takes_their_stake() -> None:
    rnd = start("5S 9H 6D 9C 8D", BEHIND)  # ana 5 6 = 11
    assert rnd.stake_of(Move(Action.DOUBLE, 1)) == 1000
    assert rnd.stake_of(Move(Action.DOUBLE, 1, amount=400)) == 400  # 12: for less
    assert rnd.stake_of(Move(Action.STAND, 1)) == 0
    rnd.apply(Move(Action.DOUBLE, 1))
    turn = rnd.to_act()
    assert turn == Turn(TurnKind.FOLLOW, ("ben",), box=1, hand=0, follow=Action.DOUBLE)
    assert turn.to_dict() == {
        "kind": "follow",
        "box": 1,
        "hand": 0,
        "follow": "double",
        "players": ["ben"],
    }
    assert rnd.legal_moves("ana") == []
    assert rnd.legal_moves("ben") == [
        Move(Action.DOUBLE, 1, player="ben"),
        Move(Action.DECLINE, 1, player="ben"),
    ]
    assert rnd.stake_of(Move(Action.DOUBLE, 1, player="ben")) == 600


def test_15_3_d_a_split_covered_on_both_hands_takes_a_stake_following_one_does_not() -> None:
    rnd = start("8S 9H 8D 9C TC 2D", BEHIND)
    rnd.apply(Move(Action.SPLIT, 1))
    assert rnd.to_act() == Turn(TurnKind.FOLLOW, ("ben",), box=1, hand=0, follow=Action.SPLIT)
    both = Move(Action.SPLIT, 1, player="ben", follow=Follow.BOTH)
    assert rnd.stake_of(both) == 600
    assert rnd.stake_of(Move(Action.SPLIT, 1, player="ben", follow=1)) == 0
    events = rnd.apply(both)
    follow = [e for e in events if e.kind == "action"]
    assert [(e.detail, e.follow) for e in follow] == [("split", "both")]  # a field, typed


def test_10_insurance_maximum_and_who_decides_in_the_peek_game() -> None:
    rnd = start("9S AH 7D KC", BEHIND, preset="classic-blackjack")
    assert rnd.to_act() == Turn(TurnKind.INSURANCE, ("ana", "ben"))
    assert rnd.insurable(1, "ana") == 500 and rnd.insurable(1, "ben") == 300
    assert rnd.insurable(1, "cat") == 0 and rnd.insurable(2, "ana") == 0
    assert rnd.stake_of(Move(Action.INSURE, 1, player="ben")) == 300
    rnd.apply(Move(Action.INSURE, 1, player="ben", amount=200))
    assert rnd.insurable(1, "ben") == 0  # decided
    assert [m.action for m in rnd.legal_moves("ben")] == []
    assert [m.action for m in rnd.legal_moves("ana")] == [Action.INSURE, Action.NO_INSURANCE]


def test_15_5_the_seated_players_choose_to_void_or_complete() -> None:
    rnd = Round(load_rules("nz-blackjack"), ScriptedCards(parse_cards("9S 5D 7H 8D TC 9C 4S")))
    rnd.place_wager(1, "ana", 1000)
    rnd.place_wager(2, "ben", 1000)
    rnd.deal(omit_dealer_card=True)
    rnd.apply(Move(Action.STAND, 1))
    rnd.apply_irregularity(Irregularity("dealer-first-card-omitted", by="supervisor"))
    turn = rnd.to_act()
    assert turn == Turn(TurnKind.CHOOSE, ("ana", "ben"), boxes=(1, 2))
    assert turn.to_dict() == {"kind": "choose", "boxes": [1, 2], "players": ["ana", "ben"]}
    assert [m.action for m in rnd.legal_moves("ben")] == [Action.VOID, Action.COMPLETE]


def test_8_6_a_finished_round_waits_for_nobody() -> None:
    rnd = start("9S 7H KD 8C 5C")
    rnd.apply(Move(Action.STAND, 1))
    assert rnd.over and rnd.to_act() is None and rnd.legal_moves() == []


def test_apply_returns_exactly_the_events_it_added_and_a_refusal_adds_none() -> None:
    rnd = start("9S 7H KD 8C 5C")
    before = len(rnd.events)
    with pytest.raises(IllegalAction):
        rnd.apply(Move(Action.DOUBLE, 1, amount=5000))
    assert len(rnd.events) == before
    events = rnd.apply(Move(Action.STAND, 1))
    assert list(events) == rnd.events[before:]
    assert events[0].kind == "action" and events[-1].kind == "end"


def test_a_move_named_by_a_plain_word_is_the_same_move() -> None:
    rnd = start("9S 7H KD 8C 5C")
    assert rnd.can(Move("stand", 1))  # type: ignore[arg-type]
    assert rnd.apply(Move("stand", 1))[0].detail is Action.STAND  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("preset", "word"),
    [
        ("nz-pontoon", "pontoon"),
        ("nz-blackjack", "blackjack"),
        ("spanish-21", "blackjack"),
        ("classic-blackjack", "blackjack"),
    ],
)
def test_the_word_for_a_natural(preset: str, word: str) -> None:
    rnd = Round(load_rules(preset), ScriptedCards([]))
    assert rnd.natural_word == word
