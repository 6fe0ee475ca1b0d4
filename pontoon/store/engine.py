"""Opening a store's database: its URL made SQLAlchemy's, a new SQLite file made its owner's
only, and each connection set up — SQLite in WAL mode with every commit synced and writers
queued at ``BEGIN IMMEDIATE``; PostgreSQL with every commit on disk and, for a serving
process's writes, a transaction left idle ended by the database.

>>> engine_url("sqlite:///pontoon.db"), engine_url("postgresql://u:p@h/db")
('sqlite:///pontoon.db', 'postgresql+psycopg://u:p@h/db')
>>> engine_url("games.db")
'sqlite:///games.db'
>>> safe("postgresql://u:secret@h/db")
'postgresql://u:***@h/db'
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import ConnectionPoolEntry

from pontoon.errors import InputError

log = logging.getLogger("pontoon.store.db")  # (its warnings' name before this module: kept)
_warned: set[Path] = set()  # the SQLite files open to others already named in the log


def engine_url(url: str) -> str:
    """SQLAlchemy's URL for a store URL: ``postgresql://`` uses psycopg 3; a bare path is a
    SQLite file."""
    if "://" not in url:
        return f"sqlite:///{url}"
    scheme, rest = url.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        out = f"postgresql+psycopg://{rest}"
    elif scheme.startswith("postgresql+") or scheme.startswith("sqlite"):
        out = url
    else:
        raise InputError(f"unknown store URL {url!r}: use sqlite:///FILE or postgresql://...")
    try:
        make_url(out)
    except (ArgumentError, ValueError) as exc:  # a port that is no number, say
        raise InputError(f"cannot read the store URL {safe(url)}: {exc}") from None
    return out


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store (None for PostgreSQL or an in-memory database)."""
    parsed = make_url(engine_url(url))
    path = parsed.database if parsed.get_backend_name() == "sqlite" else None
    return None if path in (None, "", ":memory:") else Path(str(path))


def check_exists(url: str) -> None:
    """Refuse a SQLite file that is not there (reading commands must not create one)."""
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        raise InputError(f"no store at {path}: nothing has been recorded there")


def owner_only(url: str) -> None:
    """A new SQLite file is made mode 0600 before SQLite opens it (its -wal and -shm files
    take the main file's mode); an existing one open to others is left, and named once in
    the log (a warning of ``pontoon.store.db``)."""
    path = sqlite_file(url)
    if path is None:
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        if not path.is_file():
            return  # a folder, say: SQLite's own error tells it
        mode = path.stat().st_mode & 0o777
        if mode & 0o077 and path.resolve() not in _warned:
            _warned.add(path.resolve())
            log.warning(
                "the store %s is open to group or others (mode %o): chmod 600 it and its "
                "-wal and -shm files",
                path,
                mode,
            )
    except OSError:
        pass  # no such folder, say: SQLite's own error tells it


def safe(url: str) -> str:
    """The URL without its password, for messages."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}"
    return url


def make_engine(
    url: str, autocheckpoint: bool = True, stalled_after: float | None = None
) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url)

        @event.listens_for(engine, "connect")
        def _connect(dbapi: Any, record: ConnectionPoolEntry) -> None:
            dbapi.isolation_level = None  # transactions are begun below, not by the driver
            cur = dbapi.cursor()
            cur.execute("PRAGMA busy_timeout = 30000")
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = FULL")  # each commit is on disk when it returns
            cur.execute("PRAGMA foreign_keys = ON")
            if not autocheckpoint:  # Store.checkpoint is called instead
                cur.execute("PRAGMA wal_autocheckpoint = 0")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            write = conn.get_execution_options().get("pontoon_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    # (a serving process's writes: a thread or two at a time, so two kept open, not five)
    kept = 5 if stalled_after is None else 2
    engine = create_engine(url, pool_pre_ping=True, pool_size=kept)

    @event.listens_for(engine, "connect")
    def _pg_connect(dbapi: Any, record: ConnectionPoolEntry) -> None:
        with dbapi.cursor() as cur:  # a commit returns once it is on disk, whatever the server
            cur.execute("SET synchronous_commit TO on")
            if stalled_after is not None:
                ms = max(1, int(stalled_after * 1000))
                cur.execute(f"SET idle_in_transaction_session_timeout = {ms}")
        dbapi.commit()

    return engine
