"""An operator's wallet behind the tables, and the operator's launch of a player (issue 18).

An online operator keeps its players' money and sends them to the game with a **launch
token**: a JWT (HS256, the secret shared with the operator) naming the player (``sub``), with
``iss`` (the operator), ``aud`` ``pontoon``, ``iat``, ``exp`` and a ``jti`` used once.
``GET /launch?token=…&table=…`` checks it, makes the player's account on first launch (no
password: an operator's player logs in only through the operator), opens a session in the
cookie and sends the browser to the table.

The server then calls the operator's wallet: ``POST {url}/debit`` for a wager,
``/credit`` for what a round leaves the player, ``/rollback`` for a debit whose wager was not
recorded, each ``{"key", "player", "amount", "table"}`` with a bearer JWT of ours; the answer is
``{"balance": cents}``. Every call carries an idempotency key and is written to the store
(``operator_calls``) **before** it is sent:

- a **debit** is written ``pending``, sent (retried with the same key on a timeout, a lost
  answer or a 5xx), and marked ``done`` in the transaction that records its wager; a 4xx is
  the operator's no (``declined``: the wager is refused, ``funds``);
- a debit left ``pending`` — its wager refused, unanswered, or the server killed before the
  wager was recorded — is claimed by the outbox (``rollback``: its wager can no longer be
  recorded) and **rolled back** until the operator acknowledges it (``rolled-back``);
- a **credit** is written ``pending`` in the transaction of the round's end and sent by the
  outbox until acknowledged, after a restart too.

So a wager is charged once and only when recorded, and a win is paid once, whatever the
network or a SIGKILL does; the operator must answer the same key with the same result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse
from sqlalchemy import insert, select, update

from pontoon.store import chain
from pontoon.store.db import Store, WalletError
from pontoon.store.schema import operator_calls

from .accounts import COOKIE, Door

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OperatorConfig:
    """Where the operator's wallet answers, the secret shared with it (HS256, both ways), and
    the issuer its launch tokens name."""

    url: str
    secret: str
    issuer: str = "operator"
    timeout: float = 2.0  # seconds for one call
    attempts: int = 4  # tries of a debit before the wager is refused (and rolled back)


class Declined(Exception):
    """The operator said no (a 4xx): final, not retried."""


class Unavailable(Exception):
    """No answer from the operator after every try."""


class OperatorWallet:
    """The calls to one operator's wallet; ``balances``: the server's copy of its players'."""

    def __init__(self, store: Store, config: OperatorConfig, balances: dict[str, int]) -> None:
        self.store = store
        self.config = config
        self.balances = balances
        self.client = httpx.AsyncClient(base_url=config.url.rstrip("/"), timeout=config.timeout)
        self.in_flight: set[str] = set()  # debits sent, their wager not yet recorded or refused
        self.wake = asyncio.Event()

    def _auth(self) -> dict[str, str]:
        import jwt

        now = int(time.time())
        claims = {"iss": "pontoon", "aud": self.config.issuer, "iat": now, "exp": now + 60}
        return {"Authorization": "Bearer " + jwt.encode(claims, self.config.secret, "HS256")}

    async def call(self, kind: str, key: str, player: str, amount: int, table: str) -> int:
        """One call, retried with the same key; the player's balance after it."""
        body = {"key": key, "player": player, "amount": amount, "table": table}
        for attempt in range(self.config.attempts):
            try:
                r = await self.client.post(f"/{kind}", json=body, headers=self._auth())
            except httpx.HTTPError:
                r = None
            if r is not None and r.status_code == 200:
                balance = int(r.json()["balance"])
                self.balances[player] = balance
                return balance
            if r is not None and 400 <= r.status_code < 500:
                raise Declined(_reason(r))
            await asyncio.sleep(0.05 * 2**attempt)
        raise Unavailable(f"the operator's wallet did not answer a {kind} of {amount}")

    async def balance(self, player: str) -> int:
        try:
            r = await self.client.get("/balance", params={"player": player}, headers=self._auth())
        except httpx.HTTPError as exc:
            raise Unavailable(f"the operator's wallet did not answer: {exc}") from None
        if r.status_code != 200:
            raise Declined(_reason(r))
        balance = int(r.json()["balance"])
        self.balances[player] = balance
        return balance

    # ------------------------------------------------------------------ debits
    async def debit(self, table: str, debits: list[tuple[int, str, int]]) -> dict[int, str]:
        """Debit each ``(seq, player, amount)`` for the events about to be recorded at
        ``table``; their keys by seq, to be marked done with the write (then
        :meth:`settled`). :class:`~pontoon.store.db.WalletError` when one is declined or
        unanswered: its wager is refused, and what was debited is rolled back."""
        keys = {seq: f"table:{table}:{seq}:{os.urandom(4).hex()}" for seq, _, _ in debits}
        self.in_flight |= set(keys.values())
        rows = [
            {"key": keys[seq], "account": player, "kind": "debit", "amount": amount}
            | {"table_id": table, "status": "pending", "at": chain.now()}
            for seq, player, amount in debits
        ]
        try:
            await asyncio.to_thread(self._insert, rows)  # written before it is sent
            for seq, player, amount in debits:
                try:
                    await self.call("debit", keys[seq], player, amount, table)
                except Declined as exc:
                    await asyncio.to_thread(self._finish, keys[seq], "declined")
                    raise WalletError(f"the operator's wallet refused: {exc}") from None
                except Unavailable as exc:
                    raise WalletError(str(exc)) from None
        except BaseException:
            self.settled(keys)  # no longer in flight: the outbox rolls back what is pending
            raise
        return keys

    def settled(self, keys: dict[int, str]) -> None:
        """The write of these debits' wagers is over (recorded or not)."""
        self.in_flight -= set(keys.values())
        self.wake.set()

    # ------------------------------------------------------------------ the outbox
    async def outbox(self) -> None:
        """Until the server stops: send every pending credit, and roll back every pending debit
        that is not in flight, each until the operator acknowledges it."""
        while True:
            self.wake.clear()
            try:
                await self.flush()
            except Exception:  # the store failing: logged, tried again
                log.exception("the operator's outbox failed; tried again")
            with suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=1.0)

    async def flush(self) -> int:
        """One pass of the outbox; how many calls it completed."""
        rows = await asyncio.to_thread(self._pending)
        done = 0
        for row in rows:
            if row["key"] in self.in_flight:
                continue
            kind = "credit" if row["kind"] == "credit" else "rollback"
            if row["status"] == "pending" and kind == "rollback":
                # claimed first: a debit whose wager was recorded since the read is done, and
                # one claimed here can no longer be recorded (its write finds it taken)
                claimed = await asyncio.to_thread(self._finish, row["key"], "rollback")
                if not claimed:
                    continue
            try:
                await self.call(kind, row["key"], row["account"], row["amount"], row["table_id"])
            except Unavailable:
                continue  # the next pass tries again
            except Declined as exc:
                if kind == "credit":  # a win is owed: never dropped, told and tried again
                    log.error("the operator declined credit %s: %s", row["key"], exc)
                    continue
            ended = "done" if kind == "credit" else "rolled-back"
            await asyncio.to_thread(self._finish, row["key"], ended, row["status"])
            done += 1
        return done

    async def close(self) -> None:
        await self.client.aclose()

    # ------------------------------------------------------------------ the store
    def _insert(self, rows: list[dict[str, Any]]) -> None:
        with self.store.write() as conn:
            conn.execute(insert(operator_calls), rows)

    def _finish(self, key: str, status: str, was: str = "pending") -> bool:
        """Move a call from ``was`` to ``status``; whether it was still ``was``."""
        c = operator_calls.c
        with self.store.write() as conn:
            moved = conn.execute(
                update(operator_calls)
                .where(c.key == key, c.status == was)
                .values(status=status, done_at=chain.now())
            ).rowcount
        return bool(moved == 1)

    def _pending(self) -> list[dict[str, Any]]:
        c = operator_calls.c
        with self.store.read() as conn:
            rows = conn.execute(
                select(c.key, c.account, c.kind, c.amount, c.table_id, c.status)
                .where(c.status.in_(("pending", "rollback")))
                .order_by(c.at, c.key)
            )
            return [dict(r._mapping) for r in rows]


def _reason(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return f"HTTP {r.status_code}"
    text = body.get("error") or body.get("detail") if isinstance(body, dict) else None
    return str(text or f"HTTP {r.status_code}")


def add_launch(
    app: FastAPI,
    door: Callable[[], Door],
    wallet: Callable[[], OperatorWallet],
    config: OperatorConfig,
) -> None:
    """``GET /launch?token=JWT&table=T``: the operator's player comes in (``door``: a
    :class:`~pontoon.server.accounts.Door`; ``wallet``: the :class:`OperatorWallet`)."""
    from sqlalchemy.exc import IntegrityError

    from pontoon.errors import InputError
    from pontoon.store.schema import launches

    @app.get("/launch")
    async def launch(request: Request, token: str = "", table: str = "") -> RedirectResponse:
        d, w = door(), wallet()
        try:
            claims = check_launch(token, config)
        except Declined as exc:
            log.warning("launch token refused from %s: %s", _peer(request), exc)
            raise HTTPException(401, str(exc)) from None
        name = str(claims["sub"])
        try:
            account = await asyncio.to_thread(d.accounts.launched, name)
        except InputError as exc:
            raise HTTPException(403, str(exc)) from None

        def used() -> None:
            with d.accounts.store.write() as conn:
                row = {"jti": str(claims["jti"])[:100], "account": name, "at": chain.now()}
                conn.execute(insert(launches).values(row))

        try:
            await asyncio.to_thread(used)
        except IntegrityError:
            raise HTTPException(401, "launch token refused: it was used already") from None
        try:
            await w.balance(account.name)
        except (Declined, Unavailable) as exc:
            raise HTTPException(503, f"the operator's wallet: {exc}") from None
        session = await asyncio.to_thread(d.accounts.open_session, name, d.session_seconds)
        where = f"/?table={table}" if table.replace("-", "").isalnum() else "/"
        out = RedirectResponse(where, status_code=303)
        out.set_cookie(
            COOKIE,
            session,
            max_age=max(1, int(d.session_seconds)),
            httponly=True,
            samesite="strict",  # the page's own requests carry it, no other site's
            secure=request.url.scheme == "https",
            path="/",
        )
        return out


def _peer(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


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


__all__ = ["Declined", "OperatorConfig", "OperatorWallet", "Unavailable", "check_launch"]
