"""The ASGI application: the page, a small JSON API and one WebSocket per client, assembled
by :func:`create_app` from the routes of :mod:`pontoon.server.routes` (a module per concern).

The tables and sessions are :mod:`pontoon.server.hub`'s (every message applied there), the
strategy hint's charts :mod:`pontoon.server.charts`'s. Each socket's sending is
:mod:`pontoon.server.outbox`'s; the web's defences are
:mod:`pontoon.server.web`'s, the limits :mod:`pontoon.server.limits`'s, who sees what in a
record :mod:`pontoon.server.privacy`'s. The errors the domain raises
(:mod:`pontoon.server.errors`) become HTTP answers here only (:data:`ANSWERS`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from pontoon.store.accounts import Accounts, hasher
from pontoon.store.db import Store
from pontoon.store.secret import ShoeKeys
from pontoon.store.signing import RecordKeys

from . import routes
from .accounts import Door
from .errors import Refused, RequestError, error_reply, status_of
from .forward import PassToOwner
from .hub import Hub
from .limits import Limits
from .operator import OperatorConfig
from .routes import STATIC, Setup
from .routes import accounts as account_routes
from .routes import operator as operator_routes
from .routes import pit as pit_routes
from .routes import socket as socket_routes
from .routes import status as status_routes
from .routes import tables as table_routes
from .routes import train as train_routes
from .table_config import TableConfig
from .tenure import Leasing
from .train import Drills
from .web import Headers, Hosts

# The cyclic collector's thresholds while serving (Python's default: 700, 10, 10). A young
# collection every 700 container allocations came every few actions; each stopped the event loop and
# the store's writer together (the GIL), and the acknowledgements waiting on them came late in a
# bunch: the bench's p99 after its start, 50 x 3 with accounts, 24-32 ms at 700 and 18-22 ms at
# 100,000 in alternated runs (docs/operators/deploying.md). The objects a round makes are freed by
# their reference counts; few cycles are left for the collector.
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
    """A request the server does not do: the status of its kind
    (:data:`~pontoon.server.errors.HTTP_STATUS`), the body ``{"detail": text}``, and
    ``Retry-After`` when it says when to ask again."""
    after = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
    return JSONResponse({"detail": str(exc)}, status_code=status_of(exc), headers=after)


ANSWERS: dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    RequestValidationError: _invalid,
    Refused: _refused,
    RequestError: _request_error,
}
"""The exception handlers :func:`create_app` registers: each error raised by the domain
(:mod:`pontoon.server.errors`) turned into its HTTP answer here, and only here."""


# ---------------------------------------------------------------- the server's life
@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The server's life: the store opened, the hub (and the door, with accounts) made and
    their tasks started; at the end, all stopped and closed in order."""
    s: Setup = app.state.setup
    leasing = s.leasing
    stalled = leasing.seconds if leasing is not None else None  # (see Store)
    store = Store(
        s.store_url,
        s.shoe_keys,
        record_keys=s.record_keys,
        anchors=s.anchors,
        own_checkpoints=True,
        stalled_after=stalled,
    )
    people = Accounts(store, hasher(s.password_strength)) if s.accounts else None
    hub = Hub(
        store, s.tables, s.supervisor_token, s.limits, people, s.operator, leasing, s.writer_process
    )
    door = None
    if people is not None:
        assert hub.wallets is not None
        seconds = s.login_hours * 3600.0
        door = hub.door = Door(people, hub.limits, hub.throttle, hub.wallets, seconds)
        door.remote = hub.remote is not None
        door.ended = hub.revoked
        app.state.door = door
    app.state.hub = hub
    expiry = asyncio.create_task(_expire_sessions(hub))
    watch = asyncio.create_task(door.watch()) if door is not None else None
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
    app.state.drills.worker.close()
    if door is not None:
        door.close()
    hub.writer.close()
    store.close()


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
    setup = Setup(
        store_url=store_url,
        tables=tables,
        supervisor_token=supervisor_token or secrets.token_urlsafe(24),
        limits=limits,
        shoe_keys=shoe_keys,
        record_keys=record_keys,
        anchors=anchors,
        accounts=accounts or operator is not None,
        password_strength=password_strength,
        login_hours=login_hours,
        operator=operator,
        welcome=welcome,
        leasing=leasing,
        writer_process=writer_process,
        hosts=[h.lower() for h in allowed_hosts or ()],
    )
    docs: dict[str, Any] = {} if api_docs else {"docs_url": None, "redoc_url": None}
    if not api_docs:
        docs["openapi_url"] = None
    app = _Server(
        title="Pontoon table server", lifespan=_lifespan, exception_handlers=ANSWERS, **docs
    )
    app.state.setup = setup
    app.state.supervisor_token = setup.supervisor_token

    async def where(table: str) -> str | None:
        """The address of the process serving ``table``, when another process does."""
        h: Hub | None = getattr(app.state, "hub", None)
        if h is None or h.tenure is None or table in h.tables or table not in h.configs:
            return None
        return await h.tenure.address_of(table)

    if leasing is not None:
        app.add_middleware(PassToOwner, where=where, hosts=setup.hosts, passed=setup.passed)
    if setup.hosts:
        app.add_middleware(Hosts, hosts=setup.hosts)
    app.add_middleware(Headers)

    def store() -> Store:
        hub: Hub = app.state.hub
        return hub.store

    app.state.drills = Drills(store)
    if setup.accounts:
        routes.add(app, account_routes.ROUTES)
    if operator is not None:
        routes.add(app, operator_routes.ROUTES)
    routes.add(app, table_routes.PAGE)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    routes.add(app, train_routes.ROUTES)
    routes.add(app, pit_routes.ROUTES)
    routes.add(app, status_routes.ROUTES)
    routes.add(app, table_routes.ROUTES)
    routes.add(app, socket_routes.ROUTES)
    return app
