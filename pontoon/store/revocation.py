"""Ending every session of an account at once, in the caller's transaction.

A logout, a time-out, a self-exclusion, a disabled account, a changed role or password each
end the person's logins (every device's), make their table sessions' tokens open nothing (a
table's seat stays, with its money: a new login finds it), and set ``accounts.revoked_at``,
which every server process polls to close the person's sockets
(:meth:`pontoon.store.accounts.Accounts.revoked_since`).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from sqlalchemy import delete, select, update

from pontoon.store import chain
from pontoon.store.schema import account_sessions, accounts, sessions


def revoke(conn: Any, name: str) -> None:
    """End every session of account ``name`` in ``conn``'s transaction."""
    conn.execute(delete(account_sessions).where(account_sessions.c.account == name))
    s = sessions.c
    for (digest,) in conn.execute(select(s.token_hash).where(s.player == name)).all():
        fresh = hashlib.sha256(secrets.token_bytes(32)).hexdigest()  # a token nobody holds
        conn.execute(update(sessions).where(s.token_hash == digest).values(token_hash=fresh))
    a = accounts.c
    conn.execute(update(accounts).where(a.name == name).values(revoked_at=chain.now()))


__all__ = ["revoke"]
