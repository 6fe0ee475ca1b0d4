"""Connections handed to their table's owner as they come (``pontoon serve --processes N``):
the parent gives each new connection's socket to the child that holds its table, so that a
player's socket ends where the table is (no process in between; what still reaches another
child is passed on by :mod:`pontoon.server.forward`).

The parent accepts on the public address and peeks at the request's first line without
reading it (``MSG_PEEK``: the bytes stay for the child to read): ``/ws/{table}``,
``/api/tables/{table}/…`` and ``/api/pit/tables/{table}`` name a table, and the connection's
socket goes (``SCM_RIGHTS`` over a Unix socket) to the child holding that table's lease, as
the store says (read every :data:`OWNERS_SECONDS`); any other request, a table held by no
child, or a request line that has not come within :data:`PEEK_SECONDS` (a busy client may
connect well before it writes; the child's own limit on a request's head applies after)
goes to the children in turn. The child serves the socket as if it had accepted it; a
request for a table held elsewhere (a connection kept alive across tables, a lease that moved
meanwhile) is still passed on by :mod:`pontoon.server.forward`. The connections handed over
are the public ones: no peer's proof is asked of them (that is for a child's own port,
:class:`pontoon.server.forward.PeerCheck`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import uvicorn

log = logging.getLogger("pontoon.server")

PEEK_SECONDS = 5.0  # a request line not come by then: the connection goes to the next child
WAITING = 10_000  # connections waiting for their request line at most: more go at once
OWNERS_SECONDS = 0.5  # how often the parent reads the tables' holders from the store
PEEK_BYTES = 2048  # a request line longer than this names no table here
TABLE_PATH = re.compile(r"^/(?:api/tables|api/pit/tables|ws)/([^/]+)(?:/|$)")  # its table


def table_of(head: bytes) -> str | None:
    """The table a request's first bytes name, if any.

    >>> table_of(b"GET /ws/t%201?token=x HTTP/1.1\\r\\nHost: a\\r\\n")
    't 1'
    >>> table_of(b"POST /api/tables/t7/join HTTP/1.1\\r\\n"), table_of(b"GET / HTTP/1.1\\r\\n")
    ('t7', None)
    >>> table_of(b"GET /api/tables HTTP/1.1\\r\\n"), table_of(b"GET /ws/t1")  # not all come
    (None, None)
    """
    line, sep, _ = head.partition(b"\r\n")
    parts = line.split(b" ")
    if not sep or len(parts) != 3:
        return None
    found = TABLE_PATH.match(unquote(parts[1].partition(b"?")[0].decode("latin-1")))
    return found.group(1) if found else None


class Router:
    """The parent's router of new connections, each to the child holding its table: accepts on
    ``listener`` and hands each connection to a child's Unix socket (``children[i]``, which the
    caller replaces when it starts a child again); ``owners()`` gives each table's holder as the
    index of a child."""

    def __init__(
        self,
        listener: socket.socket,
        children: list[socket.socket],
        owners: Callable[[], dict[str, int]],
    ) -> None:
        self.listener = listener
        self.children = children
        self._owners_of = owners
        self._owners: dict[str, int] = {}
        self._read = 0.0
        self._turn = 0
        self._queues: list[deque[socket.socket]] = [deque() for _ in children]  # to hand each
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="handoff", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _owner(self, table: str | None) -> int:
        if time.monotonic() - self._read > OWNERS_SECONDS:
            try:
                self._owners = self._owners_of()
            except Exception as exc:  # the store away: as last read (a child forwards)
                log.warning("the tables' holders could not be read: %s", exc)
            self._read = time.monotonic()
        held = self._owners.get(table) if table is not None else None
        if held is not None:
            return held
        self._turn = (self._turn + 1) % len(self.children)
        return self._turn

    def _hand(self, conn: socket.socket, table: str | None) -> None:
        """Queue ``conn`` for its table's owner (or the next child) and send what may go."""
        self._queues[self._owner(table)].append(conn)
        self._flush()

    def _flush(self) -> None:
        """Send each child the connections queued for it, until its socket is full (the rest
        wait for the next pass: never handed to another child for that); a child's socket
        that fails (the child died) sends its queue to the others in turn."""
        for i, queue in enumerate(self._queues):
            while queue:
                try:
                    socket.send_fds(self.children[i], [b"c"], [queue[0].fileno()])
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    lost = list(queue)
                    queue.clear()
                    for conn in lost:  # (the next child, or this one started again)
                        self._turn = (self._turn + 1) % len(self.children)
                        self._queues[self._turn].append(conn)
                    break
                queue.popleft().close()

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        self.listener.setblocking(False)
        sel.register(self.listener, selectors.EVENT_READ)
        waiting: dict[socket.socket, float] = {}  # accepted, the request line not yet come
        while not self._stop.is_set():
            self._flush()  # (what a full socket held back)
            for key, _ in sel.select(timeout=0.002 if any(self._queues) else 0.1):
                if key.fileobj is self.listener:
                    self._accept(sel, waiting)
                    continue
                conn: Any = key.fileobj
                try:
                    head = conn.recv(PEEK_BYTES, socket.MSG_PEEK)
                except OSError:
                    head = b""
                table = table_of(head)
                if table is not None or b"\r\n" in head or not head or len(head) >= PEEK_BYTES:
                    sel.unregister(conn)
                    del waiting[conn]
                    self._hand(conn, table)
            now = time.monotonic()
            for conn in [c for c, due in waiting.items() if due < now]:
                sel.unregister(conn)
                del waiting[conn]
                self._hand(conn, None)
        sel.close()
        for conn in [*waiting, *(c for q in self._queues for c in q)]:
            conn.close()

    def _accept(self, sel: selectors.BaseSelector, waiting: dict[socket.socket, float]) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors, say: the next pass tries again
                log.warning("accepting a connection failed: %s", exc)
                return
            if len(waiting) >= WAITING:  # (a flood of silent connections: no more held)
                self._hand(conn, None)
                continue
            conn.setblocking(False)
            sel.register(conn, selectors.EVENT_READ)
            waiting[conn] = time.monotonic() + PEEK_SECONDS


class HandedServer(uvicorn.Server):
    """A child's uvicorn server that also serves the connections the parent hands it over
    ``handoff`` (a Unix socket), as it serves those it accepts itself."""

    def __init__(self, config: uvicorn.Config, handoff: socket.socket) -> None:
        super().__init__(config)
        self.handoff = handoff

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.should_exit:
            return
        config, loop = self.config, asyncio.get_running_loop()

        def protocol() -> asyncio.Protocol:  # (as uvicorn makes one for each connection)
            made: asyncio.Protocol = config.http_protocol_class(  # type: ignore[call-arg]
                config=config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                _loop=loop,
            )
            return made

        def handed() -> None:
            try:
                _, fds, _, _ = socket.recv_fds(self.handoff, 16, 64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                fds = []
            if not fds:  # the parent is gone: its death ends this process too (pdeathsig)
                loop.remove_reader(self.handoff.fileno())
                return
            for fd in fds:
                sock = socket.socket(fileno=fd)
                task = loop.create_task(loop.connect_accepted_socket(protocol, sock))
                task.add_done_callback(_log_failure)

        self.handoff.setblocking(False)
        loop.add_reader(self.handoff.fileno(), handed)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("a connection handed over could not be served: %s", task.exception())
