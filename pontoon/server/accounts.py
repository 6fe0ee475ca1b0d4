"""Accounts at the table server: register, log in and out, a session in a cookie,
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
import hmac
import logging
import math
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pontoon.errors import InputError
from pontoon.store import chain
from pontoon.store.accounts import STAFF, Account, AccountError, Accounts, Movement, Role
from pontoon.store.play_limits import Limit, Pause
from pontoon.store.roles import passes_for_the_house

from .errors import Conflict, Forbidden, Invalid, NotFound, Throttled, Unauthenticated
from .limits import Limits
from .playclock import PlayClocks
from .throttles import SharedThrottle, forget_old

COOKIE = "pontoon_session"
DEVICE = "pontoon_device"  # a browser that logged in to an account before (OWASP's device cookie)
DEVICE_DAYS = 365
SPREAD = 10  # an account's failures from every address, as a multiple of one address's limit
CSRF_HEADER = "x-csrf-token"
WATCH = 1.0  # seconds between two looks for accounts whose sessions another process ended
PURGE = 600.0  # seconds between two purges of the expired logins
log = logging.getLogger(__name__)

Name = Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_\-]+$")]
Password = Annotated[str, Field(min_length=1, max_length=128)]


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    password: Password


class Registration(Credentials):
    """A new account's name and password: the name may not pass for the house's people
    (a role, the policy, the page's words: :func:`pontoon.store.roles.passes_for_the_house`)."""

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if passes_for_the_house(name):
            raise ValueError("reserved: a name may not pass for one of the house's people")
        return name


class LimitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal[
        "deposit-day", "deposit-week", "loss-day", "loss-week", "reality-minutes", "session-minutes"
    ]
    value: Annotated[int, Field(ge=1, le=10**12)] | None


class PauseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["time-out", "self-exclusion"]
    days: Annotated[int, Field(ge=1, le=3650)]


class PasswordChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old: Password
    new: Password


class StaffChange(BaseModel):
    """A pit boss's change to an account: ``disable``, ``enable``, a new ``role`` (staff), a
    ``reset`` password."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["disable", "enable", "role", "reset"]
    role: Literal["dealer", "supervisor", "pitboss", "cashier"] | None = None
    password: Password | None = None


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
        throttle: SharedThrottle,
        wallets: dict[str, int],
        session_seconds: float,
    ) -> None:
        self.accounts = accounts
        self.throttle = throttle
        self.wallets = wallets
        self.session_seconds = session_seconds
        self.remote = False  # the wallets are an operator's (their balances in ``wallets``)
        # OWASP's Authentication Cheat Sheet ("Account Lockout", "Device Cookies"): failures
        # are counted per account and address, so guessing from one address never locks the
        # account's owner out elsewhere; an account's failures from every address are capped
        # too (guessing spread over many addresses), and a browser that logged in to the
        # account before (its device cookie) passes that cap
        # — counted in the store, by every process (:mod:`pontoon.server.throttles`)
        store = accounts.store
        self.by_name = SharedThrottle(store, "login", limits.login_failures, limits.login_window)
        spread = limits.login_failures * SPREAD
        self.by_account = SharedThrottle(store, "account", spread, limits.login_window)
        self.device_key = secrets.token_bytes(32)  # (this process's: a restart forgets them)
        self.failed: dict[str, int] = {}  # failed logins of each account since its last one
        self.clocks = PlayClocks(accounts)  # the reality check's and session time's
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pontoon-login")
        # registrations hash on a thread of their own, counted per address: a burst of them
        # neither takes the logins' threads nor makes more than a few accounts
        self.making = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pontoon-register")
        self.registering = SharedThrottle(
            store, "register", limits.registrations, limits.registration_window
        )
        # what this process does when an account's sessions end (the hub closes its sockets)
        self.ended: Callable[[str], object] = lambda name: None
        self.ended_at: dict[str, str] = {}  # the revocations made here, already acted on

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    def device(self, name: str) -> str:
        """The device cookie of a browser that logged in to ``name``: an HMAC of the name."""
        mac = hmac.new(self.device_key, name.encode(), hashlib.sha256).hexdigest()[:32]
        return f"{name}.{mac}"

    async def login(
        self, name: str, password: str, addr: str, device: str | None = None
    ) -> tuple[Account, str]:
        """The account and a new session token; :class:`Unauthenticated` for a wrong name or
        password, :class:`Forbidden` for a disabled account or one whose play is paused,
        :class:`Throttled` when this address has failed too often (for the name, or at all),
        or when the name has failed too often from every address and ``device`` is not its
        device cookie."""
        known = device is not None and hmac.compare_digest(device, self.device(name))
        account = await self.run(self._check, name, password, addr, known)
        if account is None:
            if len(self.failed) < 100_000 or name in self.failed:
                self.failed[name] = self.failed.get(name, 0) + 1
            log.warning("failed login for %r from %s", name, addr)
            raise Unauthenticated("wrong name or password")
        if account.disabled:  # (said only to whoever knows the password)
            raise Forbidden("this account is disabled: ask the house")
        until = await self.run(self.accounts.paused_until, name)
        if until is not None:
            raise Forbidden(f"play is paused until {until[:16]} UTC")
        token = await self.run(self.accounts.open_session, name, self.session_seconds)
        self.clocks.forget(name)  # a new login: a new session's clock at its first wager
        return account, token

    def _check(self, name: str, password: str, addr: str, known: bool) -> Account | None:
        """(On a login thread.) The account, None for a wrong name or password (a failure
        counted for the name from this address, the account, the address); :class:`Throttled`
        while one of them waits (the account's own only for a browser that is not its
        device)."""
        pair = f"{name}\n{addr}"
        if self.by_name.blocked(pair) or self.throttle.blocked(addr):
            raise Throttled("too many failed logins: try again later")
        if self.by_account.blocked(name) and not known:
            raise Throttled("too many failed logins for this account: try again later")
        account = self.accounts.check(name, password)
        if account is None:
            self.by_name.fail(pair)
            self.by_account.fail(name)
            self.throttle.fail(addr)
        return account

    def reality_check(self, name: str) -> None:
        """Before a wager: :class:`Refused` when the player's reality check is due or the
        session's time is up (:class:`pontoon.server.playclock.PlayClocks`)."""
        self.clocks.check(name)

    def acknowledge(self, name: str) -> None:
        """The player has seen the reality check (the message ``reality``): recorded."""
        self.clocks.acknowledge(name)

    async def who(self, request: Request, *, changes: bool = False) -> tuple[Account, str] | None:
        """The account of the request's cookie and the cookie's token, or None without a
        cookie; :class:`Unauthenticated` for an unknown or expired one; :class:`Forbidden`
        when ``changes`` (a state-changing request) and the CSRF header is missing or
        wrong."""
        token = request.cookies.get(COOKIE)
        if not token:
            return None
        account = await asyncio.to_thread(self.accounts.session, token)
        if account is None:
            raise Unauthenticated("the session has expired or was closed: log in again")
        if changes:
            sent = request.headers.get(CSRF_HEADER, "")
            if not secrets.compare_digest(sent.encode(), csrf_of(token).encode()):
                raise Forbidden(f"a request that changes anything needs {CSRF_HEADER}")
        return account, token

    async def need(self, request: Request, *, changes: bool = False) -> tuple[Account, str]:
        """As :meth:`who`, and :class:`Unauthenticated` without a cookie."""
        found = await self.who(request, changes=changes)
        if found is None:
            raise Unauthenticated("log in first")
        return found

    async def revoke(self, name: str) -> None:
        """End every session of ``name`` (:mod:`pontoon.store.revocation`): here at once,
        in the other processes at their next :meth:`watch`."""
        await asyncio.to_thread(self.accounts.revoke, name)
        self.revoked_here(name)

    def revoked_here(self, name: str) -> None:
        self.ended_at[name] = chain.now()
        self._end(name)

    def _end(self, name: str) -> None:
        self.clocks.forget(name)
        self.ended(name)

    async def watch(self, every: float = WATCH, purge: float = PURGE) -> None:
        """Until the server stops: every ``every`` seconds, end here the sessions of the
        accounts revoked by any process; every ``purge`` seconds, delete the expired logins.
        An error (the store failing) is logged and the next pass tries again."""
        since, purged = chain.now(), time.monotonic()
        while True:
            await asyncio.sleep(every)
            try:
                since, found = await asyncio.to_thread(self.accounts.revoked_since, since)
                for name, at in found:
                    if at > self.ended_at.get(name, ""):
                        self._end(name)
                if time.monotonic() - purged >= purge:
                    purged = time.monotonic()
                    gone = await asyncio.to_thread(self.accounts.purge_sessions)
                    old = await asyncio.to_thread(forget_old, self.accounts.store)
                    log.info("%d expired logins, %d old failed logins deleted", gone, old)
            except Exception:  # not CancelledError: the server stopping ends the task
                log.exception("watching the accounts' sessions failed; tried again")

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _me(d: Door, account: Account, token: str) -> dict[str, Any]:
    balance = d.wallets.get(account.name, account.balance) if d.remote else account.balance
    return {
        "name": account.name,
        "role": str(account.role),
        "balance": balance,
        "csrf": csrf_of(token),
    }


def add_routes(
    app: FastAPI, door: Callable[[], Door], operator: bool = False, welcome: int = 0
) -> None:
    """``POST /api/accounts`` (register) · ``POST /api/login`` · ``POST /api/logout`` ·
    ``GET /api/me`` · ``POST /api/cashier`` (a cashier's deposit or withdrawal) · limits.
    ``operator``: the players are an operator's (launched, their money the operator's): no
    one registers, no cashier moves money here. ``welcome``: what a new player's wallet is
    given by the house (a deposit with the reference ``welcome:NAME``; play money, for a
    demonstration)."""

    def built_in() -> None:
        if operator:
            raise Forbidden("the operator keeps the players' accounts and money")

    @app.post("/api/accounts", status_code=201)
    async def register(body: Registration, request: Request) -> dict[str, Any]:
        built_in()
        d = door()
        addr = request.client.host if request.client is not None else "?"
        if await asyncio.to_thread(d.registering.blocked, addr):
            log.warning("registrations from %s throttled", addr)
            raise Throttled("too many new accounts from this address: try again later")
        await asyncio.to_thread(d.registering.fail, addr)  # (each counts: each makes a hash)
        loop = asyncio.get_running_loop()
        try:
            account = await loop.run_in_executor(
                d.making, d.accounts.create, body.name, body.password, Role.PLAYER
            )
        except AccountError as exc:
            raise Conflict(str(exc)) from None
        except InputError as exc:
            raise Invalid(str(exc)) from None
        if welcome > 0:
            ref = f"welcome:{account.name}"
            await asyncio.to_thread(
                d.accounts.cashier, account.name, Movement.DEPOSIT, welcome, ref, None
            )
        return {"name": account.name, "role": str(account.role)}

    @app.post("/api/login")
    async def login(body: Credentials, request: Request, response: Response) -> dict[str, Any]:
        d = door()
        addr = request.client.host if request.client is not None else "?"
        account, token = await d.login(body.name, body.password, addr, request.cookies.get(DEVICE))
        secure = request.url.scheme == "https"
        for name, value, seconds, path in (
            (COOKIE, token, max(1, math.ceil(d.session_seconds)), "/"),
            (DEVICE, d.device(account.name), DEVICE_DAYS * 86400, "/api/login"),
        ):
            response.set_cookie(
                name,
                value,
                max_age=seconds,
                httponly=True,
                samesite="strict",
                secure=secure,
                path=path,
            )
        # the account is told of the failed logins since its last one (OWASP: notify)
        return _me(d, account, token) | {"failed_logins": d.failed.pop(account.name, 0)}

    @app.post("/api/logout")
    async def logout(request: Request, response: Response) -> dict[str, Any]:
        d = door()
        account, _ = await d.need(request, changes=True)
        await d.revoke(account.name)  # every device's login, table token and socket
        response.delete_cookie(COOKIE, path="/")
        return {"name": account.name, "logged_out": True}

    @app.get("/api/me")
    async def me(request: Request) -> dict[str, Any]:
        d = door()
        account, token = await d.need(request)
        return _me(d, account, token)

    @app.get("/api/limits")
    async def get_limits(request: Request) -> dict[str, Any]:
        d = door()
        account, _ = await d.need(request)
        out: dict[str, Any] = await asyncio.to_thread(d.accounts.limits, account.name)
        return out

    @app.post("/api/limits")
    async def set_limit(body: LimitRequest, request: Request) -> dict[str, Any]:
        """A limit on the player's own play: lower at once, higher after a day."""
        d = door()
        account, _ = await d.need(request, changes=True)
        kind = Limit(body.kind)
        try:
            effective = await asyncio.to_thread(
                d.accounts.set_limit, account.name, kind, body.value
            )
        except InputError as exc:
            raise Invalid(str(exc)) from None
        d.clocks.forget(account.name)  # read again at the next wager
        return {"kind": str(kind), "value": body.value, "effective_at": effective}

    @app.post("/api/pause")
    async def pause(body: PauseRequest, request: Request, response: Response) -> dict[str, Any]:
        """A time-out or self-exclusion: logged out everywhere, no wager or login until it
        ends."""
        d = door()
        account, _ = await d.need(request, changes=True)
        try:
            until = await asyncio.to_thread(
                d.accounts.pause, account.name, Pause(body.kind), body.days
            )
        except InputError as exc:
            raise Invalid(str(exc)) from None
        d.revoked_here(account.name)  # (the pause ended its sessions in its transaction)
        response.delete_cookie(COOKIE, path="/")
        return {"kind": body.kind, "until": until}

    @app.post("/api/password")
    async def change_password(
        body: PasswordChange, request: Request, response: Response
    ) -> dict[str, Any]:
        """An account changes its own password (the old one proven): every session of it
        ends, this one too (log in again with the new one)."""
        d = door()
        account, _ = await d.need(request, changes=True)
        if await d.run(d.accounts.check, account.name, body.old) is None:
            raise Forbidden("the old password is wrong")
        try:
            await d.run(d.accounts.set_password, account.name, body.new, account.name)
        except InputError as exc:
            raise Invalid(str(exc)) from None
        d.revoked_here(account.name)
        response.delete_cookie(COOKIE, path="/")
        return {"name": account.name, "password": "changed", "logged_out": True}

    @app.post("/api/staff/{name}")
    async def change_account(name: str, body: StaffChange, request: Request) -> dict[str, Any]:
        """A pit boss disables or enables an account, changes a member of staff's role, or
        resets a password: recorded in the house's record under the pit boss's name; every
        session of the account ends."""
        d = door()
        boss, _ = await d.need(request, changes=True)
        if boss.role is not Role.PITBOSS:
            raise Forbidden("only a pit boss changes accounts")
        people = d.accounts
        try:
            if body.action == "disable":
                await asyncio.to_thread(people.disable, name, boss.name)
            elif body.action == "enable":
                await asyncio.to_thread(people.enable, name, boss.name)
            elif body.action == "role":
                if body.role is None:
                    raise Invalid("give the new role")
                await asyncio.to_thread(people.set_role, name, Role(body.role), boss.name)
            else:
                if body.password is None:
                    raise Invalid("give the new password")
                await d.run(people.set_password, name, body.password, boss.name)
        except AccountError as exc:
            raise (NotFound if "no account" in str(exc) else Conflict)(str(exc)) from None
        except InputError as exc:
            raise Invalid(str(exc)) from None
        d.revoked_here(name)
        return {"name": name, "done": body.action, "by": boss.name}

    @app.post("/api/cashier")
    async def cashier(body: CashierRequest, request: Request) -> dict[str, Any]:
        built_in()
        d = door()
        staff, _ = await d.need(request, changes=True)
        if staff.role is not Role.CASHIER:
            raise Forbidden("only a cashier records deposits and withdrawals")
        kind = Movement(body.kind)
        try:
            after = await asyncio.to_thread(
                d.accounts.cashier, body.account, kind, body.amount, body.reference, staff.name
            )
        except InputError as exc:  # no such account, too little, a limit the player set
            raise Conflict(str(exc)) from None
        d.wallets[body.account] = after
        return {"account": body.account, "kind": str(kind), "balance": after}


__all__ = ["COOKIE", "CSRF_HEADER", "STAFF", "Door", "add_routes", "csrf_of"]
