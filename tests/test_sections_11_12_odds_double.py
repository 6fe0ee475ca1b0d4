"""Sections 11 (odds, Super Bonus) and 12 (double down), both assumed (docs/rules.md)."""

from __future__ import annotations

import pytest

from pontoon.errors import IllegalAction
from pontoon.round import Move
from tests.helpers import play, start


def test_11_1_six_card_21_pays_2_1() -> None:
    rnd = play("2S 9H 2D 3C 4S 5C 5D", ["hit", "hit", "hit", "hit"])
    assert rnd.net("ana") == 2000


def test_11_1_seven_card_21_pays_3_1() -> None:
    rnd = play("2S 9H 2D 3C AS AC 4S 8D", ["hit", "hit", "hit", "hit", "hit"])
    assert len(rnd.order[0].hands[0].cards) == 7 and rnd.net("ana") == 3000


@pytest.mark.parametrize(
    ("cards", "net"),
    [("6S 7S 8S", 3000), ("6H 7H 8H", 2000), ("6H 7D 8H", 1500), ("7C 7C 7D", 1500)],
)
def test_11_1_six_seven_eight_and_seven_seven_seven(cards: str, net: int) -> None:
    a, b, c = cards.split()
    rnd = play(f"{a} 9D {b} {c}", ["hit"])
    assert rnd.net("ana") == net


def test_11_1_no_bonus_on_a_doubled_hand() -> None:
    rnd = play("6S 9D 7S 8S", ["double"])
    assert rnd.net("ana") == 2000  # 2000 staked, paid 1:1


def test_11_1_bonuses_knob_off_pays_even_money() -> None:
    rnd = play("6S 9D 7S 8S", ["hit"], bonuses=False)
    assert rnd.net("ana") == 1000


def test_11_2_super_bonus_large_for_wagers_of_25_dollars() -> None:
    rnd = play("7D 7H 7D 7D", ["hit"], [(1, "ana", 2500)])
    assert rnd.net("ana") == 500000


def test_11_2_super_bonus_needs_dealer_seven() -> None:
    rnd = play("7D 8H 7D 7D", ["hit"])
    assert rnd.net("ana") == 2000  # 7-7-7 one suit: 2:1


def test_11_2_super_bonus_pays_every_other_player_50() -> None:
    rnd = play(
        "7D 9S 7H 7D 9C 7D 8C 5C",
        ["hit", "stand"],
        [(1, "ana", 1000), (2, "ben", 1000), (1, "cat", 500)],
    )
    assert rnd.net("ana") == 100000 and rnd.net("cat") == 100000
    assert rnd.net("ben") == 5000 - 1000  # ben 18 loses to dealer 7 8 5 = 20, gets $50


def test_12_double_one_card_only() -> None:
    rnd = play("5S 9H 4D 2C 9S 8D", ["double"])
    hand = rnd.order[0].hands[0]
    assert len(hand.cards) == 3 and hand.doubled and hand.wagers[0].amount == 2000


def test_12_double_for_less() -> None:
    rnd = start("5S 9H 4D 9C 8S")
    rnd.apply(Move("double", 1, amount=300))
    assert rnd.net("ana") == 1300  # 18 beats 17


def test_12_double_more_than_the_wager_refused() -> None:
    rnd = start("5S 9H 4D 9C")
    with pytest.raises(IllegalAction, match=r"rule 12 a double may be 1 to 1000"):
        rnd.apply(Move("double", 1, amount=1001))


def test_12_double_on_three_cards_refused_unless_any_number() -> None:
    rnd = play("2S 9H 3D 4C", ["hit"])
    with pytest.raises(IllegalAction, match=r"rule 12 double on the first two cards"):
        rnd.apply(Move("double", 1))
    rnd = play("2S 9H 3D 4C 5C 9S 8S", ["hit", "double"], double_on="any-number")
    assert rnd.order[0].hands[0].doubled


@pytest.mark.parametrize(
    ("knob", "cards", "ok"), [("9-11", "5S 9H 4D", True), ("10-11", "5S 9H 4D", False)]
)
def test_12_double_on_totals_knob(knob: str, cards: str, ok: bool) -> None:
    rnd = start(cards, double_on=knob)
    assert rnd.can(Move("double", 1)) is ok


def test_12_double_rescue_forfeits_original_wager() -> None:
    rnd = play("5S 9H 6D 5C", ["double", "rescue"], double_rescue=True)
    assert rnd.net("ana") == -1000
