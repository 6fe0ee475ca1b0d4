"""Accounts at the table server (issue 18): register, log in and out, a session in a cookie,
the cashier's window, and who a request comes from.

A login sets the cookie ``pontoon_session``: HttpOnly (no script reads it), SameSite=Strict
(no other site's page sends it), Secure when the request came over TLS, for
``session_seconds``; the store keeps only its SHA-256 digest. Every state-changing request
made with the cookie must carry its CSRF token in the header ``X-CSRF-Token`` (given by the
login and by ``GET /api/me``; a page of another site cannot read it). Failed logins are
throttled per account and per address and logged (the name and address, never the password).
Argon2id verifications run on two threads of their own, so a burst of logins neither blocks
the tables nor takes more than two hashes' memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from pontoon.errors import InputError
from pontoon.store.accounts import STAFF, Account, AccountError, Accounts, Movement, Role

from .limits import Limits, Throttle

COOKIE = "pontoon_session"
CSRF_HEADER = "x-csrf-token"
log = logging.getLogger(__name__)

Name = Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_\-]+$")]
Password = Annotated[str, Field(min_length=1, max_length=128)]


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    password: Password


class CashierRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: Name
    kind: Literal["deposit", "withdrawal"]
    amount: Annotated[int, Field(ge=1, le=10**12)]
    reference: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]


def csrf_of(token: str) -> str:
    """The CSRF token of a session: derived from its secret cookie token, so it needs no
    storage and is known only to whoever holds the cookie's value (the server, the page).

    >>> len(csrf_of("abc")), csrf_of("abc") == csrf_of("abd")
    (32, False)
    """
    return hashlib.sha256(b"pontoon csrf\n" + token.encode("utf-8", "surrogatepass")).hexdigest()[
        :32
    ]


class Door:
    """Who comes in: logins (throttled per name, and per address with ``throttle``, the
    server's failed authentications) off the event loop, and the cookie's account.
    ``wallets``: the server's copy of the players' balances, kept current by the cashier."""

    def __init__(
        self,
        accounts: Accounts,
        limits: Limits,
        throttle: Throttle,
        wallets: dict[str, int],
        session_seconds: float,
    ) -> None:
        self.accounts = accounts
        self.throttle = throttle
        self.wallets = wallets
        self.session_seconds = session_seconds
        self.by_name = Throttle(limits.login_failures, limits.login_window)
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pontoon-login")

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def login(self, name: str, password: str, addr: str) -> tuple[Account, str]:
        """The account and a new session token; 401 for a wrong name or password, 429 when
        the name or the address has failed too often."""
        if self.by_name.blocked(name) or self.throttle.blocked(addr):
            raise HTTPException(429, "too many failed logins: try again later")
        account = await self.run(self.accounts.check, name, password)
        if account is None:
            self.by_name.fail(name)
            self.throttle.fail(addr)
            log.warning("failed login for %r from %s", name, addr)
            raise HTTPException(401, "wrong name or password")
        token = await self.run(self.accounts.open_session, name, self.session_seconds)
        return account, token

    async def who(self, request: Request, *, changes: bool = False) -> tuple[Account, str] | None:
        """The account of the request's cookie and the cookie's token, or None without a
        cookie; 401 for an unknown or expired one; 403 when ``changes`` (a state-changing
        request) and the CSRF header is missing or wrong."""
        token = request.cookies.get(COOKIE)
        if not token:
            return None
        account = await asyncio.to_thread(self.accounts.session, token)
        if account is None:
            raise HTTPException(401, "the session has expired or was closed: log in again")
        if changes:
            sent = request.headers.get(CSRF_HEADER, "")
            if not secrets.compare_digest(sent.encode(), csrf_of(token).encode()):
                raise HTTPException(403, f"a request that changes anything needs {CSRF_HEADER}")
        return account, token

    async def need(self, request: Request, *, changes: bool = False) -> tuple[Account, str]:
        found = await self.who(request, changes=changes)
        if found is None:
            raise HTTPException(401, "log in first")
        return found

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _me(account: Account, token: str) -> dict[str, Any]:
    return {
        "name": account.name,
        "role": str(account.role),
        "balance": account.balance,
        "csrf": csrf_of(token),
    }


def add_routes(app: FastAPI, door: Callable[[], Door]) -> None:
    """``POST /api/accounts`` (register) · ``POST /api/login`` · ``POST /api/logout`` ·
    ``GET /api/me`` · ``POST /api/cashier`` (a cashier's deposit or withdrawal)."""

    @app.post("/api/accounts", status_code=201)
    async def register(body: Credentials) -> dict[str, Any]:
        d = door()
        try:
            account = await d.run(d.accounts.create, body.name, body.password, Role.PLAYER)
        except AccountError as exc:
            raise HTTPException(409, str(exc)) from None
        except InputError as exc:
            raise HTTPException(422, str(exc)) from None
        return {"name": account.name, "role": str(account.role)}

    @app.post("/api/login")
    async def login(body: Credentials, request: Request, response: Response) -> dict[str, Any]:
        d = door()
        addr = request.client.host if request.client is not None else "?"
        account, token = await d.login(body.name, body.password, addr)
        response.set_cookie(
            COOKIE,
            token,
            max_age=max(1, math.ceil(d.session_seconds)),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return _me(account, token)

    @app.post("/api/logout")
    async def logout(request: Request, response: Response) -> dict[str, Any]:
        d = door()
        account, token = await d.need(request, changes=True)
        await asyncio.to_thread(d.accounts.close_session, token)
        response.delete_cookie(COOKIE, path="/")
        return {"name": account.name, "logged_out": True}

    @app.get("/api/me")
    async def me(request: Request) -> dict[str, Any]:
        account, token = await door().need(request)
        return _me(account, token)

    @app.post("/api/cashier")
    async def cashier(body: CashierRequest, request: Request) -> dict[str, Any]:
        d = door()
        staff, _ = await d.need(request, changes=True)
        if staff.role is not Role.CASHIER:
            raise HTTPException(403, "only a cashier records deposits and withdrawals")
        kind = Movement(body.kind)
        try:
            after = await asyncio.to_thread(
                d.accounts.cashier, body.account, kind, body.amount, body.reference, staff.name
            )
        except AccountError as exc:
            raise HTTPException(409, str(exc)) from None
        d.wallets[body.account] = after
        return {"account": body.account, "kind": str(kind), "balance": after}


__all__ = ["COOKIE", "CSRF_HEADER", "STAFF", "Door", "add_routes", "csrf_of"]
