"""Section 14: drawing of additional cards."""

from __future__ import annotations

import pytest

from pontoon.errors import IllegalAction
from pontoon.round import Move
from tests.helpers import codes, play, start


def test_14_1_a_no_draw_on_21() -> None:
    rnd = play("TS 9H 5D 6C 9D 8S", ["hit"], preset="nz-blackjack")
    with pytest.raises(IllegalAction):
        rnd.apply(Move("hit", 1))
    rnd = start("TS 9H AD 9S", preset="classic-blackjack", dealer_peeks=False)
    assert rnd.order[0].hands[0].state != "open"  # blackjack: no decision at all


def test_14_1_a_hit_on_21_refused_with_rule() -> None:
    rnd = play("5S 9H 6D KC 8S 9S", ["hit"], [(1, "ana", 1000), (2, "ben", 1000)])
    with pytest.raises(IllegalAction, match=r"14\.1\(a\) no draw on 21"):
        rnd.apply(Move("hit", 1))


def test_14_1_b_double_draws_one_and_only_one_card() -> None:
    rnd = play("2S 9H 3D 4C 9S 8D", ["double"])
    assert codes(rnd.order[0].hands[0].cards) == ["2S", "3D", "4C"]  # 9: still one card
    assert rnd.over


def test_14_1_b_hit_after_double_refused() -> None:
    rnd = start("2S 9H 3D 4C 9S 8D", double_rescue=True)
    rnd.apply(Move("double", 1))
    with pytest.raises(IllegalAction, match=r"14\.1\(b\)"):
        rnd.apply(Move("hit", 1))


def test_14_1_c_split_aces_one_card_each() -> None:
    rnd = play("AS 9H AD 5C 6D 9C", ["split"])
    assert [codes(h.cards) for h in rnd.order[0].hands] == [["AS", "5C"], ["AD", "6D"]]
    assert rnd.over


def test_14_1_c_hit_split_aces_knob() -> None:
    rnd = start("AS 9H AD 5C 6D 9C", hit_split_aces=True)
    rnd.apply(Move("split", 1))
    assert rnd.can(Move("hit", 1))


def test_14_1_d_hard_11_must_draw() -> None:
    rnd = start("5S 9H 6D")
    with pytest.raises(IllegalAction, match=r"rule 14\.1\(d\) a total of 11 must draw"):
        rnd.apply(Move("stand", 1))
    assert [m.action for m in rnd.legal_moves()] == ["hit", "double"]


def test_14_1_d_draws_until_12_or_more_over_several_cards() -> None:
    rnd = play("2S 9H 3D 4C", ["hit"])
    assert not rnd.can(Move("stand", 1))  # 2 3 4 = 9
    rnd = play("2S 9H 3D 4C 3S 9S 9D", ["hit", "hit", "stand"])
    assert rnd.over


def test_14_1_d_soft_hands_are_twelve_or_more() -> None:
    rnd = start("AS 9H 2D")  # soft 13
    assert rnd.can(Move("stand", 1))


def test_14_1_d_knob_zero_allows_standing_on_11() -> None:
    rnd = start("5S 9H 6D 8C 9C", must_draw_below=0)
    assert rnd.can(Move("stand", 1))


def test_14_2_bust_loses_at_once_even_if_dealer_busts() -> None:
    rnd = play("KS 9S 6H 6D 9C 9D 8D 9H", ["hit"], [(1, "ana", 1000), (2, "ben", 1000)])
    busted = next(e for e in rnd.events if e.kind == "outcome")
    assert busted.box == 1 and busted.rule == "14.2" and rnd.order[0].hands[0].discarded
    rnd.apply(Move("stand", 2))
    assert rnd.net("ana") == -1000 and rnd.net("ben") == 1000  # dealer 6 8 9 busts, ben 18 wins


def test_14_3_dealer_hits_soft_17() -> None:
    rnd = play("KS AH 9D 6C 2C", ["stand"])
    assert codes(rnd.dealer) == ["AH", "6C", "2C"] and rnd.net("ana") == 0


def test_14_3_dealer_stands_hard_17_and_soft_18() -> None:
    assert codes(play("KS KH 9D 7C 3C", ["stand"]).dealer) == ["KH", "7C"]
    assert codes(play("KS AH 9D 7C 3C", ["stand"]).dealer) == ["AH", "7C"]


def test_14_3_stands_on_soft_17_knob() -> None:
    rnd = play("KS AH 9D 6C 3C", ["stand"], dealer_hits_soft_17=False)
    assert codes(rnd.dealer) == ["AH", "6C"]


def test_14_4_no_dealer_card_when_every_hand_is_settled() -> None:
    rnd = play("KS 6H 6D 9C", ["hit"])
    assert codes(rnd.dealer) == ["6H"]


def test_14_4_second_card_only_when_only_insurance_depends_on_it() -> None:
    rnd = start("KS AH 6D 9C 2C")
    rnd.apply(Move("insure", 1, amount=500))
    rnd.apply(Move("hit", 1))
    assert codes(rnd.dealer) == ["AH", "2C"]  # ana busted; insurance needs the second card


def test_14_4_second_card_for_a_pending_surrender() -> None:
    rnd = play("KS KH 6D 5C 2C", ["surrender"])
    assert codes(rnd.dealer) == ["KH", "5C"]


def test_14_4_blackjack_waits_only_for_the_second_card() -> None:
    rnd = start("AS 9H KD 5C 2C", preset="nz-blackjack")
    assert codes(rnd.dealer) == ["9H", "5C"] and rnd.net("ana") == 1500
