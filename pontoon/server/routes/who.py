"""Who a request comes from: a table's session (its token), the supervisor's shared token
(without accounts), or the logged-in account (its cookie)."""

from __future__ import annotations

import secrets

from fastapi import Request

from pontoon.store.accounts import Role

from ..clients import Session
from ..errors import Refused, Throttled, Unauthenticated
from . import address, door, hub, setup


async def account_session(request: Request, table: str, *, changes: bool = False) -> Session | None:
    """The session at ``table`` of the request's logged-in account (accounts mode), None
    without a cookie; :class:`Refused` for a player who has not joined it."""
    if not setup(request).accounts:
        return None
    found = await door(request).who(request, changes=changes)
    return None if found is None else hub(request).account_session(table, found[0])


async def viewer(request: Request, table: str, token: str | None) -> Session | None:
    """Who asks: the session of ``token`` (:class:`Unauthenticated`, or :class:`Throttled`),
    else of the logged-in account (a player who has not joined watches), None without
    either."""
    try:
        if not token:
            return await account_session(request, table)
        return hub(request).session(table, token, address(request))
    except Refused as exc:
        if exc.code == "auth" and not token:
            return None  # logged in, not at this table: a watcher
        raise (Throttled if exc.code == "throttled" else Unauthenticated)(str(exc)) from None


async def person(
    request: Request, table: str | None, key: str | None, changes: bool
) -> tuple[str, str] | None:
    """Who asks for recall or a report, as (name, role): the supervisor's token, a table's
    session, or the logged-in account; None without any."""
    s = setup(request)
    if key and table is None:
        if s.accounts:  # one identity: staff log in; a shared token opens nothing
            raise Unauthenticated("staff log in: the shared supervisor token opens nothing")
        token = s.supervisor_token
        if secrets.compare_digest(key.encode("utf-8", "surrogatepass"), token.encode()):
            return "supervisor", str(Role.SUPERVISOR)
        raise Unauthenticated("that is not the supervisor's token")
    if key and table:
        found = await viewer(request, table, key)
        return None if found is None else (found.name, found.role)
    account = await door(request).who(request, changes=changes) if s.accounts else None
    return None if account is None else (account[0].name, str(account[0].role))


__all__ = ["account_session", "person", "viewer"]
