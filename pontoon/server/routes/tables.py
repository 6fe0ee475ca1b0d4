"""The tables: the page, the list, joining and leaving, a table's state and history, a
recorded round (for the replay), a revealed shoe (to check) and the strategy chart.

``GET /api/tables`` · ``POST /api/tables/{table}/join`` ``{"name"}`` → a session token ·
``POST /api/tables/{table}/leave`` ``{"token"}`` → cashed out ·
``GET /api/tables/{table}/state?token=`` · ``GET /api/tables/{table}/history`` ·
``GET /api/rounds/{id}`` · ``GET /api/tables/{table}/shoes/{seq}`` ·
``GET /api/tables/{table}/chart`` (the optimal basic strategy, for the hint).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse

from pontoon.errors import PontoonError
from pontoon.store.accounts import Role
from pontoon.store.revealed import shoe_record
from pontoon.store.show import list_rounds, replay_document

from ..errors import (
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Refused,
    RequestError,
    Throttled,
    Unauthenticated,
)
from ..hub import UNKNOWN
from ..privacy import masked, own
from ..protocol import JoinRequest, LeaveRequest
from ..table_config import public_rules
from ..table_state import HIDDEN
from . import STATIC, Endpoint, address, door, hub, setup
from .who import account_session, viewer

LEAVE_REFUSED: dict[str, type[RequestError]] = {
    "auth": Unauthenticated,
    "role": Forbidden,
    "illegal": Conflict,
    "throttled": Throttled,
}
"""A refused leave's answer, by the refusal's code (:class:`BadRequest` for any other)."""


async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")


async def list_tables(request: Request) -> list[dict[str, Any]]:
    h = hub(request)
    out = []
    for t in h.tables.values():
        s = t.state(None)
        out.append(
            {
                "name": t.name,
                "rules": s["rules"],
                "phase": s["phase"],
                "round": s["round"],
                "players": sorted(t.names),
            }
        )
    out += [  # served by another process (its own answer: /api/tables/{name}/state)
        {"name": name, "rules": public_rules(c.rules), "phase": None, "round": None}
        | {"players": [], "elsewhere": True}
        for name, c in h.configs.items()
        if name not in h.tables
    ]
    return out


async def join(name: str, request: Request, body: JoinRequest | None = None) -> dict[str, Any]:
    h = hub(request)
    t = h.table(name)
    wallet: int | None = None
    if setup(request).accounts:  # the logged-in player, with the wallet
        account, _ = await door(request).need(request, changes=True)
        if account.role is not Role.PLAYER:
            raise Forbidden("staff work at the tables, they do not sit down")
        player, wallet = account.name, account.balance
    elif body is None:
        raise Invalid('give the player\'s name: {"name": ...}')
    else:
        player = body.name
    await h.expire(t)  # an expired session frees its name
    async with t.lock:
        s = await h.join(t, player, address(request))
        wallets = h.wallets
        if wallets is not None and wallet is not None and h.remote is None:
            wallets[player] = wallet
        t.bump()
        t.broadcast()
    return {
        "token": s.token,
        "table": t.name,
        "player": s.name,
        "ws": f"/ws/{t.name}?token={s.token}",
    }


async def leave(name: str, request: Request, body: LeaveRequest | None = None) -> dict[str, Any]:
    h = hub(request)
    t = h.table(name)
    try:
        if body is None:
            mine = await account_session(request, name, changes=True)
            if mine is None:
                raise Refused("give the session's token, or log in", code="auth")
            session = mine
        else:
            session = h.session(name, body.token, address(request))
        if session.role != "player":
            raise Refused("only a player leaves the table", code="role")
        async with t.lock:
            if session.closed:
                raise Refused(UNKNOWN, code="auth")
            amount = await h.leave(t, session.name)
            t.broadcast()
    except Refused as exc:
        raise LEAVE_REFUSED.get(exc.code, BadRequest)(str(exc)) from None
    return {"table": t.name, "player": session.name, "cashed_out": amount}


async def table_state(name: str, request: Request, token: str | None = None) -> dict[str, Any]:
    t = hub(request).table(name)
    return t.state(await viewer(request, name, token))


async def history(
    name: str, request: Request, limit: int = 50, token: str | None = None
) -> list[dict[str, Any]]:
    h = hub(request)
    h.table(name)
    who = await viewer(request, name, token)
    found = await asyncio.to_thread(list_rounds, h.store, table=name, limit=max(1, min(limit, 500)))
    if who is not None and who.role == "supervisor":
        return found
    return [own(r, who.name if who else None) for r in found]


async def round_doc(rid: int, request: Request, token: str | None = None) -> dict[str, Any]:
    h = hub(request)
    if not 0 < rid < 2**63:  # the store's ids are 64-bit integers
        raise NotFound(f"no round {rid}")
    try:
        doc = await asyncio.to_thread(replay_document, h.store, rid)
    except PontoonError as exc:
        raise NotFound(str(exc)) from None
    table = doc["round"]["table"]
    who = await viewer(request, table, token) if table in h.tables else None
    if doc["round"]["status"] == "open":
        raise Conflict("the round is still being played")
    for e in doc["events"]:
        if e.get("kind") in HIDDEN and e.get("kind") == "burn":
            e.pop("card", None)  # a burnt card stays face down
        e.pop("hash", None)
    if who is not None and who.role == "supervisor":
        return doc
    return masked(doc, who.name if who else None)


async def revealed_shoe(name: str, seq: int, request: Request) -> dict[str, Any]:
    """A shoe the table revealed at event ``seq``, to check (docs/operators/fairness.md): the text
    revealed, the commitment it answers, the cards the record shows leaving that shoe
    and the check's problems. Nobody's name is in it. 409 while the round it was
    revealed in is in play (a hole card of that shoe may still be face down)."""
    h = hub(request)
    if name not in h.configs:
        raise NotFound(f"no table {name!r}")
    if not 0 < seq < 2**63:  # the store's seqs are 64-bit integers
        raise NotFound(f"table {name!r} event {seq} reveals no shoe")
    try:
        doc = await asyncio.to_thread(shoe_record, h.store, name, seq)
    except PontoonError as exc:
        raise NotFound(str(exc)) from None
    if doc["status"] == "open":
        raise Conflict("revealed in the round in play: shown once it is over")
    return doc


async def chart(name: str, request: Request) -> dict[str, Any]:
    h = hub(request)
    return await h.charts.get(h.table(name).rules)


PAGE = [Endpoint("GET", "/", index)]
ROUTES = [
    Endpoint("GET", "/api/tables", list_tables),
    Endpoint("POST", "/api/tables/{name}/join", join),
    Endpoint("POST", "/api/tables/{name}/leave", leave),
    Endpoint("GET", "/api/tables/{name}/state", table_state),
    Endpoint("GET", "/api/tables/{name}/history", history),
    Endpoint("GET", "/api/rounds/{rid}", round_doc),
    Endpoint("GET", "/api/tables/{name}/shoes/{seq}", revealed_shoe),
    Endpoint("GET", "/api/tables/{name}/chart", chart),
]
