"""An operator's wallet behind the tables, and the operator's launch of a player.

An online operator keeps its players' money and sends them to the game with a **launch
token**: a JWT (HS256, the secret shared with the operator) naming the player (``sub``), with
``iss`` (the operator), ``aud`` ``pontoon``, ``iat``, ``exp`` and a ``jti`` used once.
``GET /launch?token=…&table=…`` checks it, makes the player's account on first launch (no
password: an operator's player logs in only through the operator), refuses a player whose play
is paused (403, until when), opens a session in the cookie and sends the browser to the table.

The server then calls the operator's wallet: ``POST {url}/debit`` for a wager,
``/credit`` for what a round leaves the player, ``/rollback`` for a debit whose wager was not
recorded, each ``{"key", "player", "amount", "table"}`` with a bearer JWT of ours; the answer is
``{"balance": cents}``. Every call carries an idempotency key and is written to the store
(``operator_calls``, with its ``owner``: this process's id) **before** it is sent:

- a **debit** is written ``pending`` (in the transaction that checks the player's loss limits
  and pause), sent with no table's lock held (retried with the same key on a timeout, a lost
  answer or a 5xx; :attr:`OperatorConfig.longest` bounds it), and marked ``done`` in the
  transaction that records its wager; a 4xx is the operator's no (``declined``: ``funds``);
- a debit left ``pending`` — its wager refused, unanswered, or the server killed before the
  wager was recorded — is claimed by the outbox (``rollback``: its wager can no longer be
  recorded) and **rolled back** until the operator acknowledges it (``rolled-back``);
- a **credit** is written ``pending`` in the transaction of the round's end and sent by the
  outbox until acknowledged, after a restart too.

A rollback the operator refuses (4xx) or does not confirm, and a credit it refuses, is an
**open dispute** (``disputed``): logged as an error, listed to the pit boss and in ``pontoon
report`` (:mod:`pontoon.audit.disputes`), and tried again for ever on a back-off
(:meth:`OperatorConfig.retry_after`: 2 s, doubled each try, at most an hour; ``tries``,
``next_at`` and ``error`` record it) until the operator acknowledges it. An unanswered credit
stays ``pending`` on the same schedule.

Each process's outbox sends only its own calls that are not in flight, the credits of the
tables it serves that no process has taken yet, and any call of a table it serves older than
:attr:`OperatorConfig.longest` (a dead process's debit: rolled back by the table's next holder);
a table no process serves (closed by the pit boss, or no longer configured) is every process's
in that, so its calls are ended too.
So a wager is charged once and only when recorded, and a win is paid once, whatever the
network or a SIGKILL does; the operator must answer the same key with the same result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import orjson
from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from pontoon.errors import PontoonError
from pontoon.store import chain, play_limits
from pontoon.store.db import Store, StoreError, WalletError
from pontoon.store.leases import holders
from pontoon.store.schema import operator_calls

log = logging.getLogger(__name__)

BACKOFF = 0.05  # seconds after a call's first failed try, doubled after each
BEARER_SECONDS = 60  # a bearer token of ours is good this long, and made again after half of it
OPEN = ("pending", "rollback", "disputed")  # the calls the outbox still owes
_NEW_CALL = insert(operator_calls)  # built once: SQLAlchemy reuses its compiled form


@dataclass(frozen=True)
class OperatorConfig:
    """Where the operator's wallet answers, the secret shared with it (HS256, both ways), and
    the issuer its launch tokens name; how long a call may take, and the outbox's schedule."""

    url: str
    secret: str
    issuer: str = "operator"
    timeout: float = 2.0  # seconds for one try of a call, the answer read whole
    attempts: int = 4  # tries of a call (a debit's wager is refused after them)
    retry_first: float = 2.0  # seconds before the outbox tries a failed call again
    retry_most: float = 3600.0  # the back-off doubles up to this, and goes on for ever

    @property
    def longest(self) -> float:
        """The longest a debit can be in flight, from its row to its wager's record: every try
        and the waits between them, and one try's time more for the record. A call of a table
        this process serves, older than this and another process's, is this one's to end."""
        waits = sum(BACKOFF * 2.0**i for i in range(self.attempts))
        return self.attempts * self.timeout + waits + self.timeout

    def retry_after(self, tries: int) -> float:
        """Seconds before the outbox tries a call again after its ``tries``-th failed pass.

        >>> [OperatorConfig("u", "s").retry_after(n) for n in (1, 2, 3, 12, 13, 500)]
        [2.0, 4.0, 8.0, 3600.0, 3600.0, 3600.0]
        """
        return float(min(self.retry_first * 2.0 ** min(max(tries, 1) - 1, 40), self.retry_most))


class Declined(PontoonError):
    """The operator said no (a 4xx): final for a debit; for a rollback or a credit, a dispute."""

    code = "declined"


class Unavailable(PontoonError):
    """No answer from the operator after every try."""

    code = "unanswered"


class Unanswered(WalletError):
    """A debit the operator did not answer: its wager is refused (code ``wallet``)."""

    code = "wallet"


Debit = tuple[str, str, int]
"""A debit the operator acknowledged: (key, player, amount)."""


class OperatorWallet:
    """The calls to one operator's wallet; ``balances``: the server's copy of its players'.
    ``owner``: this process's id, made at start, kept with every call it writes; ``serving``:
    the tables this process serves now (kept by each :class:`~pontoon.server.table.Table`);
    ``leased``: the tables are shared by lease with other processes (a table no lease holds is
    served by nobody)."""

    def __init__(
        self, store: Store, config: OperatorConfig, balances: dict[str, int], leased: bool = False
    ) -> None:
        self.store = store
        self.leased = leased  # several processes share the tables by lease
        self.config = config
        self.balances = balances
        self.base = config.url.rstrip("/")
        self._http: aiohttp.ClientSession | None = None  # made in the loop that calls
        self._bearer: tuple[int, dict[str, str]] = (0, {})  # (made at, the header)
        self.owner = uuid.uuid4().hex
        self.serving: set[str] = set()
        self.in_flight: set[str] = set()  # debits sent, their wager not yet recorded or refused
        self.wake = asyncio.Event()
        self.answers: Counter[tuple[str, str]] = Counter()  # (kind, ok/declined/unanswered)

    def serve(self, table: str) -> None:
        self.serving.add(table)

    def let_go(self, table: str) -> None:
        self.serving.discard(table)

    def _auth(self) -> dict[str, str]:
        """Our bearer token (HS256, good for :data:`BEARER_SECONDS`), made again once half of
        that has passed, not for every call (signing one was a few per cent of the server's
        CPU in operator mode)."""
        import jwt

        now = int(time.time())
        made, header = self._bearer
        if now - made >= BEARER_SECONDS // 2:
            claims = {"iss": "pontoon", "aud": self.config.issuer, "iat": now}
            token = jwt.encode(claims | {"exp": now + BEARER_SECONDS}, self.config.secret, "HS256")
            header = {"Authorization": "Bearer " + token}
            self._bearer = (now, header)
        return header

    async def _ask(self, method: str, path: str, **options: Any) -> tuple[int, bytes]:
        """One request to the operator and its answer, read whole within ``timeout`` seconds:
        (status, body). :class:`aiohttp.ClientError` or :class:`TimeoutError` when there is
        none. (aiohttp, not httpx: with 50 calls in flight, httpx's pool took about 2.5 ms of
        CPU a call on the bench's host, aiohttp about 0.5 ms.)"""
        if self._http is None:
            self._http = aiohttp.ClientSession(json_serialize=lambda o: orjson.dumps(o).decode())
        async with asyncio.timeout(self.config.timeout):
            url = self.base + path
            async with self._http.request(method, url, headers=self._auth(), **options) as r:
                return r.status, await r.read()

    async def call(self, kind: str, key: str, player: str, amount: int, table: str) -> int:
        """One call, retried with the same key; the player's balance after it. Each try has
        ``timeout`` seconds for the whole answer."""
        body = {"key": key, "player": player, "amount": amount, "table": table}
        for attempt in range(self.config.attempts):
            try:
                status, text = await self._ask("POST", f"/{kind}", json=body)
            except (aiohttp.ClientError, TimeoutError):
                status, text = 0, b""
            if status == 200:
                balance = int(orjson.loads(text)["balance"])
                self.balances[player] = balance
                self.answers[kind, "ok"] += 1
                return balance
            if 400 <= status < 500:
                self.answers[kind, "declined"] += 1
                raise Declined(_reason(status, text))
            await asyncio.sleep(BACKOFF * 2**attempt)
        self.answers[kind, "unanswered"] += 1
        raise Unavailable(f"the operator's wallet did not answer a {kind} of {amount}")

    async def balance(self, player: str) -> int:
        try:
            status, text = await self._ask("GET", "/balance", params={"player": player})
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise Unavailable(f"the operator's wallet did not answer: {exc!r}") from None
        if status != 200:
            raise Declined(_reason(status, text))
        balance = int(orjson.loads(text)["balance"])
        self.balances[player] = balance
        return balance

    # ------------------------------------------------------------------ debits
    async def debit(self, table: str, wants: list[tuple[str, int]]) -> list[Debit]:
        """Debit each ``(player, amount)`` for a wager about to be recorded at ``table`` (no
        table's lock held: this waits for the operator, at most :attr:`OperatorConfig.longest`);
        the debits, each to be marked done with the wager's write (then :meth:`settled`).
        :class:`~pontoon.store.db.WalletError` when one passes the player's limits or is
        declined, :class:`Unanswered` when one is not answered: its wager is refused, and what
        was debited is rolled back."""
        keys = [f"table:{table}:{os.urandom(8).hex()}" for _ in wants]
        self.in_flight |= set(keys)
        rows = [
            {"key": key, "account": player, "kind": "debit", "amount": amount, "table_id": table}
            | {"status": "pending", "at": chain.now(), "owner": self.owner}
            for key, (player, amount) in zip(keys, wants, strict=True)
        ]
        paid = [(key, player, amount) for key, (player, amount) in zip(keys, wants, strict=True)]
        try:
            await asyncio.to_thread(self._insert, rows)  # written before it is sent
            for key, player, amount in paid:
                try:
                    await self.call("debit", key, player, amount, table)
                except Declined as exc:
                    await asyncio.to_thread(self._finish, key, "declined", error=str(exc))
                    raise WalletError(f"the operator's wallet refused: {exc}") from None
                except Unavailable as exc:
                    raise Unanswered(str(exc)) from None
        except BaseException:
            self.settled(paid)  # no longer in flight: the outbox rolls back what is pending
            raise
        return paid

    def settled(self, paid: list[Debit]) -> None:
        """The write of these debits' wagers is over (recorded or not)."""
        if paid:
            self.in_flight -= {key for key, _, _ in paid}
            self.wake.set()

    # ------------------------------------------------------------------ the outbox
    async def outbox(self) -> None:
        """Until the server stops: send every credit owed, and roll back every debit left
        pending, each until the operator acknowledges it (:meth:`flush`)."""
        while True:
            self.wake.clear()
            try:
                await self.flush()
            except Exception:  # the store failing: logged, tried again
                log.exception("the operator's outbox failed; tried again")
            with suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=1.0)

    async def flush(self) -> int:
        """One pass of the outbox over the calls due now that are this process's to send;
        how many the operator acknowledged."""
        rows = await asyncio.to_thread(self._due)
        done = 0
        for row in rows:
            if row["key"] in self.in_flight:
                continue
            kind = "credit" if row["kind"] == "credit" else "rollback"
            status = await asyncio.to_thread(self._take, row)
            if status is None:  # recorded since the read, or another process's now
                continue
            try:
                await self.call(kind, row["key"], row["account"], row["amount"], row["table_id"])
            except (Declined, Unavailable) as exc:
                await asyncio.to_thread(self._failed, row, kind, status, exc)
                continue
            ended = "done" if kind == "credit" else "rolled-back"
            if await asyncio.to_thread(self._finish, row["key"], ended, status):
                done += 1
                if status == "disputed":
                    log.warning(
                        "the operator acknowledged the %s %s of %d for %s at table %s after "
                        "%d tries: the dispute is closed",
                        kind, row["key"], row["amount"], row["account"], row["table_id"],
                        row["tries"] + 1,
                    )  # fmt: skip
        return done

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()

    # ------------------------------------------------------------------ the store
    def _insert(self, rows: list[dict[str, Any]]) -> None:
        """Write the debits ``pending``, each player's account held and their limits checked
        first in the same transaction when they set any (:class:`WalletError`: nothing
        written; :class:`~pontoon.store.db.StoreError` when the store refuses)."""
        try:
            with self.store.write() as conn:
                for row in rows:  # (each written before the next is checked: they add up)
                    if play_limits.limited(conn, row["account"]):
                        play_limits.hold(conn, row["account"])
                        try:
                            play_limits.check_wager(conn, row["account"], row["amount"])
                        except play_limits.LimitError as exc:
                            raise WalletError(str(exc)) from None
                    conn.execute(_NEW_CALL, row)
        except SQLAlchemyError as exc:
            raise StoreError(f"the store refused the operator's debit: {exc}") from None

    def _finish(self, key: str, status: str, was: str = "pending", error: str = "") -> bool:
        """Move a call from ``was`` to ``status``; whether it was still ``was``."""
        c = operator_calls.c
        values = {"status": status, "done_at": chain.now()}
        if error:
            values["error"] = error[:200]
        with self.store.write() as conn:
            moved = conn.execute(
                update(operator_calls).where(c.key == key, c.status == was).values(**values)
            ).rowcount
        return bool(moved == 1)

    def _due(self) -> list[dict[str, Any]]:
        """The calls owed and due now that this process may send: its own; a credit of a table
        it serves that no process has taken; any call of a table it serves older than
        :attr:`OperatorConfig.longest` (its process gone, or its debit long over). A table
        nobody serves (closed, or no longer configured) counts as this process's: its calls
        are ended by whichever process looks first."""
        c = operator_calls.c
        now = chain.now()
        old = _stored(datetime.now(UTC) - timedelta(seconds=self.config.longest))
        serving = sorted(self.serving)
        held = sorted(set(holders(self.store)) | self.serving) if self.leased else serving
        served = or_(c.table_id.in_(serving), c.table_id.not_in(held))
        untaken_credit = and_(c.kind == "credit", c.owner.is_(None))
        theirs = and_(
            served,
            or_(c.owner.is_(None), c.owner != self.owner),
            or_(c.at < old, untaken_credit),
        )
        with self.store.read() as conn:
            rows = conn.execute(
                select(c.key, c.account, c.kind, c.amount, c.table_id, c.status)
                .add_columns(c.owner, c.tries)
                .where(c.status.in_(OPEN), or_(c.next_at.is_(None), c.next_at <= now))
                .where(or_(c.owner == self.owner, theirs))
                .order_by(c.at, c.key)
            )
            return [dict(r._mapping) for r in rows]

    def _take(self, row: dict[str, Any]) -> str | None:
        """Make ``row`` this process's to send, as read (a pending debit claimed: ``rollback``,
        its wager can no longer be recorded); its status now, or None when it changed since."""
        status = "rollback" if row["status"] == "pending" and row["kind"] == "debit" else None
        if status is None and row["owner"] == self.owner:
            return str(row["status"])  # (nothing to write)
        c = operator_calls.c
        same_owner = c.owner.is_(None) if row["owner"] is None else c.owner == row["owner"]
        with self.store.write() as conn:
            moved = conn.execute(
                update(operator_calls)
                .where(c.key == row["key"], c.status == row["status"], same_owner)
                .values(owner=self.owner, status=status or row["status"])
            ).rowcount
        return (status or str(row["status"])) if moved == 1 else None

    def _failed(self, row: dict[str, Any], kind: str, status: str, exc: Exception) -> None:
        """A pass that did not end ``row``: tried again after the back-off. A rollback not
        acknowledged, or a call refused, is an open dispute (logged as an error when it
        opens); an unanswered credit stays pending."""
        tries = int(row["tries"]) + 1
        wait = self.config.retry_after(tries)
        disputed = kind == "rollback" or isinstance(exc, Declined) or status == "disputed"
        now = datetime.now(UTC)
        values = {
            "status": "disputed" if disputed else status,
            "tries": tries,
            "next_at": _stored(now + timedelta(seconds=wait)),
            "error": str(exc)[:200],
        }
        c = operator_calls.c
        with self.store.write() as conn:
            conn.execute(
                update(operator_calls)
                .where(c.key == row["key"], c.status == status)
                .values(**values)
            )
        what = "refused" if isinstance(exc, Declined) else "did not confirm"
        args = (what, kind, row["key"], row["amount"], row["account"], row["table_id"], exc)
        text = "the operator's wallet %s the %s %s of %d for %s at table %s: %s"
        if disputed and status != "disputed":
            log.error(text + "; an open dispute, tried again in %g s", *args, wait)
        else:
            log.warning(text + "; try %d, tried again in %g s", *args, tries, wait)


def _stored(t: datetime) -> str:
    """A time as the store keeps it (:func:`pontoon.store.chain.now`)."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _reason(status: int, body: bytes) -> str:
    """The operator's reason for a no, as one line of at most 200 characters (it goes to the
    log, the store and the player).

    >>> _reason(409, b'{"error": "no  such   debit"}')
    'HTTP 409: no such debit'
    >>> _reason(502, b"<html>bad gateway</html>")
    'HTTP 502'
    """
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return f"HTTP {status}"
    text = answer.get("error") or answer.get("detail") if isinstance(answer, dict) else None
    said = " ".join(str(text).split())[:180] if text else ""
    return f"HTTP {status}: {said}" if said else f"HTTP {status}"


def spend_launch(store: Store, jti: str, account: str) -> bool:
    """Record the launch token ``jti`` of ``account`` as used; False when it was used
    already (a launch token opens one session, once)."""
    from sqlalchemy.exc import IntegrityError

    from pontoon.store.schema import launches

    try:
        with store.write() as conn:
            row = {"jti": jti[:100], "account": account, "at": chain.now()}
            conn.execute(insert(launches).values(row))
    except IntegrityError:
        return False
    return True


def check_launch(token: str, config: OperatorConfig) -> dict[str, Any]:
    """The claims of an operator's launch token, checked: signature, issuer, audience, time;
    :class:`Declined` with the reason otherwise."""
    import jwt

    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            config.secret,
            algorithms=["HS256"],
            audience="pontoon",
            issuer=config.issuer,
            options={"require": ["exp", "iat", "sub", "jti", "iss", "aud"]},
        )
    except jwt.PyJWTError as exc:
        raise Declined(f"launch token refused: {exc}") from None
    return claims


__all__ = [
    "Debit",
    "Declined",
    "OperatorConfig",
    "OperatorWallet",
    "Unanswered",
    "Unavailable",
    "check_launch",
    "spend_launch",
]
