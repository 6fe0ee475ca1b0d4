"""A client's WebSocket: ``/ws/{table}?token=TOKEN`` (or the logged-in account's cookie);
the messages are :mod:`pontoon.server.protocol`'s, each applied by the hub
(:meth:`pontoon.server.hub.Hub.handle`), and everything sent by the socket's own writer
(:class:`pontoon.server.outbox.Outbox`). A refusal before the socket is served is sent as an
error reply, then the socket closed: 4429 when throttled, 4401 otherwise, and
:data:`~pontoon.server.tenure.CLOSE_MOVED` while the table moves between processes."""

from __future__ import annotations

import asyncio

from fastapi import WebSocket, WebSocketDisconnect

from ..accounts import COOKIE
from ..clients import Session
from ..errors import Refused, error_reply
from ..hub import MOVING
from ..outbox import Outbox
from ..tenure import CLOSE_MOVED
from ..web import same_origin
from . import Endpoint, address, door, hub, setup

CLOSE_THROTTLED = 4429  # refused: the address failed to authenticate too often
CLOSE_REFUSED = 4401  # refused: no session, another site's page, no such table


async def _account_socket(websocket: WebSocket, table: str) -> Session:
    """The session of the socket's logged-in account (its cookie): the page's own
    origin only (checked before), a player who joined or a member of staff."""
    cookie = websocket.cookies.get(COOKIE)
    account = await asyncio.to_thread(door(websocket).accounts.session, cookie or "")
    if account is None:
        raise Refused("log in first (or give a session token)", code="auth")
    return hub(websocket).account_session(table, account)


async def ws(websocket: WebSocket, name: str, token: str | None = None) -> None:
    await websocket.accept()
    h, s = hub(websocket), setup(websocket)
    t = h.tables.get(name)
    try:
        if not same_origin(websocket, s.hosts):
            raise Refused("a WebSocket from another site's page is refused", code="origin")
        if t is None and name in h.configs:  # between owners: connect again
            await websocket.send_json(error_reply(Refused(MOVING.format(name), code="moved")))
            await websocket.close(code=CLOSE_MOVED)
            return
        if t is None:
            raise Refused(f"no table {name!r}", code="table")
        if s.accounts and not token:
            session = await _account_socket(websocket, name)
        else:
            session = h.session(name, token, address(websocket))
    except Refused as exc:
        await websocket.send_json(error_reply(exc))
        await websocket.close(code=CLOSE_THROTTLED if exc.code == "throttled" else CLOSE_REFUSED)
        return
    h.admit(t, session)
    client = Outbox(websocket, session, t.disconnected)
    t.clients.add(client)
    # a reconnecting client gets the current state
    client.post_state(t.state_text(session))
    try:
        while not client.closed:
            incoming = await websocket.receive()
            if incoming["type"] == "websocket.disconnect":
                break
            text = incoming.get("text")
            if text is None:
                text = incoming.get("bytes") or b""
            reply = await h.handle(t, client, text)
            wait = reply.pop("refresh", None)  # the server's note, not the client's
            client.post(reply)  # nothing, when a leave elsewhere closed the socket
            if wait == 0:
                client.post_state(t.state_text(session), last=True)
            elif wait is not None:  # past the limit: one state when it allows
                client.post_later(wait, lambda: t.state_text(session))
            if session.closed:  # left: this token opens nothing any more
                client.close(1000 if reply["type"] == "ok" else CLOSE_REFUSED)
    except WebSocketDisconnect:
        pass
    finally:
        t.disconnected(client)
        await client.finish()


ROUTES = [Endpoint("WEBSOCKET", "/ws/{name}", ws)]
