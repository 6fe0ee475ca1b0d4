"""The server's HTTP and WebSocket routes, one module per concern, each a list of
:class:`Endpoint`: plain functions that take what they need from the request's application
(``request.app.state``: the hub, the door, the drills, and :class:`Setup`, how the server was
made). :func:`pontoon.server.app.create_app` assembles them (:func:`add`).

:mod:`~pontoon.server.routes.tables` (the page, the tables, joining, leaving, a state, the
history, a round, a revealed shoe, the chart) · :mod:`~pontoon.server.routes.socket` (a
client's WebSocket) · :mod:`~pontoon.server.routes.status` (the server's kind and its
statistics) · :mod:`~pontoon.server.routes.accounts` (register, log in and out, limits, the
pit boss's and the cashier's changes) · :mod:`~pontoon.server.routes.operator` (an operator's
launch) · :mod:`~pontoon.server.routes.pit` (recall, the report, the pit boss's tables) ·
:mod:`~pontoon.server.routes.train` (the strategy drill). Who a request comes from is
:mod:`~pontoon.server.routes.who`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from fastapi import FastAPI
from starlette.requests import HTTPConnection

if TYPE_CHECKING:
    from pontoon.store.secret import ShoeKeys
    from pontoon.store.signing import RecordKeys

    from ..accounts import Door
    from ..hub import Hub
    from ..limits import Limits
    from ..operator import OperatorConfig
    from ..table_config import TableConfig
    from ..tenure import Leasing
    from ..train import Drills

STATIC = Path(__file__).parent.parent / "static"


@dataclass(frozen=True)
class Setup:
    """How the server was made (:func:`pontoon.server.app.create_app`'s arguments), as its
    lifespan and routes read it: ``app.state.setup``."""

    store_url: str
    tables: list[TableConfig]
    supervisor_token: str
    limits: Limits | None = None
    shoe_keys: ShoeKeys | None = None
    record_keys: RecordKeys | None = None
    anchors: str | None = None
    accounts: bool = False
    password_strength: str = "default"
    login_hours: float = 24.0
    operator: OperatorConfig | None = None
    welcome: int = 0
    leasing: Leasing | None = None
    writer_process: bool = False
    hosts: list[str] = field(default_factory=list)  # the names it answers to (lower case)
    passed: dict[str, int] = field(default_factory=dict)  # passed on to another, by kind


class Endpoint(NamedTuple):
    """A route: its method (``GET``, ``POST``, or ``WEBSOCKET``), its path, the function that
    answers it, and its status on success when not 200."""

    method: str
    path: str
    call: Callable[..., Any]
    status: int | None = None


def add(app: FastAPI, endpoints: Iterable[Endpoint]) -> None:
    """Add ``endpoints`` to ``app``, in order (as its decorators would)."""
    for e in endpoints:
        if e.method == "WEBSOCKET":
            app.add_api_websocket_route(e.path, e.call)
        elif e.status is None:
            app.add_api_route(e.path, e.call, methods=[e.method])
        else:
            app.add_api_route(e.path, e.call, methods=[e.method], status_code=e.status)


def setup(conn: HTTPConnection) -> Setup:
    """How the server of this request was made."""
    found: Setup = conn.app.state.setup
    return found


def hub(conn: HTTPConnection) -> Hub:
    """The server's tables and sessions (once it has started)."""
    found: Hub = conn.app.state.hub
    return found


def door(conn: HTTPConnection) -> Door:
    """Who comes in (accounts mode)."""
    found: Door = conn.app.state.door
    return found


def drills(conn: HTTPConnection) -> Drills:
    """The strategy drills under way."""
    found: Drills = conn.app.state.drills
    return found


def address(conn: HTTPConnection) -> str:
    """The client's address (the peer's: behind a proxy, uvicorn's ``--forwarded-allow-ips``
    would be needed to see the real one)."""
    return conn.client.host if conn.client is not None else "?"


__all__ = ["STATIC", "Endpoint", "Setup", "add", "address", "door", "drills", "hub", "setup"]
