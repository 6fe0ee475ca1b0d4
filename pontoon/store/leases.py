"""Leases: which server process owns each table when several share one store.

A process takes a table's lease when nobody holds it or its holder let it lapse; taking it
raises the table's fencing token (``tables.fence``). Every write of a leased table carries the
token its writer took the lease with (:attr:`pontoon.store.db.Batch.fence`), checked in the
statement that moves the table's head: once another process has taken the lease, the old
owner's writes are refused (:class:`~pontoon.store.db.ConflictError`), whether it was stalled,
cut off or merely slow. Safety rests on the token alone; time only decides when a lapsed
lease may be taken (liveness), and it is the database's clock (:func:`db_now_ms`, read in the
transaction that uses it), never a host's: processes on hosts whose clocks disagree time
every lease by the same clock.

>>> from pontoon.store.db import Store
>>> import tempfile, os
>>> store = Store("sqlite:///" + os.path.join(tempfile.mkdtemp(), "s.db"))
>>> a = take(store, "kauri", "a", "10.0.0.1:8001", 3.0)
>>> a.fence, take(store, "kauri", "b", "10.0.0.2:8001", 3.0)
(1, None)
>>> take(store, "kauri", "b", "10.0.0.2:8001", 3.0, now=a.until + 1).fence  # a lapsed
2
>>> renew(store, "a", {"kauri": 1}, 3.0)  # a's lease is gone, and so are its writes
{}
>>> store.close()
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, delete, func, insert, or_, select, update

from pontoon.store import chain
from pontoon.store.db import Store
from pontoon.store.schema import lease_log, lease_members, tables


@dataclass(frozen=True, slots=True)
class Lease:
    """A table held by this process: its fencing token and the lease's end (ms since the
    epoch)."""

    table: str
    fence: int
    until: int


@dataclass(frozen=True, slots=True)
class Holder:
    """Who serves a table now: the owner's name and address, and when the lease ends."""

    owner: str
    address: str
    until: int


def now_ms() -> int:
    """This host's clock, in ms since the epoch (for what only this process compares)."""
    return int(time.time() * 1000)


_DB_NOW = {
    "sqlite": "SELECT CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)",
    "postgresql": "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
}


def db_now_ms(conn: Connection) -> int:
    """The database's clock, in ms since the epoch: the one clock every process of a store
    shares (:data:`_DB_NOW`; another back end: this host's clock)."""
    query = _DB_NOW.get(conn.dialect.name)
    return now_ms() if query is None else int(conn.exec_driver_sql(query).scalar_one())


def take(
    store: Store, table: str, owner: str, address: str, seconds: float, *, now: int | None = None
) -> Lease | None:
    """The lease of ``table`` for ``owner`` (reachable at ``address``) for ``seconds``, with a
    new fencing token; None while another owner holds it."""
    store.ensure_table(table)
    t = tables.c
    with store.write() as conn:
        # the row first, then the time: a wait for it (PostgreSQL: a stalled owner's
        # transaction, until the database ends it) does not shorten the lease taken
        conn.execute(select(t.id).where(t.id == table).with_for_update())
        now = db_now_ms(conn) if now is None else now
        until = now + int(seconds * 1000)
        taken = conn.execute(
            update(tables)
            .where(t.id == table, or_(t.owner.is_(None), t.lease_until < now))
            .values(owner=owner, address=address, fence=t.fence + 1, lease_until=until)
        ).rowcount
        if taken != 1:
            return None
        fence = conn.execute(select(t.fence).where(t.id == table)).scalar_one()
        row = {"table_id": table, "fence": fence, "owner": owner, "address": address}
        conn.execute(insert(lease_log).values(row | {"taken_at": chain.now()}))
    return Lease(table, int(fence), until)


def renew(
    store: Store, owner: str, held: dict[str, int], seconds: float, *, now: int | None = None
) -> dict[str, Lease]:
    """Extend ``owner``'s leases (``held``: table -> fencing token) by ``seconds`` from now;
    the ones it still holds. A lease another owner took is not among them: its table must be
    dropped (its writes are refused anyway)."""
    if not held:
        return {}
    t = tables.c
    mine = [t.owner == owner, t.id.in_(list(held))]
    one = update(tables).where(t.owner == owner, t.id == bindparam("b_table"))
    with store.write() as conn:  # row by row in the tables' order, as a group commit writes
        until = (db_now_ms(conn) if now is None else now) + int(seconds * 1000)
        conn.execute(one.values(lease_until=until), [{"b_table": n} for n in sorted(held)])
        rows = conn.execute(select(t.id, t.fence).where(*mine)).all()
    return {
        str(name): Lease(str(name), int(fence), until)
        for name, fence in rows
        if held[str(name)] == int(fence)
    }


def release(store: Store, owner: str, table: str | None = None) -> None:
    """``owner`` lets go of ``table`` (None: of every table, as it stops): it may be taken at
    once (the fencing tokens stay)."""
    t = tables.c
    mine = [t.owner == owner] + ([t.id == table] if table is not None else [])
    with store.write() as conn:
        gone = {"owner": None, "address": None, "lease_until": None}
        conn.execute(update(tables).where(*mine).values(gone))


def beat(store: Store, owner: str, address: str, seconds: float, *, now: int | None = None) -> int:
    """``owner`` is alive for ``seconds`` more; how many processes are alive now (those that
    stopped beating long ago are forgotten)."""
    m = lease_members.c
    with store.write() as conn:
        now = db_now_ms(conn) if now is None else now
        row = {"owner": owner, "address": address, "until": now + int(seconds * 1000)}
        conn.execute(delete(lease_members).where(or_(m.owner == owner, m.until < now - 60_000)))
        conn.execute(insert(lease_members).values(row))
        alive = conn.execute(select(func.count()).where(m.until >= now)).scalar_one()
    return int(alive)


def leave(store: Store, owner: str) -> None:
    """``owner`` stops beating: it no longer counts among the processes."""
    with store.write() as conn:
        conn.execute(delete(lease_members).where(lease_members.c.owner == owner))


def holders(store: Store, *, now: int | None = None) -> dict[str, Holder]:
    """Every table whose lease is held now, with its holder."""
    t = tables.c
    with store.read() as conn:
        now = db_now_ms(conn) if now is None else now
        rows = conn.execute(
            select(t.id, t.owner, t.address, t.lease_until).where(
                t.owner.is_not(None), t.lease_until >= now
            )
        ).all()
    return {str(i): Holder(str(o), str(a), int(u)) for i, o, a, u in rows}
