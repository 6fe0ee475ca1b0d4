"""The ASGI application: the page, a small JSON API and one WebSocket per client.

HTTP: ``GET /api/tables`` · ``POST /api/tables/{table}/join`` ``{"name"}`` → a session token ·
``POST /api/tables/{table}/leave`` ``{"token"}`` → cashed out ·
``GET /api/tables/{table}/state?token=`` · ``GET /api/tables/{table}/history`` ·
``GET /api/rounds/{id}`` (a recorded round's events, for the replay) ·
``GET /api/tables/{table}/chart`` (the optimal basic strategy, for the hint).
WebSocket: ``/ws/{table}?token=TOKEN``; the messages are in :mod:`pontoon.server.protocol`.

Each socket's sending is :mod:`pontoon.server.outbox`'s; the web's defences are
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
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from pontoon.errors import PontoonError
from pontoon.rules import RuleSet, rules_json
from pontoon.store.accounts import STAFF, Account, Accounts, Role, hasher
from pontoon.store.db import NameTakenError, Store, WalletError, token_digest
from pontoon.store.group import GroupWriter
from pontoon.store.secret import ShoeKeys
from pontoon.store.show import list_rounds, replay_document
from pontoon.store.table_settings import settings

from .accounts import COOKIE, Door
from .accounts import add_routes as account_routes
from .forward import Forward
from .limits import Bucket, Limits, Throttle
from .operator import OperatorConfig, OperatorWallet, add_launch
from .outbox import Outbox
from .pit import Where
from .pit import add_routes as pit_routes
from .privacy import masked, own
from .protocol import (
    Act,
    BadMessage,
    Bet,
    Deal,
    JoinRequest,
    Leave,
    LeaveRequest,
    Message,
    Procedure,
    Reality,
    look,
    parse,
)
from .table import (
    HIDDEN,
    Client,
    Refused,
    Session,
    Table,
    TableConfig,
    public_rules,
    with_limits,
)
from .tenure import CLOSE_MOVED, Leasing, Tenure
from .timing import Timings
from .train import add_routes as train_routes
from .web import Headers, Hosts, same_origin

STATIC = Path(__file__).parent / "static"
SEEN = 64  # idempotency keys remembered per session
# The cyclic collector's thresholds while serving (Python's default: 700, 10, 10). A young
# collection every 700 container allocations came every few actions; each stopped the event
# loop and the store's writer together (the GIL), and the acknowledgements waiting on them
# came late in a bunch: the bench's p99 after its start, 50 x 3 with accounts, 24-32 ms at
# 700 and 18-22 ms at 100,000 in alternated runs (docs/server.md). The objects a round makes
# are freed by their reference counts; few cycles are left for the collector.
GC_THRESHOLDS = (100_000, 20, 100)
UNKNOWN = "unknown session token for this table"
THROTTLED = "too many failed authentications from this address: try again later"
MOVING = "table {} is moving to another server: try again in a moment"
CLOSE_REPLACED = 4409  # a socket closed because its session opened one too many


log = logging.getLogger(__name__)


class Hub:
    """The server's tables and sessions. With ``accounts`` (accounts mode) people log in,
    staff by their roles, and each player's built-in wallet stands behind every table
    (``wallets``, kept current by every write); there is no supervisor's token. Without, a
    name is enough to sit down with play money, and the supervisor's token opens the
    procedures."""

    def __init__(
        self,
        store: Store,
        configs: list[TableConfig],
        supervisor_token: str | None,
        limits: Limits | None = None,
        accounts: Accounts | None = None,
        operator: OperatorConfig | None = None,
        leasing: Leasing | None = None,
        writer_process: bool = False,
    ) -> None:
        self.store = store
        self.writer = GroupWriter(store, process=writer_process)
        self.applying = Timings()  # the messages that would change a table, each handled
        self.accounts = accounts
        self.wallets: dict[str, int] | None = {} if accounts is not None else None
        self.remote = None
        if operator is not None:
            assert self.wallets is not None, "an operator's wallet needs accounts"
            self.remote = OperatorWallet(store, operator, self.wallets)
        self.configs = {c.name: c for c in configs}
        self.tables: dict[str, Table] = {}  # the tables this process serves
        self.sessions: dict[str, Session] = {}  # by the token's digest
        self.supervisors: dict[str, Session] = {}  # the supervisor's session at each table
        self.staff: dict[tuple[str, str], Session] = {}  # (table, account): staff at a table
        self.supervisor_token = None if accounts is not None else supervisor_token
        self.door: Door | None = None  # accounts mode: the players' reality checks
        self.limits = limits = limits or Limits()
        self.charts = Charts()
        self.throttle = Throttle(limits.failures, limits.failure_window)
        self.tenure: Tenure | None = None  # several processes: the tables held by lease
        if leasing is None:
            for name in self.configs:
                self.open_table(name)
        else:
            names = list(self.configs)
            self.tenure = Tenure(store, leasing, names, self.open_table, self.drop, self.idle)
            self.tenure.start()

    def idle(self, name: str) -> bool:
        """Table ``name`` is between rounds, nothing being applied: it may change hands."""
        t = self.tables.get(name)
        return t is not None and not t.lock.locked() and (t.round is None or t.round.over)

    def open_table(self, name: str, fence: int | None = None) -> None:
        """Serve table ``name`` (its writes carry ``fence``, the lease's token, when leased),
        its round in play resumed from the store. What the pit boss set outlives a restart:
        the limits go into the rule set before the round in play is resumed under them."""
        c, found = self.configs[name], settings(self.store, name)
        if found.limits is not None:
            c = replace(c, rules=with_limits(c.rules, *found.limits))
        t = Table(c, self.store, self.writer, self.wallets, self.remote, fence)
        t.closed = found.closed
        self.tables[name] = t
        t.arm_timer()  # a resumed round's turn timer

    def drop(self, name: str) -> None:
        """Stop serving table ``name`` (its lease is another process's now): its sockets are
        closed (4503: connect again) and its sessions forgotten here (the store keeps them)."""
        t = self.tables.pop(name, None)
        if t is None:
            return
        moved = _error(Refused(MOVING.format(name), code="moved"))
        for client in list(t.clients):
            client.close(CLOSE_MOVED, moved)
        t.close()
        self.sessions = {k: v for k, v in self.sessions.items() if v.table != name}
        self.supervisors.pop(name, None)
        self.staff = {k: v for k, v in self.staff.items() if k[0] != name}

    def session(self, table: str, token: str | None, addr: str | None = None) -> Session:
        """The session of ``token`` at ``table``: from memory, else from the store (a session
        made before a restart); :class:`Refused` for a missing, unknown or other table's.
        An unknown token is a failed authentication of ``addr``: logged (never the token) and
        counted; an address with too many is refused (code ``throttled``) whatever it sends."""
        if not token:
            raise Refused("a session token is required: join the table first", code="auth")
        if addr is not None and self.throttle.blocked(addr):
            raise Refused(THROTTLED, code="throttled")
        try:
            return self._session(table, token)
        except Refused:
            if addr is not None:
                blocked = self.throttle.fail(addr)
                log.warning("failed authentication from %s at table %s", addr, table)
                if blocked:
                    log.warning(
                        "%s refused for %g s: %d failed authentications",
                        addr,
                        self.throttle.window,
                        self.throttle.limit,
                    )
            raise

    def _session(self, table: str, token: str) -> Session:
        # bytes: compare_digest refuses a str with other than ASCII characters (a TypeError)
        raw = token.encode("utf-8", "surrogatepass")
        sup_token = self.supervisor_token
        if sup_token is not None and secrets.compare_digest(
            raw, sup_token.encode("utf-8", "surrogatepass")
        ):
            # one session per table, whatever the number of sockets: "two clicks apply once"
            sup = self.supervisors.get(table)
            if sup is None:
                sup = self.supervisors[table] = Session(token, "supervisor", "supervisor", table)
            return sup
        s = None
        if len(token) <= 64 and token.isascii():  # a player's token is ASCII
            digest = token_digest(token)
            s = self.sessions.get(digest)
            if s is None:
                found = self.store.find_session(token)
                if found is not None and found.table in self.tables:
                    s = self._restored(found.table, found.player, digest, found.last_id, token)
        if s is None or s.table != table or s.closed:
            raise Refused(UNKNOWN, code="auth")
        return s

    def _restored(
        self, table: str, player: str, digest: str, last_id: str | None, token: str = ""
    ) -> Session:
        """A player's session made before a restart, taken back from the store."""
        s = Session(token, player, "player", table, digest=digest)
        if last_id is not None:  # applied just before the restart: not again
            version = self.tables[table].version
            s.seen[last_id] = {"type": "ok", "ref": last_id, "version": version}
        self.sessions[digest] = s
        return s

    def account_session(self, table: str, account: Account) -> Session:
        """The session at ``table`` of a logged-in ``account``: a member of staff's (made on
        first use, one per table), or the player's own made by joining (:class:`Refused`
        when the player has not joined the table)."""
        if account.role in STAFF:
            key = (table, account.name)
            s = self.staff.get(key)
            if s is None:
                s = self.staff[key] = Session("", account.name, str(account.role), table)
            return s
        for s in self.sessions.values():
            if s.table == table and s.name == account.name and not s.closed:
                return s
        found = self.store.session_of(table, account.name)
        if found is None:
            raise Refused(f"{account.name} has not joined table {table!r}", code="auth")
        if self.wallets is not None and self.remote is None:  # the built-in wallet's
            self.wallets[account.name] = account.balance
        return self._restored(table, account.name, found[0], found[1])

    def table(self, name: str) -> Table:
        t = self.tables.get(name)
        if t is None and name in self.configs:  # held by no process at this moment
            raise HTTPException(503, MOVING.format(name))
        if t is None:
            raise HTTPException(404, f"no table {name!r}")
        return t

    async def join(self, table: Table, name: str, addr: str | None = None) -> Session:
        """A new session at ``table`` for ``name`` made from ``addr`` (its lock held). 409
        when a session has the name (one made before a restart counts, it is in the store)
        or one too like it (:func:`pontoon.server.protocol.look`), or the table has its
        ``players_per_table``; 429 when ``addr`` has ``joins_per_address`` sessions open
        there."""
        taken = f"{name!r} is already at table {table.name!r}"
        if any(s.name == name and s.table == table.name for s in self.sessions.values()):
            raise HTTPException(409, taken)
        like = [n for n in table.names if n != name and look(n) == look(name)]
        if like:
            raise HTTPException(409, f"{name!r} is too like {like[0]!r}, at table {table.name!r}")
        limits = self.limits
        if len(table.names) >= limits.players_per_table:
            msg = f"table {table.name!r} is full: {limits.players_per_table} players"
            raise HTTPException(409, msg)
        mine = [s for s in self.sessions.values() if s.table == table.name and s.address == addr]
        if addr is not None and len(mine) >= limits.joins_per_address:
            msg = f"at most {limits.joins_per_address} players from one address at a table"
            raise HTTPException(429, msg)
        token = secrets.token_urlsafe(24)
        try:
            await table.join(name, token)
        except NameTakenError:
            raise HTTPException(409, taken) from None
        digest = token_digest(token)
        s = Session(token, name, "player", table.name, digest=digest, address=addr)
        self.sessions[digest] = s
        return s

    def admit(self, table: Table, session: Session) -> None:
        """A new socket of ``session`` is coming: when the session has ``sockets_per_session``
        open at ``table`` already, its oldest is told and closed (4409; the page does not
        reconnect it): a reconnecting player is never locked out by a socket that lingers."""
        mine = [c for c in table.clients if c.session is session]
        self._bound(mine, self.limits.sockets_per_session, "this session")
        if self.accounts is not None and session.name:  # one account, every table
            everywhere = [
                c
                for t in self.tables.values()
                for c in t.clients
                if c.session.name == session.name and c.session.role == session.role
            ]
            self._bound(everywhere, self.limits.sockets_per_account, "this account")

    def _bound(self, mine: list[Client], n: int, who: str) -> None:
        """Close the oldest of ``mine`` until one more fits within ``n``."""
        while len(mine) >= n:
            oldest = min(mine, key=lambda c: getattr(c, "opened", 0))
            mine.remove(oldest)
            for t in self.tables.values():
                t.clients.discard(oldest)
            text = f"{who} opened more than {n} sockets: the oldest (this one) is closed"
            oldest.close(CLOSE_REPLACED, {"type": "error", "code": "sockets", "error": text})

    def state_wait(self, session: Session) -> float:
        """How long the answer to a ``state`` request of ``session`` waits: 0 within the
        limit (``state_burst`` at once, then ``states_per_second``, all its sockets
        together), else until the limit allows one (the waiting requests get one state)."""
        if session.rate is None:
            session.rate = Bucket(self.limits.states_per_second, self.limits.state_burst)
        return session.rate.take()

    async def leave(self, table: Table, name: str, sender: Client | None = None) -> int:
        """``name`` leaves ``table`` (its lock held): cashed out, every session of the name
        closed and each of their sockets but the ``sender``'s (answered by its handler) told
        (``left``) and closed at once; :class:`Refused` while the player has a wager in play."""
        amount = await table.leave(name)
        for digest, s in list(self.sessions.items()):
            if s.table == table.name and s.name == name and s.role == "player":
                s.closed = True
                del self.sessions[digest]
        left = {"type": "left", "player": name, "cashed_out": amount}
        for client in list(table.clients):
            if client.session.closed:
                table.clients.discard(client)
                if client is not sender:
                    client.close(1000, left)  # queued: its writer sends it, then closes
        return amount

    async def expire(self, table: Table) -> list[str]:
        """Close (cash out) the sessions of ``table`` that have been away for longer than
        its ``session_seconds`` and have no wager in play. Call with the lock not held."""
        if not table.idle():
            return []
        gone = []
        async with table.lock:
            for name in table.idle():
                try:
                    await self.leave(table, name)
                except Refused as exc:
                    table.notes.append(f"session of {name} not closed: {exc}")
                    continue
                gone.append(name)
            if gone:
                table.notes.append(f"session expired, cashed out: {', '.join(gone)}")
                table.broadcast()
        return gone

    async def handle(self, table: Table, client: Client, text: str | bytes) -> dict[str, Any]:
        """One message from ``client``: applied (committed, then broadcast) or refused with
        nothing changed. Returns the reply for the sender."""
        session = client.session
        start = time.perf_counter()
        try:
            msg = parse(text)
        except BadMessage as exc:
            return _error(exc)
        if msg.id is not None and msg.id in session.seen:  # (checked again under the lock)
            return session.seen[msg.id] | {"duplicate": True}
        if session.closed:
            return _error(Refused(UNKNOWN, code="auth"), msg.id)
        if msg.type in ("state", "ping"):
            out: dict[str, Any] = {"type": "ok", "ref": msg.id, "version": table.version}
            if msg.type == "state":
                out["refresh"] = self.state_wait(session)
            return out
        try:
            return await self._apply(table, client, msg)
        except Refused as exc:
            return _error(exc, msg.id)
        finally:
            self.applying.add(time.perf_counter() - start)

    async def _apply(self, table: Table, client: Client, msg: Message) -> dict[str, Any]:
        session = client.session
        async with table.lock:
            # Two clicks apply once: the id is looked up and recorded under the lock, so the
            # same message sent at once on two sockets of the session is applied once.
            if msg.id is not None and msg.id in session.seen:
                return session.seen[msg.id] | {"duplicate": True}
            if session.closed:  # left while this message waited for the lock
                raise Refused(UNKNOWN, code="auth")
            if isinstance(msg, Leave):
                if session.role != "player":
                    raise Refused("only a player leaves the table", code="role")
                amount = await self.leave(table, session.name, client)
                table.broadcast()
                out = {"type": "ok", "ref": msg.id, "version": table.version, "cashed_out": amount}
                _remember(session, msg.id, out)
                return out
            if isinstance(msg, Reality) or (isinstance(msg, Bet) and self.door is not None):
                if self.door is None or session.role != "player":
                    raise Refused("a reality check is a player's, in accounts mode", code="role")
                if isinstance(msg, Reality):
                    self.door.acknowledge(session.name)
                    out = {"type": "ok", "ref": msg.id, "version": table.version}
                    _remember(session, msg.id, out)
                    return out
                self.door.reality_check(session.name)
            v = getattr(msg, "v", None)
            if v is not None and table.stale(session, v):
                raise Refused(
                    f"the table has moved on (version {table.version}, not {v}): "
                    "look again before you decide",
                    code="stale",
                )
            mark = table.mark()
            try:
                if isinstance(msg, Bet):
                    table.bet(session, msg)
                elif isinstance(msg, Deal):
                    table.deal(session)
                elif isinstance(msg, Act):
                    table.act(session, msg)
                elif isinstance(msg, Procedure):
                    table.procedure(session, msg)
            except PontoonError as exc:
                table.reload()  # an unexpected engine error: the store is the truth
                raise Refused(f"{exc}", code="error") from None
            try:
                ack = (session.digest, msg.id) if session.digest and msg.id else None
                staff = None
                if self.accounts is not None and session.role in STAFF:
                    staff = (session.name, session.role, _action_text(msg))
                await table.commit(ack, staff)
            except WalletError as exc:  # the wallet holds too little: nothing was recorded
                table.rewind(mark)
                table.broadcast()
                raise Refused(f"not recorded: {exc}", code="funds") from None
            except PontoonError as exc:  # the store refused: the table was taken back from it
                table.broadcast()
                raise Refused(f"not recorded: {exc}", code="error") from None
            reply: dict[str, Any] = {"type": "ok", "ref": msg.id, "version": table.version}
            _remember(session, msg.id, reply)
            table.broadcast()
        return reply


def _action_text(msg: Message) -> str:
    """A staff member's message as the record of staff actions keeps it."""
    return json.dumps(msg.model_dump(exclude_none=True), separators=(",", ":"))


def _address(conn: Request | WebSocket) -> str:
    """The client's address (the peer's: behind a proxy, uvicorn's ``--forwarded-allow-ips``
    would be needed to see the real one)."""
    return conn.client.host if conn.client is not None else "?"


def _remember(session: Session, mid: str | None, reply: dict[str, Any]) -> None:
    """Note the reply to the message ``mid`` applied for ``session`` (under the table's lock):
    the same id again is answered with it, as a duplicate, and not applied."""
    if mid is not None:
        session.seen[mid] = reply
        while len(session.seen) > SEEN:
            session.seen.popitem(last=False)


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


def _error(exc: Exception, ref: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "error": str(exc), "ref": ref}
    if isinstance(exc, Refused):
        out["code"] = exc.code
        if exc.rule:
            out["rule"] = exc.rule
        out |= exc.facts
    else:
        out["code"] = "invalid"
    return out


class Charts:
    """The optimal basic strategy chart of each rule set, computed once however many ask at
    once (the first asks, the others wait for its answer) on a thread of its own: a cold
    chart takes seconds to a minute and must not hold up the threads that read the history
    and replays. A failed computation is not kept: the next request tries again."""

    def __init__(self) -> None:
        self.done: dict[str, dict[str, Any]] = {}
        self.running: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pontoon-chart")

    async def get(self, rules: RuleSet) -> dict[str, Any]:
        key = rules_json(rules, sort_keys=True)
        if key in self.done:
            return self.done[key]
        running = self.running.get(key)
        if running is None:
            loop = asyncio.get_running_loop()
            running = self.running[key] = loop.run_in_executor(self.pool, _chart, rules)
            running.add_done_callback(lambda f: self._finished(key, f))
        return await asyncio.shield(running)  # one caller gone does not cancel the others'

    def _finished(self, key: str, future: asyncio.Future[dict[str, Any]]) -> None:
        del self.running[key]
        if not future.cancelled() and future.exception() is None:
            self.done[key] = future.result()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _chart(rules: RuleSet) -> dict[str, Any]:
    from pontoon.analysis.report import analyze

    report = analyze(rules, "basic")
    assert report.chart is not None
    return {"rules": rules.name, "ev": report.ev, "cells": report.chart.cells}


def create_app(
    store_url: str,
    tables: list[TableConfig],
    supervisor_token: str | None = None,
    api_docs: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    limits: Limits | None = None,
    shoe_keys: ShoeKeys | None = None,
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
        store = Store(store_url, shoe_keys, own_checkpoints=True, stalled_after=stalled)
        people = Accounts(store, hasher(password_strength)) if accounts else None
        hub = Hub(store, tables, token, limits, people, operator, leasing, writer_process)
        state["hub"] = hub
        if people is not None:
            assert hub.wallets is not None
            seconds = login_hours * 3600.0
            state["door"] = hub.door = Door(people, hub.limits, hub.throttle, hub.wallets, seconds)
            hub.door.remote = hub.remote is not None
        app.state.hub = hub
        expiry = asyncio.create_task(_expire_sessions(hub))
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
        for task in (expiry, outbox):
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
    app = _Server(title="Pontoon table server", lifespan=lifespan, **docs)
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
    train_routes(app, STATIC, lambda: hub().store)

    async def person(
        request: Request, table: str | None, key: str | None, changes: bool
    ) -> tuple[str, str] | None:
        """Who asks for recall or a report: the supervisor's token, a table's session, or
        the logged-in account."""
        if key and table is None:
            if secrets.compare_digest(key.encode("utf-8", "surrogatepass"), token.encode()):
                return "supervisor", str(Role.SUPERVISOR)
            raise HTTPException(401, "that is not the supervisor's token")
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
                raise HTTPException(403, "staff work at the tables, they do not sit down")
            player, wallet = account.name, account.balance
        elif body is None:
            raise HTTPException(422, 'give the player\'s name: {"name": ...}')
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
            status = {"auth": 401, "role": 403, "illegal": 409, "throttled": 429}.get(exc.code, 400)
            raise HTTPException(status, str(exc)) from None
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
            raise HTTPException(429 if exc.code == "throttled" else 401, str(exc)) from None

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
            raise HTTPException(404, f"no round {rid}")
        try:
            doc = await asyncio.to_thread(replay_document, hub().store, rid)
        except PontoonError as exc:
            raise HTTPException(404, str(exc)) from None
        table = doc["round"]["table"]
        who = await viewer(table, token, request) if table in hub().tables else None
        if doc["round"]["status"] == "open":
            raise HTTPException(409, "the round is still being played")
        for e in doc["events"]:
            if e.get("kind") in HIDDEN and e.get("kind") == "burn":
                e.pop("card", None)  # a burnt card stays face down
            e.pop("hash", None)
        if who is not None and who.role == "supervisor":
            return doc
        return masked(doc, who.name if who else None)

    @app.get("/api/tables/{name}/chart")
    async def chart(name: str) -> dict[str, Any]:
        return await hub().charts.get(hub().table(name).rules)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Any, exc: RequestValidationError) -> Response:
        """422 with where and why, not the input: what a client sent need not come back, and
        a lone surrogate in it (a JSON string may hold one) could not be encoded (a 500)."""
        keep = ("loc", "msg", "type")
        detail = [{k: e.get(k) for k in keep} for e in exc.errors()]
        text = json.dumps({"detail": detail}, default=str)  # ASCII: surrogates escaped
        return Response(text, status_code=422, media_type="application/json")

    @app.exception_handler(Refused)
    async def refused(request: Any, exc: Refused) -> JSONResponse:
        return JSONResponse(_error(exc), status_code=400)

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
                await websocket.send_json(_error(Refused(MOVING.format(name), code="moved")))
                await websocket.close(code=CLOSE_MOVED)
                return
            if t is None:
                raise Refused(f"no table {name!r}", code="table")
            if accounts and not token:
                session = await _account_socket(websocket, name)
            else:
                session = hub().session(name, token, _address(websocket))
        except Refused as exc:
            await websocket.send_json(_error(exc))
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
