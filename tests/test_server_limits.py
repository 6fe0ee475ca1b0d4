"""What one client may ask of the server, and what each one sees.

On loopback through uvicorn, with the hostile suite's servers (any 5xx answer or any error
logged fails a test here too): joins per address and players per table, names that pass for
the house or for a seated player, sockets per session, messages and ``state`` requests per
session, a request head trickled a byte at a time, one cold chart however many ask, and the
balances, history and replays a watcher, a player and the supervisor are given.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import pontoon.server.charts as server_charts
from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.limits import Limits, head_timeout
from pontoon.server.table import TableConfig
from tests.helpers import wait_until
from tests.test_server_helpers import SUPERVISOR, free_port, stacked, start_server
from tests.test_server_hostile import (  # the hostile suite's servers and its watch on them
    ONE_BOX,
    _answer,
    no_5xx_nor_traceback,  # noqa: F401 (an autouse fixture)
    serve,  # noqa: F401 (a fixture)
)

pytestmark = [
    pytest.mark.integration,  # the server, through uvicorn on loopback
    pytest.mark.filterwarnings(
        "error::pytest.PytestUnhandledThreadExceptionWarning",
        "error::pytest.PytestUnraisableExceptionWarning",
    ),
]


def _tables(n: int) -> list[TableConfig]:
    rules = load_rules("nz-pontoon")
    return [TableConfig(f"t{i}", rules, 600.0, 600.0, 100_000, stacked(ONE_BOX)) for i in range(n)]


# ---------------------------------------------------------------------------- item 6
def test_joins_per_address_and_players_per_table_are_limited(serve: Any) -> None:
    """The old server let one address make 430 names at a table (every state grew to 26 KB)."""
    with serve(_tables(2)) as srv:
        for i in range(8):
            srv.join("t0", f"p{i}")
        r = srv.http.post("/api/tables/t0/join", json={"name": "p8"})
        assert r.status_code == 429, r.text
        assert "at most 8 players from one address at a table" in r.json()["detail"]
        srv.join("t1", "p8")  # another table is not concerned
        token = srv.join("t1", "p9")
        leave = srv.http.post("/api/tables/t0/leave", json={"token": srv.join("t1", "pa")})
        assert leave.status_code == 401  # (a token of t1 does not open t0)
        gone = srv.http.post("/api/tables/t1/leave", json={"token": token})
        assert gone.status_code == 200
        assert len(srv.http.get("/api/tables/t0/state").json()["players"]) == 8
    with serve(_tables(1), limits=Limits(players_per_table=3, joins_per_address=10)) as srv:
        for name in ("ana", "ben", "cat"):
            srv.join("t0", name)
        r = srv.http.post("/api/tables/t0/join", json={"name": "dan"})
        assert r.status_code == 409 and "table 't0' is full: 3 players" in r.json()["detail"]


@pytest.mark.parametrize(
    "name", ["supervisor", "Dealer", "HOUSE", "super-visor", "dealer_2", "Croupier", "supervlsor"]
)
def test_a_name_may_not_pass_for_the_house(serve: Any, name: str) -> None:
    with serve() as srv:
        r = srv.http.post("/api/tables/kauri/join", json={"name": name})
        assert r.status_code == 422, r.text
        assert "may not pass for one of the house's people" in r.text
        assert name not in r.text  # (the input is not echoed)


@pytest.mark.parametrize(
    ("seated", "other", "refused"),
    [
        ("ana", "Ana", True),
        ("ana", "ANA", True),
        ("an_a", "AN-A", True),
        ("bil1", "BILL", True),  # 1, l and I look alike
        ("b0b", "BOB", True),  # so do 0 and O
        ("ana", "anna", False),
        ("ana", "an_a", False),
    ],
)
def test_a_name_too_like_a_seated_players_is_refused(
    serve: Any, seated: str, other: str, refused: bool
) -> None:
    with serve() as srv:
        srv.join("kauri", seated)
        r = srv.http.post("/api/tables/kauri/join", json={"name": other})
        if not refused:
            assert r.status_code == 200, r.text
            return
        assert r.status_code == 409, r.text
        assert f"too like {seated!r}" in r.json()["detail"], r.text


def test_a_session_keeps_at_most_four_sockets_the_oldest_closed(serve: Any) -> None:
    """The old server kept 300 sockets open on one token. A fifth socket of a session closes
    its oldest (4409), which a reconnecting player needs: the new one is never refused."""
    with serve() as srv:
        token = srv.join("kauri", "ana")
        with ExitStack() as stack:
            opened = []
            for _ in range(12):
                url = f"ws://{srv.host}/ws/kauri?token={token}"
                ws = stack.enter_context(connect(url, open_timeout=10))
                assert json.loads(ws.recv(timeout=10))["type"] == "state"
                opened.append(ws)
            for ws in opened[:8]:  # each closed by the fifth after it
                m = _answer(ws)
                assert m["type"] == "error" and m["code"] == "sockets", m
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        ws.recv(timeout=10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 4409
            for i, ws in enumerate(opened[8:]):  # the four newest play on
                ws.send(json.dumps({"type": "ping", "id": f"p{i}"}))
                assert _answer(ws)["type"] == "ok"


def test_state_requests_per_session_are_answered_at_a_bounded_pace(serve: Any) -> None:
    """3,000 pipelined ``state`` requests were each answered with a whole state (7.3 MB). Now
    every request is answered (``ok``) at once, but a session is sent states for them only
    at its limit's pace — past the burst, the requests waiting get one state together when
    the limit allows — so no client waiting for a state is left without one."""
    lim = Limits(states_per_second=2, state_burst=5)
    with serve(limits=lim) as srv:
        token = srv.join("kauri", "ana")
        with srv.ws("kauri", token) as ws:
            t0 = time.monotonic()
            for i in range(50):  # (fewer than OUTBOX: a client that does not read is cut off)
                ws.send(json.dumps({"type": "state", "id": f"s{i}"}))
            oks, states, within, last = 0, 0, 0, 0.0
            deadline = t0 + 10  # (every answer, however slow the host; the pace is counted
            # over the first 1.5 s)
            while oks < 50 or states < 6 or time.monotonic() - t0 < 1.5:
                now = time.monotonic()
                assert now < deadline, (oks, states)
                wait = t0 + 1.5 - now if oks == 50 and states >= 6 else deadline - now
                try:
                    m = json.loads(ws.recv(timeout=max(0.01, wait)))
                except TimeoutError:
                    continue
                if m["type"] == "state":
                    states, last = states + 1, time.monotonic() - t0
                    within += last <= 1.5
                else:
                    assert m["type"] == "ok" and "refresh" not in m, m  # (the server's note)
                    oks += 1
            assert oks == 50 and states >= 6  # the waiting requests were answered too
            assert within <= 5 + 4, within  # the burst, then one merged every 0.5 s
            assert last > 0.3  # the merged ones came later, at the limit's pace
            # the table is not held up meanwhile
            ws.send(json.dumps({"type": "bet", "box": 1, "amount": 500, "id": "b"}))
            assert _answer(ws)["type"] == "ok"


def _trickle(host: str, head: bytes, every: float, timeout: float) -> float:
    """Send ``head`` a byte every ``every`` seconds; the seconds until the server closed
    the connection (a bound: ``timeout``)."""
    h, port = host.split(":")
    start = time.monotonic()
    with socket.create_connection((h, int(port)), timeout=timeout) as s:
        try:
            for b in head:
                s.sendall(bytes([b]))
                time.sleep(every)  # the trickle under test
                if time.monotonic() - start > timeout:
                    raise AssertionError(f"still open after {timeout} s")
            s.settimeout(max(0.01, timeout - (time.monotonic() - start)))
            while s.recv(1024):
                pass
        except (BrokenPipeError, ConnectionResetError):
            pass
    return time.monotonic() - start


def test_a_request_head_trickled_byte_by_byte_is_cut_off(serve: Any) -> None:
    """A connection that sends its head a byte every 0.1 s was kept for ever (uvicorn's
    keep-alive timer stops at the first byte): now it has ``header_seconds``, counted from
    its opening — or from its first byte after an answer, on a kept-alive connection."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    guarded = head_timeout(AutoHTTPProtocol, 0.5)
    with serve(http=guarded) as srv:
        head = b"GET /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"x" * 100
        assert _trickle(srv.host, head, 0.05, timeout=5) < 3.0
        assert _trickle(srv.host, b"", 0, timeout=5) < 3.0  # a connection that sends nothing
        # a whole request in time is answered, and the next one on the connection is timed
        h, port = srv.host.split(":")
        with socket.create_connection((h, int(port)), timeout=5) as s:
            s.sendall(b"GET /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            start = time.monotonic()
            s.sendall(b"GET /api/tables HTTP/1.1\r\nHost: 1")
            with pytest.raises((ConnectionResetError, AssertionError)):
                while True:
                    assert s.recv(1024), "closed"
            assert time.monotonic() - start < 3.0
        # a WebSocket that got its head in time is not touched by the timer
        with srv.ws("kauri", srv.join("kauri", "ana")) as ws:
            time.sleep(1.0)  # the clock under test: past the head's 0.5 s
            ws.send(json.dumps({"type": "ping", "id": "p"}))
            assert _answer(ws)["type"] == "ok"


def test_serve_times_out_a_trickled_head(tmp_path: Path) -> None:
    """``pontoon serve --header-seconds`` puts the timer on its connections."""
    port = free_port()
    options = ["--db", str(tmp_path / "s.db"), "--header-seconds", "0.5"]
    proc = start_server(tmp_path, port, [*options, "--supervisor-token", SUPERVISOR])
    try:
        head = b"GET /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"x" * 100
        assert _trickle(f"127.0.0.1:{port}", head, 0.05, timeout=5) < 3.0
    finally:
        proc.terminate()
        proc.wait(10)
    assert main(["serve", "--header-seconds", "0"]) == 2
    assert main(["serve", "--joins-per-address", "0"]) == 2
    assert main(["serve", "--players-per-table", "100001"]) == 2


def test_a_cold_chart_is_computed_once_however_many_ask(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight cold requests each ran the 45-second analysis on the threads the history and the
    replays share. Now one computes it, on its own thread, and the other seven wait for it;
    the history is answered meanwhile."""
    calls: list[str] = []
    release = threading.Event()

    def slow(rules: Any) -> dict[str, Any]:
        calls.append(rules.name)
        release.wait(10)
        return {"rules": rules.name, "ev": 0.0, "cells": {}}

    monkeypatch.setattr(server_charts, "_chart", slow)
    with serve() as srv:
        results: list[Any] = []

        def ask() -> None:
            results.append(httpx.get(f"http://{srv.host}/api/tables/kauri/chart", timeout=20))

        askers = [threading.Thread(target=ask) for _ in range(8)]
        for a in askers:
            a.start()
        wait_until(lambda: calls, 30, "a chart asked for")
        for _ in range(8):  # the history's threads are free
            t0 = time.monotonic()
            assert srv.http.get("/api/tables/kauri/history").status_code == 200
            assert time.monotonic() - t0 < 2.0  # (held up: until released, 10 s)
        release.set()
        for a in askers:
            a.join(20)
        assert [r.status_code for r in results] == [200] * 8
        assert calls == ["nz-pontoon"]
        assert srv.http.get("/api/tables/kauri/chart").json()["rules"] == "nz-pontoon"
        assert calls == ["nz-pontoon"]  # kept


def test_a_failed_chart_is_tried_again() -> None:
    charts = server_charts.Charts()
    rules = load_rules("nz-pontoon")
    tries: list[int] = []

    def flaky(r: Any) -> dict[str, Any]:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("out of memory")
        return {"rules": r.name}

    async def go() -> Any:
        with pytest.raises(RuntimeError):
            await charts.get(rules)
        return await charts.get(rules)

    original = server_charts._chart
    server_charts._chart = flaky
    try:
        assert asyncio.run(go()) == {"rules": "nz-pontoon"} and len(tries) == 2
    finally:
        server_charts._chart = original
        charts.close()


# ---------------------------------------------------------------------------- item 8
def test_balances_are_their_players_alone(serve: Any) -> None:
    """A watcher saw every player's balance. Now a watcher sees names, who is connected and
    the chips in play; a player sees their own balance; the supervisor sees all."""
    with serve() as srv:
        ana, ben = srv.join("kauri", "ana"), srv.join("kauri", "ben")
        with srv.ws("kauri", ana) as ws:
            ws.send(json.dumps({"type": "bet", "box": 1, "amount": 2500, "id": "b"}))
            assert _answer(ws)["type"] == "ok"
        watcher = srv.http.get("/api/tables/kauri/state").json()
        assert watcher["balance"] is None and "balances" not in watcher
        assert watcher["players"] == {
            "ana": {"connected": False},
            "ben": {"connected": False},
        }
        assert watcher["boxes"][0]["original"] == {"ana": 2500}  # the chips in play
        assert "97500" not in json.dumps(watcher)
        mine = srv.http.get(f"/api/tables/kauri/state?token={ben}").json()
        assert mine["balance"] == 100_000 and "balances" not in mine
        sup = srv.http.get(f"/api/tables/kauri/state?token={SUPERVISOR}").json()
        assert sup["balances"] == {"ana": 97_500, "ben": 100_000}


def test_the_history_and_replays_name_only_the_asker(serve: Any) -> None:
    """The history gave each player's net per round by name, to anyone. Now a watcher's names
    no one (each round's players are ``player 1``, ``player 2`` in its replay, afresh in each
    round), a player's names that player alone, the supervisor's everyone."""
    rules = load_rules("nz-pontoon")
    quick = TableConfig("t0", rules, 0.2, 600.0, 100_000)  # the timer plays the round out (16.6)
    with serve([quick]) as srv:
        ana, ben = srv.join("t0", "ana"), srv.join("t0", "ben")
        with srv.ws("t0", ana) as a, srv.ws("t0", ben) as b:
            b.send(json.dumps({"type": "bet", "box": 2, "amount": 1000, "id": "b1"}))
            assert _answer(b)["type"] == "ok"
            a.send(json.dumps({"type": "bet", "box": 1, "amount": 500, "id": "a1"}))
            assert _answer(a)["type"] == "ok"
            a.send(json.dumps({"type": "deal", "id": "d"}))
            assert _answer(a)["type"] == "ok"
        wait_until(
            lambda: srv.http.get("/api/tables/t0/state").json()["phase"] == "over",
            30,
            "the round over",
        )
        [watched] = srv.http.get("/api/tables/t0/history").json()
        assert watched["players"] == {} and "house" in watched
        [hers] = srv.http.get(f"/api/tables/t0/history?token={ana}").json()
        assert list(hers["players"]) == ["ana"]
        [all_] = srv.http.get(f"/api/tables/t0/history?token={SUPERVISOR}").json()
        assert set(all_["players"]) == {"ana", "ben"}
        rid = watched["id"]
        text = srv.http.get(f"/api/rounds/{rid}").text
        assert '"ana"' not in text and '"ben"' not in text
        doc = json.loads(text)
        wagers = [e["player"] for e in doc["events"] if e["kind"] == "wager"]
        assert wagers == ["player 1", "player 2"]  # in the order they wagered: ben, then ana
        assert set(doc["round"]["players"]) == {"player 1", "player 2"}
        hers = srv.http.get(f"/api/rounds/{rid}?token={ana}").json()
        assert [e["player"] for e in hers["events"] if e["kind"] == "wager"] == [
            "player 1",
            "ana",
        ]
        sup = srv.http.get(f"/api/rounds/{rid}?token={SUPERVISOR}").json()
        assert [e["player"] for e in sup["events"] if e["kind"] == "wager"] == ["ben", "ana"]
        assert srv.http.get(f"/api/rounds/{rid}?token=forged-token-xxxxxxxx").status_code == 401
