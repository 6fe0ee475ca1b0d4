"""The pit's routes: recall (``/recall``, ``GET /api/recall``, ``GET /api/recall/{id}``), the
report (``/pit``, ``GET /api/report``, ``GET /api/report.png``), the tables as the pit boss
sees and sets them (``GET /api/pit/tables``, ``POST /api/pit/tables/{name}``) and the open
disputes with an operator's wallet (``GET /api/pit/disputes``): :mod:`pontoon.server.pit`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse, Response

from pontoon.errors import PontoonError
from pontoon.store.roles import Role

from ..errors import BadRequest, Conflict, Forbidden, NotFound, Refused, TryLater, Unauthenticated
from ..pit import OVERSIGHT, TableSettings, every_table, listed, staff_account
from ..privacy import masked_recall
from . import STATIC, Endpoint, hub, setup
from .who import person


async def _need(
    request: Request, table: str | None, token: str | None, changes: bool = False
) -> tuple[str, str]:
    """Who asks, as (name, role); :class:`Unauthenticated` when nobody is known."""
    found = await person(request, table, token, changes)
    if found is None:
        raise Unauthenticated("log in (or give your table and token) first")
    return found


async def _oversight(request: Request, table: str | None, token: str | None) -> None:
    """:class:`Forbidden` unless a supervisor or a pit boss asks."""
    _, role = await _need(request, table, token)
    if role not in OVERSIGHT:
        raise Forbidden("the reports and any round's recall are for a supervisor or a pit boss")


async def _read(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn`` on a worker thread; what it refuses, a :class:`BadRequest`."""
    try:
        return await asyncio.to_thread(fn, *args, **kw)
    except PontoonError as exc:
        raise BadRequest(str(exc)) from None


async def recall_page() -> FileResponse:
    return FileResponse(STATIC / "recall.html")


async def pit_page() -> FileResponse:
    return FileResponse(STATIC / "pit.html")


async def my_recall(
    request: Request, table: str | None = None, token: str | None = None, last: int = 10
) -> dict[str, Any]:
    from pontoon.audit.recall import recall

    name, role = await _need(request, table, token)
    if role != str(Role.PLAYER):
        raise BadRequest("recall of one's own rounds is a player's; staff ask by id")
    doc = await _read(recall, hub(request).store, name, max(1, min(last, 10)), empty=True)
    return masked_recall(doc, name)


async def any_recall(
    rid: int, request: Request, table: str | None = None, token: str | None = None
) -> dict[str, Any]:
    from pontoon.audit.recall import MARK, recalled

    await _oversight(request, table, token)
    store = hub(request).store
    if not 0 < rid < 2**63 or await asyncio.to_thread(store.round_row, rid) is None:
        raise NotFound(f"no round {rid} in the store")
    doc = await _read(recalled, store, rid)
    return {"recall": True, "mark": MARK, "rounds": [doc]}


async def _report(request: Request, series: bool) -> dict[str, Any]:
    from pontoon.audit.report import table_report

    q = request.query_params
    await _oversight(request, None, q.get("token"))  # ("table" filters the report)
    return dict(
        await _read(
            table_report,
            hub(request).store,
            table=q.get("table") or None,
            since=q.get("from") or None,
            until=q.get("to") or None,
            period=q.get("period") or "day",
            series=series,
        )
    )


async def pit_tables(
    request: Request, token: str | None = None, local: bool = False
) -> list[dict[str, Any]]:
    await _oversight(request, None, token)
    h = hub(request)
    mine = [listed(t) for t in h.tables.values()]
    if local or setup(request).leasing is None:  # (local: another process of the store asks)
        return mine
    return await every_table(request, token, mine, h)


async def pit_table(
    name: str, body: TableSettings, request: Request, token: str | None = None
) -> dict[str, Any]:
    from pontoon.store.table_settings import record

    account, role = await _need(request, None, token, changes=True)
    if role not in (str(Role.PITBOSS), str(Role.SUPERVISOR) if token else ""):
        raise Forbidden("the pit boss opens and closes tables and sets limits")
    store = hub(request).store
    t = hub(request).tables.get(name)
    if t is None:
        raise NotFound(f"no table {name!r}")
    if not await asyncio.to_thread(staff_account, store, account):
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
            await asyncio.to_thread(record, store, account, role, name, action)
        if t.closed:  # its shoe revealed now, or when the round in play ends
            try:
                await t.reveal_shoe()
            except PontoonError as exc:
                raise TryLater(f"closed; the shoe not yet revealed: {exc}") from None
        t.bump()
        t.broadcast()
    return listed(t)


async def pit_disputes(
    request: Request, token: str | None = None, table: str | None = None
) -> list[dict[str, Any]]:
    """The open disputes with the operator's wallet (every table's: the store is
    shared), oldest first (:func:`pontoon.audit.disputes.open_disputes`)."""
    from pontoon.audit.disputes import open_disputes

    await _oversight(request, None, token)
    found: list[dict[str, Any]] = await _read(open_disputes, hub(request).store, table or None)
    return found


async def report_doc(request: Request) -> dict[str, Any]:
    return await _report(request, False)


async def report_png(request: Request) -> Response:
    from pontoon.audit.plots import report_png

    doc = await _report(request, True)
    return Response(await asyncio.to_thread(report_png, doc), media_type="image/png")


ROUTES = [
    Endpoint("GET", "/recall", recall_page),
    Endpoint("GET", "/pit", pit_page),
    Endpoint("GET", "/api/recall", my_recall),
    Endpoint("GET", "/api/recall/{rid}", any_recall),
    Endpoint("GET", "/api/pit/tables", pit_tables),
    Endpoint("POST", "/api/pit/tables/{name}", pit_table),
    Endpoint("GET", "/api/pit/disputes", pit_disputes),
    Endpoint("GET", "/api/report", report_doc),
    Endpoint("GET", "/api/report.png", report_png),
]
