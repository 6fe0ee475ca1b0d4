"""Cards, decks, hand values and the rule set."""

from __future__ import annotations

from fractions import Fraction

import pytest

from pontoon.cards import Card, deck, pack, parse_cards
from pontoon.errors import InputError
from pontoon.hand import describe, is_pair, is_pontoon, is_soft, three_card_bonus, total
from pontoon.rules import PRESETS, RuleSet, knob_info, load_rules


def test_parse_is_case_insensitive_and_shared() -> None:
    assert Card.parse("as") is Card.parse("AS")
    assert Card.parse("Td").value == 10 and Card.parse("KD").is_picture


@pytest.mark.parametrize("text", ["", "A", "1S", "AX", "10S", "ASS"])
def test_unknown_cards_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="unknown card"):
        Card.parse(text)


def test_1_spanish_deck_has_48_cards_without_tens() -> None:
    cards = deck("spanish")
    assert len(cards) == 48 and all(c.rank != 10 for c in cards)
    assert len(pack("spanish", 6)) == 288 and len(pack("standard", 8)) == 416


def test_4_card_values_and_soft_totals() -> None:
    assert total(parse_cards("AS AD")) == 12 and is_soft(parse_cards("AS AD"))
    assert total(parse_cards("AS AD 9C")) == 21
    assert total(parse_cards("KS QD")) == 20 and not is_soft(parse_cards("KS QD"))
    assert describe(parse_cards("AS KD")) == "pontoon"
    assert describe(parse_cards("AS 6D")) == "soft 17"
    assert describe(parse_cards("KS 6D 9C")) == "bust 25"


def test_4_pontoon_is_ace_and_picture_as_first_two_cards() -> None:
    assert is_pontoon(parse_cards("KD AS")) and is_pontoon(parse_cards("AS TD"))
    assert not is_pontoon(parse_cards("AS 5D 5C"))


def test_13_pairs_by_rank_or_value() -> None:
    k, q = parse_cards("KS QD")
    assert not is_pair(k, q, "rank") and is_pair(k, q, "value")


def test_11_1_three_card_patterns_need_exactly_three_cards() -> None:
    assert three_card_bonus(parse_cards("6D 7D 8D")) == "suited"
    assert three_card_bonus(parse_cards("6D 7D 8D AS")) is None
    assert three_card_bonus(parse_cards("6D 7D 7D")) is None


def test_every_preset_loads_and_validates() -> None:
    for name in PRESETS:
        rules = load_rules(name)
        assert isinstance(rules, RuleSet) and rules.name == name
    assert load_rules("nz-blackjack").deck == "standard"
    assert load_rules("classic-blackjack").dealer_peeks


def test_every_knob_names_its_rule() -> None:
    info = knob_info()
    assert len(info) >= 20 and all(rule for _, rule, _ in info)
    interface_knobs = {
        "deck", "decks", "penetration", "burn_card", "dealer_peeks", "dealer_hits_soft_17",
        "natural_pays", "player_21_wins", "must_draw_below", "surrender", "insurance",
        "double_on", "double_after_split", "double_rescue", "split_max_hands", "resplit_aces",
        "hit_split_aces", "dealer_natural_takes", "bonuses", "super_bonus",
    }  # fmt: skip
    assert interface_knobs <= {k for k, _, _ in info}


def test_rule_set_is_frozen_and_replace_validates() -> None:
    rules = load_rules()
    with pytest.raises(AttributeError):
        rules.decks = 3  # type: ignore[misc]
    assert rules.replace(natural_pays=Fraction(6, 5)).natural_pays == Fraction(6, 5)
    with pytest.raises(InputError, match="split_max_hands"):
        rules.replace(split_max_hands=5)
    with pytest.raises(InputError, match="table_min"):
        rules.replace(table_min=0)
