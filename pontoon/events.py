"""Frozen event records: the round's log (8.6), JSON in and out.

Every change of a round is one :class:`Event`. Kinds (:class:`pontoon.vocab.EventKind`), and
the fields each uses:

=============  ==========================================================================
``rules``      ``detail``: the rule set as JSON (first event of every round)
``shuffle``    ``rule``: 7 (first shuffle, or after the table closed), 8.7, 8.8, 16.7 (or
               16.9, 16.10, 15.10 ...); ``detail``: the commitment to the new shoe, the
               SHA-256 (hex) of its text (docs/operators/fairness.md), made before its first card
               leaves it (None for a scripted shoe, and in logs written before commitments)
``disclose``   the shoe that ends revealed: ``detail`` is its text (salt, cut, every card
               in order), ``rule`` the rule of the shuffle that ends it; just before that
               shuffle, or outside any round when the table closes (``by`` who closed it)
``burn``       ``card`` burnt face down (8.1)
``wager``      ``box``, ``player``, ``amount``: a wager placed before "No more bets" (8.2)
``deal``       ``card`` to ``box``/``hand`` (or the dealer when ``box`` is None)
``hole``       the dealer's face-down card in the peek game; ``reveal`` turns it up
``action``     ``box``, ``hand``, ``player``, ``detail`` (hit, stand, double, ...), ``amount``;
               a player behind's split says which hand(s) the wager follows in ``follow``;
               ``by`` is ``policy`` for a move the interrupted-round policy made for the player
``stake``      money from ``player`` onto the table (``amount``)
``return``     money from the table back to ``player``
``collect``    money from the table to the house
``pay``        winnings from the house to ``player``
``outcome``    ``box``, ``hand``, ``player``, ``detail`` (win, lose, ...), ``odds``
``discard``    the cards of ``box``/``hand`` go to the discard rack
``irregularity`` a section 16 (or Blackjack 15.5-15.11) procedure: ``detail`` names it,
               ``by`` is the dealer or the supervisor who applied it, ``card`` a card it moved;
               or the interrupted-round policy's (``interrupted-abandoned``,
               ``interrupted-failure``, ``by`` ``policy``, its ``rule`` naming the policy)
``replace``    a damaged ``card`` replaced at the end of the round (16.8)
``end``        the round is over
=============  ==========================================================================

>>> e = Event("deal", box=1, hand=0, card="AS", rule="8.2(a)")
>>> Event.from_json(e.to_json()) == e
True
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pontoon.errors import InputError


class Event(NamedTuple):
    """One change of a round. A named tuple: immutable, cheap to make, compared by value."""

    kind: str
    box: int | None = None
    hand: int | None = None
    player: str | None = None
    card: str | None = None
    amount: int | None = None
    detail: str | None = None
    odds: str | None = None
    rule: str | None = None
    by: str | None = None
    follow: str | int | None = None  # 15.3(d): a player behind's split: "both", 0 or 1

    def to_dict(self) -> dict[str, Any]:
        """The event as a dict without its empty fields."""
        return {f: v for f, v in zip(_FIELDS, self, strict=True) if v is not None}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        unknown = set(data) - set(_FIELDS)
        if unknown or "kind" not in data:
            raise InputError(f"not an event: {data!r}")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> Event:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not an event: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"not an event: {text!r}")
        return cls.from_dict(data)


_FIELDS = Event._fields


def upgraded(event: Event) -> Event:
    """The event as this version writes it. Logs written before 0.2 packed a player behind's
    split choice into ``detail`` (``"split/both"``, ``"split/1"``); it is ``follow`` now.

    >>> upgraded(Event("action", box=1, player="ben", detail="split/1")).follow
    1
    """
    if event.kind != "action" or event.follow is not None or not event.detail:
        return event
    word, slash, packed = event.detail.partition("/")
    if not slash:
        return event
    return event._replace(detail=word, follow=int(packed) if packed.isdigit() else packed)
