"""Each WebSocket client's outgoing queue and its own writer task, the only one that sends on
the socket: a table (under its lock) only queues, so a client that does not read holds up
nobody, and one that falls behind is disconnected."""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import struct
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from fastapi import WebSocket

from .clients import Client, Session
from .protocol import encode

OUTBOX = 64  # messages waiting for one client: more, and it is disconnected (falls behind)
SEND_SECONDS = 10.0  # a message its socket does not take within this: disconnected
CLOSE_BEHIND = 1008  # the close code of a client disconnected for falling behind

log = logging.getLogger(__name__)
_OPENED = itertools.count()


class Outbox:
    """One WebSocket client and its own writer task, which alone sends on the socket.

    What is to be sent is queued, never awaited by whoever queues it: the direct replies in
    order, and at most one pending state (a newer state replaces a state not sent yet; it goes
    out where the older one would have, so it still comes before the replies queued after
    it). A client that falls behind — more than :data:`OUTBOX` messages waiting, or one
    message not taken by its socket within :data:`SEND_SECONDS` — is disconnected."""

    def __init__(self, ws: WebSocket, session: Session, gone: Callable[[Client], None]) -> None:
        self.ws = ws
        self.session = session
        self.closed = False  # by the server: nothing is queued after it
        self.dropped = False  # disconnected for falling behind
        self._gone = gone  # told when the client is dropped (the table forgets it)
        self._queue: deque[str | None] = deque()  # a text, or None: the pending state
        self._state = ""  # the newest state, sent where the None stands in the queue
        self._states = 0  # how many None are queued: one, and one after each answer to "state"
        self._code: int | None = None  # the close code, once every message is sent
        self._later: asyncio.TimerHandle | None = None  # a state to queue later (post_later)
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._began: float | None = None  # when the send in flight began (the loop's time)
        self._watch: asyncio.TimerHandle | None = None  # looks at that send once it may be late
        self._task = self._loop.create_task(self._write())
        self.opened = next(_OPENED)  # (the oldest of a session's sockets is closed first)

    def post_state(self, text: str, last: bool = False) -> None:
        """Queue a state. ``last``: after every message queued so far (the answer to a
        ``state`` request); else where a state not sent yet already waits, if one does."""
        if self.closed:
            return
        self._state = text
        if self._states and (not last or self._queue[-1] is None):
            return
        self._push(None)

    def post_later(self, delay: float, state: Callable[[], str]) -> None:
        """Queue the state ``state()`` makes in ``delay`` seconds, after every message
        queued by then (the answer to ``state`` requests past their limit: however many
        wait, one state)."""
        if self._later is None and not self.closed:

            def fire() -> None:
                self._later = None
                self.post_state(state(), last=True)

            self._later = asyncio.get_running_loop().call_later(delay, fire)

    def post(self, message: dict[str, Any]) -> None:
        if not self.closed:
            self._push(encode(message))

    def close(self, code: int, message: dict[str, Any] | None = None) -> None:
        """Send ``message`` if any, then close the socket with ``code``; only once."""
        if self.closed:
            return
        if message is not None:
            self.post(message)
        self.closed = True
        self._code = code
        self._wake.set()

    def _push(self, item: str | None) -> None:
        if len(self._queue) >= OUTBOX:
            self.drop(f"more than {OUTBOX} messages waiting")
            return
        self._queue.append(item)
        if item is None:
            self._states += 1
        self._wake.set()

    def drop(self, why: str) -> None:
        """Disconnect a client that falls behind: nothing more is queued or sent to it, the
        table forgets it, and its connection is cut (it may not be reading at all)."""
        if self.dropped:
            return
        log.warning(
            "client of %s at table %s disconnected: %s", self.session.name, self.session.table, why
        )
        self.dropped = self.closed = True
        self._queue.clear()
        self._states = 0
        self._gone(self)
        abort = abort_of(self.ws)
        if abort is not None:
            abort()  # a close frame would wait behind the data it does not read
        self._code = CLOSE_BEHIND
        self._wake.set()

    async def _write(self) -> None:
        try:
            while True:
                while not self._queue:
                    if self._code is not None:
                        if not (self.dropped and abort_of(self.ws) is not None):
                            async with asyncio.timeout(SEND_SECONDS):
                                await self.ws.close(code=self._code)
                        return
                    self._wake.clear()
                    await self._wake.wait()
                item = self._queue.popleft()
                if item is None:
                    self._states -= 1
                    item = self._state
                self._began = self._loop.time()
                if self._watch is None:
                    self._watch = self._loop.call_at(self._began + SEND_SECONDS, self._overdue)
                await self.ws.send_text(item)
                self._began = None
        except Exception:  # the connection is gone: its handler sees it end
            self.closed = True
            self._queue.clear()
            self._states = 0

    def _overdue(self) -> None:
        """The watch: a send in flight for :data:`SEND_SECONDS` drops the client and stops its
        writer; one begun since is looked at again when it may be late. (One timer a client
        while it sends, not one per message: a timeout around each send was some 5 % of a
        busy server's CPU.)"""
        self._watch = None
        if self._began is None or self._task.done():
            return
        due = self._began + SEND_SECONDS
        if self._loop.time() < due:
            self._watch = self._loop.call_at(due, self._overdue)
            return
        self.drop(f"a message not taken by its socket within {SEND_SECONDS:g} s")
        self._task.cancel()

    async def finish(self) -> None:
        """The handler ends: what a close queued is sent first (within the time limit), else
        the writer just stops (the peer is gone)."""
        if self._later is not None:
            self._later.cancel()
        if self._watch is not None:
            self._watch.cancel()
        if self.closed and not self.dropped:
            with suppress(TimeoutError):
                async with asyncio.timeout(SEND_SECONDS):
                    await asyncio.shield(self._task)
        if not self._task.done():
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task


def abort_of(ws: WebSocket) -> Callable[[], None] | None:
    """A function that cuts the connection off at once, or None where it cannot (a test
    client): a connection whose peer reads nothing cannot be closed politely. It takes the
    server transport (uvicorn's protocol object is the ``self`` of the raw ASGI ``send``,
    which the application keeps in the scope as ``pontoon.send``), makes its socket linger
    0 — the kernel drops the unsent data and sends a reset, instead of keeping megabytes for
    a peer that never reads — and aborts it."""
    send = ws.scope.get("pontoon.send")
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    abort = getattr(transport, "abort", None)
    if transport is None or not callable(abort):
        return None

    def cut() -> None:
        sock = transport.get_extra_info("socket")
        with suppress(Exception):  # (not a TCP socket: it is aborted all the same)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        abort()

    return cut
