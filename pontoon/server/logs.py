"""The server's logs as JSON lines (``pontoon serve --log-json``), for a log pipeline to index
and alert on: each line one object with its time, level, logger and message, and what it was
about — the ``table``, the ``round`` and the ``player`` of the message being handled, the
``request`` (its ``X-Request-ID``, or one made for it) of the HTTP request or socket.

What a line is about is kept in a context variable (:func:`about`), set where a message or a
request is handled and copied into every record logged meanwhile (:class:`ContextFilter`);
the formatting is python-json-logger's.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar, Token
from typing import Any

CONTEXT: ContextVar[dict[str, Any]] = ContextVar("pontoon_log_context", default={})  # noqa: B039
FIELDS = ("table", "round", "player", "request")


def about(**fields: Any) -> Token[dict[str, Any]]:
    """What the lines logged from now on (in this task) are about, besides what they were
    already; give the token to :func:`done` when it is over."""
    return CONTEXT.set(CONTEXT.get() | {k: v for k, v in fields.items() if v is not None})


def done(token: Token[dict[str, Any]]) -> None:
    CONTEXT.reset(token)


class ContextFilter(logging.Filter):
    """Copies what the line is about (:data:`CONTEXT`) into the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in CONTEXT.get().items():
            setattr(record, key, value)
        return True


def use_json(level: int = logging.INFO, stream: Any = None) -> logging.Handler:
    """Every log line, from here on, one JSON object on ``stream`` (standard error)."""
    from pythonjsonlogger.json import JsonFormatter

    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(
        JsonFormatter(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        )
    )
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    return handler


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGI = Callable[[Scope, Receive, Send], Awaitable[None]]


class RequestIds:
    """ASGI middleware: each HTTP request and socket is about its ``X-Request-ID`` (a new
    one when it has none) in the lines logged while it is handled."""

    def __init__(self, app: ASGI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(b"x-request-id", b"")
        rid = given.decode("latin-1")[:64] if given else uuid.uuid4().hex[:16]
        token = about(request=rid)
        try:
            await self.app(scope, receive, send)
        finally:
            done(token)


__all__ = ["CONTEXT", "FIELDS", "ContextFilter", "RequestIds", "about", "done", "use_json"]
