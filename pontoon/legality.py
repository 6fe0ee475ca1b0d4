"""What a hand may do: one function of the hand's facts and the rule set.

:func:`refusal` is the one place the rules of drawing, doubling, splitting, surrendering and
rescuing (9.3, 12, 13, 14.1, 16.4) are written. The round's checks raise what it returns; the
analysis (:meth:`pontoon.analysis.game.Game.legal`) and the compiled kernel's move tables
(:func:`pontoon.sim.kernel.decisions`) are built from it by enumerating the few facts they
vary, and a test walks the whole space of facts to prove the three agree.

What is *not* a hand's fact stays with the round: whose turn it is, the amounts, an exposed
card to refuse, the players behind.

>>> from pontoon.rules import load_rules
>>> rules = load_rules("nz-pontoon")
>>> hard_11 = Facts(cards=2, total=11, up=10)
>>> refusal(Action.STAND, hard_11, rules)
Refusal(rule='14.1(d)', reason='a total of 11 must draw to 12 or more')
>>> from pontoon.vocab import HAND_ACTIONS
>>> [a.value for a in HAND_ACTIONS if allowed(a, hard_11, rules)]
['hit', 'double', 'surrender']
"""

from __future__ import annotations

from typing import Final, NamedTuple

from pontoon.rules import RuleSet
from pontoon.vocab import HAND_ACTIONS, Action

# module names: read faster than the enum's attributes, on every check
HIT, STAND, DOUBLE, SPLIT, SURRENDER, RESCUE = HAND_ACTIONS


class Facts(NamedTuple):
    """Everything the rules read of a hand to say what it may do."""

    cards: int  # cards in the hand
    total: int  # its best total
    pair: bool = False  # two cards the rules call a pair (``split_by``)
    from_split: bool = False
    split_aces: bool = False  # a hand of split aces
    doubled: bool = False
    hands: int = 1  # hands on the box
    acted: bool = False  # a decision was made on the hand
    up: int = 0  # value (1-10) of the dealer's first card; 0 before it is dealt
    refused: bool = False  # 16.4: the hand refused an exposed card
    settled: bool = False  # nothing of the hand depends on the dealer any more
    late: bool = False  # 16.12: a missed surrender offer, honoured after a decision


class Refusal(NamedTuple):
    """Why an action is not allowed: the rule (of the round's rule book) and the reason."""

    rule: str
    reason: str


# Pontoon section 16 procedures and their Blackjack 1996 counterparts
BLACKJACK_RULES: Final = {
    "16.3": "15.6",
    "16.4": "15.7",
    "16.5": "15.8",
    "16.6": "15.9",
    "16.7": "15.10",
    "16.8": "15.11",
}


def book_rule(rules: RuleSet, pontoon_rule: str) -> str:
    """A Pontoon section 16 rule number, or its Blackjack 1996 counterpart.

    >>> from pontoon.rules import load_rules
    >>> book_rule(load_rules("nz-blackjack"), "16.4"), book_rule(load_rules("nz-pontoon"), "16.4")
    ('15.7', '16.4')
    """
    if rules.rule_book == "blackjack":
        return BLACKJACK_RULES.get(pontoon_rule, pontoon_rule)
    return pontoon_rule


def refusal(action: Action, f: Facts, rules: RuleSet) -> Refusal | None:
    """Why the hand described by ``f`` may not take ``action`` under ``rules``, or None when
    it may. The first rule that forbids it is the one named."""
    if action is HIT:
        return _hit(f, rules)
    if action is STAND:
        if not f.doubled and f.total < rules.must_draw_below and not f.split_aces:
            return Refusal(
                "14.1(d)", f"a total of {f.total} must draw to {rules.must_draw_below} or more"
            )
        return None
    if action is DOUBLE:
        return _double(f, rules)
    if action is SPLIT:
        return _split(f, rules)
    if action is SURRENDER:
        return _surrender(f, rules)
    if action is RESCUE:
        if not rules.double_rescue:
            return Refusal("12", "no double-down rescue at this table")
        if not f.doubled:
            return Refusal("12", "rescue only a doubled hand")
        return None
    raise ValueError(f"{action!r} is not a decision on a hand")


def allowed(action: Action, f: Facts, rules: RuleSet) -> bool:
    """Whether the hand may take ``action``."""
    return refusal(action, f, rules) is None


def _refused(f: Facts, rules: RuleSet) -> Refusal | None:
    if f.refused:
        return Refusal(book_rule(rules, "16.4"), "the hand refused an exposed card")
    return None


def _hit(f: Facts, rules: RuleSet) -> Refusal | None:
    if (no := _refused(f, rules)) is not None:
        return no
    if f.doubled:
        return Refusal("14.1(b)", "a doubled hand takes one card only")
    if f.split_aces and not rules.hit_split_aces:
        return Refusal("14.1(c)", "split aces take one card each")
    if f.total >= 21:
        return Refusal("14.1(a)", "no draw on 21")
    return None


def _double(f: Facts, rules: RuleSet) -> Refusal | None:
    if (no := _refused(f, rules)) is not None:
        return no
    if f.doubled:
        return Refusal("14.1(b)", "the hand is already doubled")
    if f.split_aces and not rules.hit_split_aces:
        return Refusal("14.1(c)", "split aces take one card each")
    if f.from_split and not rules.double_after_split:
        return Refusal("12", "no double after a split at this table")
    if rules.double_on != "any-number" and f.cards != 2:
        return Refusal("12", "double on the first two cards only")
    if rules.double_on in ("9-11", "10-11"):
        lo = 9 if rules.double_on == "9-11" else 10
        if not lo <= f.total <= 11:
            return Refusal("12", f"double on totals {rules.double_on} only")
    if f.total >= 21:  # never asked: a hand of 21 has stood (9.2)
        return Refusal("14.1(a)", "no draw on 21")
    return None


def _split(f: Facts, rules: RuleSet) -> Refusal | None:
    if (no := _refused(f, rules)) is not None:
        return no
    if f.cards != 2 or not f.pair:
        return Refusal("13", "only a pair may be split")
    if f.hands >= rules.split_max_hands:
        return Refusal("13", f"a box may split into at most {rules.split_max_hands} hands")
    if f.split_aces and not rules.resplit_aces:
        return Refusal("13", "split aces may not be split again")
    return None


def _surrender(f: Facts, rules: RuleSet) -> Refusal | None:
    if rules.surrender == "none":
        return Refusal("9.3", "no surrender at this table")
    if not f.up:
        return Refusal("9.3", "the dealer has no first card")
    if rules.surrender == "void-on-pontoon" and f.up not in (1, 10):
        return Refusal("9.3", "surrender only when the dealer's first card is A, K, Q or J")
    if f.settled:
        return Refusal("9.3", "the hand is settled")
    if f.hands != 1 or f.cards != 2 or (f.acted and not f.late):
        return Refusal("9.3", "surrender on the first two cards only")
    if f.total >= 21:  # never asked: a pontoon is paid or waits (9.1)
        return Refusal("9.3", "a total of 21 is not surrendered")
    return None


__all__ = ["BLACKJACK_RULES", "Facts", "Refusal", "allowed", "book_rule", "refusal"]
