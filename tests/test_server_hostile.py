"""The table server against hostile clients, on loopback through uvicorn.

Each test reproduces a finding of the issue: a socket that reads nothing while its table plays
on, one click sent at once on two sockets of a session, inputs that used to give a 500 or kill
a socket with a traceback. Every test here fails if the server answers any request with a 5xx
or logs an error or a traceback (uvicorn's and the application's loggers are captured).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import pontoon.server.outbox as outbox
from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.app import create_app
from pontoon.server.limits import Limits
from pontoon.server.protocol import MAX_MESSAGE
from pontoon.server.table import TableConfig
from tests.helpers import wait_until
from tests.test_server_helpers import SUPERVISOR, in_thread, stacked

pytestmark = [
    pytest.mark.integration,  # the server, through uvicorn on loopback
    pytest.mark.filterwarnings(
        "error::pytest.PytestUnhandledThreadExceptionWarning",
        "error::pytest.PytestUnraisableExceptionWarning",
    ),
]

# burn, box 1, dealer, box 1, then two cards to draw: box 1 holds 5 and may hit twice
ONE_BOX = ["4D", "2S", "9C", "3H", "2C", "2D"]


class _Catch(logging.Handler):
    """Every record of WARNING or above, from every logger (uvicorn's propagate to the root:
    the server is started with ``log_config=None``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class _Statuses:
    """ASGI wrapper noting the status of every HTTP answer (WebSockets pass untouched)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.seen.append((scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, sending)


@dataclass
class Server:
    host: str
    db: Path
    statuses: _Statuses
    http: httpx.Client

    def join(self, table: str, name: str) -> str:
        r = self.http.post(f"/api/tables/{table}/join", json={"name": name})
        assert r.status_code == 200, r.text
        token: str = r.json()["token"]
        return token

    @contextmanager
    def ws(self, table: str, token: str) -> Iterator[ClientConnection]:
        with connect(f"ws://{self.host}/ws/{table}?token={token}", open_timeout=10) as ws:
            first = json.loads(ws.recv(timeout=10))
            assert first["type"] == "state", first
            yield ws


@pytest.fixture(autouse=True)
def no_5xx_nor_traceback() -> Iterator[list[_Statuses]]:
    """Fails the test on any 5xx answer or any error or traceback logged meanwhile."""
    catch = _Catch()
    root = logging.getLogger()
    root.addHandler(catch)
    watched: list[_Statuses] = []
    try:
        yield watched
    finally:
        root.removeHandler(catch)
    bad = [r for r in catch.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, "\n".join(f"{r.name}: {r.getMessage()} {r.exc_info!r}" for r in bad)
    fives = [s for w in watched for s in w.seen if s[1] >= 500]
    assert not fives, fives


@pytest.fixture
def serve(
    tmp_path: Path, no_5xx_nor_traceback: list[_Statuses]
) -> Iterator[Any]:  # a factory of servers
    stack: list[Any] = []

    @contextmanager
    def start(
        configs: list[TableConfig] | None = None,
        api_docs: bool = False,
        hosts: list[str] | None = None,
        limits: Limits | None = None,
        **uvicorn: Any,
    ) -> Iterator[Server]:
        db = tmp_path / f"hostile{len(stack)}.db"
        rules = load_rules("nz-pontoon")
        if configs is None:
            configs = [TableConfig("kauri", rules, 600.0, 600.0, 100_000, stacked(ONE_BOX))]
        made = create_app(f"sqlite:///{db}", configs, SUPERVISOR, api_docs, hosts, limits)
        app = _Statuses(made)
        no_5xx_nor_traceback.append(app)
        stack.append(app)
        with in_thread(app, log_config=None, **uvicorn) as host:  # None: the log is captured
            http = httpx.Client(base_url=f"http://{host}", timeout=5)
            try:
                yield Server(host, db, app, http)
            finally:
                http.close()

    yield start


def _refused(ws: ClientConnection, code: str, close: int) -> None:
    """The socket is answered with the error ``code``, then closed with ``close``."""
    m = json.loads(ws.recv(timeout=10))
    assert m["type"] == "error" and m["code"] == code, m
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == close


def _answer(ws: ClientConnection, timeout: float = 10) -> dict[str, Any]:
    """The next message that is not a state."""
    end = time.monotonic() + timeout
    while True:
        m: dict[str, Any] = json.loads(ws.recv(timeout=max(0.001, end - time.monotonic())))
        if m["type"] != "state":
            return m


def _deaf(host: str, path: str) -> socket.socket:
    """A WebSocket opened by hand that reads nothing after the handshake's headers (a small
    receive buffer: the server's sends back up at once)."""
    s, head = _handshake(host, path)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return s


def _handshake(host: str, path: str, name: str | None = None) -> tuple[socket.socket, bytes]:
    """A WebSocket handshake by hand (``Host: name``, by default ``host``): the socket and
    the answer's headers, not a byte more."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(10)
    h, port = host.split(":")
    s.connect((h, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {name or host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while not head.endswith(b"\r\n\r\n"):  # byte by byte: nothing past the headers
        head += s.recv(1)
    return s, head


# ---------------------------------------------------------------------------- item 1
def test_a_socket_that_reads_nothing_holds_up_nobody(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One client reads nothing while the others join, bet and act: every acknowledgement
    comes within a second, far sooner than a send held up by the deaf client would let it
    (``SEND_SECONDS``, 5 s here), and the deaf client is disconnected (it fell behind)."""
    monkeypatch.setattr(outbox, "SEND_SECONDS", 5.0)
    rules = load_rules("nz-pontoon").replace(table_max=1_000_000)
    config = TableConfig("kauri", rules, 600.0, 600.0, 1_000_000, stacked(ONE_BOX))
    many = Limits(joins_per_address=300, players_per_table=300)
    with serve([config], limits=many) as srv:
        ana, sloth = srv.join("kauri", "ana"), srv.join("kauri", "sloth")
        deaf = _deaf(srv.host, f"/ws/kauri?token={sloth}")
        slowest: list[tuple[float, str]] = []
        try:
            with srv.ws("kauri", ana) as ws:
                for i in range(250):  # the old server froze after some 170 of them
                    t0 = time.monotonic()
                    r = srv.http.post("/api/tables/kauri/join", json={"name": f"p{i}"})
                    assert r.status_code == 200, r.text
                    slowest.append((time.monotonic() - t0, f"join {i}"))
                    t0 = time.monotonic()
                    ws.send(json.dumps({"type": "bet", "box": 1, "amount": 500, "id": f"b{i}"}))
                    reply = _answer(ws, timeout=2)
                    slowest.append((time.monotonic() - t0, f"bet {i}"))
                    assert reply["type"] == "ok", reply
                ws.send(json.dumps({"type": "deal", "id": "deal"}))
                assert _answer(ws, timeout=2)["type"] == "ok"
                for i in range(2):
                    t0 = time.monotonic()
                    ws.send(json.dumps({"type": "act", "action": "hit", "box": 1, "id": f"h{i}"}))
                    assert _answer(ws, timeout=2)["type"] == "ok"
                    slowest.append((time.monotonic() - t0, f"hit {i}"))
            slowest.sort(reverse=True)
            assert slowest[0][0] < 1.0, slowest[:5]
            # the deaf client fell behind: disconnected, the table forgot it
            wait_until(
                lambda: not _connected(srv, "sloth"),
                outbox.SEND_SECONDS + 30,
                "the deaf client disconnected",
            )
            # and its connection was cut off (a reset: the server keeps no data for it)
            got = 0
            with pytest.raises(ConnectionResetError):
                while got < 1 << 20:
                    chunk = deaf.recv(65536)
                    assert chunk, f"closed politely after {got} bytes, not cut off"
                    got += len(chunk)
        finally:
            deaf.close()
        state = srv.http.get(f"/api/tables/kauri/state?token={ana}").json()
        assert state["boxes"][0]["original"] == {"ana": 250 * 500}
    assert main(["verify", "--db", f"sqlite:///{srv.db}"]) == 0


def _connected(srv: Any, name: str) -> bool:
    return bool(srv.http.get("/api/tables/kauri/state").json()["players"][name]["connected"])


class _SlowSocket:
    """A WebSocket whose sends take the seconds listed (no abort: a test client's)."""

    def __init__(self, seconds: list[float]) -> None:
        self.scope: dict[str, Any] = {}
        self.seconds = seconds
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        import asyncio

        await asyncio.sleep(self.seconds.pop(0))  # the slowness under test
        self.sent.append(text)

    async def close(self, code: int = 1000) -> None:
        pass


def test_a_busy_client_is_dropped_only_by_one_send_over_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each send is bounded, not their sum: a client whose sends each take 60 % of
    ``SEND_SECONDS``, one after another for several times the limit, stays; one send that
    takes longer drops it and stops its writer (one watch a client, looked at again when a
    send began after it was set)."""
    import asyncio

    from pontoon.server.table import Session

    monkeypatch.setattr(outbox, "SEND_SECONDS", 1.0)

    async def play(seconds: list[float]) -> tuple[outbox.Outbox, _SlowSocket, list[Any]]:
        ws, gone = _SlowSocket(list(seconds)), []
        box = outbox.Outbox(ws, Session("t", "ana", "player", "kauri"), gone.append)  # type: ignore[arg-type]
        for i in range(len(seconds)):
            box.post({"type": "ok", "ref": str(i)})
        deadline = time.monotonic() + sum(seconds) + 10
        while len(ws.sent) < len(seconds) and not box.dropped and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # (the poll: until every send is done, or a drop)
        await box.finish()
        return box, ws, gone

    box, ws, gone = asyncio.run(play([0.6] * 5))
    assert len(ws.sent) == 5 and not box.dropped and not gone
    box, ws, gone = asyncio.run(play([0.6, 0.6, 2.5, 0.01]))
    assert len(ws.sent) == 2 and box.dropped and gone == [box]


def _frame(text: str) -> bytes:
    """A client's masked text frame (RFC 6455 5.2), under 64 KiB."""
    data = text.encode()
    mask = os.urandom(4)
    size = bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0xFE]) + len(data).to_bytes(2)
    return b"\x81" + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_a_client_that_pipelines_without_reading_is_disconnected(
    serve: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """3,000 ``state`` requests sent without reading a reply: once more than ``OUTBOX``
    messages wait for it, the client is cut off; the table goes on."""
    monkeypatch.setattr(outbox, "SEND_SECONDS", 60.0)  # the bound, not time
    with serve() as srv:
        ana, sloth = srv.join("kauri", "ana"), srv.join("kauri", "sloth")
        deaf = _deaf(srv.host, f"/ws/kauri?token={sloth}")
        try:
            burst = b"".join(
                _frame(json.dumps({"type": "state", "id": f"s{i}"})) for i in range(3000)
            )
            with suppress(OSError):  # (cut off while sending)
                deaf.sendall(burst)
            wait_until(lambda: not _connected(srv, "sloth"), 30, "the client disconnected")
            assert f"sloth at table kauri disconnected: more than {outbox.OUTBOX}" in caplog.text
            with srv.ws("kauri", ana) as ws:
                t0 = time.monotonic()
                ws.send(json.dumps({"type": "bet", "box": 1, "amount": 500, "id": "b"}))
                assert _answer(ws, timeout=2)["type"] == "ok"
                assert time.monotonic() - t0 < 1.0  # (held up: SEND_SECONDS, 60 s here)
        finally:
            deaf.close()


def test_queued_replies_keep_their_order_and_a_state_request_its_state(serve: Any) -> None:
    """Pipelined messages are answered in order; the answer to a ``state`` request is followed
    by a state at least as new as every ``ok`` before it."""
    with serve(limits=Limits(state_burst=20)) as srv:
        token = srv.join("kauri", "ana")
        with srv.ws("kauri", token) as ws:
            for i in range(20):
                ws.send(json.dumps({"type": "bet", "box": 1, "amount": 500, "id": f"b{i}"}))
                ws.send(json.dumps({"type": "state", "id": f"s{i}"}))
            version = -1
            for i in range(20):
                ok = _answer(ws)
                assert ok["ref"] == f"b{i}" and ok["type"] == "ok", ok
                version = ok["version"]
                assert _answer(ws)["ref"] == f"s{i}"
                state = json.loads(ws.recv(timeout=10))
                assert state["type"] == "state" and state["version"] >= version


# ---------------------------------------------------------------------------- item 2
def test_one_click_on_two_sockets_of_a_session_applies_once(serve: Any) -> None:
    """The same message (one id) sent at once on two sockets of one session: applied once,
    the other answered as a duplicate — a wager, and an ``act`` without ``v``. Run 30 times
    (30 tables: a fresh box each time)."""
    rules = load_rules("nz-pontoon")
    runs = 30
    configs = [
        TableConfig(f"t{i}", rules, 600.0, 600.0, 100_000, stacked(ONE_BOX)) for i in range(runs)
    ]
    with serve(configs) as srv:
        for i in range(runs):
            table = f"t{i}"
            token = srv.join(table, "ana")
            with srv.ws(table, token) as one, srv.ws(table, token) as two:
                bet = json.dumps({"type": "bet", "box": 1, "amount": 2500, "id": "same-click"})
                one.send(bet)
                two.send(bet)
                replies = [_answer(one), _answer(two)]
                assert all(r["type"] == "ok" for r in replies), replies
                assert sorted(bool(r.get("duplicate")) for r in replies) == [False, True]
                state = srv.http.get(f"/api/tables/{table}/state?token={token}").json()
                assert state["boxes"][0]["original"] == {"ana": 2500}, (i, state["boxes"])
                assert state["balance"] == 100_000 - 2500
                one.send(json.dumps({"type": "deal", "id": "deal"}))
                assert _answer(one)["type"] == "ok"
                hit = json.dumps({"type": "act", "action": "hit", "box": 1, "id": "same-hit"})
                one.send(hit)
                two.send(hit)
                replies = [_answer(one), _answer(two)]
                assert sorted(bool(r.get("duplicate")) for r in replies) == [False, True]
                state = srv.http.get(f"/api/tables/{table}/state?token={token}").json()
                assert len(state["boxes"][0]["hands"][0]["cards"]) == 3, (i, state["boxes"])
    assert main(["verify", "--db", f"sqlite:///{srv.db}"]) == 0


def test_the_supervisors_sockets_share_one_session(serve: Any) -> None:
    """The supervisor's token is one session too: one click on two of its sockets, once."""
    with serve() as srv:
        token = srv.join("kauri", "ana")
        with srv.ws("kauri", token) as ana:
            ana.send(json.dumps({"type": "bet", "box": 1, "amount": 500}))
            assert _answer(ana)["type"] == "ok"
            with srv.ws("kauri", SUPERVISOR) as one, srv.ws("kauri", SUPERVISOR) as two:
                deal = json.dumps({"type": "deal", "id": "sup-deal"})
                one.send(deal)
                two.send(deal)
                replies = [_answer(one), _answer(two)]
                assert all(r["type"] == "ok" for r in replies), replies
                assert sorted(bool(r.get("duplicate")) for r in replies) == [False, True]


# ---------------------------------------------------------------------------- item 3
@pytest.mark.parametrize("token", ["%C3%A9", "%E2%82%AC" * 40, "%00", "%ED%A0%80", "%FF"])
def test_a_token_with_other_characters_is_refused_not_a_500(serve: Any, token: str) -> None:
    with serve() as srv:
        r = srv.http.get(f"/api/tables/kauri/state?token={token}")
        assert r.status_code == 401, r.text
        for body in ({"token": "é"}, {"token": "€" * 40}, {"token": "\x00"}):
            r = srv.http.post("/api/tables/kauri/leave", json=body)
            assert r.status_code in (401, 422), (body, r.text)
        bodies = [
            ("leave", '{"token": "\\ud800"}'),  # a lone surrogate
            ("leave", '{"token": "\\u00e9"}'),
            ("join", '{"name": "\\ud800"}'),
            ("join", '{"name": "ana", "\\ud800": 1}'),  # an unknown field named so
        ]
        for path, raw in bodies:
            r = srv.http.post(
                f"/api/tables/kauri/{path}",
                content=raw,
                headers={"content-type": "application/json"},
            )
            assert r.status_code in (401, 422), (raw, r.text)
        with connect(f"ws://{srv.host}/ws/kauri?token={token}", open_timeout=10) as ws:
            _refused(ws, "auth", 4401)


@pytest.mark.parametrize("rid", ["9223372036854775808", "-9223372036854775809", "10" * 40, "0"])
def test_a_round_id_out_of_range_is_not_found(serve: Any, rid: str) -> None:
    with serve() as srv:
        r = srv.http.get(f"/api/rounds/{rid}")
        assert r.status_code in (404, 422), r.text


def test_deep_nesting_is_refused_and_the_socket_goes_on(serve: Any) -> None:
    with serve() as srv:
        token = srv.join("kauri", "ana")
        with srv.ws("kauri", token) as ws:
            for frame in ("[" * 4000, '{"type": "bet", "id": ' + "[" * 3000 + "]" * 3000 + "}"):
                ws.send(frame)
                m = _answer(ws)
                assert m["type"] == "error" and m["code"] == "invalid", m
            ws.send(json.dumps({"type": "ping", "id": "alive"}))
            assert _answer(ws)["ref"] == "alive"
        r = srv.http.post(
            "/api/tables/kauri/join",
            content="[" * 4000,
            headers={"content-type": "application/json"},
        )
        assert 400 <= r.status_code < 500, r.text


def test_the_message_limit_counts_bytes(serve: Any) -> None:
    """4,096 bytes, not characters: 2,100 two-byte characters are too large."""
    with serve() as srv:
        token = srv.join("kauri", "ana")
        with srv.ws("kauri", token) as ws:
            text = '"' + "é" * (MAX_MESSAGE // 2 + 50) + '"'
            assert len(text) < MAX_MESSAGE < len(text.encode())
            ws.send(text)
            m = _answer(ws)
            assert m["type"] == "error" and "too large" in m["error"], m
            ws.send(text.encode())  # as a binary frame too
            m = _answer(ws)
            assert m["type"] == "error" and "too large" in m["error"], m
            fits = '{"type": "ping", "id": "' + "é" * 60 + '"}'
            ws.send(fits)
            assert _answer(ws)["type"] == "ok"


# ---------------------------------------------------------------------------- item 7
def test_every_answer_carries_the_security_headers(serve: Any) -> None:
    with serve() as srv:
        for path in ("/", "/static/table.js", "/static/table.css", "/api/tables", "/nothing"):
            r = srv.http.get(path)
            assert r.status_code in (200, 404), (path, r.status_code)
            csp = r.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, csp
            assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "no-referrer"
            assert r.headers["x-frame-options"] == "DENY"
        for path in ("/docs", "/redoc", "/openapi.json"):  # off unless asked for
            assert srv.http.get(path).status_code == 404, path
    with serve(api_docs=True) as srv:
        for path in ("/docs", "/openapi.json"):
            assert srv.http.get(path).status_code == 200, path


@pytest.mark.browser
def test_the_page_works_under_its_content_security_policy(serve: Any) -> None:
    """In Chromium: the page loads its script and styles, opens its WebSocket and seats a
    player, and the browser reports no violation of the policy."""
    playwright = pytest.importorskip("playwright.sync_api")
    from tests.test_server_browser import ARGS, CHROMIUM

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    with serve() as srv, playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            said: list[str] = []
            page.on("console", lambda m: said.append(f"{m.type}: {m.text}"))
            page.goto(f"http://{srv.host}/")
            page.wait_for_selector(".box.empty")
            assert page.locator(".box.empty").count() == 7
            page.fill("#player-name", "ana")
            page.click("#join-button")
            page.wait_for_selector("body[data-version]")
            page.click('.box[data-box="1"]')
            page.wait_for_selector('button[data-action="deal"]')
            state = srv.http.get("/api/tables/kauri/state").json()
            assert state["players"]["ana"]["connected"] and state["boxes"][0]["seated"] == "ana"
            policy = [m for m in said if "Content Security Policy" in m or "Refused to" in m]
            assert not policy, policy
        finally:
            browser.close()


def test_a_websocket_from_another_sites_page_is_refused(serve: Any) -> None:
    with serve() as srv:
        token = srv.join("kauri", "ana")
        url = f"ws://{srv.host}/ws/kauri?token={token}"
        with connect(url, origin="http://evil.example", open_timeout=10) as ws:  # type: ignore[arg-type]
            _refused(ws, "origin", 4401)
        with connect(url, origin=f"http://{srv.host}", open_timeout=10) as ws:  # type: ignore[arg-type]
            assert json.loads(ws.recv(timeout=10))["type"] == "state"  # its own page


def test_only_the_allowed_host_names_are_answered(serve: Any) -> None:
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 asks with
    ``Host: evil.example``: refused (400; the WebSocket 403)."""
    with serve(hosts=["127.0.0.1", "localhost"]) as srv:
        assert srv.http.get("/api/tables").status_code == 200
        r = srv.http.get("/api/tables", headers={"host": "evil.example"})
        assert r.status_code == 400, r.text
        r = srv.http.get("/", headers={"host": "evil.example:8000"})
        assert r.status_code == 400, r.text
        sock, head = _handshake(srv.host, "/ws/kauri", "evil.example")
        sock.close()
        assert b" 403 " in head.split(b"\r\n")[0], head


def test_serve_answers_only_to_loopback_names_on_loopback() -> None:
    from pontoon.cli import build_parser
    from pontoon.server.serve import allowed_hosts

    parser = build_parser()
    assert allowed_hosts(parser.parse_args(["serve"])) == ["127.0.0.1", "localhost", "::1"]
    assert allowed_hosts(parser.parse_args(["serve", "--host", "0.0.0.0"])) is None
    args = parser.parse_args(["serve", "--host", "0.0.0.0", "--allowed-host", "pontoon.example"])
    assert allowed_hosts(args) == ["pontoon.example"]
    # one of several processes (--lease) also answers to the address it advertises
    assert allowed_hosts(args, "10.0.0.2:8001") == ["pontoon.example", "10.0.0.2"]
    assert allowed_hosts(args, "[::1]:8001") == ["pontoon.example", "::1"]


# ---------------------------------------------------------------------------- item 5
def test_guessing_the_supervisor_token_is_throttled_and_logged(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """20 wrong tokens from one address: each failure is logged (the address, never the token);
    after ten within a minute the address is refused (429, the WebSocket 4429), the right
    token too, while a watcher without a token still sees the table."""
    caplog.set_level(logging.WARNING, logger="pontoon.server.app")
    with serve() as srv:
        start = time.monotonic()
        codes = []
        for i in range(20):
            r = srv.http.get(f"/api/tables/kauri/state?token=guess-{i:04d}-xxxxxxxxxxxx")
            codes.append(r.status_code)
        assert time.monotonic() - start < 10
        assert codes == [401] * 10 + [429] * 10, codes
        assert r.json()["detail"].startswith("too many failed authentications")
        failed = [m for m in caplog.messages if m.startswith("failed authentication from")]
        assert len(failed) == 10 and all("127.0.0.1" in m for m in failed), caplog.messages
        assert not any("guess-" in m for m in caplog.messages)
        assert any("refused for 60 s" in m for m in caplog.messages)
        # the right token is refused too while the address is throttled
        r = srv.http.get(f"/api/tables/kauri/state?token={SUPERVISOR}")
        assert r.status_code == 429, r.text
        r = srv.http.post("/api/tables/kauri/leave", json={"token": SUPERVISOR})
        assert r.status_code == 429, r.text
        with connect(f"ws://{srv.host}/ws/kauri?token={SUPERVISOR}", open_timeout=10) as ws:
            _refused(ws, "throttled", 4429)
        assert srv.http.get("/api/tables/kauri/state").status_code == 200  # a watcher
        assert len([m for m in caplog.messages if m.startswith("failed auth")]) == 10


def test_the_throttle_is_shared_by_every_process_and_its_waits_grow(tmp_path: Path) -> None:
    """Two processes' throttles on one store (here two throttles, as two processes make them):
    a guesser's failures at one count at the other, and each failure past the limit doubles
    the wait. Before: each process counted its own, and N processes allowed N times as much."""
    from pontoon.server.throttles import SharedThrottle, forget_old
    from pontoon.store.db import Store

    now = [1000.0]
    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        here, there = (
            SharedThrottle(store, "address", 3, 60.0, refresh=0.0, clock=lambda: now[0])
            for _ in range(2)
        )
        assert not here.fail("10.0.0.1") and not there.fail("10.0.0.1")
        assert not here.blocked("10.0.0.1") and not there.blocked("10.0.0.1")
        assert there.fail("10.0.0.1")  # the third, at the other process: both refuse it
        assert here.blocked("10.0.0.1") and there.blocked("10.0.0.1")
        assert not here.blocked("10.0.0.2")  # another address is unaffected
        other = SharedThrottle(store, "login", 3, 60.0, refresh=0.0, clock=lambda: now[0])
        assert not other.blocked("10.0.0.1")  # nor another kind's key
        now[0] += 61.0  # a minute after the third: one more try
        assert not here.blocked("10.0.0.1")
        here.fail("10.0.0.1")  # the fourth: two minutes' wait
        now[0] += 119.0
        assert there.blocked("10.0.0.1")
        now[0] += 2.0
        assert not there.blocked("10.0.0.1")
        with store.read() as conn:  # the store keeps digests, never the address
            assert "10.0.0.1" not in str(conn.exec_driver_sql("SELECT * FROM auth_failures").all())
        now[0] += 86400.0
        assert forget_old(store, lambda: now[0]) == 4


@pytest.mark.parametrize(
    "token", ["short-token", "x" * 15, "sixteen chars ok", "tab\tseparated-token", "é" * 20]
)
def test_a_weak_supervisor_token_is_refused_at_start(
    token: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PONTOON_SUPERVISOR_TOKEN", raising=False)
    assert main(["serve", "--supervisor-token", token]) == 2
    err = capsys.readouterr().err
    assert "must be 16 printable ASCII characters or more" in err and err.count("\n") == 1
    assert token not in err
    monkeypatch.setenv("PONTOON_SUPERVISOR_TOKEN", token)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "$PONTOON_SUPERVISOR_TOKEN" in err and err.count("\n") == 1


def test_the_supervisor_token_is_read_from_a_file_of_its_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pontoon.cli import build_parser
    from pontoon.server.serve import supervisor_token

    monkeypatch.delenv("PONTOON_SUPERVISOR_TOKEN", raising=False)
    parser = build_parser()
    path = tmp_path / "token"
    path.write_text(SUPERVISOR + "\nignored\n")
    path.chmod(0o600)
    args = parser.parse_args(["serve", "--supervisor-token-file", str(path)])
    assert supervisor_token(args) == (SUPERVISOR, True)
    monkeypatch.setenv("PONTOON_SUPERVISOR_TOKEN", "from-the-environment-token")
    assert supervisor_token(parser.parse_args(["serve"])) == ("from-the-environment-token", True)
    monkeypatch.setenv("PONTOON_SUPERVISOR_TOKEN", "")  # empty: a random one, printed
    token, given = supervisor_token(parser.parse_args(["serve"]))
    assert not given and len(token) >= 16
    path.chmod(0o640)
    assert main(["serve", "--supervisor-token-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "readable by others (mode 640): chmod 600 it" in err and err.count("\n") == 1
    path.chmod(0o600)
    path.write_text("too-short\n")
    assert main(["serve", "--supervisor-token-file", str(path)]) == 2
    assert "--supervisor-token-file) must be 16" in capsys.readouterr().err
    missing = ["serve", "--supervisor-token-file", str(tmp_path / "none")]
    assert main(missing) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and err.count("\n") == 1
    both = ["serve", "--supervisor-token", SUPERVISOR, "--supervisor-token-file", str(path)]
    assert main(both) == 2
    assert "not both" in capsys.readouterr().err
