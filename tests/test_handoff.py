"""``serve --processes``: the parent's hand-off of each connection to its table's owner
(:mod:`pontoon.server.handoff`), without servers: two Unix sockets stand for the children."""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("uvicorn")

from pontoon.server.handoff import PEEK_SECONDS, Router

pytestmark = pytest.mark.integration  # the server's connection router, on loopback sockets


def _received(end: socket.socket, timeout: float = 5.0) -> socket.socket:
    """The next connection handed over ``end``."""
    end.settimeout(timeout)
    _, fds, _, _ = socket.recv_fds(end, 16, 4)
    assert len(fds) == 1
    return socket.socket(fileno=fds[0])


def _either(pairs: list[tuple[socket.socket, socket.socket]], timeout: float) -> int:
    """Which child was handed the next connection (closed at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for i, (_, end) in enumerate(pairs):
            end.setblocking(False)
            try:
                _, fds, _, _ = socket.recv_fds(end, 16, 4)
            except BlockingIOError:
                continue
            for fd in fds:
                socket.socket(fileno=fd).close()
            return i
        time.sleep(0.01)  # (the poll's interval)
    raise AssertionError("no child was handed the connection")


def test_a_connection_goes_to_its_tables_owner_with_its_request_unread() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    pairs = [socket.socketpair() for _ in range(2)]
    for parent_end, _ in pairs:
        parent_end.setblocking(False)
    router = Router(listener, [p for p, _ in pairs], lambda: {"t1": 1, "t0": 0})
    router.start()
    port = listener.getsockname()[1]
    try:
        for table, owner in [("t1", 1), ("t0", 0), ("t1", 1)]:
            with socket.create_connection(("127.0.0.1", port)) as client:
                head = f"GET /ws/{table}?token=x HTTP/1.1\r\nHost: a\r\n\r\n".encode()
                client.sendall(head)
                got = _received(pairs[owner][1])
                assert got.recv(1024) == head  # the whole request, for the child to read
                got.sendall(b"hello")  # and the child answers the client itself
                assert client.recv(5) == b"hello"
                got.close()
        # a client that says nothing, and a request that names no table: each child in turn
        with socket.create_connection(("127.0.0.1", port)):
            start = time.monotonic()
            first = _either(pairs, 0.1 + 4 * PEEK_SECONDS)
            assert time.monotonic() - start >= PEEK_SECONDS * 0.9
        with socket.create_connection(("127.0.0.1", port)) as page:
            page.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            assert _either(pairs, 5.0) == 1 - first
    finally:
        router.stop()
        listener.close()
        for a, b in pairs:
            a.close()
            b.close()


def test_a_child_slow_to_read_gets_its_connections_later_never_another_child() -> None:
    """A child whose socket is full: its connections wait in the parent (in order) until it
    reads, rather than going to a child that does not hold the table."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    pairs = [socket.socketpair() for _ in range(2)]
    for parent_end, _ in pairs:
        parent_end.setblocking(False)
        parent_end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    router = Router(listener, [p for p, _ in pairs], lambda: {"t1": 1})
    router.start()
    port = listener.getsockname()[1]
    clients = []
    try:
        for _ in range(60):  # far more than the small socket takes at once
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(b"GET /ws/t1 HTTP/1.1\r\n\r\n")
            clients.append(c)
        time.sleep(0.5)  # the slowness under test: the child reads nothing for a while
        got = [_received(pairs[1][1]) for _ in range(60)]
        assert len(got) == 60
        pairs[0][1].setblocking(False)
        with pytest.raises(BlockingIOError):
            pairs[0][1].recv(16)  # the other child was handed none
        for g in got:
            g.close()
    finally:
        router.stop()
        listener.close()
        for c in clients:
            c.close()
        for a, b in pairs:
            a.close()
            b.close()
