"""Failed authentications kept where every server process sees them (``auth_failures``): a
failed login, a registration, a wrong table token, each counted against what it names (an
address, an account, the two), so N processes on one store allow no more guesses than one,
and a restart or a failover forgets none. A key is kept as its SHA-256 (the store need not
hold who was guessed at, nor from where).

>>> len(digest("login", "ana\\n127.0.0.2"))
32
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import delete, func, insert, select

from pontoon.store.schema import auth_failures


def digest(kind: str, key: str) -> str:
    return hashlib.sha256(f"{kind}\n{key}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def count(conn: Any, key: str, since: float) -> tuple[int, float]:
    """How many failures of ``key`` (a :func:`digest`) at ``since`` or later (epoch seconds),
    and the time of the last (0.0: none)."""
    c = auth_failures.c
    n, last = conn.execute(
        select(func.count(), func.max(c.at)).where(c.key == key, c.at >= since)
    ).one()
    return int(n or 0), float(last or 0.0)


def add(conn: Any, key: str, at: float) -> None:
    conn.execute(insert(auth_failures).values(key=key, at=at))


def prune(conn: Any, before: float) -> int:
    """Forget the failures older than ``before``; how many."""
    gone = conn.execute(delete(auth_failures).where(auth_failures.c.at < before)).rowcount
    return int(gone or 0)


__all__ = ["add", "count", "digest", "prune"]
