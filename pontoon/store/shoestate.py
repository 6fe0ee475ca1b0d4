"""A shoe's exact state as text, so that a round interrupted by a crash resumes with the same
cards in the same order (and, for a seeded shoe, the same shuffles after it).

This is the table's secret: it is stored apart from the events (``shoe_states``) and never
shown, replayed or exported. It holds the shoe committed to at the last shuffle — its order,
next card first, its salt (docs/operators/fairness.md) — and how many of its cards have left, so
that a table restarted after a crash reveals the right shoe later; the cards still in the
shoe are the order less those. Cards are one character each (:data:`CODES`): a six-deck
shoe's text is at most about 1 KB, and sealed (Fernet) it stays under PostgreSQL's 2 KB TOAST
threshold (docs/operators/fairness.md, Storage).

>>> import numpy as np
>>> from pontoon.rules import load_rules
>>> rules = load_rules("nz-pontoon", {"decks": "1"})
>>> shoe = Shoe(rules, np.random.default_rng(3))
>>> shoe.start_round()
>>> twin = restore(rules, snapshot(shoe), None)
>>> [twin.draw() for _ in range(5)] == [shoe.draw() for _ in range(5)]
True
>>> twin.start_round(); shoe.start_round()
>>> twin.remaining == shoe.remaining and twin.discards == shoe.discards
True
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import Any

import numpy as np

from pontoon.cards import ALL_CARDS, Card
from pontoon.errors import InputError
from pontoon.memo import Memo
from pontoon.rules import RuleSet, rules_json
from pontoon.shoe import Shoe, ShoeState, Shuffler, seeded, shoe_text

_LAST: weakref.WeakKeyDictionary[Shoe, tuple[tuple[Any, ...], str]] = weakref.WeakKeyDictionary()


CODES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""A card in a stored shoe: the character at its place in
:data:`~pontoon.cards.ALL_CARDS` (spades A-K, then hearts, diamonds, clubs)."""
_CODE = dict(zip(ALL_CARDS, CODES, strict=True))
_CARD = dict(zip(CODES, ALL_CARDS, strict=True))


def compact(cards: tuple[Card, ...] | list[Card]) -> str:
    """Cards one character each (:data:`CODES`).

    >>> compact([Card.parse("AS"), Card.parse("KC")]), uncompact("Az")
    ('Az', (Card('AS'), Card('KC')))
    """
    return "".join(map(_CODE.__getitem__, cards))


def uncompact(text: str) -> tuple[Card, ...]:
    """The cards :func:`compact` wrote; :class:`KeyError` for a character that is none."""
    return tuple([_CARD[c] for c in text])


def snapshot(shoe: Shoe) -> str:
    """The shoe as JSON: the order committed to at its last shuffle (next card first), how
    many of its cards have left, the salt, the discard rack, the cutting card, the shuffle
    count and, for a seeded NumPy generator, the generator's state. A shoe with no
    commitment open (stored before commitments, or revealed) has its cards as its order
    and none left, and no salt. A table writes its shoe with
    every event; the text is made again only when the shoe has moved (:attr:`Shoe.position`)
    or its generator has."""
    rng: dict[str, Any] | None = None
    if isinstance(shoe.rng, np.random.Generator):
        rng = dict(shoe.rng.bit_generator.state)
    key = (shoe.position, repr(rng))
    last = _LAST.get(shoe)
    if last is not None and last[0] == key:
        return last[1]
    text = _text(shoe, rng)
    _LAST[shoe] = (key, text)
    return text


_ORDERS: weakref.WeakKeyDictionary[Shoe, tuple[tuple[Card, ...], str]] = (
    weakref.WeakKeyDictionary()
)  # each shoe's committed order as :func:`compact` wrote it (the same until its next shuffle)


def _order(shoe: Shoe, order: tuple[Card, ...]) -> str:
    """``compact(order)``, made once per committed order (the whole shoe: 312 cards of six
    decks, every write of the shoe would make it again)."""
    last = _ORDERS.get(shoe)
    if last is None or last[0] is not order:
        last = _ORDERS[shoe] = (order, compact(order))
    return last[1]


def _text(shoe: Shoe, rng: dict[str, Any] | None) -> str:
    state = shoe.state()
    committed = state.salt is not None
    order = state.order if committed else state.cards
    text = _order(shoe, order) if committed else compact(order)
    data: dict[str, Any] = {"order": text, "left": len(order) - len(state.cards)}
    if state.salt is not None:
        data["salt"] = state.salt.hex()
    data |= {
        "rack": compact(state.discards),
        "behind_cut": state.behind_cut,
        "cut_reached": state.cut_reached,
        "shuffles": state.shuffles,
    }
    if state.revealed:
        data["revealed"] = True
    data["rng"] = rng
    rest = json.dumps(data, separators=(",", ":"))
    return f'{{"rules_sha256":"{_digest(rules_json(shoe.rules, sort_keys=True))}",{rest[1:]}'


def advance(state: str, drawn: int) -> str:
    """The :func:`snapshot` of the shoe ``state`` describes once ``drawn`` more cards have
    been drawn from it (no shuffle between: a table writes its shoe whole whenever anything
    else has changed, and after plain draws only their count, :class:`~pontoon.shoe.Place`).
    The cards go from the end of the list, and the cutting card (8.7) is reached as
    :meth:`Shoe.draw <pontoon.shoe.Shoe.draw>` reaches it: when a card is drawn with no more
    than ``behind_cut`` cards left.

    >>> import numpy as np
    >>> from pontoon.rules import load_rules
    >>> shoe = Shoe(load_rules("nz-pontoon", {"decks": "1"}), np.random.default_rng(5))
    >>> shoe.start_round(); text = snapshot(shoe)
    >>> _ = [shoe.draw() for _ in range(40)]
    >>> advance(text, 40) == snapshot(shoe) and shoe.state().cut_reached
    True
    """
    if drawn == 0:
        return state
    try:
        data = json.loads(state)
        if "order" in data:  # the order committed to: more of its cards have left
            size, gone = len(data["order"]), int(data["left"])
            left = size - gone - drawn
            if drawn < 0 or left < 0:
                raise ValueError(f"{drawn} cards cannot be drawn from {size - gone}")
            data["left"] = gone + drawn
        else:  # stored before commitments: the cards themselves, next card last
            cards = data["cards"].split()
            left = len(cards) - drawn
            if drawn < 0 or left < 0:
                raise ValueError(f"{drawn} cards cannot be drawn from {len(cards)}")
            data["cards"] = " ".join(cards[:left])
        data["cut_reached"] = bool(data["cut_reached"]) or left + 1 <= int(data["behind_cut"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"the stored shoe cannot be read: {exc}") from None
    return json.dumps(data, separators=(",", ":"))


_DIGESTS: Memo[str, str] = Memo()  # a rule set's JSON -> its SHA-256


def _digest(text: str) -> str:
    """The SHA-256 (hex) of a rule set's JSON, made once per text object (as
    :func:`~pontoon.rules.rules_json` keeps it). A shoe names its rules by it: the rules
    themselves (about 1.2 KB) took a six-deck shoe's sealed text past PostgreSQL's TOAST
    threshold, and the text is written with every event."""
    return _DIGESTS.get(text, _sha256)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(c) for c in text.split())


def matches(rules: RuleSet, state: str) -> bool:
    """Whether a stored shoe belongs to this rule set (named by its digest, or — a shoe
    stored before the digest — by the whole rules)."""
    mine = rules_json(rules, sort_keys=True)
    try:
        data = json.loads(state)
        if "rules_sha256" in data:
            return bool(data["rules_sha256"] == _digest(mine))
        return bool(data["rules"] == mine)
    except (ValueError, KeyError, TypeError):
        return False


def restore(rules: RuleSet, state: str, seed: int | None) -> Shoe:
    """The shoe a :func:`snapshot` describes. Its generator is the stored one when there is
    one, else ``seeded(seed)`` (a secure generator for ``None``). A shoe stored before
    commitments (its ``cards`` and ``discards`` as codes) comes back with none open: its next
    shuffle reveals nothing, and commits."""
    try:
        data = json.loads(state)
        rng: Shuffler
        if data.get("rng"):
            bitgen = getattr(np.random, data["rng"]["bit_generator"])()
            bitgen.state = data["rng"]
            rng = np.random.Generator(bitgen)
        else:
            rng = seeded(seed)
        saved = _state(data)
        return Shoe.from_state(rules, saved, rng)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"the stored shoe cannot be read: {exc}") from None


def _state(data: dict[str, Any]) -> ShoeState:
    if "order" not in data:  # stored before commitments
        return ShoeState(
            _cards(data["cards"])[::-1],  # stored next card last
            _cards(data["discards"]),
            int(data["behind_cut"]),
            bool(data["cut_reached"]),
            int(data["shuffles"]),
        )
    order, left = uncompact(data["order"]), int(data["left"])
    if not 0 <= left <= len(order):
        raise ValueError(f"{left} cards cannot have left {len(order)}")
    salt = bytes.fromhex(data["salt"]) if "salt" in data else None
    return ShoeState(
        order[left:],
        uncompact(data["rack"]),
        int(data["behind_cut"]),
        bool(data["cut_reached"]),
        int(data["shuffles"]),
        order if salt is not None else (),
        salt,
        bool(data.get("revealed", False)),
    )


def disclosure(state: str) -> str | None:
    """The text of the shoe a stored state committed to (:func:`~pontoon.shoe.shoe_text`),
    or None when it has no commitment open: what a table reveals when it puts a stored shoe
    aside (its rules changed) rather than deal from it."""
    try:
        data = json.loads(state)
        if "order" not in data or "salt" not in data:
            return None
        saved = _state(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"the stored shoe cannot be read: {exc}") from None
    assert saved.salt is not None
    return shoe_text(saved.order, saved.salt, len(saved.order) - saved.behind_cut)
