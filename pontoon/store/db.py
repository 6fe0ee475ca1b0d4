"""The store's one small interface over SQLAlchemy Core: SQLite (a file, WAL, every commit
synced) or PostgreSQL, chosen by URL (:mod:`pontoon.store.engine`). Opening a store creates or
upgrades its schema; its group commits run :mod:`pontoon.store.statements`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, SQLAlchemyError

from pontoon.errors import InputError, PontoonError
from pontoon.events import Event
from pontoon.store import chain
from pontoon.store.engine import check_exists, engine_url, make_engine, owner_only, safe
from pontoon.store.heads import Head, Signed, digest, sign
from pontoon.store.heads import Shoe as ShoeMark
from pontoon.store.schema import (
    HEAD,
    accounts,
    drill_decisions,
    events,
    ledger,
    operator_calls,
    round_players,
    rounds,
    sessions,
    signatures,
    staff_actions,
    store_meta,
    tables,
)
from pontoon.store.statements import Statements

if TYPE_CHECKING:
    from pontoon.store.anchors import Anchors
    from pontoon.store.secret import ShoeKeys
    from pontoon.store.signing import RecordKeys

DEFAULT_URL = "sqlite:///pontoon.db"
MIGRATIONS = Path(__file__).parent / "migrations"
_LOCK = 0x706F6E74  # PostgreSQL advisory lock taken while the schema is upgraded
WAL_FRAMES = 16_384  # SQLite: a log longer than this (pages: 64 MB) is truncated, not only copied


class StoreError(PontoonError):
    """The store cannot do what was asked (unreachable, newer schema, concurrent writer)."""


class ConflictError(StoreError):
    """Another process appended to the same table since this one last read it."""


class NameTakenError(StoreError):
    """A session of the table already has the player's name."""


class WalletError(StoreError):
    """A wallet refused a movement (too little in it, or no such account): nothing of the
    batch that asked for it was written."""


def token_digest(token: str) -> str:
    """What the store keeps of a session token: its SHA-256, in hex (the token itself is
    never stored, so a copy of the database opens no seat).

    >>> token_digest("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def event_of(row: Row[Any]) -> Event:
    m = row._mapping
    return Event(
        m["kind"],
        m["box"],
        m["hand"],
        m["player"],
        m["card"],
        m["amount"],
        m["detail"],
        m["odds"],
        m["rule"],
        m["by"],
        _follow(m["follow"]),
    )


def _follow(text: str | None) -> str | int | None:
    """An event's ``follow`` as stored (text) back to the event's value: "both", 0 or 1."""
    return int(text) if text is not None and text.isdigit() else text


@dataclass(slots=True)
class RoundWrite:
    """The round a batch belongs to: ``id`` None makes a new round row."""

    id: int | None
    number: int
    rules: str
    status: str
    house: int
    nets: dict[str, int]
    known_players: set[str] = field(default_factory=set)
    written: dict[str, int] = field(default_factory=dict)  # nets as last written


@dataclass(slots=True)
class Batch:
    """Events to append to one table in one transaction, with what they change."""

    table: str
    prev_seq: int
    prev_hash: str
    events: list[tuple[Event, bool]]  # (event, belongs to the round)
    round: RoundWrite | None = None
    shoe: str | None = None  # the shoe, whole (pontoon.store.shoestate.snapshot)
    # or, the shoe unchanged since it was last written whole but for cards drawn: how many
    drawn: int | None = None
    session: tuple[str, str] | None = None  # a new session: (token's digest, player)
    ack: tuple[str, str] | None = None  # (token's digest, message id) this batch applies
    close: str | None = None  # a player whose session at the table ends (left or expired)
    wallet: bool = False  # the table's cashier is the built-in wallet: a deposit debits it
    # the table's cashier is an operator's wallet: the keys of the debits it acknowledged
    # (by the event's seq), marked done here; each credit is a new call, pending until sent
    remote: dict[int, str] | None = None
    # the process that sends the batch's new credits (pontoon.server.operator: its owner id)
    remote_owner: str | None = None
    staff: tuple[str, str, str] | None = None  # (account, role, action) a staff member made
    # the fencing token of the writer's lease on the table: the write is refused once another
    # process has taken the lease (pontoon.store.leases); None: a table without leases
    fence: int | None = None
    # the table's shoe as stored before this batch (pontoon.store.heads.Shoe): the signed
    # head states where it stands after the batch
    shoe_mark: ShoeMark | None = None


class StoredSession(NamedTuple):
    """A table server session as the store keeps it (the token itself is not kept)."""

    table: str
    player: str
    last_id: str | None  # the id of the last message applied for it


@dataclass(slots=True)
class Written:
    round_id: int | None
    seq: int
    hash: str
    at: str
    wallets: dict[str, int] = field(default_factory=dict)  # balances the batch moved
    shoe_mark: ShoeMark | None = None  # where the table's shoe stands now


@dataclass(slots=True)
class TableState:
    head_seq: int
    head_hash: str
    balances: dict[str, int]
    last_number: int
    open_rounds: list[int]
    shoe: tuple[int, str] | None = None  # (the seq of its last write, its plain text)
    shoe_mark: ShoeMark | None = None


class Store:
    """A store opened by URL; ``with Store(url) as s: ...`` closes it. ``shoe_keys`` seal the
    shoe states it writes and open those it reads; ``record_keys`` sign the heads it writes
    and check those it opens; ``anchors`` is where the signed heads also go
    (:func:`pontoon.store.anchors.where`). Keys left None are loaded
    (:func:`~pontoon.store.secret.load_keys`, :func:`~pontoon.store.signing.load_record_keys`:
    the environment or the default key files) only when a table is written or opened, so the
    reading commands never need a key."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        shoe_keys: ShoeKeys | None = None,
        *,
        record_keys: RecordKeys | None = None,
        anchors: str | None = None,
        upgrade: bool = True,
        must_exist: bool = False,
        own_checkpoints: bool = False,
        stalled_after: float | None = None,
    ) -> None:
        self.url = url
        self.stalled_after = stalled_after  # (see below)
        # SQLite: copy the write-ahead log back into the database only when :meth:`checkpoint`
        # is called (a server calls it on a thread of its own), not after the commit that
        # fills the log past SQLite's threshold (that commit would wait for the copy and an
        # fsync of the whole database: 60-140 ms under the server's load, against ~5)
        self.own_checkpoints = own_checkpoints
        self._shoe_keys = shoe_keys
        self.keys_given = shoe_keys  # (None: loaded when first needed, here or in a writer's)
        self._record_keys = record_keys
        self.record_keys_given = record_keys
        self.anchors_target = anchors
        self._anchors: Anchors | None = None  # opened at the first signed write
        self._store_id: str | None = None
        if must_exist:
            check_exists(url)
        owner_only(url)
        try:
            self.engine: Engine = make_engine(engine_url(url), autocheckpoint=not own_checkpoints)
        except (ArgumentError, ValueError) as exc:  # a URL SQLAlchemy cannot read
            raise InputError(f"cannot open the store {safe(url)}: {exc}") from None
        self._writing = self.engine.execution_options(pontoon_write=True)  # made once
        self._writes: Engine | None = None  # the writes' own engine, if they have one
        self.dialect = self.engine.dialect.name
        self._sql = Statements(self.engine.dialect)
        try:
            if upgrade:
                self.upgrade()
        except DBAPIError as exc:  # no such folder, not a database, no server there
            self.engine.dispose()
            said = " ".join(str(exc.orig).split())  # (one line: the driver's may be several)
            raise InputError(f"cannot open the store {safe(url)}: {said}") from None
        if stalled_after is not None and self.dialect == "postgresql":
            # PostgreSQL, from now on (a migration may take its time): a write transaction
            # left idle ``stalled_after`` seconds is ended by the database, its locks let go.
            # A serving process stopped inside a write (SIGSTOP, a frozen VM) would otherwise
            # hold its tables' rows, and nobody could take their leases while it slept. The
            # writes have a pool of their own: a long read (a month's report) is not cut off.
            self._writes = make_engine(engine_url(url), stalled_after=stalled_after)
            self._writing = self._writes.execution_options(pontoon_write=True)

    def close(self) -> None:
        self.engine.dispose()
        if self._writes is not None:
            self._writes.dispose()
        if self._anchors is not None:
            self._anchors.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def shoe_keys(self) -> ShoeKeys:
        if self._shoe_keys is None:
            from pontoon.store.secret import load_keys

            self._shoe_keys = load_keys()
        return self._shoe_keys

    @property
    def record_keys(self) -> RecordKeys:
        if self._record_keys is None:
            from pontoon.store.signing import load_record_keys

            self._record_keys = load_record_keys()
        return self._record_keys

    @property
    def store_id(self) -> str:
        """The store's own id (``store_meta``), which every signed body names."""
        if self._store_id is None:
            with self.read() as conn:
                found = conn.execute(
                    select(store_meta.c.value).where(store_meta.c.name == "id")
                ).scalar()
            if found is None:
                raise StoreError("the store has no id (store_meta): it is not a pontoon store")
            self._store_id = str(found)
        return self._store_id

    def sign_and_insert(self, conn: Connection, heads: list[Head], at: str) -> Signed:
        """The heads signed with the first record key, the signature inserted (the caller
        points the tables at it and anchors it once the transaction is committed)."""

        signed = sign(self.record_keys, self.store_id, at, heads)
        conn.execute(insert(signatures).values(signed.to_dict()))
        return signed

    def anchor(self, signed: list[Signed]) -> None:
        """Committed signatures to the anchors (opened at the first)."""
        if not signed:
            return
        if self._anchors is None:
            from pontoon.store.anchors import Anchors, where

            self._anchors = Anchors(where(self.anchors_target))
        self._anchors.write(signed)

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (SQLite: BEGIN IMMEDIATE, so writers queue up at once)."""
        with self._writing.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    def checkpoint(self) -> tuple[int, int] | None:
        """SQLite: copy what the write-ahead log holds back into the database, without
        waiting for (or holding up) the writer: (frames in the log, frames copied); the next
        write starts the log again from its beginning once every frame is copied. A log
        grown past :data:`WAL_FRAMES` (a writer that kept ahead of the copies) is truncated,
        which waits for the writer. PostgreSQL: None (it checkpoints itself)."""
        if self.dialect != "sqlite":
            return None
        raw = self.engine.raw_connection()
        cur = raw.cursor()
        try:
            _, log, copied = cur.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if log > WAL_FRAMES:
                _, log, copied = cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            return int(log), int(copied)
        finally:
            cur.close()
            raw.close()

    # ------------------------------------------------------------------ schema
    def revision(self) -> str | None:
        with self.read() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return None
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()

    def upgrade(self) -> None:
        """Bring the schema to :data:`HEAD` (Alembic), creating it in an empty database."""
        if self.revision() == HEAD:
            return
        from alembic.config import Config
        from alembic.migration import MigrationContext
        from alembic.operations import Operations
        from alembic.script import ScriptDirectory

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        script = ScriptDirectory.from_config(cfg)
        with self.write() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK})
            ctx = MigrationContext.configure(conn)
            current = ctx.get_current_revision()
            if current == HEAD:
                return
            known = {s.revision for s in script.walk_revisions()}
            if current is not None and current not in known:
                raise StoreError(
                    f"the store's schema {current!r} is newer than this pontoon: upgrade pontoon"
                )
            ctx = MigrationContext.configure(
                conn,
                opts={"script": script, "fn": lambda rev, _ctx: script._upgrade_revs("head", rev)},
            )
            with Operations.context(ctx):
                ctx.run_migrations()

    # ------------------------------------------------------------------ writing
    def ensure_table(self, table: str) -> None:
        """Create the table's chain (empty) unless it exists."""
        with self.read() as conn:
            if conn.execute(select(tables.c.id).where(tables.c.id == table)).first():
                return
        at = chain.now()
        try:
            with self.write() as conn:
                conn.execute(
                    tables.insert().values(
                        id=table, created_at=at, head_seq=0, head_hash=chain.GENESIS
                    )
                )
                signed = self.sign_and_insert(conn, [Head(table, 0, chain.GENESIS)], at)
                conn.execute(update(tables).where(tables.c.id == table).values(signed=signed.id))
        except IntegrityError:
            return  # created by another process meanwhile
        self.anchor([signed])

    def append(self, batch: Batch) -> Written:
        """Append ``batch`` in one transaction: events (hash-chained), their ledger entries,
        the round's row and players, and the shoe's state. Raises :class:`ConflictError` when
        the table's head is no longer ``batch.prev_seq``."""
        result = self.append_many([batch])[0]
        if isinstance(result, StoreError):
            raise result
        return result

    def append_many(self, batches: list[Batch]) -> list[Written | StoreError]:
        """Group commit: append several batches (of different tables) in **one** transaction,
        so one durable commit (one fsync) serves them all, with one statement per table of
        the schema for the whole group. A result is returned only once the commit is durable.

        When a batch is refused (another process moved its table's head: a
        :class:`ConflictError`), the group is written again one batch at a time, each in its
        own savepoint: the refused batch is rolled back alone and its error returned in its
        place, the others are committed. When the commit itself fails, every batch gets the
        error and nothing is written."""
        if not batches:
            return []
        # The shoes are sealed before the transaction, each for its table and write: a missing
        # key writes nothing, and the encryption does not hold the store's lock.
        keys = self.shoe_keys if any(b.shoe is not None for b in batches) else None
        sealed = {
            id(b): keys.seal(b.shoe, b.table, b.prev_seq + len(b.events))
            for b in batches
            if b.shoe is not None and keys is not None
        }
        self.record_keys  # (loaded before the transaction too)  # noqa: B018
        at = chain.now()
        signed: list[Signed] = []
        try:
            with self.write() as conn:
                written: list[Written | StoreError] = list(
                    self._write(conn, batches, at, sealed, signed)
                )
            self.anchor(signed)
            return written
        except (ConflictError, NameTakenError, WalletError) as exc:
            if len(batches) == 1:
                return [exc]
        except IntegrityError as exc:  # a name taken in a group: find which batch
            if len(batches) == 1:
                return [StoreError(f"the store refused the write: {exc}")]
        except SQLAlchemyError as exc:
            return [StoreError(f"the store refused the write: {exc}") for _ in batches]
        out: list[Written | StoreError] = []
        signed = []
        try:
            with self.write() as conn:
                for batch in batches:
                    mine: list[Signed] = []
                    try:
                        with conn.begin_nested():
                            out.extend(self._write(conn, [batch], at, sealed, mine))
                        signed += mine
                    except (ConflictError, NameTakenError, WalletError) as exc:
                        out.append(exc)
        except SQLAlchemyError as exc:
            return [StoreError(f"the store refused the write: {exc}") for _ in batches]
        self.anchor(signed)
        return out

    def _write(
        self,
        conn: Connection,
        batches: list[Batch],
        at: str,
        sealed: dict[int, str],
        signed: list[Signed],
    ) -> list[Written]:
        """Write ``batches`` in the open transaction (``sealed``: their shoes, by the batch's
        ``id``), their heads signed (the signature added to ``signed``); a
        :class:`ConflictError` when a table's head has moved (the caller rolls back). The
        group's rows are gathered batch by batch (:func:`_gather`), then written one
        statement per table of the schema: the signature, the heads, the rows, the wallets'
        movements, the operator's calls and the staff's actions."""
        group = _Group()
        new_rounds = self._new_rounds(conn, batches, at)  # their ids enter the hashes
        out: list[Written] = []
        for batch in batches:
            out.append(_gather(group, batch, len(out), new_rounds, at, sealed))
        signed.append(self._sign_heads(conn, group, at))
        self._move_heads(conn, group, batches)
        self._insert_rows(conn, group, batches)
        # each wallet's movements in their order, the wallets in one order (their names): two
        # processes' group commits never wait on each other's rows
        group.moves.sort(key=lambda m: m[1])
        self._move_wallets(conn, [(batches[m[0]].table, *m) for m in group.moves], out)
        _record_operator_calls(conn, group.remote, at)
        if group.staff:
            conn.execute(insert(staff_actions), group.staff)
        return out

    def _sign_heads(self, conn: Connection, group: _Group, at: str) -> Signed:
        """The group's new heads signed, the signature inserted and named in each head row."""
        sql = self._sql
        sig = sign(self.record_keys, self.store_id, at, group.signing)
        sql.run(conn, sql.insert_signature, [sig.to_dict()])
        for head in group.heads:
            head["b_signed"] = sig.id
        for head in group.fenced:
            head["b_signed"] = sig.id
        return sig

    def _move_heads(self, conn: Connection, group: _Group, batches: list[Batch]) -> None:
        """Move each table's head from the batch's ``prev_seq``: :class:`ConflictError` when
        one has moved (another process wrote the table, or took its lease)."""
        sql = self._sql
        heads, fenced = group.heads, group.fenced
        # the tables' rows are locked in one order (their names), as renewing leases does:
        # two transactions of a store shared by processes cannot wait on each other
        heads.sort(key=lambda h: h["b_table"])
        fenced.sort(key=lambda h: h["b_table"])
        moved = sql.run(conn, sql.move_head, heads) + sql.run(conn, sql.move_fenced_head, fenced)
        if moved != len(heads) + len(fenced):
            names = ", ".join(sorted({repr(b.table) for b in batches}))
            raise ConflictError(
                f"table {names} was written by another process, or its lease was lost: start again"
            )

    def _insert_rows(self, conn: Connection, group: _Group, batches: list[Batch]) -> None:
        """The group's events, ledger entries, rounds, shoes and sessions written: a
        :class:`NameTakenError` when a batch of its own opens a session on a name taken."""
        sql = self._sql
        sql.run(conn, sql.insert_events, group.rows)
        sql.run(conn, sql.insert_ledger, group.entries)
        sql.run(conn, sql.insert_players, group.new_players)
        sql.run_all(
            conn,
            [
                (sql.update_round, group.round_rows),
                (sql.update_net, group.nets),
                (sql.update_ack, group.acks),
            ],
        )
        sql.run(conn, sql.upsert_shoe, group.shoes)
        sql.run(conn, sql.delete_session, group.closed)  # before a new one: the name is free
        new_sessions = group.new_sessions
        if len(batches) == 1 and new_sessions:
            try:
                with conn.begin_nested():
                    sql.run(conn, sql.insert_session, new_sessions)
            except IntegrityError:
                player = new_sessions[0]["player"]
                raise NameTakenError(
                    f"{player!r} is already at table {batches[0].table!r}"
                ) from None
        else:
            sql.run(conn, sql.insert_session, new_sessions)

    def _new_rounds(self, conn: Connection, batches: list[Batch], at: str) -> dict[int, int]:
        """The rows of the group's new rounds, inserted: their ids, by the batch's ``id``."""
        new: list[tuple[int, dict[str, Any]]] = []
        for batch in batches:
            rnd = batch.round
            if rnd is None or rnd.id is not None:
                continue
            mine = _round_seqs(batch)
            row = {"table_id": batch.table, "number": rnd.number, "status": rnd.status}
            row |= {"rules": rnd.rules, "started_at": at, "first_seq": mine[0]}
            new.append((id(batch), row | {"last_seq": mine[-1], "house": rnd.house}))
        ids = self._sql.insert_rounds(conn, [row for _, row in new])
        return {key: made for (key, _), made in zip(new, ids, strict=True)}

    def _move_wallets(
        self, conn: Connection, moves: list[tuple[str, int, str, str, int, int]], out: list[Written]
    ) -> None:
        """The built-in wallets' movements a group's events make, in their order: a debit
        only from a balance that holds it (else :class:`WalletError`: the caller rolls back),
        each keyed by its event (``table:T:SEQ``: the same event cannot move money twice)."""
        if not moves:
            return
        from pontoon.store.play_limits import LimitError, check_wager, hold

        sql = self._sql
        entries: list[dict[str, Any]] = []
        for table, i, player, kind, amount, seq in moves:
            sign = -1 if kind == "debit" else 1
            if sign < 0 and sql.one(conn, sql.has_limits, {"b_account": player}) is not None:
                hold(conn, player)  # (another process's wager waits, then sees this one)
                try:
                    check_wager(conn, player, amount)  # the limits the player set
                except LimitError as exc:
                    raise WalletError(str(exc)) from None
            least = amount if sign < 0 else 0  # a debit only from a balance that holds it
            row = {"b_name": player, "b_amount": sign * amount, "b_least": least}
            after = sql.one(conn, sql.move_wallet, row)
            if after is None:
                raise WalletError(
                    f"{player}'s wallet holds too little for a wager of {amount}"
                    if sign < 0
                    else f"no wallet {player!r} to credit"
                )
            entries.append(
                {"key": f"table:{table}:{seq}", "account": player, "kind": kind}
                | {"amount": amount, "balance": int(after), "at": out[i].at}
                | {"table_id": table, "seq": seq, "reference": None, "by": None}
            )
            out[i].wallets[player] = int(after)
        sql.run(conn, sql.insert_wallet_entry, entries)

    # ------------------------------------------------------------------ reading
    def table_state(self, table: str) -> TableState | None:
        """What a writer needs to go on appending to ``table`` but its shoe, which
        :func:`pontoon.store.trust.table_state` adds once the table's head and shoe check."""
        with self.read() as conn:
            c = tables.c
            head = conn.execute(
                select(c.head_seq, c.head_hash, c.shoe_seq, c.shoe_drawn).where(c.id == table)
            ).first()
            if head is None:
                return None
            balances: dict[str, int] = {}
            t = ledger.c
            for acct, amount in conn.execute(
                select(t.to_account, func.sum(t.amount))
                .where(t.table_id == table)
                .group_by(t.to_account)
            ):
                balances[acct] = balances.get(acct, 0) + int(amount)
            for acct, amount in conn.execute(
                select(t.from_account, func.sum(t.amount))
                .where(t.table_id == table)
                .group_by(t.from_account)
            ):
                balances[acct] = balances.get(acct, 0) - int(amount)
            last = conn.execute(
                select(func.max(rounds.c.number)).where(rounds.c.table_id == table)
            ).scalar()
            open_ids = list(
                conn.execute(
                    select(rounds.c.id)
                    .where(rounds.c.table_id == table, rounds.c.status == "open")
                    .order_by(rounds.c.id)
                ).scalars()
            )
        return TableState(
            int(head[0]), str(head[1]), balances, int(last or 0), [int(i) for i in open_ids]
        )

    def find_session(self, token: str) -> StoredSession | None:
        """The stored session of a token (table, player, last message applied), or None."""
        with self.read() as conn:
            row = conn.execute(
                select(sessions.c.table_id, sessions.c.player, sessions.c.last_id).where(
                    sessions.c.token_hash == token_digest(token)
                )
            ).first()
        if row is None:
            return None
        return StoredSession(str(row[0]), str(row[1]), None if row[2] is None else str(row[2]))

    def session_of(self, table: str, player: str) -> tuple[str, str | None] | None:
        """The stored session of ``player`` at ``table``: (its token's digest, the last
        message applied), or None."""
        c = sessions.c
        with self.read() as conn:
            row = conn.execute(
                select(c.token_hash, c.last_id).where(c.table_id == table, c.player == player)
            ).first()
        return None if row is None else (str(row[0]), None if row[1] is None else str(row[1]))

    def session_players(self, table: str) -> list[str]:
        """The players who hold a session at ``table``."""
        with self.read() as conn:
            return [
                str(p)
                for p in conn.execute(
                    select(sessions.c.player)
                    .where(sessions.c.table_id == table)
                    .order_by(sessions.c.player)
                ).scalars()
            ]

    # ------------------------------------------------------------------ learners
    def record_decisions(self, rows: list[dict[str, Any]]) -> None:
        """A drill's graded decisions (columns of ``drill_decisions``), in one transaction."""
        if rows:
            with self.write() as conn:
                conn.execute(insert(drill_decisions), rows)

    def learner_decisions(
        self, learner: str, drill: str, rules: str | None = None
    ) -> list[dict[str, Any]]:
        """Every decision ``learner`` made in ``drill`` (under ``rules``, or any), oldest
        first."""
        c = drill_decisions.c
        where = [c.learner == learner, c.drill == drill]
        if rules is not None:
            where.append(c.rules == rules)
        with self.read() as conn:
            rows = conn.execute(select(drill_decisions).where(*where).order_by(c.id))
            return [dict(r._mapping) for r in rows]

    def round_row(self, round_id: int) -> dict[str, Any] | None:
        with self.read() as conn:
            row = conn.execute(select(rounds).where(rounds.c.id == round_id)).first()
            if row is None:
                return None
            out = dict(row._mapping)
            out["players"] = {
                str(p): int(n)
                for p, n in conn.execute(
                    select(round_players.c.player, round_players.c.net)
                    .where(round_players.c.round_id == round_id)
                    .order_by(round_players.c.player)
                )
            }
        return out

    def round_events(self, round_id: int) -> list[dict[str, Any]]:
        """The round's stored events in order: ``seq``, ``at``, ``hash`` and ``event``."""
        with self.read() as conn:
            result = conn.execute(
                select(events).where(events.c.round_id == round_id).order_by(events.c.seq)
            )
            return [
                {"seq": r.seq, "at": r.at, "hash": r.hash, "event": event_of(r)} for r in result
            ]


@dataclass(slots=True)
class _Group:
    """The rows a group commit writes, gathered batch by batch (:func:`_gather`), by table of
    the schema."""

    heads: list[dict[str, Any]] = field(default_factory=list)
    fenced: list[dict[str, Any]] = field(default_factory=list)  # the heads of leased tables
    rows: list[dict[str, Any]] = field(default_factory=list)  # events
    entries: list[dict[str, Any]] = field(default_factory=list)  # ledger
    round_rows: list[dict[str, Any]] = field(default_factory=list)
    new_players: list[dict[str, Any]] = field(default_factory=list)
    nets: list[dict[str, Any]] = field(default_factory=list)
    shoes: list[dict[str, Any]] = field(default_factory=list)
    new_sessions: list[dict[str, Any]] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)
    closed: list[dict[str, Any]] = field(default_factory=list)
    # the built-in wallets' movements: (batch, player, kind, amount, seq)
    moves: list[tuple[int, str, str, int, int]] = field(default_factory=list)
    remote: list[dict[str, Any]] = field(default_factory=list)  # an operator's wallet: its calls
    staff: list[dict[str, Any]] = field(default_factory=list)
    signing: list[Head] = field(default_factory=list)


def _gather(
    group: _Group,
    batch: Batch,
    index: int,
    new_rounds: dict[int, int],
    at: str,
    sealed: dict[int, str],
) -> Written:
    """Add ``batch`` (the group's ``index``-th) to ``group``: its session changes, events,
    head, round and staff action; what it will have written."""
    if batch.ack is not None:
        group.acks.append({"b_hash": batch.ack[0], "b_last": batch.ack[1]})
    if batch.close is not None:
        group.closed.append({"b_table": batch.table, "b_player": batch.close})
    if batch.session is not None:
        token_hash, player = batch.session
        row = {"token_hash": token_hash, "table_id": batch.table, "player": player}
        group.new_sessions.append(row | {"created_at": at})
    rnd = batch.round
    last = batch.prev_seq + len(batch.events)
    round_id = rnd.id if rnd is not None else None
    if rnd is not None and rnd.id is None:
        round_id = new_rounds[id(batch)]
    h = _gather_events(group, batch, index, round_id, at)
    mark = _gather_head(group, batch, last, h, sealed)
    if rnd is not None:
        assert round_id is not None
        _gather_round(group, rnd, round_id, _round_seqs(batch)[-1], at)
    if batch.staff is not None:
        who, role, action = batch.staff
        group.staff.append(
            {"account": who, "role": role, "table_id": batch.table, "seq": last}
            | {"action": action[:200], "at": at}
        )
    return Written(round_id, last, h, at, shoe_mark=mark)


def _gather_events(group: _Group, batch: Batch, index: int, round_id: int | None, at: str) -> str:
    """The batch's events, hash-chained, and the money each moves (a ledger entry, and a
    wallet's movement or an operator's call); the last event's hash."""
    first = batch.prev_seq + 1
    h = batch.prev_hash
    for i, (e, in_round) in enumerate(batch.events):
        seq = first + i
        rid = round_id if in_round else None
        h = chain.link(h, batch.table, seq, rid, at, e)
        group.rows.append(
            {"table_id": batch.table, "seq": seq, "round_id": rid, "at": at}
            | e._asdict()
            | {"follow": None if e.follow is None else str(e.follow), "hash": h}
            | {"fence": batch.fence}
        )
        money = chain.entry(e)
        if money is None:
            continue
        kind, src, dst, amount = money
        if batch.remote is not None and chain.CASHIER in (src, dst):
            group.remote.append(_remote_call(batch, str(e.player), src, amount, seq, at))
        elif batch.wallet and chain.CASHIER in (src, dst):
            move = "debit" if src == chain.CASHIER else "credit"
            group.moves.append((index, str(e.player), move, amount, seq))
        group.entries.append(
            {
                "table_id": batch.table,
                "seq": seq,
                "round_id": rid,
                "at": at,
                "kind": kind,
                "player": e.player,
                "from_account": src,
                "to_account": dst,
                "amount": amount,
            }
        )
    return h


def _gather_head(
    group: _Group, batch: Batch, last: int, h: str, sealed: dict[int, str]
) -> ShoeMark | None:
    """The table's new head (and the shoe's seq and cards drawn, which move with it), and
    the shoe written whole when the batch has it; where the shoe stands after the batch."""
    head = {"b_table": batch.table, "b_old": batch.prev_seq, "b_seq": last, "b_hash": h}
    mark = batch.shoe_mark
    if batch.shoe is not None:
        group.shoes.append({"table_id": batch.table, "seq": last, "state": sealed[id(batch)]})
        head |= {"b_shoe_seq": last, "b_drawn": 0}
        mark = (last, last, 0, digest(sealed[id(batch)]))
    elif batch.drawn is not None:
        if mark is None:
            raise StoreError(f"table {batch.table!r}: cards drawn from no stored shoe")
        head |= {"b_shoe_seq": last, "b_drawn": batch.drawn}
        mark = (mark[0], last, batch.drawn, mark[3])
    else:
        head |= {"b_shoe_seq": None, "b_drawn": None}
    rnd = batch.round
    group.signing.append(Head(batch.table, last, h, mark, rnd.number if rnd else None))
    if batch.fence is None:
        group.heads.append(head)
    else:
        group.fenced.append(head | {"b_fence": batch.fence})
    return mark


def _gather_round(group: _Group, rnd: RoundWrite, round_id: int, last: int, at: str) -> None:
    """The round's row as it stands after the batch, and its players' nets (a new player's
    row, or a net that moved)."""
    group.round_rows.append(
        {
            "b_id": round_id,
            "b_status": rnd.status,
            "b_last": last,
            "b_house": rnd.house,
            "b_ended": None if rnd.status == "open" else at,
        }
    )
    for p, n in rnd.nets.items():
        if p not in rnd.known_players:
            group.new_players.append({"round_id": round_id, "player": p, "net": n})
        elif rnd.written.get(p) != n:
            group.nets.append({"b_id": round_id, "b_player": p, "b_net": n})


def _record_operator_calls(conn: Connection, calls: list[dict[str, Any]], at: str) -> None:
    """An operator's wallet: each debit it acknowledged marked done (it is recorded now;
    :class:`WalletError` when it is no longer pending), each new credit inserted pending."""
    for call in calls:
        if call["status"] == "done":  # acknowledged before this write: now it is recorded
            done = conn.execute(
                update(operator_calls)
                .where(operator_calls.c.key == call["key"], operator_calls.c.status == "pending")
                .values(status="done", seq=call["seq"], done_at=at)
            ).rowcount
            if done != 1:
                raise WalletError(f"the operator's debit {call['key']} is no longer pending")
        else:
            conn.execute(insert(operator_calls).values(call))


def _round_seqs(batch: Batch) -> list[int]:
    """The seqs the batch's round events will have (its first seq when it has none)."""
    first = batch.prev_seq + 1
    return [first + i for i, (_, r) in enumerate(batch.events) if r] or [first]


def move_wallet(conn: Connection, name: str, amount: int) -> int | None:
    """Add ``amount`` (negative: take it) to ``name``'s built-in wallet; its balance after, or
    None when there is no such account or it holds too little (nothing changed)."""
    a = accounts.c
    stmt = update(accounts).where(a.name == name)
    if amount < 0:
        stmt = stmt.where(a.balance >= -amount)
    after = conn.execute(stmt.values(balance=a.balance + amount).returning(a.balance)).scalar()
    return None if after is None else int(after)


def _remote_call(
    batch: Batch, player: str, src: str, amount: int, seq: int, at: str
) -> dict[str, Any]:
    """The operator's call for a wallet movement of ``batch``: a debit it acknowledged (its key
    is in ``batch.remote``), or a new credit, pending until it is sent and acknowledged."""
    assert batch.remote is not None
    row = {"account": player, "amount": amount, "table_id": batch.table, "seq": seq, "at": at}
    if src == chain.CASHIER:  # a debit: the wager's money came from the wallet
        key = batch.remote.get(seq)
        if key is None:
            raise WalletError(f"a wager of {amount} for {player} was not debited by the operator")
        return row | {"key": key, "kind": "debit", "status": "done", "done_at": at}
    key = f"table:{batch.table}:{seq}:{os.urandom(4).hex()}"
    credit = {"kind": "credit", "status": "pending", "done_at": None, "owner": batch.remote_owner}
    return row | {"key": key} | credit


__all__ = [
    "DEFAULT_URL",
    "Batch",
    "ConflictError",
    "NameTakenError",
    "RoundWrite",
    "Store",
    "StoreError",
    "WalletError",
    "token_digest",
]
