"""The shoe: shuffle (generator injected), cut, cutting card, burn card, discard rack.

Cards are conserved: ``shoe.remaining + cards on the layout + shoe.discards`` is always the
full pack. The next card is the end of ``_cards`` so that drawing is O(1).

>>> import numpy as np
>>> from pontoon.rules import load_rules
>>> shoe = Shoe(load_rules("nz-pontoon", {"decks": "1"}), np.random.default_rng(7))
>>> shoe.start_round()
>>> len(shoe.remaining) + len(shoe.discards)     # one card burnt (8.1)
48
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from pontoon.cards import Card, pack
from pontoon.errors import InputError
from pontoon.rules import RuleSet


class Shuffler(Protocol):
    """Anything with ``shuffle(list)``: ``secrets.SystemRandom()``, ``random.Random(seed)`` or
    ``numpy.random.default_rng(seed)``."""

    def shuffle(self, x: Any, /) -> None: ...


def seeded(seed: int | None) -> Shuffler:
    """A seeded generator for tests and simulation, or a secure one when ``seed`` is None."""
    if seed is None:
        return secrets.SystemRandom()
    return np.random.default_rng(seed)


Listener = Callable[[str, str, Card | None], None]


class ShoeEmpty(InputError):
    """Every card of the pack is on the layout: neither the shoe nor the discard rack has one."""


class CardSource(Protocol):
    """Where a round's cards come from: a real :class:`Shoe` or a scripted list.

    ``checkpoint()`` and ``rollback(mark)`` let a round take back the cards of a move that
    could not be completed, so that a refused move changes nothing."""

    listener: Listener | None

    def start_round(self) -> None: ...

    def shuffle(self, rule: str) -> None: ...

    def draw(self) -> Card: ...

    def discard(self, cards: Sequence[Card]) -> None: ...

    def checkpoint(self) -> object: ...

    def rollback(self, mark: Any) -> None: ...


class ShoeState(NamedTuple):
    """Everything about a shoe but its generator: what the store keeps to resume a table."""

    cards: tuple[Card, ...]  # next card first
    discards: tuple[Card, ...]
    behind_cut: int  # cards lying behind the cutting card
    cut_reached: bool
    shuffles: int


class Place(NamedTuple):
    """Where a shoe stood (:meth:`Shoe.place`), to count the cards drawn since
    (:meth:`Shoe.drawn_since`). It holds the shoe's lists themselves, so that neither can be
    mistaken for a new list made later."""

    cards: list[Card]
    left: int  # cards in the shoe
    rack: list[Card]
    racked: int
    behind_cut: int
    shuffles: int


class Shoe:
    """A shoe of ``rules.decks`` decks with a cutting card at ``rules.penetration``.

    ``listener(kind, rule, card)`` hears every shuffle (``card`` None) and burnt card, so a
    round can record them as events.
    """

    def __init__(self, rules: RuleSet, rng: Shuffler | None = None) -> None:
        self.rules = rules
        self.rng: Shuffler = rng if rng is not None else secrets.SystemRandom()
        self.full_pack = pack(rules.deck, rules.decks)
        self._cards: list[Card] = []
        self.discards: list[Card] = list(self.full_pack)
        self.behind_cut = 0  # cards lying behind the cutting card
        self.cut_reached = False
        self.listener: Listener | None = None
        self.shuffles = 0
        self._drawn: list[Card] | None = None  # cards drawn since the last checkpoint

    @classmethod
    def from_state(cls, rules: RuleSet, state: ShoeState, rng: Shuffler | None = None) -> Shoe:
        """The shoe :meth:`state` described (with a new generator unless ``rng`` is given)."""
        shoe = cls(rules, rng)
        shoe._cards = list(reversed(state.cards))
        shoe.discards = list(state.discards)
        shoe.behind_cut = state.behind_cut
        shoe.cut_reached = state.cut_reached
        shoe.shuffles = state.shuffles
        return shoe

    def state(self) -> ShoeState:
        return ShoeState(
            tuple(reversed(self._cards)),
            tuple(self.discards),
            self.behind_cut,
            self.cut_reached,
            self.shuffles,
        )

    @property
    def position(self) -> tuple[int, ...]:
        """A key that changes whenever :meth:`state` does: a card leaves the shoe only by
        :meth:`draw`, comes back only by :meth:`rollback` (to exactly the state marked) or a
        shuffle (a new card list, counted), and the rack only grows until a shuffle empties it.

        >>> from pontoon.rules import load_rules
        >>> shoe = Shoe(load_rules("nz-pontoon"), seeded(1))
        >>> shoe.start_round(); before = shoe.position
        >>> mark = shoe.checkpoint(); _ = shoe.draw(); shoe.position == before
        False
        >>> shoe.rollback(mark); shoe.position == before
        True
        """
        cards, rack = self._cards, self.discards
        return (id(cards), len(cards), id(rack), len(rack), self.behind_cut, self.cut_reached,
                self.shuffles)  # fmt: skip

    def place(self) -> Place:
        """Where the shoe stands now (see :meth:`drawn_since`)."""
        cards, rack = self._cards, self.discards
        return Place(cards, len(cards), rack, len(rack), self.behind_cut, self.shuffles)

    def drawn_since(self, place: Place) -> int | None:
        """How many cards were drawn since ``place``, when drawing is all that happened (no
        shuffle, nothing racked: the shoe is then ``place`` with that many cards drawn); else
        None. A card leaves the card list only from its end and comes back only by
        :meth:`rollback` (the same cards, to the same list), so the list's first cards are
        those of ``place``.

        >>> from pontoon.rules import load_rules
        >>> shoe = Shoe(load_rules("nz-pontoon"), seeded(1))
        >>> shoe.start_round(); here = shoe.place()
        >>> _ = shoe.draw(); _ = shoe.draw(); shoe.drawn_since(here)
        2
        >>> shoe.discard([shoe.draw()]); shoe.drawn_since(here) is None
        True
        """
        if (
            self._cards is not place.cards
            or self.discards is not place.rack
            or len(self.discards) != place.racked
            or self.shuffles != place.shuffles
            or self.behind_cut != place.behind_cut
            or len(self._cards) > place.left
        ):
            return None
        return place.left - len(self._cards)

    def checkpoint(self) -> object:
        """A mark to :meth:`rollback` to. Cheap: nothing is copied; cards drawn after it are
        noted, and a shuffle after it (16.7) shuffles a copy of the discard rack."""
        self._drawn = []
        return (
            self._cards,
            len(self._cards),
            self.discards,
            len(self.discards),
            self.behind_cut,
            self.cut_reached,
            self.shuffles,
        )

    def rollback(self, mark: Any) -> None:
        """The cards and the rack as they were at ``mark``; the generator is not wound back."""
        cards, count, discards, rack, self.behind_cut, self.cut_reached, self.shuffles = mark
        drawn = self._drawn or []
        cards.extend(reversed(drawn[: count - len(cards)]))
        del discards[rack:]
        self._cards, self.discards, self._drawn = cards, discards, None

    @property
    def remaining(self) -> list[Card]:
        """The cards still in the shoe, next card first."""
        return self._cards[::-1]

    def _shuffle(self, cards: MutableSequence[Card], rule: str) -> None:
        self.rng.shuffle(cards)
        self.shuffles += 1
        if self.listener:
            self.listener("shuffle", rule, None)

    def shuffle(self, rule: str = "7") -> None:
        """Shuffle every card not on the layout, cut, insert the cutting card, burn (8.1)."""
        cards = self._cards + self.discards
        self.discards = []
        self._shuffle(cards, rule)
        self._cards = cards
        self.behind_cut = len(cards) - round(len(cards) * self.rules.penetration)
        self.cut_reached = False
        if self.rules.burn_card and cards:
            burnt = cards.pop()
            self.discards.append(burnt)
            if self.listener:
                self.listener("burn", "8.1", burnt)

    def start_round(self) -> None:
        """Reshuffle before a round when the cutting card has come out (8.7) or is next (8.8)."""
        if self.shuffles == 0:
            self.shuffle("7")
        elif self.cut_reached:
            self.shuffle("8.7")
        elif len(self._cards) <= self.behind_cut:
            self.shuffle("8.8")

    def draw(self) -> Card:
        """The next card. When the shoe runs out mid-round the discard rack is shuffled and
        play goes on (16.7)."""
        cards = self._cards
        if not cards:
            if not self.discards:
                raise ShoeEmpty("no card is left in the shoe or the discard rack")
            cards = self.discards[:]  # a copy: a rollback finds the rack as it was
            self.discards = []
            self._shuffle(cards, "16.7")
            self._cards = cards
            self.behind_cut = 0
        if len(cards) <= self.behind_cut:
            self.cut_reached = True
        card = cards.pop()
        if self._drawn is not None:
            self._drawn.append(card)
        return card

    def discard(self, cards: Sequence[Card]) -> None:
        """Cards from the layout to the discard rack, in order (8.6)."""
        self.discards.extend(cards)


ShoeNote = tuple[str, str, Card | None]


class ScriptedCards:
    """The cards of a scripted or replayed round, in the order they leave the shoe (no burn
    card). ``items`` may hold shoe events too, ``(kind, rule, card)`` — shuffles and burnt
    cards from a recorded round — which are told to the listener where they happened."""

    def __init__(self, items: Sequence[Card | ShoeNote]) -> None:
        self.items = list(items)
        self.position = 0
        self.discards: list[Card] = []
        self.listener: Listener | None = None

    def _notes(self) -> None:
        while self.position < len(self.items):
            item = self.items[self.position]
            if isinstance(item, Card):
                return
            self.position += 1
            if self.listener:
                self.listener(*item)

    def start_round(self) -> None:
        self._notes()

    def shuffle(self, rule: str) -> None:
        """A shuffle the round calls for (16.7, 16.9, 16.10): the recorded one when replaying,
        else a new note."""
        if self.position < len(self.items) and not isinstance(self.items[self.position], Card):
            self._notes()
        elif self.listener:
            self.listener("shuffle", rule, None)

    def draw(self) -> Card:
        self._notes()
        if self.position >= len(self.items):
            raise InputError(
                f"too few cards: the shoe lists {len(self.items)} and the round needs more"
            )
        card = self.items[self.position]
        assert isinstance(card, Card)
        self.position += 1
        return card

    def discard(self, cards: Sequence[Card]) -> None:
        self.discards.extend(cards)

    def checkpoint(self) -> object:
        return self.position, len(self.discards)

    def rollback(self, mark: Any) -> None:
        self.position, rack = mark
        del self.discards[rack:]
