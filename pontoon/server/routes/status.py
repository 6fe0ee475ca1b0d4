"""The server's own status: how people come in (``GET /api/server``) and its statistics
(``GET /api/stats``)."""

from __future__ import annotations

import gc
import os
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from pontoon.server.metrics import readiness

from . import Endpoint, hub, setup


async def server(request: Request) -> dict[str, Any]:
    """How people come in: ``accounts`` (log in, wallets) or a name and play money."""
    return {"accounts": setup(request).accounts}


async def stats(request: Request) -> dict[str, Any]:
    """The store writer's group commits (transactions, batches, seconds) so far, the
    cyclic collector's passes and what they freed, by generation, the requests passed on
    to another process (``http``, ``websocket``), and how long the messages that would
    change a table took to handle (:mod:`pontoon.server.timing`). ``pid``: which
    process answered (several answer at one address)."""
    h = hub(request)
    passes = gc.get_stats()
    collector = {
        "thresholds": list(gc.get_threshold()),
        "collections": [p["collections"] for p in passes],
        "collected": [p["collected"] for p in passes],
    }
    return {
        "tables": len(h.tables),
        "store": h.writer.stats(),
        "gc": collector,
        "passed_on": dict(setup(request).passed),
        "applying": h.applying.doc(),
        "pid": os.getpid(),
    }


async def livez(request: Request) -> dict[str, str]:
    """The process answers (a liveness probe: nothing else is looked at)."""
    return {"status": "ok"}


async def readyz(request: Request) -> Response:
    """Ready to serve (a readiness probe): the store answers, its tables are held, the
    writer keeps up (:func:`pontoon.server.metrics.readiness`); else 503 with the reasons."""
    why = await readiness(hub(request))
    if why:
        return JSONResponse({"status": "not ready", "why": why}, status_code=503)
    return JSONResponse({"status": "ready"})


ROUTES = [
    Endpoint("GET", "/api/server", server),
    Endpoint("GET", "/api/stats", stats),
    Endpoint("GET", "/livez", livez),
    Endpoint("GET", "/readyz", readyz),
]
