"""The shoe: shuffle (generator injected), cut, cutting card, burn card, discard rack; and
the commitment to each shoe, made before its first card leaves it and revealed when it ends
(docs/operators/fairness.md).

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

import hashlib
import random
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple, Protocol

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


Listener = Callable[[str, str, Card | None, str | None], None]
"""``listener(kind, rule, card, detail)``: a shoe's event — ``shuffle`` (``detail`` the
commitment to the new shoe, or None), ``disclose`` (``detail`` the ended shoe's
:func:`shoe_text`) or ``burn`` (``card``)."""

FORM: Final = "pontoon shoe 1"  # the first line of a shoe's text (its format and version)
SALT_BYTES: Final = 32


def shoe_text(order: Sequence[Card], salt: bytes, cut: int) -> str:
    """A committed shoe as ASCII text (docs/operators/fairness.md): salt in hex, the cutting card's
    place (the number of cards in front of it) and every card, next card first — the burn
    card first. The commitment is the SHA-256 of exactly these bytes (:func:`commitment_of`).

    >>> from pontoon.cards import parse_cards
    >>> print(shoe_text(parse_cards("7H KD AS"), bytes(32), 2), end="")
    pontoon shoe 1
    salt 0000000000000000000000000000000000000000000000000000000000000000
    cut 2
    cards 7H KD AS
    """
    return f"{FORM}\nsalt {salt.hex()}\ncut {cut}\ncards {' '.join(c.code for c in order)}\n"


def commitment_of(text: str) -> str:
    """The commitment to a shoe: the SHA-256 (hex) of its text's bytes (ASCII), what
    ``sha256sum`` prints for a file holding the text."""
    return hashlib.sha256(text.encode()).hexdigest()


class ShoeText(NamedTuple):
    """A shoe's text read back (:func:`read_shoe_text`)."""

    salt: bytes
    cut: int
    cards: tuple[Card, ...]


def read_shoe_text(text: str) -> ShoeText:
    r"""The salt, cut and cards of a :func:`shoe_text`; :class:`ValueError` naming what is
    wrong when the text is not exactly one (so that two texts never read as one shoe).

    >>> read_shoe_text(shoe_text([Card.parse("AS")], bytes(32), 1)).cards
    (Card('AS'),)
    >>> read_shoe_text("pontoon shoe 1\nsalt 00\ncut 1\ncards AS\n")
    Traceback (most recent call last):
    ...
    ValueError: the salt is not 64 hex digits
    """
    lines = text.split("\n")
    if len(lines) != 5 or lines[4] != "":
        raise ValueError("not four lines each ended by a newline")
    form, salt, cut, cards = lines[:4]
    if form != FORM:
        raise ValueError(f"the first line is not {FORM!r}")
    hexed = salt.removeprefix("salt ")
    if not salt.startswith("salt ") or len(hexed) != 2 * SALT_BYTES or hexed != hexed.lower():
        raise ValueError(f"the salt is not {2 * SALT_BYTES} hex digits")
    try:
        raw = bytes.fromhex(hexed)
    except ValueError:
        raise ValueError(f"the salt is not {2 * SALT_BYTES} hex digits") from None
    place = cut.removeprefix("cut ")
    if not cut.startswith("cut ") or not place.isdigit() or place != str(int(place)):
        raise ValueError("the cut is not a number")
    codes = cards.removeprefix("cards ").split(" ")
    if not cards.startswith("cards ") or "" in codes:
        raise ValueError("the cards are not codes each after one space")
    try:
        order = tuple(Card.parse(c) for c in codes)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    if any(c.code != code for c, code in zip(order, codes, strict=True)):
        raise ValueError("a card is not written in capitals")
    if int(place) > len(order):
        raise ValueError(f"the cut {place} is past the last of {len(order)} cards")
    return ShoeText(raw, int(place), order)


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
    """Everything about a shoe but its generator: what the store keeps to resume a table.
    ``order`` and ``salt``: the shoe committed to at its last shuffle (its cards in the order
    they were then, next card first; ``cards`` are its last ones), or ``()`` and None when
    there is no commitment open; ``revealed``: the shoe was revealed without a shuffle (the
    table closed) and is shuffled (7) before it deals again."""

    cards: tuple[Card, ...]  # next card first
    discards: tuple[Card, ...]
    behind_cut: int  # cards lying behind the cutting card
    cut_reached: bool
    shuffles: int
    order: tuple[Card, ...] = ()
    salt: bytes | None = None
    revealed: bool = False


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
    salt: bytes | None = None  # the commitment open then (its salt)


class Shoe:
    """A shoe of ``rules.decks`` decks with a cutting card at ``rules.penetration``.

    ``listener(kind, rule, card, detail)`` hears every shuffle (``card`` None, ``detail`` the
    commitment to the new shoe), the previous shoe revealed at it (``disclose``, ``detail``
    its text) and every burnt card, so a round can record them as events.

    At each shuffle, once the cards are shuffled and the cutting card placed and before the
    first card (the burn card, 8.1) leaves, the shoe commits to its order: the SHA-256 of
    :func:`shoe_text` (the order, a secret salt of 256 bits and the cut). The order and salt
    stay secret until the shoe ends: the next shuffle reveals them first, as does
    :meth:`reveal` (the table closes). A seeded NumPy generator's salt is derived from its
    state and the shuffle count (same seed, same commitments; nothing drawn from it), any
    other shoe's is ``secrets.token_bytes(32)``.

    >>> from pontoon.rules import load_rules
    >>> shoe = Shoe(load_rules("nz-pontoon", {"decks": "1"}), seeded(7))
    >>> heard = []
    >>> shoe.listener = lambda kind, rule, card, detail: heard.append((kind, rule, detail))
    >>> shoe.start_round(); shoe.shuffle("8.7")
    >>> [(kind, rule) for kind, rule, _ in heard]
    [('shuffle', '7'), ('burn', '8.1'), ('disclose', '8.7'), ('shuffle', '8.7'), ('burn', '8.1')]
    >>> commitment_of(heard[2][2]) == heard[0][2] and shoe.commitment == heard[3][2]
    True
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
        # the shoe committed to at the last shuffle (next card first) and its salt; None
        # when no commitment is open (a new shoe, one stored before commitments, revealed)
        self._order: tuple[Card, ...] | None = None
        self._salt: bytes | None = None
        self._commitment: tuple[bytes, str] | None = None  # (salt, commitment), made once
        self.revealed = False  # revealed without a shuffle (the table closed): shuffle (7)

    @classmethod
    def from_state(cls, rules: RuleSet, state: ShoeState, rng: Shuffler | None = None) -> Shoe:
        """The shoe :meth:`state` described (with a new generator unless ``rng`` is given)."""
        shoe = cls(rules, rng)
        shoe._cards = list(reversed(state.cards))
        shoe.discards = list(state.discards)
        shoe.behind_cut = state.behind_cut
        shoe.cut_reached = state.cut_reached
        shoe.shuffles = state.shuffles
        shoe.revealed = state.revealed
        if state.salt is not None:
            left = len(state.order) - len(state.cards)
            if left < 0 or state.order[left:] != state.cards or len(state.salt) != SALT_BYTES:
                raise InputError("the shoe's cards are not the last of the order committed to")
            shoe._order, shoe._salt = state.order, state.salt
        return shoe

    def state(self) -> ShoeState:
        return ShoeState(
            tuple(reversed(self._cards)),
            tuple(self.discards),
            self.behind_cut,
            self.cut_reached,
            self.shuffles,
            self._order or (),
            self._salt,
            self.revealed,
        )

    # ------------------------------------------------------------------ the commitment
    @property
    def commitment(self) -> str | None:
        """The commitment to the shoe in play (SHA-256 hex of its :func:`shoe_text`), made
        when it was shuffled; None when none is open."""
        salt = self._salt
        if salt is None:
            return None
        made = self._commitment
        if made is None or made[0] is not salt:
            text = self._text()
            assert text is not None
            made = self._commitment = (salt, commitment_of(text))
        return made[1]

    @property
    def left(self) -> int:
        """How many cards have left the shoe since it was committed to (the burn card too)."""
        return len(self._order) - len(self._cards) if self._order is not None else 0

    def _text(self) -> str | None:
        """The committed shoe's text: the secret until it is revealed."""
        if self._order is None or self._salt is None:
            return None
        return shoe_text(self._order, self._salt, len(self._order) - self.behind_cut)

    def reveal(self) -> str | None:
        """Reveal the shoe in play without shuffling (the table closes): its text, for the
        table to record (no listener hears it), or None when no commitment is open. The
        commitment is closed, and the shoe is shuffled (7) before it deals again."""
        text = self._text()
        if text is None:
            return None
        self._order = self._salt = None
        self.revealed = True
        return text

    def _new_salt(self) -> bytes:
        """A new shoe's salt: from a seeded generator's state and the shuffle count (nothing
        drawn from it: every later shuffle stays as it was), else 256 secure random bits."""
        rng = self.rng
        if isinstance(rng, np.random.Generator):
            state = repr(rng.bit_generator.state)  # (a third of the time of its JSON)
        elif type(rng) is random.Random:
            state = repr(rng.getstate())
        else:
            return secrets.token_bytes(SALT_BYTES)
        return hashlib.sha256(f"pontoon salt\n{state}\n{self.shuffles}".encode()).digest()

    @property
    def position(self) -> tuple[object, ...]:
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
                self.shuffles, self._salt, self.revealed)  # fmt: skip

    def place(self) -> Place:
        """Where the shoe stands now (see :meth:`drawn_since`)."""
        cards, rack = self._cards, self.discards
        return Place(cards, len(cards), rack, len(rack), self.behind_cut, self.shuffles, self._salt)

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
            or self._salt is not place.salt
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
            self._order,
            self._salt,
            self.revealed,
        )

    def rollback(self, mark: Any) -> None:
        """The cards and the rack as they were at ``mark`` (and the commitment: a shuffle
        taken back was never recorded); the generator is not wound back."""
        cards, count, discards, rack, self.behind_cut, self.cut_reached, self.shuffles = mark[:7]
        self._order, self._salt, self.revealed = mark[7:]
        drawn = self._drawn or []
        cards.extend(reversed(drawn[: count - len(cards)]))
        del discards[rack:]
        self._cards, self.discards, self._drawn = cards, discards, None

    @property
    def remaining(self) -> list[Card]:
        """The cards still in the shoe, next card first."""
        return self._cards[::-1]

    def _shuffle(self, cards: list[Card], rule: str, behind_cut: int) -> None:
        """Shuffle ``cards`` into the shoe with ``behind_cut`` cards behind the cutting card;
        reveal the shoe that ends (``disclose``), then commit to this one (``shuffle``)."""
        ended = self._text() if self.listener else None
        self.rng.shuffle(cards)
        self.shuffles += 1
        self._cards = cards
        self.behind_cut = behind_cut
        self._order = tuple(reversed(cards))
        self._salt = self._new_salt()
        self.revealed = False
        if self.listener:
            if ended is not None:
                self.listener("disclose", rule, None, ended)
            self.listener("shuffle", rule, None, self.commitment)

    def shuffle(self, rule: str = "7") -> None:
        """Shuffle every card not on the layout, cut, insert the cutting card, commit, burn
        (8.1)."""
        cards = self._cards + self.discards
        self.discards = []
        self.cut_reached = False
        self._shuffle(cards, rule, len(cards) - round(len(cards) * self.rules.penetration))
        if self.rules.burn_card and cards:
            burnt = cards.pop()
            self.discards.append(burnt)
            if self.listener:
                self.listener("burn", "8.1", burnt, None)

    def start_round(self) -> None:
        """Reshuffle before a round when the cutting card has come out (8.7) or is next (8.8);
        the first shuffle, and one after the shoe was revealed (the table closed), is 7's."""
        if self.shuffles == 0 or self.revealed:
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
            self._shuffle(cards, "16.7", 0)
        if len(cards) <= self.behind_cut:
            self.cut_reached = True
        card = cards.pop()
        if self._drawn is not None:
            self._drawn.append(card)
        return card

    def discard(self, cards: Sequence[Card]) -> None:
        """Cards from the layout to the discard rack, in order (8.6)."""
        self.discards.extend(cards)


ShoeNote = tuple[str, str, Card | None, str | None]


class ScriptedCards:
    """The cards of a scripted or replayed round, in the order they leave the shoe (no burn
    card). ``items`` may hold shoe events too, ``(kind, rule, card, detail)`` — shuffles,
    revealed shoes and burnt cards from a recorded round — which are told to the listener
    where they happened, exactly as recorded. It commits to nothing of its own: a shuffle
    it makes (not one replayed) has no commitment (``detail`` None)."""

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
            self.listener("shuffle", rule, None, None)

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
