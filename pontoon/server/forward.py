"""Requests passed on to their table's owner (:class:`PassToOwner`): any process of several
on one store answers a request for a table another process holds by passing it on (an HTTP
request, or a WebSocket pumped both ways), so a page or a bot may connect to any of them.
(:mod:`pontoon.server.handoff` brings most connections to the owner before they are read;
this is for the rest: a connection kept alive across tables, a lease that moved since, a
server of several started without ``--processes``.)

Passed on: ``/api/tables/{t}/…``, ``/api/pit/tables/{t}`` and ``/ws/{t}`` for a configured
table ``t`` this process does not hold. The owner sees the client's address in
``X-Forwarded-For`` (uvicorn believes it from 127.0.0.1 by default: ``FORWARDED_ALLOW_IPS``
across hosts). A WebSocket's ``Origin`` is checked here, where the page's host is known; the
owner's closing code reaches the client (4503 when the table moves again: the page connects
again, and is brought to the new owner).

Under ``--processes``, and between servers started apart under ``--lease`` that share a
``--cluster-secret-file``, each hop carries a peer's proof (:mod:`pontoon.server.peers`, signed
by :class:`PeerAuth` or :func:`_websocket`'s handshake), checked where it arrives
(:class:`PeerCheck`); a child's own port on the loopback answers nothing without one: any user
of the host can connect to it.
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
from websockets.uri import parse_uri

from .handoff import TABLE_PATH
from .peers import HEADER, Peers
from .web import SECURITY_HEADERS, same_origin

log = logging.getLogger("pontoon.server")

HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"host", b"content-length"}
MINE = {k for k, _ in SECURITY_HEADERS}  # added again on the way out (web.Headers)
BODY_LIMIT = 1 << 20
PEERS = "pontoon.peers"  # a scope's: the cluster's Peers, in a child of --processes
FORWARDED = b"x-forwarded-for"
PROOF = HEADER.encode()
CLOSE_NOT_PEER = 4403  # a socket at a child's own port with no valid proof
# what a child's own port answers without a proof: the same as its public address answers
# anyone, naming no table and reading no client's address (the tests read each child's)
OPEN = {("GET", "/api/stats"), ("HEAD", "/api/stats")}


class PassToOwner:
    """ASGI middleware that passes a request for a table another process holds on to that
    process: ``where(table)`` is its address (None: the table is answered here)."""

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
                scope["method"],
                url,
                content=body,
                headers=self._headers(scope),
                auth=peer_auth(scope),
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
        headers = self._headers(scope)
        peers: Peers | None = scope.get(PEERS)
        if peers is not None:  # (the handshake as websockets sends it)
            client = ", ".join(v for k, v in headers if k == FORWARDED.decode())
            headers.append((HEADER, peers.sign("GET", parse_uri(url).resource_name, b"", client)))
        await receive()  # websocket.connect
        try:
            upstream = await websockets.connect(
                url, additional_headers=headers, compression=None, max_size=1 << 16
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
    ``Origin`` (checked where it arrives), with the client's address in ``X-Forwarded-For``
    (what the client sent there, and a peer's proof it sent, are not passed on); ``host``: its
    ``Host`` too (else the other process's address is the request's host).

    >>> scope = {"client": ("10.0.0.7", 5), "headers": [(b"cookie", b"s=1"),
    ...     (b"x-forwarded-for", b"1.2.3.4"), (b"x-pontoon-peer", b"v1 x"), (b"host", b"h")]}
    >>> passed_on(scope)
    [('cookie', 's=1'), ('x-forwarded-for', '10.0.0.7')]
    """
    out = [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in scope["headers"]
        if (k not in HOP or (host and k == b"host"))
        and not k.startswith(b"sec-websocket")
        and k not in (b"origin", FORWARDED, PROOF)
    ]
    client = scope.get("client")
    if client:
        out.append(("x-forwarded-for", client[0]))
    return out


def _target(scheme: str, address: str, scope: Any) -> str:
    """The owner's URL for the request of ``scope``: its path and query at ``address``."""
    return f"{scheme}://{address}{_sent(scope)}"


def _sent(scope: Any) -> str:
    """The target of the request of ``scope`` as it was sent: its path and query, raw."""
    raw: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
    query: bytes = scope.get("query_string", b"")
    return (raw + (b"?" + query if query else b"")).decode("latin-1")


class PeerAuth(httpx.Auth):
    """httpx's ``auth``: each request signed for the process it goes to (its method, its
    target as sent, its body and its ``X-Forwarded-For``)."""

    requires_request_body = True

    def __init__(self, peers: Peers) -> None:
        self.peers = peers

    def auth_flow(self, request: httpx.Request) -> Any:
        target = request.url.raw_path.decode("latin-1")
        client = request.headers.get(FORWARDED.decode(), "")
        request.headers[HEADER] = self.peers.sign(request.method, target, request.content, client)
        yield request


def peer_auth(scope: Any) -> PeerAuth | None:
    """The signing of a request made, for the request of ``scope``, to another process of the
    host (httpx's ``auth``: the pit's list asks each owner so); None when this process has no
    peers (one process alone, or ``--lease`` without ``--cluster-secret-file``)."""
    peers: Peers | None = scope.get(PEERS)
    return None if peers is None else PeerAuth(peers)


class PeerCheck:
    """ASGI middleware that checks a peer's proof (:mod:`pontoon.server.peers`). On ``own``, a
    child of ``--processes``'s own port on the loopback that any user of the host can reach,
    a request is answered only with a valid proof; elsewhere (the public connections, and
    every port of a server started apart under ``--lease --cluster-secret-file``) a request
    bearing none passes as it came. A proof that does not hold is refused — 403 in one line,
    a WebSocket closed with :data:`CLOSE_NOT_PEER` and why —, and with one that holds the
    client is the address it vouches for (``X-Forwarded-For``), believed from nowhere else on
    ``own``. Every request's scope carries ``peers`` (:data:`PEERS`), for what passes a
    request on to sign it."""

    def __init__(self, app: Any, peers: Peers, own: tuple[str, int] | None) -> None:
        self.app = app
        self.peers = peers
        self.own = own

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        scope[PEERS] = self.peers
        server = scope.get("server")
        method = scope.get("method", "GET")
        at_own = server is not None and (server[0], server[1]) == self.own
        proofs = [v.decode("latin-1") for k, v in scope["headers"] if k == PROOF]
        if (method, scope["path"]) in OPEN or not (at_own or proofs):
            await self.app(scope, receive, send)
            return
        if len(proofs) != 1:  # (refused before any body is read)
            why = "more than one peer proof" if proofs else "no peer proof"
            await _refuse(scope, receive, send, why, at_own)
            return
        client = ", ".join(v.decode("latin-1") for k, v in scope["headers"] if k == FORWARDED)
        body = b""
        if scope["type"] == "http":
            read = await _read_body(receive)
            if read is None:
                await _answer(send, 413, b"request body too large")
                return
            body, receive = read
        wrong = self.peers.check(proofs[0], method, _sent(scope), body, client)
        if wrong is not None:
            await _refuse(scope, receive, send, wrong, at_own)
            return
        if client:
            scope["client"] = (client.rsplit(",", 1)[-1].strip(), 0)
        await self.app(scope, receive, send)


async def _read_body(receive: Any) -> tuple[bytes, Any] | None:
    """An HTTP request's body, read (None past :data:`BODY_LIMIT`), and a ``receive`` that
    gives it again."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > BODY_LIMIT:
            return None
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    given = False

    async def again() -> Any:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return body, again


async def _refuse(scope: Any, receive: Any, send: Any, why: str, at_own: bool) -> None:
    """A request without a valid proof at a child's own port (``at_own``), or with one that
    does not hold anywhere: refused, saying why."""
    log.debug("refused a request without a valid peer proof: %s", why)
    if scope["type"] == "http":
        use = "this port serves the server's own processes; use its public address"
        line = f"{why}: {use}" if at_own else f"{why}: refused (send no peer proof)"
        await _answer(send, 403, line.encode())
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})  # (to say why)
    reason = f"{why}: use the public address" if at_own else f"{why}: refused"
    reason = reason.encode()[:123].decode("utf-8", "ignore")
    await send({"type": "websocket.close", "code": CLOSE_NOT_PEER, "reason": reason})


async def _answer(send: Any, status: int, text: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
