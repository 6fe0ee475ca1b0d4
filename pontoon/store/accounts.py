"""Accounts, their logged-in sessions and the built-in wallet, kept in the round store.

An account is a person: a player, or a member of staff (dealer, supervisor, pit boss,
cashier). Its password is kept only as an argon2id hash (salted, by ``argon2-cffi``); a
session's token only as its SHA-256 digest, as a table session's is. The built-in wallet is
the account's ``balance``: a cashier deposits and withdraws with a reference; a table debits
a wager and credits a win **in the transaction of the event that causes it**
(:meth:`pontoon.store.db.Store.append_many`). Every movement is a ``wallet_entries`` row
under its idempotency key, so the same movement asked twice is made once.

>>> valid_password("correct horse")
'correct horse'
>>> valid_password("short")
Traceback (most recent call last):
...
pontoon.errors.InputError: a password is 8 to 128 characters
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from pontoon.errors import InputError
from pontoon.store import chain, play_limits
from pontoon.store.db import move_wallet, token_digest
from pontoon.store.house import recorded
from pontoon.store.revocation import revoke
from pontoon.store.roles import STAFF, Movement, Role, passes_for_the_house
from pontoon.store.schema import account_sessions, accounts, wallet_entries

if TYPE_CHECKING:
    from argon2 import PasswordHasher

    from pontoon.store.db import Store

NAME = re.compile(r"^[A-Za-z0-9_\-]{1,24}$")
REFERENCE = re.compile(r"^[\x21-\x7e]{1,64}$")  # printable ASCII, no space
MAX_AMOUNT = 10**12  # cents: ten billion in the major unit, one movement


class Account(NamedTuple):
    name: str
    role: Role
    balance: int
    disabled: bool = False


class AccountError(InputError):
    """An account cannot be made or used as asked (the text says why)."""


class WrongReference(AccountError):
    """A cashier's reference already used for another movement."""


def valid_name(name: str) -> str:
    if not NAME.match(name):
        raise AccountError("a name is 1 to 24 of the letters A-Z a-z, the digits, - and _")
    if passes_for_the_house(name):
        raise AccountError("that name is reserved: it would pass for one of the house's people")
    return name


def valid_password(password: str) -> str:
    if not 8 <= len(password) <= 128:
        raise InputError("a password is 8 to 128 characters")
    return password


def hasher(strength: str = "default") -> PasswordHasher:
    """The argon2id hasher: ``default`` is argon2-cffi's (RFC 9106's low-memory profile: 64
    MiB, 3 passes, 4 lanes); ``minimum`` is OWASP's least (19 MiB, 2 passes, 1 lane), for
    tests and small machines. A hash records its own parameters: either verifies the other."""
    from argon2 import PasswordHasher

    if strength == "minimum":
        return PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
    return PasswordHasher()


def _later(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Accounts:
    """The accounts of one store. ``hasher``: :func:`hasher`'s (argon2id) unless given."""

    def __init__(self, store: Store, password_hasher: PasswordHasher | None = None) -> None:
        self.store = store
        self.hasher = password_hasher or hasher()
        self._dummy: str | None = None  # hashed once: an unknown name costs a verification

    # ------------------------------------------------------------------ accounts
    def create(self, name: str, password: str, role: Role = Role.PLAYER) -> Account:
        """A new account (balance 0); :class:`AccountError` when the name is taken."""
        valid_name(name)
        digest = self.hasher.hash(valid_password(password))
        row = {"name": name, "role": str(role), "password_hash": digest, "balance": 0}
        try:
            with recorded(self.store) as rec:
                rec.insert(accounts, row | {"created_at": chain.now()})
        except IntegrityError:
            raise AccountError(f"the name {name!r} is taken") from None
        return Account(name, role, 0)

    def launched(self, name: str) -> Account:
        """An operator's player (sent with a launch token): made on first launch, with no
        password (``!`` is no argon2 hash: no password opens it). A member of staff is never
        an operator's player."""
        valid_name(name)
        found = self.get(name)
        if found is None:
            row = {"name": name, "role": str(Role.PLAYER), "password_hash": "!", "balance": 0}
            try:
                with recorded(self.store) as rec:
                    rec.insert(accounts, row | {"created_at": chain.now()})
            except IntegrityError:
                pass  # launched twice at once: the other made it
            found = self.get(name)
        if found is None or found.role is not Role.PLAYER:
            raise AccountError(f"{name!r} is not a player's account")
        if found.disabled:
            raise AccountError(f"the account {name!r} is disabled")
        return found

    def get(self, name: str) -> Account | None:
        with self.store.read() as conn:
            return _account(conn, name)

    def check(self, name: str, password: str) -> Account | None:
        """The account when ``password`` is its password, else None (a disabled account is
        returned: the caller refuses it, and says so only to whoever knows the password).
        An unknown name costs a verification too, so the time of the answer does not tell
        which names exist."""
        from argon2.exceptions import InvalidHashError, VerificationError

        with self.store.read() as conn:
            row = conn.execute(
                select(accounts.c.password_hash).where(accounts.c.name == name)
            ).first()
        if row is None:
            if self._dummy is None:
                self._dummy = self.hasher.hash(secrets.token_urlsafe(12))
            stored = self._dummy
        else:
            stored = str(row[0])
        ok: bool
        try:
            ok = self.hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            ok = False
        return self.get(name) if ok and row is not None else None

    # ------------------------------------------------------------------ sessions
    def open_session(self, name: str, seconds: float) -> str:
        """A new logged-in session of ``name`` for ``seconds``; its token (kept only as its
        digest)."""
        token = secrets.token_urlsafe(32)
        row = {"token_hash": token_digest(token), "account": name, "created_at": chain.now()}
        with self.store.write() as conn:
            conn.execute(insert(account_sessions).values(row | {"expires_at": _later(seconds)}))
        return token

    def session(self, token: str) -> Account | None:
        """The account logged in with ``token``, None when unknown, expired or disabled."""
        if not token or len(token) > 64 or not token.isascii():
            return None
        s = account_sessions.c
        with self.store.read() as conn:
            row = conn.execute(
                select(s.account, s.expires_at).where(s.token_hash == token_digest(token))
            ).first()
            if row is None or str(row[1]) <= chain.now():
                return None
            found = _account(conn, str(row[0]))
        return None if found is None or found.disabled else found

    def revoke(self, name: str) -> None:
        """End every session of ``name`` at once (:func:`pontoon.store.revocation.revoke`)."""
        with self.store.write() as conn:
            revoke(conn, name)

    def revoked_since(self, since: str) -> tuple[str, list[tuple[str, str]]]:
        """The latest revocation after ``since`` (UTC ISO; ``since`` when none) and the
        accounts revoked after it, with when: what a server process polls to close their
        sockets."""
        a = accounts.c
        with self.store.read() as conn:
            rows = conn.execute(
                select(a.name, a.revoked_at).where(a.revoked_at > since).order_by(a.revoked_at)
            ).all()
        latest = str(rows[-1][1]) if rows else since
        return latest, [(str(n), str(at)) for n, at in rows]

    def purge_sessions(self) -> int:
        """Delete the expired logins; how many."""
        with self.store.write() as conn:
            gone = conn.execute(
                delete(account_sessions).where(account_sessions.c.expires_at <= chain.now())
            ).rowcount
        return int(gone or 0)

    # ------------------------------------------------------------------ staff lifecycle
    def disable(self, name: str, by: str) -> None:
        """``name`` opens nothing from now on (every session ended), recorded as ``by``'s."""
        self._change(name, {"disabled_at": chain.now()}, by)

    def enable(self, name: str, by: str) -> None:
        self._change(name, {"disabled_at": None}, by)

    def set_role(self, name: str, role: Role, by: str) -> None:
        """A member of staff's new role (staff stay staff, players stay players): every
        session ended, so no page keeps the old role's powers."""
        found = self.get(name)
        if found is None:
            raise AccountError(f"no account {name!r}")
        if (found.role is Role.PLAYER) != (role is Role.PLAYER):
            raise AccountError("a player's account stays a player's, a staff account staff's")
        self._change(name, {"role": str(role)}, by)

    def set_password(self, name: str, password: str, by: str) -> None:
        """A new password for ``name`` (reset by ``by``, or changed by the account itself):
        every session ended (OWASP ASVS 3.3.3: other sessions end on a password change)."""
        digest = self.hasher.hash(valid_password(password))
        self._change(name, {"password_hash": digest}, by)

    def _change(self, name: str, values: dict[str, Any], by: str) -> None:
        with recorded(self.store) as rec:
            if rec.update(accounts, {"name": name}, values, by) is None:
                raise AccountError(f"no account {name!r}")
            revoke(rec.conn, name)

    # ------------------------------------------------------------------ the wallet
    def cashier(
        self, name: str, kind: Movement, amount: int, reference: str, by: str | None
    ) -> int:
        """A cashier's deposit into or withdrawal from ``name``'s wallet, under its
        ``reference`` (the idempotency key: the same reference again for the same movement
        is made once; for another movement it is refused). The balance after it."""
        if kind not in (Movement.DEPOSIT, Movement.WITHDRAWAL):
            raise AccountError(f"a cashier deposits or withdraws, not {kind}")
        if not 0 < amount <= MAX_AMOUNT:
            raise AccountError(f"an amount is 1 to {MAX_AMOUNT} cents, not {amount}")
        if not REFERENCE.match(reference):
            raise AccountError("a reference is 1 to 64 printable characters with no space")
        key = f"cashier:{reference}"
        w = wallet_entries.c
        with recorded(self.store) as rec:
            conn = rec.conn
            done = conn.execute(select(w.account, w.kind, w.amount).where(w.key == key)).first()
            if done is not None:
                if tuple(done) != (name, str(kind), amount):
                    raise WrongReference(f"the reference {reference!r} is another movement's")
                return self._balance(conn, name)
            if kind is Movement.DEPOSIT:
                play_limits.hold(conn, name)  # (another cashier's deposit waits for this one)
                play_limits.check_deposit(conn, name, amount)
            sign = 1 if kind is Movement.DEPOSIT else -1
            after = move_wallet(conn, name, sign * amount)
            if after is None:
                if self._exists(conn, name):
                    have = self._balance(conn, name)
                    raise AccountError(f"{name}'s wallet holds {have}, too little for {amount}")
                raise AccountError(f"no account {name!r}")
            rec.insert(
                wallet_entries,
                {
                    "key": key,
                    "account": name,
                    "kind": str(kind),
                    "amount": amount,
                    "balance": int(after),
                    "at": chain.now(),
                    "reference": reference,
                    "by": by,
                },
                by,
            )
        return int(after)

    # ------------------------------------------------------------------ play limits
    def limits(self, name: str) -> dict[str, Any]:
        """The limits in effect, the raises cooling off and the end of a pause."""
        with self.store.read() as conn:
            return {
                "limits": play_limits.current(conn, name),
                "pending": play_limits.pending(conn, name),
                "paused_until": play_limits.paused_until(conn, name),
            }

    def set_limit(self, name: str, kind: play_limits.Limit, value: int | None) -> str:
        with recorded(self.store) as rec:
            return play_limits.set_limit(rec, name, kind, value)

    def pause(self, name: str, kind: play_limits.Pause, days: int) -> str:
        with recorded(self.store) as rec:
            return play_limits.pause(rec, name, kind, days)

    def paused_until(self, name: str) -> str | None:
        with self.store.read() as conn:
            return play_limits.paused_until(conn, name)

    def reality(self, name: str, since: str) -> int:
        """The player's net at the tables since ``since`` (UTC ISO)."""
        with self.store.read() as conn:
            return play_limits.net_since(conn, name, since)

    def play_clock(self, name: str) -> tuple[str | None, str | None]:
        """:func:`pontoon.store.play_limits.play_clock`: when play began in the current login
        (None: not yet), and the last reality check acknowledged since."""
        with self.store.read() as conn:
            return play_limits.play_clock(conn, name)

    def acknowledge(self, name: str, minutes: int) -> None:
        with recorded(self.store) as rec:
            play_limits.record_reality(rec, name, minutes)

    def entries(self, name: str) -> list[dict[str, Any]]:
        """``name``'s wallet movements, oldest first."""
        w = wallet_entries.c
        with self.store.read() as conn:
            rows = conn.execute(
                select(wallet_entries).where(w.account == name).order_by(w.at, w.key)
            )
            return [dict(r._mapping) for r in rows]

    @staticmethod
    def _exists(conn: Any, name: str) -> bool:
        found = conn.execute(select(accounts.c.name).where(accounts.c.name == name)).first()
        return found is not None

    @staticmethod
    def _balance(conn: Any, name: str) -> int:
        found = conn.execute(select(accounts.c.balance).where(accounts.c.name == name)).scalar()
        if found is None:
            raise AccountError(f"no account {name!r}")
        return int(found)


def _account(conn: Any, name: str) -> Account | None:
    a = accounts.c
    row = conn.execute(
        select(a.name, a.role, a.balance, a.disabled_at).where(a.name == name)
    ).first()
    if row is None:
        return None
    return Account(str(row[0]), Role(row[1]), int(row[2]), row[3] is not None)


def balances(store: Store, names: list[str]) -> dict[str, int]:
    """The wallets' balances of ``names`` (those that have an account)."""
    if not names:
        return {}
    with store.read() as conn:
        rows = conn.execute(
            select(accounts.c.name, accounts.c.balance).where(accounts.c.name.in_(names))
        )
        return {str(n): int(b) for n, b in rows}


__all__ = [
    "STAFF",
    "Account",
    "AccountError",
    "Accounts",
    "Movement",
    "Role",
    "hasher",
]
