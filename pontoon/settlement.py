"""Odds and payments of a finished wager: pure functions of the rules and the cards.

>>> from pontoon.cards import parse_cards
>>> from pontoon.rules import load_rules
>>> rules = load_rules("nz-pontoon")
>>> win_odds(rules, parse_cards("AS KD"), natural=True, doubled=False)
Fraction(3, 2)
>>> win_odds(rules, parse_cards("2S 3D 4H 5C 7S"), natural=False, doubled=False)
Fraction(3, 2)
>>> win_odds(rules, parse_cards("2S 3D 4H 5C 7S"), natural=False, doubled=True)
Fraction(1, 1)
>>> winnings(1001, Fraction(3, 2))      # rounded down to the minor unit
1501
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from pontoon.cards import Card
from pontoon.hand import three_card_bonus, total
from pontoon.rules import RuleSet

EVEN = Fraction(1)


def win_odds(rules: RuleSet, cards: Sequence[Card], *, natural: bool, doubled: bool) -> Fraction:
    """The odds a winning hand is paid at (9.1, 11.1): the best single odds that apply."""
    if natural:
        return rules.natural_pays
    if not rules.bonuses or (doubled and not rules.bonus_on_double) or total(cards) != 21:
        return EVEN
    best = EVEN
    n = len(cards)
    if n == 5:
        best = max(best, rules.five_card_21_pays)
    elif n == 6:
        best = max(best, rules.six_card_21_pays)
    elif n >= 7:
        best = max(best, rules.seven_card_21_pays)
    kind = three_card_bonus(cards)
    if kind == "spades":
        best = max(best, rules.three_card_spades_pays)
    elif kind == "suited":
        best = max(best, rules.three_card_suited_pays)
    elif kind == "mixed":
        best = max(best, rules.three_card_mixed_pays)
    return best


def winnings(amount: int, odds: Fraction) -> int:
    """What a wager of ``amount`` wins at ``odds``, rounded down to the minor unit."""
    return amount * odds.numerator // odds.denominator


def super_bonus_amount(rules: RuleSet, wager: int) -> int | None:
    """The fixed Super Bonus for a wager (11.2), or None when the wager is too small for it."""
    if wager < rules.super_bonus_min:
        return None
    if wager >= rules.super_bonus_threshold:
        return rules.super_bonus_large
    return rules.super_bonus_small


def odds_text(odds: Fraction) -> str:
    """``Fraction(3, 2)`` as ``"3:2"``."""
    return f"{odds.numerator}:{odds.denominator}"
