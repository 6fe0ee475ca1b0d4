"""Accounts: register, log in and out, who is logged in, one's own limits and pause, one's
password, the pit boss's changes to an account and the cashier's window.

``POST /api/accounts`` (register) · ``POST /api/login`` · ``POST /api/logout`` ·
``GET /api/me`` · ``GET`` and ``POST /api/limits`` · ``POST /api/pause`` ·
``POST /api/password`` · ``POST /api/staff/{name}`` · ``POST /api/cashier`` (a cashier's
deposit or withdrawal). With an operator's wallet (the players are an operator's, launched,
their money the operator's) no one registers and no cashier moves money here. A server made
with ``welcome`` gives a new player's wallet that much (a deposit with the reference
``welcome:NAME``; play money, for a demonstration). Who comes in is
:class:`pontoon.server.accounts.Door`'s.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Annotated, Any, Literal

from fastapi import Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pontoon.errors import InputError
from pontoon.store.accounts import Account, AccountError, Movement, Role
from pontoon.store.play_limits import Limit, Pause
from pontoon.store.roles import passes_for_the_house

from ..accounts import COOKIE, DEVICE, DEVICE_DAYS, Door, csrf_of
from ..errors import Conflict, Forbidden, Invalid, NotFound, Throttled
from . import Endpoint, address, door, setup

log = logging.getLogger("pontoon.server.accounts")

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


def _me(d: Door, account: Account, token: str) -> dict[str, Any]:
    balance = d.wallets.get(account.name, account.balance) if d.remote else account.balance
    return {
        "name": account.name,
        "role": str(account.role),
        "balance": balance,
        "csrf": csrf_of(token),
    }


def _built_in(request: Request) -> None:
    """Forbidden with an operator's wallet: the operator keeps its players' accounts."""
    if setup(request).operator is not None:
        raise Forbidden("the operator keeps the players' accounts and money")


async def register(body: Registration, request: Request) -> dict[str, Any]:
    _built_in(request)
    d = door(request)
    addr = address(request)
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
    welcome = setup(request).welcome
    if welcome > 0:
        ref = f"welcome:{account.name}"
        await asyncio.to_thread(
            d.accounts.cashier, account.name, Movement.DEPOSIT, welcome, ref, None
        )
    return {"name": account.name, "role": str(account.role)}


async def login(body: Credentials, request: Request, response: Response) -> dict[str, Any]:
    d = door(request)
    addr = address(request)
    account, token = await d.login(body.name, body.password, addr, request.cookies.get(DEVICE))
    secure = request.url.scheme == "https"
    for name, value, seconds, path in (
        (COOKIE, token, max(1, math.ceil(d.session_seconds)), "/"),
        (DEVICE, d.device(account.name), DEVICE_DAYS * 86400, "/api/login"),
    ):
        response.set_cookie(
            name, value, max_age=seconds, httponly=True, samesite="strict", secure=secure, path=path
        )
    # the account is told of the failed logins since its last one (OWASP: notify)
    return _me(d, account, token) | {"failed_logins": d.failed.pop(account.name, 0)}


async def logout(request: Request, response: Response) -> dict[str, Any]:
    d = door(request)
    account, _ = await d.need(request, changes=True)
    await d.revoke(account.name)  # every device's login, table token and socket
    response.delete_cookie(COOKIE, path="/")
    return {"name": account.name, "logged_out": True}


async def me(request: Request) -> dict[str, Any]:
    d = door(request)
    account, token = await d.need(request)
    return _me(d, account, token)


async def get_limits(request: Request) -> dict[str, Any]:
    d = door(request)
    account, _ = await d.need(request)
    out: dict[str, Any] = await asyncio.to_thread(d.accounts.limits, account.name)
    return out


async def set_limit(body: LimitRequest, request: Request) -> dict[str, Any]:
    """A limit on the player's own play: lower at once, higher after a day."""
    d = door(request)
    account, _ = await d.need(request, changes=True)
    kind = Limit(body.kind)
    try:
        effective = await asyncio.to_thread(d.accounts.set_limit, account.name, kind, body.value)
    except InputError as exc:
        raise Invalid(str(exc)) from None
    d.clocks.forget(account.name)  # read again at the next wager
    return {"kind": str(kind), "value": body.value, "effective_at": effective}


async def pause(body: PauseRequest, request: Request, response: Response) -> dict[str, Any]:
    """A time-out or self-exclusion: logged out everywhere, no wager or login until it
    ends."""
    d = door(request)
    account, _ = await d.need(request, changes=True)
    try:
        until = await asyncio.to_thread(d.accounts.pause, account.name, Pause(body.kind), body.days)
    except InputError as exc:
        raise Invalid(str(exc)) from None
    d.revoked_here(account.name)  # (the pause ended its sessions in its transaction)
    response.delete_cookie(COOKIE, path="/")
    return {"kind": body.kind, "until": until}


async def change_password(
    body: PasswordChange, request: Request, response: Response
) -> dict[str, Any]:
    """An account changes its own password (the old one proven): every session of it
    ends, this one too (log in again with the new one)."""
    d = door(request)
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


async def change_account(name: str, body: StaffChange, request: Request) -> dict[str, Any]:
    """A pit boss disables or enables an account, changes a member of staff's role, or
    resets a password: recorded in the house's record under the pit boss's name; every
    session of the account ends."""
    d = door(request)
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


async def cashier(body: CashierRequest, request: Request) -> dict[str, Any]:
    _built_in(request)
    d = door(request)
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


ROUTES = [
    Endpoint("POST", "/api/accounts", register, 201),
    Endpoint("POST", "/api/login", login),
    Endpoint("POST", "/api/logout", logout),
    Endpoint("GET", "/api/me", me),
    Endpoint("GET", "/api/limits", get_limits),
    Endpoint("POST", "/api/limits", set_limit),
    Endpoint("POST", "/api/pause", pause),
    Endpoint("POST", "/api/password", change_password),
    Endpoint("POST", "/api/staff/{name}", change_account),
    Endpoint("POST", "/api/cashier", cashier),
]
