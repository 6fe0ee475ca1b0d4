"""The pit: game recall, the pit boss's report, and the tables as the pit boss sees them
(their routes: :mod:`pontoon.server.routes.pit`).

``/recall`` shows a player's last ten rounds (``GET /api/recall``: the logged-in account's,
or in demo mode the player of ``table`` and ``token``), and a supervisor's or pit boss's any
round (``GET /api/recall/{id}``). ``/pit`` is the report (``GET /api/report`` and its plot
``GET /api/report.png``, with ``table``, ``from``, ``to``, ``period``) for a supervisor or pit
boss: in accounts mode by their login, in demo mode by the supervisor's token. Everything
is read on a worker thread; the report's theory is analysed once per rule set and process.

The pit boss also opens and closes tables and sets their limits (``GET /api/pit/tables``,
``POST /api/pit/tables/{name}`` with ``open``, ``table_min``, ``table_max``): a closed table
starts no new round (one in play ends) and reveals its shoe once no round is in play
(docs/operators/fairness.md; it shuffles anew when it opens again); new limits hold next round.
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
from typing import TYPE_CHECKING, Any, NamedTuple

from fastapi import Request
from pydantic import BaseModel, Field

from pontoon.store.db import Store
from pontoon.store.roles import Role

from .forward import passed_on, peer_auth
from .table import Table

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("pontoon.server")

OVERSIGHT = frozenset({str(Role.SUPERVISOR), str(Role.PITBOSS)})
PEER_SECONDS = 2.0  # how long the pit's list waits for another process's tables


class Where(NamedTuple):
    """A configured table, where it is served: at ``address`` by another process (None: by
    this one, or by none at this moment), and its rule set's limits (before the pit boss's)."""

    table: str
    address: str | None
    table_min: int
    table_max: int


class TableSettings(BaseModel):
    open: bool | None = None
    table_min: int | None = Field(None, ge=1, le=10**9)
    table_max: int | None = Field(None, ge=1, le=10**9)


async def spread(hub: Hub) -> list[Where]:
    """Every configured table, where it is served (another process's address, or None)."""
    away = await hub.tenure.elsewhere() if hub.tenure is not None else {}
    return [
        Where(n, away.get(n), c.rules.table_min, c.rules.table_max) for n, c in hub.configs.items()
    ]


def listed(t: Table) -> dict[str, Any]:
    """A table this process serves, as the pit lists it."""
    rnd = t.round
    return {
        "table": t.name,
        "open": not t.closed,
        "table_min": t.rules.table_min,
        "table_max": t.rules.table_max,
        "in_play": rnd is not None and not rnd.over,
        "players": sorted(t.names),
    }


async def every_table(
    request: Request, token: str | None, mine: list[dict[str, Any]], hub: Hub
) -> list[dict[str, Any]]:
    """Every configured table as the pit lists it, in order: this process's (``mine``), each
    other process's as it lists them (all asked at once), and the store's word on those whose
    owner could not be asked."""
    here = {d["table"]: d for d in mine}
    places = await spread(hub)
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
        await asyncio.to_thread(stored, hub.store, out, missing)
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


def staff_account(store: Store, name: str) -> bool:
    """Whether ``name`` is an account of the store (a setting is recorded under it)."""
    from pontoon.store.accounts import Accounts

    return Accounts(store).get(name) is not None


def unreachable(p: Where, why: str) -> dict[str, Any]:
    """A table whose owner could not be asked, as the pit lists it."""
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


def stored(store: Store, out: list[dict[str, Any]], missing: dict[str, int]) -> None:
    """What the store says of the tables in ``out`` whose owners could not be asked
    (``missing``: table -> index): open or closed, the pit boss's limits."""
    from pontoon.store.table_settings import settings

    for name, i in missing.items():
        try:
            found = settings(store, name)
        except Exception as exc:  # the store away: listed all the same, open unknown
            log.warning("the pit's list: the settings of %s could not be read: %s", name, exc)
            continue
        out[i]["open"] = not found.closed
        if found.limits is not None:
            out[i]["table_min"], out[i]["table_max"] = found.limits


__all__ = [
    "OVERSIGHT",
    "PEER_SECONDS",
    "TableSettings",
    "Where",
    "every_table",
    "listed",
    "spread",
    "staff_account",
]
