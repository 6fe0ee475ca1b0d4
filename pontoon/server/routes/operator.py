"""An operator's launch of a player: ``GET /launch?token=JWT&table=T`` checks the launch
token (:func:`pontoon.server.operator.check_launch`), makes the player's account on first
launch, refuses a player whose play is paused, opens a session in the cookie and sends the
browser to the table (:mod:`pontoon.server.operator`)."""

from __future__ import annotations

import asyncio
import logging

from fastapi import Request
from fastapi.responses import RedirectResponse

from pontoon.errors import InputError

from ..accounts import COOKIE
from ..errors import Forbidden, TryLater, Unauthenticated
from ..operator import Declined, Unavailable, check_launch, spend_launch
from . import Endpoint, address, door, hub, setup

log = logging.getLogger("pontoon.server.operator")


async def launch(request: Request, token: str = "", table: str = "") -> RedirectResponse:
    d, w, config = door(request), hub(request).remote, setup(request).operator
    assert w is not None and config is not None
    try:
        claims = check_launch(token, config)
    except Declined as exc:
        log.warning("launch token refused from %s: %s", address(request), exc)
        raise Unauthenticated(str(exc)) from None
    name = str(claims["sub"])
    try:
        account = await asyncio.to_thread(d.accounts.launched, name)
    except InputError as exc:
        raise Forbidden(str(exc)) from None
    until = await asyncio.to_thread(d.accounts.paused_until, name)
    if until is not None:  # a time-out or self-exclusion: no session, no play
        log.info("launch of %s refused: play paused until %s", name, until)
        raise Forbidden(f"{name} has paused play until {until[:16]} UTC")
    if not await asyncio.to_thread(spend_launch, d.accounts.store, str(claims["jti"]), name):
        raise Unauthenticated("launch token refused: it was used already")
    try:
        await w.balance(account.name)
    except (Declined, Unavailable) as exc:
        raise TryLater(f"the operator's wallet: {exc}") from None
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


ROUTES = [Endpoint("GET", "/launch", launch)]
