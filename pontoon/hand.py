"""Hand values: totals, soft and hard, pontoon, bonus patterns. Small pure functions.

>>> from pontoon.cards import parse_cards
>>> total(parse_cards("AS 6D")), is_soft(parse_cards("AS 6D"))
(17, True)
>>> total(parse_cards("AS 6D KC")), is_soft(parse_cards("AS 6D KC"))
(17, False)
>>> is_pontoon(parse_cards("AH KD")), is_pontoon(parse_cards("AH 9D 5C"))
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from pontoon.cards import Card


def hard_total(cards: Sequence[Card]) -> int:
    """The total with every ace counting 1."""
    return sum(c.value for c in cards)


def total(cards: Sequence[Card]) -> int:
    """The point total: an ace counts 11 unless that takes the hand over 21."""
    hard = 0
    ace = False
    for c in cards:
        hard += c.value
        ace = ace or c.value == 1
    return hard + 10 if ace and hard <= 11 else hard


def is_soft(cards: Sequence[Card]) -> bool:
    """True while an ace counts 11."""
    hard = hard_total(cards)
    return hard <= 11 and any(c.value == 1 for c in cards)


def is_pontoon(cards: Sequence[Card]) -> bool:
    """Two cards, an ace and a ten-value card (J, Q or K in a Spanish deck)."""
    return len(cards) == 2 and {cards[0].value, cards[1].value} == {1, 10}


def is_bust(cards: Sequence[Card]) -> bool:
    return hard_total(cards) > 21


def is_pair(a: Card, b: Card, by: str) -> bool:
    """Whether two cards may be split: same rank, or (``by="value"``) same value."""
    return a.rank == b.rank if by == "rank" else a.value == b.value


def three_card_bonus(cards: Sequence[Card]) -> str | None:
    """``"spades"``, ``"suited"`` or ``"mixed"`` for a 6-7-8 or 7-7-7 of exactly three cards.

    >>> from pontoon.cards import parse_cards
    >>> three_card_bonus(parse_cards("8S 6S 7S")), three_card_bonus(parse_cards("7H 7H 7D"))
    ('spades', 'mixed')
    """
    if len(cards) != 3:
        return None
    ranks = sorted(c.rank for c in cards)
    if ranks not in ([6, 7, 8], [7, 7, 7]):
        return None
    suits = {c.suit for c in cards}
    if suits == {"S"}:
        return "spades"
    return "suited" if len(suits) == 1 else "mixed"


def is_super_bonus_cards(cards: Sequence[Card]) -> bool:
    """Three sevens of one suit (11.2); the other conditions are the round's to check."""
    return (
        len(cards) == 3
        and all(c.rank == 7 for c in cards)
        and cards[0].suit == cards[1].suit == cards[2].suit
    )


def describe(cards: Sequence[Card], *, from_split: bool = False, natural: str = "pontoon") -> str:
    """A total as the dealer announces it: ``pontoon``, ``21``, ``soft 17``, ``hard 15`` or
    ``bust 24``. Two cards making 21 after a split are 21, not pontoon.

    >>> from pontoon.cards import parse_cards
    >>> [describe(parse_cards(t)) for t in ("AS KD", "AS 6D", "9S 6D", "KS QD 5C")]
    ['pontoon', 'soft 17', 'hard 15', 'bust 25']
    >>> describe(parse_cards("AS KD"), from_split=True)
    '21'
    """
    if not from_split and is_pontoon(cards):
        return natural
    t = total(cards)
    if t > 21:
        return f"bust {t}"
    if t == 21:
        return "21"
    return f"soft {t}" if is_soft(cards) else f"hard {t}"
