"""Section 15: wagering on boxes, players behind the seated player, several boxes."""

from __future__ import annotations

import pytest

from pontoon.cards import parse_cards
from pontoon.errors import IllegalAction
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import ScriptedCards
from tests.helpers import play, start


def _round(**knobs: object) -> Round:
    return Round(load_rules("nz-pontoon", knobs), ScriptedCards(parse_cards("9S 9H 9D")))


def test_15_1_up_to_three_players_on_a_box() -> None:
    rnd = _round()
    for p in ("ana", "ben", "cat"):
        rnd.place_wager(1, p, 1000)
    with pytest.raises(IllegalAction, match=r"rule 15\.1"):
        rnd.place_wager(1, "dan", 1000)
    assert rnd.boxes[1].players == ["ana", "ben", "cat"]


def test_15_2_box_maximum() -> None:
    rnd = _round(box_max=2000)
    rnd.place_wager(1, "ana", 1500)
    with pytest.raises(IllegalAction, match=r"rule 15\.2 the box maximum is \$20\.00"):
        rnd.place_wager(1, "ben", 600)


def test_15_2_player_maximum() -> None:
    rnd = _round(table_max=5000)
    rnd.place_wager(1, "ana", 5000)
    with pytest.raises(IllegalAction, match=r"rule 15\.2"):
        rnd.place_wager(1, "ana", 500)


def test_15_3_a_seated_player_alone_decides() -> None:
    rnd = start("9S 9H 7D", [(1, "ana", 1000), (1, "ben", 1000)])
    with pytest.raises(IllegalAction, match=r"15\.3\(a\)"):
        rnd.apply(Move("stand", 1, player="ben"))


def test_15_3_b_first_wager_is_the_seated_players() -> None:
    rnd = start("9S 9H 7D", [(1, "ben", 500), (1, "ana", 1000)])
    assert rnd.boxes[1].seated == "ben"


def test_15_3_c_players_behind_may_double_along() -> None:
    rnd = start("5S 9H 6D 9C 8S", [(1, "ana", 1000), (1, "ben", 1000), (1, "cat", 500)])
    rnd.apply(Move("double", 1))
    assert rnd.follow_ups is not None and rnd.follow_ups.waiting == ["ben", "cat"]
    rnd.apply(Move("double", 1, player="ben", amount=400))
    rnd.apply(Move("decline", 1, player="cat"))
    assert rnd.over and len(rnd.order[0].hands[0].cards) == 3  # one card for all (15.3(c))
    assert (rnd.net("ana"), rnd.net("ben"), rnd.net("cat")) == (2000, 1400, 500)


def test_15_3_c_card_waits_for_players_behind() -> None:
    rnd = start("5S 9H 6D 9C 8S", [(1, "ana", 1000), (1, "ben", 1000)])
    rnd.apply(Move("double", 1))
    assert len(rnd.order[0].hands[0].cards) == 2
    with pytest.raises(IllegalAction, match=r"15\.3\(c\) ben"):
        rnd.apply(Move("stand", 1))


def test_15_3_d_player_behind_covers_both_split_hands() -> None:
    rnd = start("8S 7H 8D 9C 9S 4H 9D", [(1, "ana", 1000), (1, "ben", 500)])
    rnd.apply(Move("split", 1))
    rnd.apply(Move("split", 1, player="ben", follow="both"))
    hands = rnd.order[0].hands
    assert [[w.player for w in h.wagers] for h in hands] == [["ana", "ben"], ["ana", "ben"]]


def test_15_3_d_player_behind_names_the_hand() -> None:
    rnd = start("8S 7H 8D 9C 9S 4H 9D", [(1, "ana", 1000), (1, "ben", 500)])
    rnd.apply(Move("split", 1))
    rnd.apply(Move("split", 1, player="ben", follow=1))
    hands = rnd.order[0].hands
    assert [[w.player for w in h.wagers] for h in hands] == [["ana"], ["ana", "ben"]]


def test_15_3_d_choice_before_any_further_card() -> None:
    rnd = start("8S 7H 8D 9C 9S 4H 9D", [(1, "ana", 1000), (1, "ben", 500)])
    rnd.apply(Move("split", 1))
    assert [len(h.cards) for h in rnd.order[0].hands] == [1, 1]
    rnd.apply_defaults()  # ben says nothing: his wager stays on hand 0
    assert [len(h.cards) for h in rnd.order[0].hands] == [2, 1]
    assert [w.player for w in rnd.order[0].hands[0].wagers] == ["ana", "ben"]


def test_15_3_e_no_double_behind_when_seated_player_declines() -> None:
    rnd = start("5S 9H 6D 9C 8S", [(1, "ana", 1000), (1, "ben", 1000)])
    with pytest.raises(IllegalAction, match=r"15\.3\(e\)"):
        rnd.apply(Move("double", 1, player="ben"))


def test_15_3_e_no_split_behind_when_seated_player_doubles() -> None:
    rnd = start("5S 9H 5D 9C 8S", [(1, "ana", 1000), (1, "ben", 1000)])
    rnd.apply(Move("double", 1))
    with pytest.raises(IllegalAction, match=r"15\.3\(e\)"):
        rnd.apply(Move("split", 1, player="ben", follow="both"))


def test_15_3_f_every_player_may_insure() -> None:
    rnd = start("9S AH 8D KC", [(1, "ana", 1000), (1, "ben", 600)])
    rnd.apply(Move("insure", 1, player="ben", amount=300))
    rnd.apply(Move("stand", 1))
    assert rnd.net("ben") == -600 + 600 and rnd.net("ana") == -1000


def test_15_4_a_player_may_wager_on_several_boxes_up_to_the_limit() -> None:
    rnd = _round(boxes_per_player=2)
    rnd.place_wager(1, "ana", 1000)
    rnd.place_wager(2, "ana", 1000)
    with pytest.raises(IllegalAction, match=r"rule 15\.4"):
        rnd.place_wager(3, "ana", 1000)


def test_15_5_seated_player_decides_only_at_own_box() -> None:
    rnd = start("9S 9D 9H 8C 8D", [(1, "ana", 1000), (2, "ben", 1000), (2, "ana", 500)])
    rnd.apply(Move("stand", 1))
    with pytest.raises(IllegalAction, match=r"15\.3\(a\)|15\.3\(e\)"):
        rnd.apply(Move("stand", 2, player="ana"))


def test_15_6_at_least_the_minimum_on_each_box() -> None:
    rnd = _round()
    rnd.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match=r"rule 15\.6"):
        rnd.place_wager(2, "ana", 499)


def test_15_one_player_several_boxes_plays_each_in_turn() -> None:
    rnd = play("9S 8S 7H 9D 9C 9H 8H", ["stand", "stand"], [(1, "ana", 1000), (2, "ana", 1000)])
    assert rnd.over and rnd.net("ana") == 2000  # 18 and 17 both beat the dealer's 7 9 8


def test_15_2_box_maximum_applies_to_the_first_wager_too() -> None:
    rnd = _round(box_max=2000)
    with pytest.raises(IllegalAction, match=r"rule 15\.2 the box maximum is \$20\.00"):
        rnd.place_wager(1, "ana", 2500)


def test_15_3_d_follow_must_be_both_0_or_1_not_a_bool() -> None:
    rnd = start("8S 7H 8D 9C 9S 4H 9D", [(1, "ana", 1000), (1, "ben", 500)])
    rnd.apply(Move("split", 1))
    with pytest.raises(IllegalAction, match=r"15\.3\(d\) follow 'both', 0 or 1"):
        rnd.apply(Move("split", 1, player="ben", follow=True))
