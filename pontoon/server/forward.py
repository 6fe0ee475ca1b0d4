"""Bringing a client to its table's owner: any process of several on one store answers a
request for a table another process holds by passing it on (an HTTP request, or a WebSocket
pumped both ways), so a page or a bot may connect to any of them.

Passed on: ``/api/tables/{t}/…``, ``/api/pit/tables/{t}`` and ``/ws/{t}`` for a configured
table ``t`` this process does not hold. The owner sees the client's address in
``X-Forwarded-For`` (uvicorn believes it from 127.0.0.1 by default: ``FORWARDED_ALLOW_IPS``
across hosts). A WebSocket's ``Origin`` is checked here, where the page's host is known; the
owner's closing code reaches the client (4503 when the table moves again: the page connects
again, and is brought to the new owner).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

import httpx
import websockets
from starlette.websockets import WebSocket

from .handoff import TABLE_PATH
from .web import SECURITY_HEADERS, same_origin

log = logging.getLogger("pontoon.server")

HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"host", b"content-length"}
MINE = {k for k, _ in SECURITY_HEADERS}  # added again on the way out (web.Headers)
BODY_LIMIT = 1 << 20


class Forward:
    """ASGI middleware: ``where(table)`` is the address of the process serving ``table`` when
    that is another process (else None: answered here)."""

    def __init__(
        self,
        app: Any,
        where: Callable[[str], Awaitable[str | None]],
        hosts: list[str],
        passed: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.where = where
        self.hosts = hosts
        self.http = httpx.AsyncClient(timeout=30.0)
        self.passed = passed if passed is not None else {}  # requests passed on, by kind

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            found = TABLE_PATH.match(scope["path"])
            address = await self.where(found.group(1)) if found else None
            if address is not None:
                self.passed[scope["type"]] = self.passed.get(scope["type"], 0) + 1
                if scope["type"] == "http":
                    await self._http(scope, receive, send, address)
                else:
                    await self._websocket(scope, receive, send, address)
                return
        await self.app(scope, receive, send)

    def _headers(self, scope: Any) -> list[tuple[str, str]]:
        return passed_on(scope)

    async def _http(self, scope: Any, receive: Any, send: Any, address: str) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > BODY_LIMIT:
                await _answer(send, 413, b"request body too large")
                return
            if not message.get("more_body"):
                break
        url = _target("http", address, scope)
        try:
            r = await self.http.request(
                scope["method"], url, content=body, headers=self._headers(scope)
            )
        except httpx.HTTPError as exc:
            log.warning("the owner of %s at %s did not answer: %s", scope["path"], address, exc)
            await _answer(send, 503, b"the table's server did not answer: try again")
            return
        headers = [
            (k, v) for k, v in r.headers.raw if k.lower() not in HOP and k.lower() not in MINE
        ]
        await send({"type": "http.response.start", "status": r.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": r.content})

    async def _websocket(self, scope: Any, receive: Any, send: Any, address: str) -> None:
        if not same_origin(WebSocket(scope, receive, send), self.hosts):
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
            return
        url = _target("ws", address, scope)
        await receive()  # websocket.connect
        try:
            upstream = await websockets.connect(
                url, additional_headers=self._headers(scope), compression=None, max_size=1 << 16
            )
        except (OSError, websockets.InvalidHandshake, TimeoutError) as exc:
            log.warning("the owner of %s at %s refused or did not answer: %s", url, address, exc)
            await send({"type": "websocket.accept"})  # to say why: try again later
            await send({"type": "websocket.close", "code": 1013, "reason": "try again"})
            return
        await send({"type": "websocket.accept"})

        async def down() -> None:  # the owner to the client
            with suppress(websockets.ConnectionClosed):
                async for m in upstream:
                    key = "text" if isinstance(m, str) else "bytes"
                    await send({"type": "websocket.send", key: m})
            code = upstream.close_code or 1000
            reason = upstream.close_reason or ""
            if code in (1005, 1006):  # no code, or the owner gone: not codes to send
                code, reason = 1012, "the table's server restarts: connect again"
            with suppress(Exception):  # the client may be gone already
                await send({"type": "websocket.close", "code": code, "reason": reason})

        async def up() -> None:  # the client to the owner
            while True:
                m = await receive()
                if m["type"] == "websocket.disconnect":
                    await upstream.close()
                    return
                data = m.get("text") if m.get("text") is not None else m.get("bytes")
                with suppress(websockets.ConnectionClosed):
                    await upstream.send(data)

        tasks = [asyncio.create_task(down()), asyncio.create_task(up())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            await upstream.close()


def passed_on(scope: Any, *, host: bool = False) -> list[tuple[str, str]]:
    """The headers of the request of ``scope`` that go on to another process: the client's
    own (its cookie, ``Authorization``, …) but the hop-by-hop ones, a WebSocket's handshake and
    ``Origin`` (checked where it arrives), with the client's address in ``X-Forwarded-For``;
    ``host``: its ``Host`` too (else the other process's address is the request's host)."""
    out = [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in scope["headers"]
        if (k not in HOP or (host and k == b"host"))
        and not k.startswith(b"sec-websocket")
        and k != b"origin"
    ]
    client = scope.get("client")
    if client:
        out.append(("x-forwarded-for", client[0]))
    return out


def _target(scheme: str, address: str, scope: Any) -> str:
    """The owner's URL for the request of ``scope``: its path and query at ``address``."""
    query = scope.get("query_string", b"").decode("latin-1")
    return f"{scheme}://{address}{scope['path']}" + (f"?{query}" if query else "")


async def _answer(send: Any, status: int, text: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
