"""The web's defences on every answer: the security headers, the allowed ``Host`` names (DNS
rebinding), and a WebSocket's ``Origin``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import WebSocket
from starlette.middleware.trustedhost import TrustedHostMiddleware


def same_origin(ws: WebSocket, hosts: list[str]) -> bool:
    """Whether a WebSocket comes from this server's own page: a browser names the page's
    site in ``Origin``, which must be the host the request was made to (or one of the
    allowed hosts); a client that is not a browser sends none."""
    origin = ws.headers.get("origin")
    if origin is None:
        return True
    name = urlsplit(origin).hostname
    host = urlsplit("//" + ws.headers.get("host", "")).hostname
    return name is not None and (name == host or name in hosts)


SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),  # a supervisor's address holds its token
]


class Headers:
    """ASGI middleware: the security headers on every HTTP answer (the page's script and
    styles are files of its own origin: no inline script or style, no framing)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in have]
                message = dict(message, headers=[*message.get("headers", []), *extra])
            await send(message)

        await self.app(scope, receive, sending)


class Hosts:
    """ASGI middleware: only requests whose ``Host`` is one of ``hosts`` are answered (400;
    a WebSocket is refused before its handshake, 403): DNS rebinding."""

    def __init__(self, app: Any, hosts: list[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.http = TrustedHostMiddleware(app, allowed_hosts=hosts)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.http(scope, receive, send)
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if urlsplit("//" + host).hostname not in self.hosts:
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)
