"""The server's own status: how people come in (``GET /api/server``) and its statistics
(``GET /api/stats``)."""

from __future__ import annotations

import gc
import os
from typing import Any

from fastapi import Request

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


ROUTES = [Endpoint("GET", "/api/server", server), Endpoint("GET", "/api/stats", stats)]
