"""Who comes in, in accounts mode (:class:`Door`): logins, the session in a cookie, the CSRF
token, who a request comes from, and the ending of an account's sessions in every process.
The routes (register, log in and out, limits, the cashier's window) are
:mod:`pontoon.server.routes.accounts`'.

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
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import Request

from pontoon.store import chain
from pontoon.store.accounts import STAFF, Account, Accounts

from .errors import Forbidden, Throttled, Unauthenticated
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
    """The way in, in accounts mode: who a request comes from (the cookie's account), logins
    (throttled per name, and per address with ``throttle``, the
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
        self.clocks.forget(name)  # a new login: a new clock at its first wager
        await self.run(self.clocks.read, name)  # (read now: the first wager waits on nothing)
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

    async def acknowledge(self, name: str) -> None:
        """The player has seen the reality check (the message ``reality``): recorded."""
        await asyncio.to_thread(self.clocks.acknowledge, name)

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


__all__ = ["COOKIE", "CSRF_HEADER", "DEVICE", "DEVICE_DAYS", "STAFF", "Door", "csrf_of"]
