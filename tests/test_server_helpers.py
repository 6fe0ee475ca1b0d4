"""Helpers for the table server's tests: a stacked shoe and WebSocket clients."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.helpers import wait_until

SUPERVISOR = "supervisor-secret-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(cwd: Path, port: int, options: Sequence[str]) -> subprocess.Popen[str]:
    """``pontoon serve`` in a process of its own, once it answers HTTP; stopped again when it
    does not (a ``--processes`` parent whose children cannot start would live on)."""
    import httpx

    cmd = [sys.executable, "-m", "pontoon.cli", "serve", "--port", str(port), *options]
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and f"http://127.0.0.1:{port}/" in proc.stdout.readline()
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/tables", timeout=1)
                return proc
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the server did not answer within 30 s"
                assert proc.poll() is None, f"the server ended with {proc.returncode}"
                time.sleep(0.1)  # (the poll's interval)
    except BaseException:
        proc.terminate()  # (a parent stops its children)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


@contextmanager
def in_thread(app: Any, **config: Any) -> Iterator[str]:
    """``app`` served by uvicorn in a thread of this process (``config``: more
    ``uvicorn.Config`` settings); yields its ``host:port``, and checks that it stops."""
    import threading

    import uvicorn

    # bound here and handed over: a port picked, let go and bound again later could be taken
    # in between (by the other test worker's connections, say)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    settings = {"log_level": "warning", **config}
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **settings))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: srv.started, 60, "uvicorn started in its thread")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(15)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"


class Stacked:
    """A shuffler for tests: the first shuffle puts ``codes`` on top, in order (the first is
    the burn card); later shuffles are seeded."""

    def __init__(self, codes: Sequence[str], seed: int = 1) -> None:
        self.codes = list(codes)
        self.rng = np.random.default_rng(seed)
        self.used = False

    def shuffle(self, x: Any, /) -> None:
        self.rng.shuffle(x)
        if self.used:
            return
        self.used = True
        picked = []
        for code in self.codes:
            i = next(i for i, c in enumerate(x) if c.code == code)
            picked.append(x.pop(i))
        x.extend(reversed(picked))


def stacked(codes: Sequence[str]) -> Callable[[], Stacked]:
    return lambda: Stacked(codes)


OPEN: list[Player] = []


@contextmanager
def serving(app: Any) -> Iterator[Any]:
    """A TestClient whose WebSockets are all closed before it stops (even when a test fails:
    an open socket would keep the server from stopping)."""
    from fastapi.testclient import TestClient

    with TestClient(app) as client:
        try:
            yield client
        finally:
            # Player.close closes only a player still in OPEN: popping it first (as this did)
            # left its socket open, the server waited on it and the test hung, not failed
            while OPEN:
                OPEN[-1].close()


class Player:
    """A WebSocket client of the test server (fastapi TestClient)."""

    def __init__(self, client: Any, table: str, name: str | None, token: str | None = None):
        self.name = name
        if token is None:
            assert name is not None
            r = client.post(f"/api/tables/{table}/join", json={"name": name})
            assert r.status_code == 200, r.text
            token = r.json()["token"]
        self.token = token
        self._cm = client.websocket_connect(f"/ws/{table}?token={token}")
        self.ws = self._cm.__enter__()
        OPEN.append(self)
        self.state: dict[str, Any] = self.ws.receive_json()
        assert self.state["type"] == "state", self.state
        self.n = 0

    def close(self) -> None:
        if self in OPEN:
            OPEN.remove(self)
            self._cm.__exit__(None, None, None)

    def send(self, **msg: Any) -> dict[str, Any]:
        """Send a message and return the reply (ok or error); states on the way are kept."""
        self.n += 1
        msg.setdefault("id", f"{self.name}-{self.n}")
        self.ws.send_json(msg)
        return self.reply()

    def send_raw(self, text: str) -> dict[str, Any]:
        self.ws.send_text(text)
        return self.reply()

    def reply(self) -> dict[str, Any]:
        while True:
            m: dict[str, Any] = self.ws.receive_json()
            if m["type"] == "state":
                self.state = m
            else:
                return m

    def fresh(self) -> dict[str, Any]:
        """The table's state now: the first state at or past the version the request's ``ok``
        names. (A state not sent yet is replaced by a newer one, so the state asked for may
        come before the ``ok``, merged with one already queued: waiting for another after
        the ``ok`` waited for the next change, a turn timer's 30 s.) A state left queued
        behind is read, as every reply skips states."""
        r = self.send(type="state")
        assert r["type"] == "ok"
        while self.state.get("version", -1) < r["version"]:
            m: dict[str, Any] = self.ws.receive_json()
            if m["type"] == "state":
                self.state = m
        return self.state

    def act(self, action: str, box: int, **kw: Any) -> dict[str, Any]:
        return self.send(type="act", action=action, box=box, **kw)
