"""Checks a table's shoe commitments (docs/operators/fairness.md): each shoe committed to at its
shuffle is revealed when it ends, the revealed text hashes to the commitment, and every card
the record shows leaving that shoe — burnt, dealt, the hole card, taken out by a procedure
(:func:`~pontoon.round.cards_left`) — is the next card of the revealed order.

:func:`check` reads one table's chain in order and returns the problems, one line each,
naming the table and the event (an empty list: every revealed shoe is honest). The shoe in
play at the end of the chain is committed to and not yet revealed: that is no problem.

>>> from pontoon.cards import parse_cards
>>> from pontoon.shoe import commitment_of, shoe_text
>>> text = shoe_text(parse_cards("7H KD AS 2C"), bytes(32), 3)
>>> chain = [
...     (1, 1, Event("shuffle", rule="7", detail=commitment_of(text))),
...     (2, 1, Event("burn", card="7H", rule="8.1")),
...     (3, 1, Event("deal", box=1, hand=0, card="KD", rule="8.2(a)")),
...     (4, 2, Event("disclose", rule="8.7", detail=text)),
... ]
>>> check("t1", chain)
[]
>>> dealt = (3, 1, Event("deal", box=1, hand=0, card="QD", rule="8.2(a)"))
>>> print(*check("t1", [*chain[:2], dealt, chain[3]]))  # doctest: +NORMALIZE_WHITESPACE
table 't1' event 4: the revealed shoe's card 2 is KD, but event 3 (round 1) shows QD leaving
it (the shoe committed to at event 1)
>>> other = (4, 2, Event("disclose", rule="8.7", detail=text.replace("KD", "QD")))
>>> print(*check("t1", [*chain[:3], other]))  # doctest: +NORMALIZE_WHITESPACE
table 't1' event 4: the revealed shoe hashes to 9361710d2d16f7a6…, not to the commitment made
at event 1 (1d5c4a34cc560a95…)
>>> print(*check("t1", [chain[0], (2, 2, chain[0][2])]))  # doctest: +NORMALIZE_WHITESPACE
table 't1' event 2: a new shoe is committed to while the shoe committed to at event 1 was never
revealed
>>> print(*check("t1", chain[3:]))
table 't1' event 4: a shoe is revealed, but none is committed to
"""

from __future__ import annotations

from collections.abc import Sequence

from pontoon.cards import Card
from pontoon.events import Event
from pontoon.round import cards_left
from pontoon.shoe import commitment_of, read_shoe_text
from pontoon.vocab import EventKind

SHUFFLE, DISCLOSE = EventKind.SHUFFLE, EventKind.DISCLOSE
LOST = "shoe-key-lost"
"""The ``rule`` of a ``disclose`` with no text: the shoe was set aside unrevealed, its key
lost for good (``pontoon rekey --discard-shoe``): no problem, but :func:`unrevealed` names it."""


def _short(digest: str) -> str:
    return f"{digest[:16]}…"


def check(table: str, events: Sequence[tuple[int, int | None, Event]]) -> list[str]:
    """The problems of ``table``'s shoe commitments, its chain given in order as (seq,
    round id or None, event): a revealed text that is malformed or does not hash to the
    commitment open; cards that left the shoe and are not the revealed order's first cards
    in order (the first that differs, with its event); a new shuffle while the shoe
    committed to before was never revealed; a shoe revealed while none is committed to."""
    out: list[str] = []
    where = f"table {table!r} event"
    left = dict(cards_left([e for _, _, e in events]))
    opened: tuple[int, str] | None = None  # (seq, commitment) of the shoe in play
    gone: list[tuple[int, int | None, Card]] = []  # the cards that left it: seq, round, card
    for i, (seq, rid, e) in enumerate(events):
        if e.kind == DISCLOSE and e.detail is None and e.rule == LOST:
            opened, gone = None, []
        elif e.kind == DISCLOSE:
            if opened is None:
                out.append(f"{where} {seq}: a shoe is revealed, but none is committed to")
            else:
                problem = _revealed(e.detail, opened, gone)
                if problem is not None:
                    out.append(f"{where} {seq}: {problem}")
            opened, gone = None, []
        elif e.kind == SHUFFLE:
            if opened is not None:
                new = "a new shoe is committed to" if e.detail else "the shoe is shuffled"
                out.append(
                    f"{where} {seq}: {new} while the shoe committed to at event {opened[0]} "
                    "was never revealed"
                )
            opened = (seq, e.detail) if e.detail else None
            gone = []
        elif i in left and opened is not None:
            gone.append((seq, rid, left[i]))
    return out


def _revealed(
    text: str | None, opened: tuple[int, str], gone: list[tuple[int, int | None, Card]]
) -> str | None:
    """What is wrong with the shoe ``text`` reveals, committed to as ``opened`` (seq,
    commitment), from which the cards ``gone`` left; None when nothing is."""
    try:
        shoe = read_shoe_text(text or "")
    except ValueError as exc:
        return f"the revealed shoe cannot be read: {exc}"
    digest = commitment_of(text or "")
    if digest != opened[1]:
        return (
            f"the revealed shoe hashes to {_short(digest)}, not to the commitment made at "
            f"event {opened[0]} ({_short(opened[1])})"
        )
    for n, (seq, rid, card) in enumerate(gone):
        in_round = f" (round {rid})" if rid is not None else ""
        if n >= len(shoe.cards):
            return (
                f"event {seq}{in_round} shows {card} leaving the shoe after all "
                f"{len(shoe.cards)} cards of its order (the shoe committed to at event "
                f"{opened[0]})"
            )
        if shoe.cards[n] is not card:
            return (
                f"the revealed shoe's card {n + 1} is {shoe.cards[n]}, but event {seq}"
                f"{in_round} shows {card} leaving it (the shoe committed to at event "
                f"{opened[0]})"
            )
    return None


def unrevealed(table: str, events: Sequence[tuple[int, int | None, Event]]) -> list[str]:
    """The shoes of ``table`` set aside unrevealed because their key was lost, one line each
    (what ``pontoon verify`` notes beside an intact store)."""
    return [
        f"table {table!r} event {seq}: a shoe was set aside unrevealed (its shoe key was lost: "
        "pontoon rekey --discard-shoe); its cards cannot be checked"
        for seq, _, e in events
        if e.kind == DISCLOSE and e.detail is None and e.rule == LOST
    ]


__all__ = ["LOST", "check", "unrevealed"]
