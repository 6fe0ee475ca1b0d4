"""Revealed shoes, recorded (docs/operators/fairness.md): the ``disclose`` event a table writes when
it reveals a shoe outside a round, the shoes a table revealed last, and one revealed shoe with
the cards the record shows leaving it, for a player to check (the table server's
``/api/tables/{name}/shoes/{seq}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select

from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.round import cards_left
from pontoon.rules import RuleSet
from pontoon.shoe import commitment_of
from pontoon.store.commitments import check
from pontoon.store.db import Store, event_of
from pontoon.store.recorder import TableLog
from pontoon.store.schema import events, rounds
from pontoon.store.shoestate import disclosure, matches
from pontoon.vocab import EventKind

DISCLOSE, SHUFFLE = EventKind.DISCLOSE, EventKind.SHUFFLE


def disclosed(text: str, by: str | None = None) -> Event:
    """The event that reveals a shoe outside any round: the table closed (``by`` who closed
    it), or a stored shoe set aside (:func:`set_aside`)."""
    return Event(DISCLOSE, detail=text, by=by)


def set_aside(log: TableLog, rules: RuleSet) -> str | None:
    """The text of the table's stored shoe when the table will not deal from it — it belongs
    to other rules (the table's rule set changed), so the table takes a new shoe — and a
    commitment to it is open: the table reveals it (:func:`disclosed`) with its new shoe's
    first write. None when the stored shoe is the table's, or holds no commitment (or cannot
    be read: then nothing can be revealed)."""
    state = log.shoe_state
    if state is None or matches(rules, state[1]):
        return None
    try:
        return disclosure(state[1])
    except InputError:
        return None


@dataclass(frozen=True, slots=True)
class Revealed:
    """A shoe revealed at ``table``: its ``disclose`` event's ``seq`` and round (None: outside
    a round), and the SHA-256 of the text revealed (the commitment it answers)."""

    seq: int
    round_id: int | None
    commitment: str

    @classmethod
    def of(cls, event: Event, seq: int, round_id: int | None) -> Revealed:
        return cls(seq, round_id, commitment_of(event.detail or ""))

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "round": self.round_id, "commitment": self.commitment}


def recent(store: Store, table: str, limit: int = 5) -> list[Revealed]:
    """The shoes ``table`` revealed last, oldest first (a shoe set aside unrevealed, its key
    lost, has no text to check: not among them)."""
    e = events.c
    with store.read() as conn:
        found = conn.execute(
            select(events)
            .where(and_(e.table_id == table, e.kind == str(DISCLOSE), e.detail.is_not(None)))
            .order_by(e.seq.desc())
            .limit(limit)
        ).all()
    return [Revealed.of(event_of(r), int(r.seq), r.round_id) for r in reversed(found)]


def chain_of(store: Store, table: str) -> list[tuple[int, int | None, Event]]:
    """``table``'s whole chain in order, as :func:`~pontoon.store.commitments.check` reads it:
    (seq, round id or None, event)."""
    e = events.c
    with store.read() as conn:
        found = conn.execute(select(events).where(e.table_id == table).order_by(e.seq))
        return [(int(r.seq), r.round_id, event_of(r)) for r in found]


def shoe_record(store: Store, table: str, seq: int) -> dict[str, Any]:
    """The shoe ``table`` revealed at event ``seq``: the commitment (and where it was made),
    the text revealed, the cards the record shows leaving that shoe in order (each with its
    event), the round status of the reveal (``open``: a round still in play; its hole card
    may be in the text) and :func:`~pontoon.store.commitments.check`'s problems.
    :class:`InputError` when event ``seq`` of ``table`` reveals no shoe."""
    e = events.c
    with store.read() as conn:
        row = conn.execute(select(events).where(and_(e.table_id == table, e.seq == seq))).first()
        if row is None or row.kind != DISCLOSE:
            raise InputError(f"table {table!r} event {seq} reveals no shoe")
        first = conn.execute(
            select(e.seq)
            .where(
                and_(
                    e.table_id == table, e.kind == str(SHUFFLE), e.seq < seq, e.detail.is_not(None)
                )
            )
            .order_by(e.seq.desc())
            .limit(1)
        ).scalar()
        chain = [
            (int(r.seq), r.round_id, event_of(r))
            for r in conn.execute(
                select(events)
                .where(and_(e.table_id == table, e.seq >= (first or seq), e.seq <= seq))
                .order_by(e.seq)
            )
        ]
        status = None
        if row.round_id is not None:
            status = conn.execute(
                select(rounds.c.status).where(rounds.c.id == row.round_id)
            ).scalar()
    shown = [(s, rid, ev) for s, rid, ev in chain[1:-1]] if first is not None else []
    cards = [
        {"seq": shown[i][0], "round": shown[i][1], "kind": str(shown[i][2].kind), "card": c.code}
        for i, c in cards_left([ev for _, _, ev in shown])
    ]
    opening = chain[0][2] if first is not None else None
    return {
        "table": table,
        "seq": seq,
        "round": row.round_id,
        "status": status,
        "commitment": opening.detail if opening is not None else None,
        "committed_at": first,
        "text": row.detail,
        "cards": cards,
        "problems": check(table, chain),
    }


__all__ = ["Revealed", "chain_of", "disclosed", "recent", "set_aside", "shoe_record"]
