"""A SIGKILL of the server between an operator's debit and the record of its wager:
the server comes back (a process of another id), takes the dead process's debit once it is
older than the longest a debit can be in flight, rolls it back, and pays what the round before
it left; the operator's balance is what the record says."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jwt")

import httpx
from websockets.sync.client import ClientConnection, connect

from pontoon.cli import main
from tests.helpers import wait_until
from tests.operator_double import Operator
from tests.test_leases import _until
from tests.test_operator_wallet import ISSUER, SECRET, launch_token
from tests.test_server_helpers import free_port, in_thread, start_server

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store


def _send(ws: ClientConnection, state: dict[str, Any], **msg: Any) -> dict[str, Any]:
    """Send ``msg``; the reply, ``state`` kept current with the states on the way."""
    ws.send(json.dumps(msg))
    while True:
        m: dict[str, Any] = json.loads(ws.recv(timeout=20))
        if m["type"] == "state":
            state.clear()
            state.update(m)
        else:
            return m


def _debits(operator: Operator) -> list[str]:
    """The keys of the debits the operator has been sent."""
    return [key for kind, key in operator.calls if kind == "debit"]


def _owed(db: Path) -> int:
    with sqlite3.connect(db) as con:
        (n,) = con.execute(
            "SELECT count(*) FROM operator_calls WHERE status IN ('pending', 'rollback')"
        ).fetchone()
    return int(n)


def test_a_sigkill_between_the_debit_and_its_record_is_rolled_back(tmp_path: Path) -> None:
    operator = Operator(SECRET, {"ana": 20_000}, slow=1.0, slow_seconds=0.4)  # every call slow
    secret = tmp_path / "operator-secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    db = tmp_path / "crash.db"
    with in_thread(operator.app()) as host:
        port = free_port()
        options = [
            "--db", f"sqlite:///{db}", "--table", "kauri", "--operator-url", f"http://{host}",
            "--operator-secret-file", str(secret), "--operator-issuer", ISSUER,
        ]  # fmt: skip
        server = start_server(tmp_path, port, options)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, follow_redirects=True) as http:
                r = http.get(f"/launch?token={launch_token('ana')}&table=kauri")
                assert r.status_code == 200  # the page, after the redirect
                csrf = http.get("/api/me").json()["csrf"]
                assert http.post("/api/tables/kauri/join", headers={"X-CSRF-Token": csrf})
                cookie = f"pontoon_session={http.cookies['pontoon_session']}"
            with connect(
                f"ws://127.0.0.1:{port}/ws/kauri", additional_headers={"Cookie": cookie}
            ) as ws:
                state: dict[str, Any] = json.loads(ws.recv(timeout=20))
                first = _send(ws, state, type="bet", box=1, amount=1000, id="b1")
                assert first["type"] == "ok", first
                assert _send(ws, state, type="deal", id="d1")["type"] == "ok"
                n = 0
                while state["phase"] != "over":
                    n += 1
                    legal = {m["action"] for m in state["legal"]}
                    action = next(a for a in ("no-insurance", "stand", "hit") if a in legal)
                    _send(ws, state, type="act", action=action, box=1, id=f"a{n}")
                debits = _debits(operator)
                ws.send(json.dumps({"type": "bet", "box": 1, "amount": 1000, "id": "b2"}))
                _until(lambda: len(_debits(operator)) > len(debits), 10.0)
                server.send_signal(signal.SIGKILL)  # the debit is at the operator, unanswered
                server.wait(10)
        finally:
            if server.poll() is None:
                server.kill()
        key = _debits(operator)[-1]  # the operator applies the debit that nobody will record
        _until(lambda: ("debit", key) in operator.applied, 10.0)
        assert operator.balances["ana"] <= 20_000 - 1000 + 2 * 1000
        server = start_server(tmp_path, port, options)
        try:
            # (OperatorConfig.longest after the debit's row, and a loaded host's margin)
            wait_until(lambda: not _owed(db), 60, "the debit rolled back after the restart")
        finally:
            server.terminate()
            server.wait(30)
    with sqlite3.connect(db) as con:
        calls = con.execute("SELECT kind, status, amount, seq FROM operator_calls").fetchall()
        owners = dict(con.execute("SELECT key, owner FROM operator_calls").fetchall())
    kept = sum(a * (1 if k == "credit" else -1) for k, s, a, _ in calls if s == "done")
    assert operator.balances["ana"] == 20_000 + kept  # charged once, paid once
    assert ("debit", "rolled-back", 1000, None) in calls  # the killed wager's, taken back
    # by the process started again (a process of its own, its calls its own), once
    assert owners[key] != owners[debits[0]] and operator.calls.count(("rollback", key)) == 1
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0
