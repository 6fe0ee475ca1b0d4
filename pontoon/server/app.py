"""The ASGI application: the page, a small JSON API and one WebSocket per client.

HTTP: ``GET /api/tables`` · ``POST /api/tables/{table}/join`` ``{"name"}`` → a session token ·
``POST /api/tables/{table}/leave`` ``{"token"}`` → cashed out ·
``GET /api/tables/{table}/state?token=`` · ``GET /api/tables/{table}/history`` ·
``GET /api/rounds/{id}`` (a recorded round's events, for the replay) ·
``GET /api/tables/{table}/chart`` (the optimal basic strategy, for the hint).
WebSocket: ``/ws/{table}?token=TOKEN``; the messages are in :mod:`pontoon.server.protocol`.

The tables and sessions are :mod:`pontoon.server.hub`'s (every message applied there), the
strategy hint's charts :mod:`pontoon.server.charts`'s. Each socket's sending is
:mod:`pontoon.server.outbox`'s; the web's defences are
:mod:`pontoon.server.web`'s, the limits :mod:`pontoon.server.limits`'s, who sees what in a
record :mod:`pontoon.server.privacy`'s.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from pontoon.errors import PontoonError
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from pontoon.store.revealed import shoe_record
from pontoon.store.secret import ShoeKeys
from pontoon.store.show import list_rounds, replay_document
from pontoon.store.signing import RecordKeys

from .accounts import COOKIE, Door
from .accounts import add_routes as account_routes
from .errors import (
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Refused,
    RequestError,
    Throttled,
    Unauthenticated,
    error_reply,
    status_of,
)
from .forward import Forward
from .hub import MOVING, UNKNOWN, Hub
from .limits import Limits
from .operator import OperatorConfig, OperatorWallet, add_launch
from .outbox import Outbox
from .pit import Where
from .pit import add_routes as pit_routes
from .privacy import masked, own
from .protocol import JoinRequest, LeaveRequest
from .table import HIDDEN, Session, Table, TableConfig, public_rules
from .tenure import CLOSE_MOVED, Leasing
from .train import add_routes as train_routes
from .web import Headers, Hosts, same_origin

STATIC = Path(__file__).parent / "static"
# The cyclic collector's thresholds while serving (Python's default: 700, 10, 10). A young
# collection every 700 container allocations came every few actions; each stopped the event
# loop and the store's writer together (the GIL), and the acknowledgements waiting on them
# came late in a bunch: the bench's p99 after its start, 50 x 3 with accounts, 24-32 ms at
# 700 and 18-22 ms at 100,000 in alternated runs (docs/server.md). The objects a round makes
# are freed by their reference counts; few cycles are left for the collector.
GC_THRESHOLDS = (100_000, 20, 100)


log = logging.getLogger(__name__)


class _Server(FastAPI):
    """The application: a WebSocket's scope keeps the server's own ``send``
    (``pontoon.send``), taken before any middleware wraps it, so that a client that reads
    nothing can be cut off (:func:`abort_of`)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            scope["pontoon.send"] = send
        await super().__call__(scope, receive, send)


async def _expire_sessions(hub: Hub) -> None:
    """Close the sessions that have been away too long, checked every quarter of the shortest
    expiry (at most every minute). An unexpected error (the store failing, say) is logged and
    the next pass tries again: expiry must not stop for the life of the server."""
    shortest = min((t.config.session_seconds for t in hub.tables.values()), default=3600.0)
    every = min(60.0, max(0.05, shortest / 4))
    while True:
        await asyncio.sleep(every)
        for t in hub.tables.values():
            try:
                await hub.expire(t)
            except Exception:  # not CancelledError: the server stopping ends the task
                log.exception("session expiry at table %s failed; tried again later", t.name)


# ---------------------------------------------------------------- errors, at the edge
async def _invalid(request: Request, exc: RequestValidationError) -> Response:
    """422 with where and why, not the input: what a client sent need not come back, and
    a lone surrogate in it (a JSON string may hold one) could not be encoded (a 500)."""
    keep = ("loc", "msg", "type")
    detail = [{k: e.get(k) for k in keep} for e in exc.errors()]
    text = json.dumps({"detail": detail}, default=str)  # ASCII: surrogates escaped
    return Response(text, status_code=422, media_type="application/json")


async def _refused(request: Request, exc: Refused) -> Response:
    """A refusal met by a request: 400, with the error reply a socket would be sent."""
    return JSONResponse(error_reply(exc), status_code=400)


async def _request_error(request: Request, exc: RequestError) -> Response:
    """A request the server does not do: the status of its kind (:data:`HTTP_STATUS`), the
    body ``{"detail": text}``, and ``Retry-After`` when it says when to ask again."""
    after = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
    return JSONResponse({"detail": str(exc)}, status_code=status_of(exc), headers=after)


ANSWERS: dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    RequestValidationError: _invalid,
    Refused: _refused,
    RequestError: _request_error,
}
"""The exception handlers :func:`create_app` registers: each error raised by the domain
(:mod:`pontoon.server.errors`) turned into its HTTP answer here, and only here."""


_LEAVE_REFUSED: dict[str, type[RequestError]] = {
    "auth": Unauthenticated,
    "role": Forbidden,
    "illegal": Conflict,
    "throttled": Throttled,
}
"""A refused leave's answer, by the refusal's code (400 for any other)."""


def _address(conn: Request | WebSocket) -> str:
    """The client's address (the peer's: behind a proxy, uvicorn's ``--forwarded-allow-ips``
    would be needed to see the real one)."""
    return conn.client.host if conn.client is not None else "?"


def create_app(
    store_url: str,
    tables: list[TableConfig],
    supervisor_token: str | None = None,
    api_docs: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    limits: Limits | None = None,
    shoe_keys: ShoeKeys | None = None,
    record_keys: RecordKeys | None = None,
    anchors: str | None = None,
    accounts: bool = False,
    password_strength: str = "default",
    login_hours: float = 24.0,
    operator: OperatorConfig | None = None,
    welcome: int = 0,
    leasing: Leasing | None = None,
    writer_process: bool = False,
) -> FastAPI:
    """The application for ``tables`` recorded in the store at ``store_url``. ``api_docs``:
    serve FastAPI's ``/docs``, ``/redoc`` and ``/openapi.json`` (off unless asked for).
    ``allowed_hosts``: the names the server answers to (a request whose ``Host`` is another
    is refused, 400: DNS rebinding); None answers to any. ``limits``: what one client may ask
    (:class:`pontoon.server.limits.Limits`). ``accounts``: people log in (a session of
    ``login_hours`` in a cookie), staff by their roles, players' wallets behind the tables;
    ``password_strength``: the argon2id profile (:func:`pontoon.store.accounts.hasher`).
    ``operator``: the players' wallets are an operator's, who launches its players with a
    token (:mod:`pontoon.server.operator`; accounts mode with it). ``leasing``: this process
    is one of several on the store, serving the tables it holds by lease
    (:mod:`pontoon.server.tenure`). ``writer_process``: the store's commits are made by a
    process of its own (:class:`pontoon.store.writer.WriterProcess`), not a thread."""
    accounts = accounts or operator is not None
    token = supervisor_token or secrets.token_urlsafe(24)
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stalled = leasing.seconds if leasing is not None else None  # (see Store)
        store = Store(
            store_url,
            shoe_keys,
            record_keys=record_keys,
            anchors=anchors,
            own_checkpoints=True,
            stalled_after=stalled,
        )
        people = Accounts(store, hasher(password_strength)) if accounts else None
        hub = Hub(store, tables, token, limits, people, operator, leasing, writer_process)
        state["hub"] = hub
        if people is not None:
            assert hub.wallets is not None
            seconds = login_hours * 3600.0
            state["door"] = hub.door = Door(people, hub.limits, hub.throttle, hub.wallets, seconds)
            hub.door.remote = hub.remote is not None
            hub.door.ended = hub.revoked
        app.state.hub = hub
        expiry = asyncio.create_task(_expire_sessions(hub))
        watch = asyncio.create_task(hub.door.watch()) if hub.door is not None else None
        outbox = asyncio.create_task(hub.remote.outbox()) if hub.remote is not None else None
        tending = asyncio.create_task(hub.tenure.run()) if hub.tenure is not None else None
        # What start-up made (modules, tables, rule sets) lives as long as the server: the
        # cyclic collector need not scan it again and again (its pauses add to the latency);
        # and it runs a hundred times less often than Python's default (GC_THRESHOLDS).
        gc.collect()
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS)
        yield
        gc.set_threshold(*thresholds)
        for task in (expiry, outbox, watch):
            if task is not None:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task
        if hub.tenure is not None and tending is not None:
            hub.tenure.close()
            await tending  # the pass under way, if any, ends before the leases are let go
        if hub.remote is not None:
            await hub.remote.close()
        for t in hub.tables.values():
            t.close()
        if hub.tenure is not None:  # the tables may be taken at once by the others
            await asyncio.to_thread(hub.tenure.stop)
        hub.charts.close()
        if "door" in state:
            state["door"].close()
        hub.writer.close()
        store.close()

    docs: dict[str, Any] = {} if api_docs else {"docs_url": None, "redoc_url": None}
    if not api_docs:
        docs["openapi_url"] = None
    app = _Server(
        title="Pontoon table server", lifespan=lifespan, exception_handlers=ANSWERS, **docs
    )
    hosts = [h.lower() for h in allowed_hosts or ()]

    async def where(table: str) -> str | None:
        """The address of the process serving ``table``, when another process does."""
        h: Hub | None = state.get("hub")
        if h is None or h.tenure is None or table in h.tables or table not in h.configs:
            return None
        return await h.tenure.address_of(table)

    passed: dict[str, int] = {}  # requests passed on to another process, by kind
    if leasing is not None:
        app.add_middleware(Forward, where=where, hosts=hosts, passed=passed)
    if hosts:
        app.add_middleware(Hosts, hosts=hosts)
    app.add_middleware(Headers)
    app.state.supervisor_token = token

    def hub() -> Hub:
        h: Hub = state["hub"]
        return h

    def door() -> Door:
        d: Door = state["door"]
        return d

    if accounts:
        account_routes(app, door, operator is not None, welcome)
    if operator is not None:

        def remote() -> OperatorWallet:
            wallet = hub().remote
            assert wallet is not None
            return wallet

        add_launch(app, door, remote, operator)

    async def account_session(
        table: str, request: Request, *, changes: bool = False
    ) -> Session | None:
        """The session at ``table`` of the request's logged-in account (accounts mode), None
        without a cookie; :class:`Refused` for a player who has not joined it."""
        if not accounts:
            return None
        found = await door().who(request, changes=changes)
        return None if found is None else hub().account_session(table, found[0])

    @app.get("/")
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    train_routes(app, STATIC, lambda: hub().store, door if accounts else None)

    async def person(
        request: Request, table: str | None, key: str | None, changes: bool
    ) -> tuple[str, str] | None:
        """Who asks for recall or a report: the supervisor's token, a table's session, or
        the logged-in account."""
        if key and table is None:
            if accounts:  # one identity: staff log in; a shared token opens nothing
                raise Unauthenticated("staff log in: the shared supervisor token opens nothing")
            if secrets.compare_digest(key.encode("utf-8", "surrogatepass"), token.encode()):
                return "supervisor", str(Role.SUPERVISOR)
            raise Unauthenticated("that is not the supervisor's token")
        if key and table:
            s = await viewer(table, key, request)
            return None if s is None else (s.name, s.role)
        found = await door().who(request, changes=changes) if accounts else None
        return None if found is None else (found[0].name, str(found[0].role))

    async def spread() -> list[Where]:
        """Every configured table, where it is served (another process's address, or None)."""
        h = hub()
        away = await h.tenure.elsewhere() if h.tenure is not None else {}
        return [
            Where(n, away.get(n), c.rules.table_min, c.rules.table_max)
            for n, c in h.configs.items()
        ]

    def served() -> dict[str, Table]:
        return hub().tables

    pit_routes(app, STATIC, lambda: hub().store, person, served, spread if leasing else None)

    @app.get("/api/tables")
    async def list_tables() -> list[dict[str, Any]]:
        out = []
        for t in hub().tables.values():
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
            for name, c in hub().configs.items()
            if name not in hub().tables
        ]
        return out

    @app.get("/api/server")
    async def server() -> dict[str, Any]:
        """How people come in: ``accounts`` (log in, wallets) or a name and play money."""
        return {"accounts": accounts}

    @app.get("/api/stats")
    async def stats() -> dict[str, Any]:
        """The store writer's group commits (transactions, batches, seconds) so far, the
        cyclic collector's passes and what they freed, by generation, the requests passed on
        to another process (``http``, ``websocket``), and how long the messages that would
        change a table took to handle (:mod:`pontoon.server.timing`). ``pid``: which
        process answered (several answer at one address)."""
        passes = gc.get_stats()
        collector = {
            "thresholds": list(gc.get_threshold()),
            "collections": [p["collections"] for p in passes],
            "collected": [p["collected"] for p in passes],
        }
        return {
            "tables": len(hub().tables),
            "store": hub().writer.stats(),
            "gc": collector,
            "passed_on": dict(passed),
            "applying": hub().applying.doc(),
            "pid": os.getpid(),
        }

    @app.post("/api/tables/{name}/join")
    async def join(name: str, request: Request, body: JoinRequest | None = None) -> dict[str, Any]:
        t = hub().table(name)
        wallet: int | None = None
        if accounts:  # the logged-in player, with the wallet
            account, _ = await door().need(request, changes=True)
            if account.role is not Role.PLAYER:
                raise Forbidden("staff work at the tables, they do not sit down")
            player, wallet = account.name, account.balance
        elif body is None:
            raise Invalid('give the player\'s name: {"name": ...}')
        else:
            player = body.name
        await hub().expire(t)  # an expired session frees its name
        async with t.lock:
            s = await hub().join(t, player, _address(request))
            wallets = hub().wallets
            if wallets is not None and wallet is not None and hub().remote is None:
                wallets[player] = wallet
            t.bump()
            t.broadcast()
        return {
            "token": s.token,
            "table": t.name,
            "player": s.name,
            "ws": f"/ws/{t.name}?token={s.token}",
        }

    @app.post("/api/tables/{name}/leave")
    async def leave(
        name: str, request: Request, body: LeaveRequest | None = None
    ) -> dict[str, Any]:
        t = hub().table(name)
        try:
            if body is None:
                mine = await account_session(name, request, changes=True)
                if mine is None:
                    raise Refused("give the session's token, or log in", code="auth")
                session = mine
            else:
                session = hub().session(name, body.token, _address(request))
            if session.role != "player":
                raise Refused("only a player leaves the table", code="role")
            async with t.lock:
                if session.closed:
                    raise Refused(UNKNOWN, code="auth")
                amount = await hub().leave(t, session.name)
                t.broadcast()
        except Refused as exc:
            raise _LEAVE_REFUSED.get(exc.code, BadRequest)(str(exc)) from None
        return {"table": t.name, "player": session.name, "cashed_out": amount}

    async def viewer(table: str, token: str | None, request: Request) -> Session | None:
        """Who asks: the session of ``token`` (401, or 429 when throttled), else of the
        logged-in account (a player who has not joined watches), None without either."""
        try:
            if not token:
                return await account_session(table, request)
            return hub().session(table, token, _address(request))
        except Refused as exc:
            if exc.code == "auth" and not token:
                return None  # logged in, not at this table: a watcher
            raise (Throttled if exc.code == "throttled" else Unauthenticated)(str(exc)) from None

    @app.get("/api/tables/{name}/state")
    async def table_state(name: str, request: Request, token: str | None = None) -> dict[str, Any]:
        t = hub().table(name)
        return t.state(await viewer(name, token, request))

    @app.get("/api/tables/{name}/history")
    async def history(
        name: str, request: Request, limit: int = 50, token: str | None = None
    ) -> list[dict[str, Any]]:
        hub().table(name)
        who = await viewer(name, token, request)
        found = await asyncio.to_thread(
            list_rounds, hub().store, table=name, limit=max(1, min(limit, 500))
        )
        if who is not None and who.role == "supervisor":
            return found
        return [own(r, who.name if who else None) for r in found]

    @app.get("/api/rounds/{rid}")
    async def round_doc(rid: int, request: Request, token: str | None = None) -> dict[str, Any]:
        if not 0 < rid < 2**63:  # the store's ids are 64-bit integers
            raise NotFound(f"no round {rid}")
        try:
            doc = await asyncio.to_thread(replay_document, hub().store, rid)
        except PontoonError as exc:
            raise NotFound(str(exc)) from None
        table = doc["round"]["table"]
        who = await viewer(table, token, request) if table in hub().tables else None
        if doc["round"]["status"] == "open":
            raise Conflict("the round is still being played")
        for e in doc["events"]:
            if e.get("kind") in HIDDEN and e.get("kind") == "burn":
                e.pop("card", None)  # a burnt card stays face down
            e.pop("hash", None)
        if who is not None and who.role == "supervisor":
            return doc
        return masked(doc, who.name if who else None)

    @app.get("/api/tables/{name}/shoes/{seq}")
    async def revealed_shoe(name: str, seq: int) -> dict[str, Any]:
        """A shoe the table revealed at event ``seq``, to check (docs/fairness.md): the text
        revealed, the commitment it answers, the cards the record shows leaving that shoe
        and the check's problems. Nobody's name is in it. 409 while the round it was
        revealed in is in play (a hole card of that shoe may still be face down)."""
        if name not in hub().configs:
            raise NotFound(f"no table {name!r}")
        if not 0 < seq < 2**63:  # the store's seqs are 64-bit integers
            raise NotFound(f"table {name!r} event {seq} reveals no shoe")
        try:
            doc = await asyncio.to_thread(shoe_record, hub().store, name, seq)
        except PontoonError as exc:
            raise NotFound(str(exc)) from None
        if doc["status"] == "open":
            raise Conflict("revealed in the round in play: shown once it is over")
        return doc

    @app.get("/api/tables/{name}/chart")
    async def chart(name: str) -> dict[str, Any]:
        return await hub().charts.get(hub().table(name).rules)

    async def _account_socket(websocket: WebSocket, table: str) -> Session:
        """The session of the socket's logged-in account (its cookie): the page's own
        origin only (checked before), a player who joined or a member of staff."""
        cookie = websocket.cookies.get(COOKIE)
        account = await asyncio.to_thread(door().accounts.session, cookie or "")
        if account is None:
            raise Refused("log in first (or give a session token)", code="auth")
        return hub().account_session(table, account)

    @app.websocket("/ws/{name}")
    async def ws(websocket: WebSocket, name: str, token: str | None = None) -> None:
        await websocket.accept()
        t = hub().tables.get(name)
        try:
            if not same_origin(websocket, hosts):
                raise Refused("a WebSocket from another site's page is refused", code="origin")
            if t is None and name in hub().configs:  # between owners: connect again
                await websocket.send_json(error_reply(Refused(MOVING.format(name), code="moved")))
                await websocket.close(code=CLOSE_MOVED)
                return
            if t is None:
                raise Refused(f"no table {name!r}", code="table")
            if accounts and not token:
                session = await _account_socket(websocket, name)
            else:
                session = hub().session(name, token, _address(websocket))
        except Refused as exc:
            await websocket.send_json(error_reply(exc))
            await websocket.close(code=4429 if exc.code == "throttled" else 4401)
            return
        hub().admit(t, session)
        client = Outbox(websocket, session, t.disconnected)
        t.clients.add(client)
        # a reconnecting client gets the current state
        client.post_state(t.state_text(session))
        try:
            while not client.closed:
                incoming = await websocket.receive()
                if incoming["type"] == "websocket.disconnect":
                    break
                text = incoming.get("text")
                if text is None:
                    text = incoming.get("bytes") or b""
                reply = await hub().handle(t, client, text)
                wait = reply.pop("refresh", None)  # the server's note, not the client's
                client.post(reply)  # nothing, when a leave elsewhere closed the socket
                if wait == 0:
                    client.post_state(t.state_text(session), last=True)
                elif wait is not None:  # past the limit: one state when it allows
                    client.post_later(wait, lambda: t.state_text(session))
                if session.closed:  # left: this token opens nothing any more
                    client.close(1000 if reply["type"] == "ok" else 4401)
        except WebSocketDisconnect:
            pass
        finally:
            t.disconnected(client)
            await client.finish()

    return app
