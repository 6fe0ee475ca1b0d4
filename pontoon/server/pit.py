"""Game recall and the pit boss's report on the table server.

``/recall`` shows a player's last ten rounds (``GET /api/recall``: the logged-in account's,
or in demo mode the player of ``table`` and ``token``), and a supervisor's or pit boss's any
round (``GET /api/recall/{id}``). ``/pit`` is the report (``GET /api/report`` and its plot
``GET /api/report.png``, with ``table``, ``from``, ``to``, ``period``) for a supervisor or pit
boss: in accounts mode by their login, in demo mode by the supervisor's token. Everything
is read on a worker thread; the report's theory is analysed once per rule set and process.

The pit boss also opens and closes tables and sets their limits (``GET /api/pit/tables``,
``POST /api/pit/tables/{name}`` with ``open``, ``table_min``, ``table_max``): a closed table
starts no new round (one in play ends) and reveals its shoe once no round is in play
(docs/fairness.md; it shuffles anew when it opens again); new limits hold from the next round.
Each is recorded with who set it (:mod:`pontoon.store.table_settings`) and outlives a restart.
``GET /api/pit/disputes`` lists the open disputes with an operator's wallet (a rollback or a
credit it refused or never confirmed, tried again until it acknowledges it:
:mod:`pontoon.audit.disputes`); the report (``/api/report``) carries them too.

With several processes on one store (:mod:`pontoon.server.tenure`) the list is every
configured table's, whichever process answers: its own tables, and each other process's as
that owner lists them (asked once per owner, all at once, with the asker's credentials and
``local=1``: its own tables only). A table whose owner does not answer within
:data:`PEER_SECONDS`, or that no process serves at this moment, is listed with
``"elsewhere": true``, ``"unreachable": true``, ``"reason"`` and what the store says of it
(open or closed, the limits); ``in_play`` is then null and ``players`` empty.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, Field

from pontoon.errors import PontoonError
from pontoon.store.db import Store
from pontoon.store.roles import Role

from .errors import BadRequest, Conflict, Forbidden, NotFound, Refused, TryLater, Unauthenticated
from .forward import passed_on, peer_auth
from .privacy import masked_recall
from .table import Table

log = logging.getLogger("pontoon.server")

Who = Callable[[Request, str | None, str | None, bool], Awaitable[tuple[str, str] | None]]
"""(request, table, token, changes) -> (name, role) of who asks, or None; ``changes``: a
request that changes something (its CSRF header is checked)."""

OVERSIGHT = frozenset({str(Role.SUPERVISOR), str(Role.PITBOSS)})
PEER_SECONDS = 2.0  # how long the pit's list waits for another process's tables


class Where(NamedTuple):
    """A configured table, where it is served: at ``address`` by another process (None: by
    this one, or by none at this moment), and its rule set's limits (before the pit boss's)."""

    table: str
    address: str | None
    table_min: int
    table_max: int


Spread = Callable[[], Awaitable[list[Where]]]
"""Every configured table, in order, where it is served (several processes on one store)."""


class TableSettings(BaseModel):
    open: bool | None = None
    table_min: int | None = Field(None, ge=1, le=10**9)
    table_max: int | None = Field(None, ge=1, le=10**9)


def add_routes(
    app: FastAPI,
    static: Any,
    store: Callable[[], Store],
    who: Who,
    tables: Callable[[], dict[str, Table]],
    spread: Spread | None = None,
) -> None:
    """``spread``: this process is one of several on the store (the pit lists every table)."""

    async def need(
        request: Request, table: str | None, token: str | None, changes: bool = False
    ) -> tuple[str, str]:
        found = await who(request, table, token, changes)
        if found is None:
            raise Unauthenticated("log in (or give your table and token) first")
        return found

    async def oversight(request: Request, table: str | None, token: str | None) -> None:
        _, role = await need(request, table, token)
        if role not in OVERSIGHT:
            raise Forbidden("the reports and any round's recall are for a supervisor or a pit boss")

    async def read(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        try:
            return await asyncio.to_thread(fn, *args, **kw)
        except PontoonError as exc:
            raise BadRequest(str(exc)) from None

    @app.get("/recall")
    async def recall_page() -> FileResponse:
        return FileResponse(static / "recall.html")

    @app.get("/pit")
    async def pit_page() -> FileResponse:
        return FileResponse(static / "pit.html")

    @app.get("/api/recall")
    async def my_recall(
        request: Request, table: str | None = None, token: str | None = None, last: int = 10
    ) -> dict[str, Any]:
        from pontoon.audit.recall import recall

        name, role = await need(request, table, token)
        if role != str(Role.PLAYER):
            raise BadRequest("recall of one's own rounds is a player's; staff ask by id")
        doc = await read(recall, store(), name, max(1, min(last, 10)), empty=True)
        return masked_recall(doc, name)

    @app.get("/api/recall/{rid}")
    async def any_recall(
        rid: int, request: Request, table: str | None = None, token: str | None = None
    ) -> dict[str, Any]:
        from pontoon.audit.recall import MARK, recalled

        await oversight(request, table, token)
        if not 0 < rid < 2**63 or await asyncio.to_thread(store().round_row, rid) is None:
            raise NotFound(f"no round {rid} in the store")
        doc = await read(recalled, store(), rid)
        return {"recall": True, "mark": MARK, "rounds": [doc]}

    async def report(request: Request, series: bool) -> dict[str, Any]:
        from pontoon.audit.report import table_report

        q = request.query_params
        await oversight(request, None, q.get("token"))  # ("table" filters the report)
        return dict(
            await read(
                table_report,
                store(),
                table=q.get("table") or None,
                since=q.get("from") or None,
                until=q.get("to") or None,
                period=q.get("period") or "day",
                series=series,
            )
        )

    def listed(t: Table) -> dict[str, Any]:
        rnd = t.round
        return {
            "table": t.name,
            "open": not t.closed,
            "table_min": t.rules.table_min,
            "table_max": t.rules.table_max,
            "in_play": rnd is not None and not rnd.over,
            "players": sorted(t.names),
        }

    @app.get("/api/pit/tables")
    async def pit_tables(
        request: Request, token: str | None = None, local: bool = False
    ) -> list[dict[str, Any]]:
        await oversight(request, None, token)
        mine = [listed(t) for t in tables().values()]
        if local or spread is None:  # (local: another process of the store asks)
            return mine
        here = {d["table"]: d for d in mine}
        places = await spread()
        owners: dict[str, list[str]] = {}
        for p in places:
            if p.table not in here and p.address is not None:
                owners.setdefault(p.address, []).append(p.table)
        answers = await asyncio.gather(*(theirs(request, token, a) for a in owners))
        found = dict(zip(owners, answers, strict=True))
        out, missing = [], {}
        for p in places:
            answer = found.get(p.address or "", "no process serves it at this moment")
            if p.table in here:
                out.append(here[p.table])
            elif isinstance(answer, dict) and p.table in answer:
                out.append(answer[p.table])
            else:
                why = answer if isinstance(answer, str) else f"its server at {p.address} let it go"
                missing[p.table] = len(out)
                out.append(unreachable(p, why))
        if missing:
            await asyncio.to_thread(stored, out, missing)
        return out

    async def theirs(request: Request, token: str | None, address: str) -> dict[str, Any] | str:
        """The tables the process at ``address`` serves, as its pit lists them (by name), asked
        with the request's credentials; or why they could not be had."""
        import httpx

        params = {"local": "1"} | ({"token": token} if token else {})
        try:
            auth = peer_auth(request.scope)  # (a hop to another process: its proof)
            async with httpx.AsyncClient(timeout=PEER_SECONDS, auth=auth) as http:
                r = await http.get(
                    f"http://{address}/api/pit/tables",
                    params=params,
                    headers=passed_on(request.scope, host=True),
                )
        except httpx.HTTPError as exc:
            log.warning("the pit's list: the server at %s did not answer: %r", address, exc)
            return f"its server at {address} did not answer"
        if r.status_code != 200:
            return f"its server at {address} answered {r.status_code}"
        try:
            return {d["table"]: d for d in r.json()}
        except (ValueError, TypeError, KeyError):
            return f"its server at {address} answered with no list of tables"

    def staff_account(name: str) -> bool:
        """Whether ``name`` is an account of the store (a setting is recorded under it)."""
        from pontoon.store.accounts import Accounts

        return Accounts(store()).get(name) is not None

    def unreachable(p: Where, why: str) -> dict[str, Any]:
        return {
            "table": p.table,
            "open": None,
            "table_min": p.table_min,
            "table_max": p.table_max,
            "in_play": None,
            "players": [],
            "elsewhere": True,
            "unreachable": True,
            "reason": why,
        }

    def stored(out: list[dict[str, Any]], missing: dict[str, int]) -> None:
        """What the store says of the tables in ``out`` whose owners could not be asked
        (``missing``: table -> index): open or closed, the pit boss's limits."""
        from pontoon.store.table_settings import settings

        for name, i in missing.items():
            try:
                found = settings(store(), name)
            except Exception as exc:  # the store away: listed all the same, open unknown
                log.warning("the pit's list: the settings of %s could not be read: %s", name, exc)
                continue
            out[i]["open"] = not found.closed
            if found.limits is not None:
                out[i]["table_min"], out[i]["table_max"] = found.limits

    @app.post("/api/pit/tables/{name}")
    async def pit_table(
        name: str, body: TableSettings, request: Request, token: str | None = None
    ) -> dict[str, Any]:
        from pontoon.store.table_settings import record

        account, role = await need(request, None, token, changes=True)
        if role not in (str(Role.PITBOSS), str(Role.SUPERVISOR) if token else ""):
            raise Forbidden("the pit boss opens and closes tables and sets limits")
        t = tables().get(name)
        if t is None:
            raise NotFound(f"no table {name!r}")
        if not await asyncio.to_thread(staff_account, account):
            raise Forbidden(  # (demo mode: the shared supervisor token has no account)
                "a setting is recorded under the pit boss's account: serve with --accounts"
            )
        actions = []
        async with t.lock:
            if body.table_min is not None or body.table_max is not None:
                if t.round is not None and not t.round.over:  # its wagers met the old limits
                    raise Conflict("limits change between rounds: a round is in play")
                low = body.table_min or t.rules.table_min
                high = body.table_max or t.rules.table_max
                try:
                    t.set_limits(low, high)
                except Refused as exc:
                    raise Conflict(str(exc)) from None
                actions.append(f"limits {low} {high}")
            if body.open is not None:
                t.closed = not body.open
                t.closed_by = None if body.open else role
                actions.append("open" if body.open else "close")
            for action in actions:
                await asyncio.to_thread(record, store(), account, role, name, action)
            if t.closed:  # its shoe revealed now, or when the round in play ends
                try:
                    await t.reveal_shoe()
                except PontoonError as exc:
                    raise TryLater(f"closed; the shoe not yet revealed: {exc}") from None
            t.bump()
            t.broadcast()
        return listed(t)

    @app.get("/api/pit/disputes")
    async def pit_disputes(
        request: Request, token: str | None = None, table: str | None = None
    ) -> list[dict[str, Any]]:
        """The open disputes with the operator's wallet (every table's: the store is
        shared), oldest first (:func:`pontoon.audit.disputes.open_disputes`)."""
        from pontoon.audit.disputes import open_disputes

        await oversight(request, None, token)
        found: list[dict[str, Any]] = await read(open_disputes, store(), table or None)
        return found

    @app.get("/api/report")
    async def report_doc(request: Request) -> dict[str, Any]:
        return await report(request, False)

    @app.get("/api/report.png")
    async def report_png(request: Request) -> Response:
        from pontoon.audit.plots import report_png

        doc = await report(request, True)
        return Response(await asyncio.to_thread(report_png, doc), media_type="image/png")


__all__ = ["OVERSIGHT", "PEER_SECONDS", "Spread", "Where", "Who", "add_routes"]
