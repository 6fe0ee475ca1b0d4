"""The house's own record: every money and control row that no table's chain holds, chained.

A table's events carry its rounds and its money; the rows around them — accounts and their
roles (a password only as a digest of its hash), cashiers' deposits and withdrawals, players'
limits, time-outs and exclusions, the pit boss's table settings — are written by the cashier,
the pit and the players' own pages. Each such row is written through :class:`Recording`, which
appends its image to the chain of :data:`HOUSE` in the same transaction (an event ``record``
whose ``detail`` is ``{"table": NAME, "row": IMAGE}`` as canonical JSON), signed like any
table's head (:mod:`pontoon.store.heads`). ``pontoon verify`` then holds every such row to its
last chained image (:func:`check`): a deposit, a limit or a role changed by anyone who cannot
sign is caught as a table's event would be.

>>> image(accounts, {"name": "ana", "role": "player", "password_hash": "$argon2id$x",
...     "balance": 700, "created_at": "t"})["password"]
'35af7f470575d37c'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from sqlalchemy import Connection, Table, insert, select, update

from pontoon.events import Event
from pontoon.store import chain
from pontoon.store.heads import Head, Signed
from pontoon.store.schema import (
    accounts,
    events,
    play_limits,
    staff_actions,
    tables,
    wallet_entries,
)


class Store(Protocol):
    """What the house's record needs of a :class:`pontoon.store.db.Store` (which imports the
    modules that record through this one)."""

    def ensure_table(self, table: str) -> None: ...

    def write(self) -> AbstractContextManager[Connection]: ...

    def sign_and_insert(self, conn: Connection, heads: list[Head], at: str) -> Signed: ...

    def anchor(self, signed: list[Signed]) -> None: ...


HOUSE = "@house"
"""The chain of the house's own records (a table's name never starts with ``@``)."""
RECORD = "record"
"""The kind of the house chain's events."""

# each mirrored table: the columns that name a row
KEYS: dict[str, tuple[str, ...]] = {
    accounts.name: ("name",),
    wallet_entries.name: ("key",),
    play_limits.name: ("id",),
    staff_actions.name: ("id",),
}
SETTINGS = ("open", "close")  # staff actions that are table settings (and "limits MIN MAX")


def is_setting(action: str) -> bool:
    return action in SETTINGS or action.startswith("limits ")


def image(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    """What the chain keeps of ``row``: its columns, but an account's balance (its movements
    say it) and its password hash (kept as the first 16 hex digits of the hash's SHA-256: a
    changed hash is seen, and the chain holds nothing to guess a password from), and not when
    its sessions were last ended."""
    out = {k: row[k] for k in (c.name for c in table.c) if k in row}
    if table is accounts:
        out.pop("balance", None)
        out.pop("revoked_at", None)  # (when its sessions were last ended: not a record)
        hashed = str(out.pop("password_hash", ""))
        out["password"] = hashlib.sha256(hashed.encode()).hexdigest()[:16]
    return out


def _key(name: str, row: dict[str, Any]) -> str:
    return json.dumps([row[k] for k in KEYS[name]])


class Recording:
    """The house records of one write transaction: rows inserted or changed through it are
    chained when it ends (:meth:`Store.recorded <pontoon.store.db.Store.recorded>`)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.events: list[Event] = []

    def insert(self, table: Table, values: dict[str, Any], by: str | None = None) -> dict[str, Any]:
        """``values`` inserted into ``table`` and its row (with what the database filled in)
        recorded; the row."""
        row = self.conn.execute(insert(table).values(values).returning(*table.c)).one()._asdict()
        self.note(table, row, by)
        return row

    def update(
        self, table: Table, key: dict[str, Any], values: dict[str, Any], by: str | None = None
    ) -> dict[str, Any] | None:
        """The row of ``table`` named by ``key`` changed to ``values`` and recorded; the row,
        or None when there is none."""
        where = [table.c[k] == v for k, v in key.items()]
        row = self.conn.execute(update(table).where(*where).values(values).returning(*table.c))
        found = row.first()
        if found is None:
            return None
        self.note(table, found._asdict(), by)
        return found._asdict()

    def note(self, table: Table, row: dict[str, Any], by: str | None = None) -> None:
        data = {"table": table.name, "row": image(table, row)}
        text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        who = row.get("account") or row.get("name")
        self.events.append(
            Event(RECORD, player=None if who is None else str(who), detail=text, by=by)
        )

    def chain(self, store: Store, at: str) -> Signed | None:
        """The records appended to the house chain (its head row locked first), signed; the
        signature to anchor once the transaction commits, or None when nothing was recorded."""
        if not self.events:
            return None
        conn = self.conn
        c = tables.c
        head = conn.execute(
            select(c.head_seq, c.head_hash).where(c.id == HOUSE).with_for_update()
        ).one()
        seq, prev = append(conn, HOUSE, int(head[0]), str(head[1]), self.events, at)
        signed = store.sign_and_insert(conn, [Head(HOUSE, seq, prev)], at)
        conn.execute(
            update(tables)
            .where(c.id == HOUSE)
            .values(head_seq=seq, head_hash=prev, signed=signed.id)
        )
        self.events = []
        return signed


def append(
    conn: Connection, table: str, seq: int, prev: str, added: list[Event], at: str
) -> tuple[int, str]:
    """``added`` appended (outside any round) to ``table``'s chain after its event ``seq``
    of hash ``prev``, in ``conn``'s transaction; the new head's seq and hash (the caller
    moves and signs the head). The table servers' writes go through the group commit."""
    rows = []
    for e in added:
        seq += 1
        prev = chain.link(prev, table, seq, None, at, e)
        row = {"table_id": table, "seq": seq, "round_id": None, "at": at} | e._asdict()
        rows.append(row | {"follow": None, "hash": prev, "fence": None})
    conn.execute(insert(events), rows)
    return seq, prev


@contextmanager
def recorded(store: Store) -> Iterator[Recording]:
    """A write transaction whose house rows are chained before it commits and anchored after."""
    store.ensure_table(HOUSE)
    with store.write() as conn:
        rec = Recording(conn)
        yield rec
        signed = rec.chain(store, chain.now())
    if signed is not None:
        store.anchor([signed])


def expected(records: list[Event]) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows the house chain says each mirrored table holds, by their key (the last image
    of a row is the one in force)."""
    out: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in KEYS}
    for e in records:
        if e.kind != RECORD or e.detail is None:
            continue
        data = json.loads(e.detail)
        name, row = str(data["table"]), dict(data["row"])
        out[name][_key(name, row)] = row
    return out


def check(conn: Connection, records: list[Event]) -> list[str]:
    """Every mirrored row of the store held to its last chained image (a cashier's movement,
    an account, a limit, a table setting); problems, one line each."""
    want = expected(records)
    problems: list[str] = []
    for table in (accounts, wallet_entries, play_limits, staff_actions):
        rows = [r._asdict() for r in conn.execute(select(table))]
        if table is wallet_entries:
            rows = [r for r in rows if r["table_id"] is None]  # (a table's: its events say)
        if table is staff_actions:  # (a procedure at a table: the table's events say)
            rows = [r for r in rows if is_setting(str(r["action"]))]
        mine = want[table.name]
        for row in rows:
            have = image(table, row)
            key = _key(table.name, have)
            chained = mine.pop(key, None)
            if chained is None:
                problems.append(f"{table.name} {key}: not in the house's record (added behind it)")
            elif chained != have:
                diff = sorted(k for k in set(have) | set(chained) if have.get(k) != chained.get(k))
                problems.append(
                    f"{table.name} {key}: its {', '.join(diff)} differ from the house's record "
                    f"(changed behind it)"
                )
        for key in sorted(mine):
            problems.append(f"{table.name} {key}: in the house's record but not in the store")
    return problems


__all__ = [
    "HOUSE",
    "KEYS",
    "RECORD",
    "Recording",
    "append",
    "check",
    "expected",
    "image",
    "recorded",
]
