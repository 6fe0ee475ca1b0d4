"""What a wager wins, in units of the wager, taken from :mod:`pontoon.settlement`.

Nothing here restates a rule: the odds come from :func:`~pontoon.settlement.win_odds`, the
amounts from :func:`~pontoon.settlement.winnings` (rounded down to the minor unit, so the
wager's size matters, as at the table) and :func:`~pontoon.settlement.super_bonus_amount`.

>>> from pontoon.rules import load_rules
>>> pay = Payoffs(load_rules("nz-pontoon"), 500)
>>> pay.natural, pay.surrender_loss, pay.super_bonus
(1.5, 0.5, 200.0)
>>> pay.win((0, 0, 0, 0, 0, 1, 1, 1, 0, 0), doubled=False)   # 6-7-8 in mixed suits
1.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from pontoon.analysis.composition import Comp
from pontoon.cards import RANKS, SUITS, Card
from pontoon.hand import is_super_bonus_cards, three_card_bonus
from pontoon.rules import RuleSet
from pontoon.settlement import EVEN, super_bonus_amount, win_odds, winnings
from pontoon.vocab import BY_CARDS_21, BY_SUITS_21, Ending

MIXED = "SHDC"


def rank_of_value(v: int) -> int:
    """A rank with value ``v`` (a king for ten: every ten-value rank pays alike)."""
    return 13 if v == 10 else v


def card(v: int, suit: str) -> Card:
    return Card.parse(RANKS[rank_of_value(v) - 1] + suit)


def cards_of(c: Comp) -> list[Card]:
    """Cards of a composition in suits S, H, D, C in turn: a three-card 6-7-8 or 7-7-7 comes
    out in mixed suits (suited ones are :mod:`pontoon.analysis.suits`' business)."""
    out: list[Card] = []
    for i, n in enumerate(c):
        out += [card(i + 1, MIXED[len(out) % 4]) for _ in range(n)]
    return out


@dataclass
class Payoffs:
    """Payments per unit of ``wager`` (cents) under ``rules``."""

    rules: RuleSet
    wager: int
    _win: dict[tuple[Comp, bool], float] = field(default_factory=dict)
    _paid: dict[tuple[str, bool], tuple[int, Ending]] = field(default_factory=dict)

    def units(self, amount: int, odds: Fraction) -> float:
        """What ``amount`` wins at ``odds``, in wagers."""
        return winnings(amount, odds) / self.wager

    def cents(self, units: float) -> int:
        """A payment in wagers back in cents (every payment is a whole number of cents)."""
        return round(units * self.wager)

    @property
    def natural(self) -> float:
        """A player's pontoon (9.1)."""
        return self.units(self.wager, self.rules.natural_pays)

    @property
    def surrender_loss(self) -> float:
        """The part of the wager a surrender gives up (9.3, rounded as the engine rounds)."""
        kept = winnings(self.wager, self.rules.surrender_returns)
        return (self.wager - kept) / self.wager

    @property
    def super_bonus(self) -> float | None:
        """The Super Bonus for this wager (11.2), None when the wager is too small for it."""
        amount = super_bonus_amount(self.rules, self.wager)
        return None if amount is None else amount / self.wager

    def natural_loss(self, doubled: bool) -> float:
        """What a stood hand gives up to a dealer pontoon: the original wager only (13.7,
        ``original``) or everything on it."""
        if self.rules.dealer_natural_takes == "original" or not doubled:
            return 1.0
        return 2.0

    def win(self, c: Comp, *, doubled: bool) -> float:
        """A winning hand of composition ``c`` (mixed suits), in wagers: 1 or 2 at even money,
        more at the 11.1 bonus odds."""
        key = (c, doubled)
        if key not in self._win:
            self._win[key] = self.win_cards(cards_of(c), doubled=doubled)
        return self._win[key]

    def win_cards(self, cards: Sequence[Card], *, doubled: bool) -> float:
        """A winning hand of exactly these ``cards``, in wagers (worked out each time: the
        rules' odds for a hand take less than a key made of its cards would)."""
        odds = win_odds(self.rules, cards, natural=False, doubled=doubled)
        return self.units(self.wager * (2 if doubled else 1), odds)

    def paid(self, cards: Sequence[Card], *, doubled: bool) -> tuple[int, Ending]:
        """What a winning 21 of exactly these ``cards`` wins, in cents, and the odds it is
        paid at as an :class:`~pontoon.vocab.Ending` (11.1; ``twenty_one`` at even money)."""
        key = (" ".join(c.code for c in cards), doubled)
        if key not in self._paid:
            odds = win_odds(self.rules, cards, natural=False, doubled=doubled)
            amount = winnings(self.wager * (2 if doubled else 1), odds)
            why = Ending.TWENTY_ONE
            if odds != EVEN:
                kind = three_card_bonus(cards)
                if kind is not None:
                    pattern = "777" if all(c.value == 7 for c in cards) else "678"
                    why = BY_SUITS_21[pattern, kind]
                else:
                    why = BY_CARDS_21.get(len(cards), Ending.SEVEN_CARD_21)
            self._paid[key] = (amount, why)
        return self._paid[key]

    def super_cards(self, cards: Sequence[Card], up_rank: int) -> float | None:
        """The Super Bonus in wagers when an unsplit, undoubled hand of ``cards`` earns it
        against a first card of ``up_rank`` (11.2), else None."""
        if not self.rules.super_bonus or up_rank != 7 or not is_super_bonus_cards(cards):
            return None
        return self.super_bonus


SUIT_LIST = tuple(SUITS)
