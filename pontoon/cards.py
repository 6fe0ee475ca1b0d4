"""Cards, ranks, suits and decks.

A card is written as its rank (``A 2 3 4 5 6 7 8 9 T J Q K``) then its suit (``S H D C``).
There are exactly 52 :class:`Card` objects; parsing returns the shared instance, so cards
compare by identity as well as by value.

>>> Card.parse("as")
Card('AS')
>>> Card.parse("KD").value, Card.parse("AS").value
(10, 1)
>>> len(deck("spanish")), len(deck("standard"))
(48, 52)
"""

from __future__ import annotations

from typing import ClassVar, Final

from pontoon.errors import InputError

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
SUIT_SYMBOLS: Final = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
DECK_KINDS: Final = ("spanish", "standard")


class Card:
    """One playing card. ``rank`` is 1 (ace) to 13 (king); ``value`` is 1-10 (ace counts 1 here:
    hand totals decide whether it counts 11)."""

    __slots__ = ("code", "rank", "suit", "value")
    _all: ClassVar[dict[str, Card]] = {}

    code: str
    rank: int
    suit: str
    value: int

    def __init__(self, rank: int, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.value = min(rank, 10)
        self.code = RANKS[rank - 1] + suit

    @classmethod
    def parse(cls, text: str) -> Card:
        """The card written ``text`` (case-insensitive); :class:`InputError` if there is none."""
        card = cls._all.get(text.strip().upper())
        if card is None:
            raise InputError(f"unknown card {text!r}: write rank A23456789TJQK then suit SHDC")
        return card

    @property
    def is_ace(self) -> bool:
        return self.rank == 1

    @property
    def is_picture(self) -> bool:
        """J, Q or K: with an ace, the first two cards make a pontoon."""
        return self.rank >= 11

    @property
    def rank_char(self) -> str:
        return self.code[0]

    def pretty(self) -> str:
        """The card with its suit symbol, e.g. ``A♠``."""
        rank = "10" if self.rank == 10 else self.code[0]
        return rank + SUIT_SYMBOLS[self.suit]

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __str__(self) -> str:
        return self.code

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.parse, (self.code,))


for _suit in SUITS:
    for _rank in range(1, 14):
        _card = Card(_rank, _suit)
        Card._all[_card.code] = _card

ALL_CARDS: Final = tuple(Card._all.values())


def deck(kind: str) -> list[Card]:
    """One deck: ``spanish`` (48 cards, the four tens removed) or ``standard`` (52)."""
    if kind == "standard":
        return list(ALL_CARDS)
    if kind == "spanish":
        return [c for c in ALL_CARDS if c.rank != 10]
    raise InputError(f"unknown deck {kind!r}: choose one of {', '.join(DECK_KINDS)}")


def pack(kind: str, decks: int) -> list[Card]:
    """All the cards of a shoe of ``decks`` decks, in deck order."""
    return deck(kind) * decks


def parse_cards(text: str) -> list[Card]:
    """Cards written with commas or spaces between them.

    >>> parse_cards("7S, 8D 9h")
    [Card('7S'), Card('8D'), Card('9H')]
    """
    return [Card.parse(t) for t in text.replace(",", " ").split()]
