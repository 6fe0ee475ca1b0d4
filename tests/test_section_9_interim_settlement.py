"""Section 9: interim settlement and surrender; section 10 insurance (assumed)."""

from __future__ import annotations

import pytest

from pontoon.errors import IllegalAction
from pontoon.round import Move
from tests.helpers import play, start


def test_9_1_pontoon_paid_3_2_at_once_before_further_cards() -> None:
    rnd = start("AS 9H 8D KC 5C", [(1, "ana", 1000), (2, "ben", 1000)])
    outcome = next(e for e in rnd.events if e.kind == "outcome")
    assert (outcome.box, outcome.detail, outcome.odds, outcome.rule) == (1, "win", "3:2", "9.1")
    assert rnd.net("ana") == 1500 and rnd.order[0].hands[0].discarded
    assert rnd.current() is not None and rnd.current()[0].number == 2  # type: ignore[index]


def test_9_1_pontoon_paid_regardless_of_dealer_first_card() -> None:
    rnd = play("AS 9H AD KC 8C KH", ["stand"], [(1, "ana", 1000), (2, "ben", 1000)])
    assert rnd.net("ana") == 1500 and rnd.net("ben") == -1000  # dealer made pontoon


def test_9_1_pontoon_payout_rounds_down_to_the_cent() -> None:
    rnd = start("AS 9H KD", [(1, "ana", 1001)])
    assert rnd.net("ana") == 1501


def test_9_2_twenty_one_paid_at_once_at_11_1_odds() -> None:
    rnd = play("9S 7H 5D 7C 8S 4C", ["hit"])
    assert rnd.over and rnd.net("ana") == 1000
    assert [e.rule for e in rnd.events if e.kind == "outcome"] == ["9.2"]


def test_9_2_five_card_21_bonus_paid_at_once() -> None:
    rnd = play("2S 9H 3D 4C 5S 7C", ["hit", "hit", "hit"])
    assert rnd.net("ana") == 1500


def test_9_2_super_bonus_waits_for_end_of_round() -> None:
    rnd = play("7S 9D 7H 7S 9C 7S 8C 5C", ["hit"], [(1, "ana", 1000), (2, "ben", 1000)])
    assert rnd.order[0].hands[0].state == "super" and not rnd.order[0].hands[0].wagers[0].settled
    rnd.apply(Move("stand", 2))
    assert rnd.net("ana") == 100000 and rnd.net("ben") == 5000 - 1000  # 18 loses to 20


def test_9_3_surrender_offered_against_ace_king_queen_jack() -> None:
    for up in ("AH", "KH", "QH", "JH"):
        rnd = start(f"9S {up} 7D")
        assert "surrender" in [m.action for m in rnd.legal_moves()], up


def test_9_3_no_surrender_against_other_first_cards() -> None:
    rnd = start("9S 9H 7D")
    with pytest.raises(IllegalAction, match=r"9\.3"):
        rnd.apply(Move("surrender", 1))


def test_9_3_surrender_only_on_first_two_cards() -> None:
    rnd = play("5S KH 4D 3C", ["hit"])
    with pytest.raises(IllegalAction, match=r"9\.3 surrender on the first two cards"):
        rnd.apply(Move("surrender", 1))


def test_9_3_surrender_returns_half_when_dealer_has_no_pontoon() -> None:
    rnd = play("9S KH 7D 6C", ["surrender"])
    assert rnd.net("ana") == -500
    assert [e.card for e in rnd.events if e.kind == "deal" and e.box is None] == ["KH", "6C"]


def test_9_4_surrender_void_when_dealer_makes_pontoon() -> None:
    rnd = play("9S KH 7D AC", ["surrender"])
    assert rnd.net("ana") == -1000
    assert [e.rule for e in rnd.events if e.kind == "outcome"] == ["9.4"]


def test_9_4_late_surrender_is_a_knob() -> None:
    rnd = play("9S KH 7D AC", ["surrender"], surrender="late")
    assert rnd.net("ana") == -500


def test_10_insurance_pays_2_1_on_dealer_pontoon() -> None:
    rnd = start("9S AH 8D KC")
    rnd.apply(Move("insure", 1, player="ana", amount=500))
    rnd.apply(Move("stand", 1))
    assert rnd.net("ana") == -1000 + 1000  # wager lost, insurance won 2:1


def test_10_insurance_at_most_half_the_wager() -> None:
    rnd = start("9S AH 8D KC")
    with pytest.raises(IllegalAction, match=r"rule 10 insurance may be 1 to 500"):
        rnd.apply(Move("insure", 1, player="ana", amount=501))


def test_10_insurance_only_against_an_ace() -> None:
    rnd = start("9S KH 8D KC")
    with pytest.raises(IllegalAction, match=r"rule 10 "):
        rnd.apply(Move("insure", 1, amount=100))


def test_10_insurance_lost_without_dealer_pontoon() -> None:
    rnd = start("9S AH 8D 5C 3C")
    rnd.apply(Move("insure", 1, amount=500))
    rnd.apply(Move("stand", 1))
    assert rnd.net("ana") == -500 - 1000  # dealer A 5 3 = soft 19 beats 17
