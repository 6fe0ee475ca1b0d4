"""Section 13: splitting pairs (13.5-13.8 gazetted, the rest ASSUMED)."""

from __future__ import annotations

import pytest

from pontoon.errors import IllegalAction
from pontoon.round import Move
from tests.helpers import codes, play, start


def test_13_split_needs_a_pair_of_one_rank() -> None:
    rnd = start("KS 9H QD")
    with pytest.raises(IllegalAction, match=r"rule 13 only a pair may be split"):
        rnd.apply(Move("split", 1))


def test_13_split_by_value_knob_splits_king_queen() -> None:
    rnd = start("KS 9H QD 9C 9S", split_by="value")
    assert rnd.can(Move("split", 1))


def test_13_split_takes_an_equal_wager() -> None:
    rnd = play("8S 7H 8D 9C 9S 4H 9D", ["split"])
    assert [h.wagers[0].stake for h in rnd.order[0].hands] == [1000, 1000]
    assert rnd.table == 2000


def test_13_first_split_hand_completed_before_second_gets_its_card() -> None:
    rnd = play("8S 7H 8D 3C", ["split"])
    hands = rnd.order[0].hands
    assert codes(hands[0].cards) == ["8S", "3C"] and codes(hands[1].cards) == ["8D"]


def test_13_split_to_at_most_four_hands() -> None:
    rnd = play("8S 7H 8D 8C 8H 8S 9C 9D 9H 9S", ["split", "split", "split"])
    assert len(rnd.order[0].hands) == 4
    with pytest.raises(IllegalAction, match=r"at most 4 hands"):
        rnd.apply(Move("split", 1))


def test_13_split_max_hands_knob_one_means_no_splits() -> None:
    rnd = start("8S 7H 8D", split_max_hands=1)
    assert not rnd.can(Move("split", 1))


def test_13_aces_split_once() -> None:
    rnd = play("AS 7H AD AC 9D 9C 5S", ["split"])
    assert rnd.order[0].hands[0].state != "open"  # one card each, no resplit
    rnd = start("AS 7H AD AC 9D 9C 9H", resplit_aces=True)
    rnd.apply(Move("split", 1))
    assert rnd.can(Move("split", 1))


def test_13_5_split_hands_paid_at_11_1_odds_with_bonuses() -> None:
    rnd = play("7H 9H 7D 7H 7H 9C 5D 8D", ["split", "hit", "stand"])
    # hand 0: 7H 7H 7H = 21 in one suit, 2:1 at once
    assert rnd.order[0].hands[0].wagers[0].net == 2000


def test_13_5_two_cards_21_after_split_is_not_pontoon() -> None:
    rnd = play("AS 9H AD KC KD 8C", ["split"])
    assert [w.odds for h in rnd.order[0].hands for w in h.wagers] == [1, 1]
    assert rnd.net("ana") == 2000


def test_13_6_no_super_bonus_on_split_hands() -> None:
    rnd = play("7H 7S 7D 7H 7H 9C 5D 8D", ["split", "hit", "stand"])
    assert rnd.order[0].hands[0].wagers[0].net == 2000  # 2:1, not $1,000


def test_13_7_dealer_pontoon_after_split_collects_original_wager_only() -> None:
    rnd = play("8S AH 8D 9C 9S KC", ["split", "stand", "stand"])
    assert rnd.net("ana") == -1000


def test_13_7_original_bets_only_after_double() -> None:
    rnd = play("5S AH 4D 9C KC", ["double"])
    assert rnd.net("ana") == -1000


def test_13_7_dealer_natural_takes_all_knob() -> None:
    rnd = play("8S AH 8D 9C 9S KC", ["split", "stand", "stand"], dealer_natural_takes="all")
    assert rnd.net("ana") == -2000


def test_13_8_split_21_paid_then_dealer_pontoon_collects_original_from_losing_hand() -> None:
    rnd = play("8S AH 8D 3C KD 9S KC", ["split", "hit", "stand"])
    # hand 0: 8 3 K = 21 paid 1:1 at once; hand 1: 8 9 = 17 loses the original 1000
    assert rnd.net("ana") == 0
