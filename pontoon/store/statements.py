"""The write path's statements, compiled once for a store's dialect and run on the
transaction's own driver cursor: on PostgreSQL the rows of a group commit go as ``COPY`` or as
one statement over the parameters' arrays (``unnest``), elsewhere as an ``executemany``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import (
    BigInteger,
    Connection,
    Integer,
    bindparam,
    delete,
    func,
    update,
)
from sqlalchemy.exc import DBAPIError

from pontoon.store.play_limits import wager_limits
from pontoon.store.schema import (
    accounts,
    events,
    ledger,
    round_players,
    rounds,
    sessions,
    shoe_states,
    signatures,
    tables,
    wallet_entries,
)


def _arrays(rows: list[dict[str, Any]], order: list[str]) -> list[list[Any]]:
    """The rows' values as one list per parameter of ``order`` (an array statement's)."""
    return [list(map(itemgetter(k), rows)) for k in order]


# The statements of the write path, built once (SQLAlchemy then reuses their compiled form).
_MOVE_HEAD = (
    update(tables)
    .where(tables.c.id == bindparam("b_table"), tables.c.head_seq == bindparam("b_old"))
    .values(
        head_seq=bindparam("b_seq"),
        head_hash=bindparam("b_hash"),
        shoe_seq=func.coalesce(bindparam("b_shoe_seq", type_=BigInteger), tables.c.shoe_seq),
        shoe_drawn=func.coalesce(bindparam("b_drawn", type_=Integer), tables.c.shoe_drawn),
        signed=bindparam("b_signed"),
    )
)
_MOVE_FENCED_HEAD = _MOVE_HEAD.where(tables.c.fence == bindparam("b_fence"))
_NEW_ROUND = [
    "table_id",
    "number",
    "status",
    "rules",
    "started_at",
    "first_seq",
    "last_seq",
    "house",
]


class Stmt(NamedTuple):
    """A write path's statement: its SQL, the order of its parameters (a positional driver's,
    or a COPY's columns; None: by name) and how the rows go: ``many`` (an ``executemany``),
    ``copy`` (``COPY``) or ``arrays`` (one statement, each parameter an array of the rows')."""

    text: str
    order: list[str] | None
    how: str = "many"


class Statements:
    """The write path's statements, compiled once for the store's dialect and run on the
    transaction's own driver cursor (an ``executemany`` for a group). SQLAlchemy's work per
    statement (cache key, parameter processing, then its events and result set-up even through
    ``exec_driver_sql``) was most of the CPU of a group commit; the driver's errors are still
    raised as SQLAlchemy's (an :class:`IntegrityError` is one)."""

    def __init__(self, dialect: Any) -> None:
        self.dialect = dialect
        self.error: type[Exception] = dialect.loaded_dbapi.Error
        self.move_head = self._compile(_MOVE_HEAD)
        self.move_fenced_head = self._compile(_MOVE_FENCED_HEAD)
        self.insert_events = self._insert(events, [c.name for c in events.c])
        self.insert_ledger = self._insert(ledger, [c.name for c in ledger.c if c.name != "id"])
        self.insert_round = self._compile(  # its id by RETURNING (SQLite 3.35 and later)
            rounds.insert().returning(rounds.c.id), _NEW_ROUND
        )
        self.insert_round_arrays = self._arrays_insert(rounds, _NEW_ROUND)
        r, p = rounds.c, round_players.c
        self.update_round = self._update(
            {"b_id": r.id},
            {"b_status": r.status, "b_last": r.last_seq, "b_house": r.house, "b_ended": r.ended_at},
        )
        self.insert_players = self._insert(round_players, ["round_id", "player", "net"])
        self.update_net = self._update({"b_id": p.round_id, "b_player": p.player}, {"b_net": p.net})
        self.upsert_shoe = self._compile(upsert_shoe(dialect.name), ["table_id", "seq", "state"])
        self.insert_signature = self._compile(signatures.insert(), [c.name for c in signatures.c])
        self.insert_session = self._compile(
            sessions.insert(), ["token_hash", "table_id", "player", "created_at"]
        )
        self.update_ack = self._update(
            {"b_hash": sessions.c.token_hash}, {"b_last": sessions.c.last_id}
        )
        self.delete_session = self._compile(
            delete(sessions).where(
                sessions.c.table_id == bindparam("b_table"),
                sessions.c.player == bindparam("b_player"),
            )
        )

        a = accounts.c
        self.move_wallet = self._compile(
            update(accounts)
            .where(a.name == bindparam("b_name"), a.balance >= bindparam("b_least"))
            .values(balance=a.balance + bindparam("b_amount"))
            .returning(a.balance)
        )
        self.has_limits = self._compile(wager_limits(bindparam("b_account")))
        self.insert_wallet_entry = self._compile(
            wallet_entries.insert(), [c.name for c in wallet_entries.c]
        )

    def one(self, conn: Connection, stmt: Stmt, row: dict[str, Any]) -> Any:
        """Run ``stmt`` with ``row``; the first column of its first row, or None."""
        text_, order = stmt.text, stmt.order
        params: Any = tuple(row[k] for k in order) if order is not None else row
        with self._cursor(conn, text_, params) as cur:
            cur.execute(text_, params)
            first = cur.fetchone()
        return None if first is None else first[0]

    def _compile(self, stmt: Any, keys: list[str] | None = None) -> Stmt:
        compiled = stmt.compile(dialect=self.dialect, column_keys=keys)
        order = list(compiled.positiontup or ()) if self.dialect.positional else None
        return Stmt(compiled.string, order)

    def _update(self, where: dict[str, Any], values: dict[str, Any]) -> Stmt:
        """``UPDATE`` the rows whose ``where`` columns equal the parameters named by its keys,
        setting the ``values`` columns. On PostgreSQL one statement for all the rows, joined to
        the parameters' arrays (``FROM unnest(…)``): each row costs the writer and the
        database about half what a statement of its own costs, as an ``executemany`` runs it.
        (Only for rows that no other transaction locks in another order: the tables' heads,
        locked in their names' order, keep an ``executemany``. A row is never given twice,
        where the join would update it once, by either: the rows are those of a group's
        tables, each once — a second batch of a table in a group is refused first, by the
        heads' move, its head being the first's old one.)"""
        table = next(iter(where.values())).table
        if self.dialect.name != "postgresql":
            stmt = update(table).where(*(c == bindparam(k) for k, c in where.items()))
            return self._compile(stmt.values({c.name: bindparam(k) for k, c in values.items()}))
        quote = self.dialect.identifier_preparer.quote
        names = [*where, *values]
        columns = [*where.values(), *values.values()]
        arrays = ", ".join(f"%s::{c.type.compile(self.dialect)}[]" for c in columns)
        sets = ", ".join(f"{quote(c.name)} = v.{k}" for k, c in values.items())
        match = " AND ".join(f"u.{quote(c.name)} = v.{k}" for k, c in where.items())
        sql = (
            f"UPDATE {quote(table.name)} AS u SET {sets} "
            f"FROM unnest({arrays}) AS v({', '.join(names)}) WHERE {match}"
        )
        return Stmt(sql, names, "arrays")

    def _arrays_insert(self, table: Any, columns: list[str]) -> Stmt | None:
        """PostgreSQL: rows of ``columns`` into ``table`` by one statement from the columns'
        arrays, returning each row's ``id`` with its place in the arrays (else None)."""
        if self.dialect.name != "postgresql":
            return None
        quote = self.dialect.identifier_preparer.quote
        arrays = ", ".join(f"%s::{table.c[c].type.compile(self.dialect)}[]" for c in columns)
        names = ", ".join(quote(c) for c in columns)
        sql = (
            f"WITH v AS (SELECT * FROM unnest({arrays}) WITH ORDINALITY AS v({names}, n)), "
            f"made AS (INSERT INTO {quote(table.name)} ({names}) SELECT {names} FROM v "
            f"ORDER BY n RETURNING id, table_id, number) "
            f"SELECT v.n, made.id FROM made JOIN v USING (table_id, number)"
        )
        return Stmt(sql, columns, "arrays")

    def insert_rounds(self, conn: Connection, rows: list[dict[str, Any]]) -> list[int]:
        """New rounds' rows inserted; their ids, in their order (PostgreSQL: by one statement,
        each row found again by its table and number; elsewhere one statement a row)."""
        stmt = self.insert_round_arrays
        if stmt is None or len(rows) < 2:
            return [int(self.one(conn, self.insert_round, row)) for row in rows]
        assert stmt.order is not None
        arrays = _arrays(rows, stmt.order)
        with self._cursor(conn, stmt.text, arrays) as cur:
            cur.execute(stmt.text, arrays)
            made = dict(cur.fetchall())
        return [int(made[n]) for n in range(1, len(rows) + 1)]

    def run_all(self, conn: Connection, runs: list[tuple[Stmt, list[dict[str, Any]]]]) -> None:
        """:meth:`run` each statement with its rows; on PostgreSQL, array statements with rows
        go as one (each a data-modifying ``WITH`` of it: one round trip, one statement's cost
        to the driver)."""
        runs = [(stmt, rows) for stmt, rows in runs if rows]
        if len(runs) < 2 or any(stmt.how != "arrays" for stmt, _ in runs):
            for stmt, rows in runs:
                self.run(conn, stmt, rows)
            return
        text_ = "WITH " + ", ".join(f"w{i} AS ({s.text})" for i, (s, _) in enumerate(runs))
        text_ += " SELECT 1"
        arrays = [a for s, rows in runs for a in _arrays(rows, s.order or [])]
        with self._cursor(conn, text_, arrays) as cur:
            cur.execute(text_, arrays)

    def _insert(self, table: Any, columns: list[str]) -> Stmt:
        """Rows of ``columns`` into ``table``: on PostgreSQL by ``COPY … FROM STDIN``, which
        costs the writer a sixth and the database two thirds of an ``INSERT`` per row (a group
        commit's events are most of its rows); elsewhere an ``executemany``."""
        if self.dialect.name != "postgresql":
            return self._compile(table.insert(), columns)
        quote = self.dialect.identifier_preparer.quote
        names = ", ".join(quote(c) for c in columns)
        return Stmt(f"COPY {quote(table.name)} ({names}) FROM STDIN", columns, "copy")

    def run(self, conn: Connection, stmt: Stmt, rows: list[dict[str, Any]]) -> int:
        """Run ``stmt`` for each row (nothing for no rows); the rows it changed."""
        if not rows:
            return 0
        text_, order, how = stmt
        if how == "arrays":
            assert order is not None
            arrays = _arrays(rows, order)
            with self._cursor(conn, text_, arrays) as cur:
                cur.execute(text_, arrays)
                return int(cur.rowcount)
        params: Any = rows
        if order is not None:  # (itemgetter: a tenth of a generator's cost a row)
            params = (
                list(map(itemgetter(*order), rows))
                if len(order) > 1
                else [(r[order[0]],) for r in rows]
            )
        with self._cursor(conn, text_, params) as cur:
            if how == "copy":
                with cur.copy(text_) as pipe:
                    for row in params:
                        pipe.write_row(row)
                return len(rows)
            cur.executemany(text_, params)
            return int(cur.rowcount)

    @contextmanager
    def _cursor(self, conn: Connection, text_: str, params: Any) -> Iterator[Any]:
        """A driver cursor in ``conn``'s transaction; the driver's error raised as
        SQLAlchemy's, as ``conn.execute`` would."""
        cur = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            yield cur
        except self.error as exc:
            raise DBAPIError.instance(text_, params, exc, self.error) from exc
        finally:
            cur.close()


def upsert_shoe(dialect: str) -> Any:
    """``INSERT … ON CONFLICT (table_id) DO UPDATE``: each table's one shoe row."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt: Any = pg_insert(shoe_states)
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(shoe_states)
    return stmt.on_conflict_do_update(
        index_elements=[shoe_states.c.table_id],
        set_={"seq": stmt.excluded.seq, "state": stmt.excluded.state},
    )
