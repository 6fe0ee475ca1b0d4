"""An operator's wallet behind several processes: each call to the
operator is its process's (``operator_calls.owner``), and an outbox ends only its own calls,
the credits of the tables it serves that no process has taken, and the calls of a table it
serves that are older than the longest a debit can be in flight (``OperatorConfig.longest``).
So a live process's debit in flight is left alone by the others (the old outboxes claimed it,
and its wager was refused), and a process killed in the middle of a debit has it rolled back,
once, by the table's next holder. Under ``pontoon serve --processes 2`` on PostgreSQL, the
table keeps answering its other players within a bound while one player's debit hangs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jwt")

import httpx
from sqlalchemy import insert, select
from websockets.sync.client import ClientConnection, connect

from pontoon.cli import main
from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.server.handoff import OWNERS_SECONDS
from pontoon.server.operator import OperatorConfig, OperatorWallet
from pontoon.store.accounts import Accounts
from pontoon.store.db import Store
from pontoon.store.leases import holders, take
from pontoon.store.schema import operator_calls
from tests.operator_double import Operator
from tests.test_leases import _until
from tests.test_operator_wallet import ISSUER, SECRET, launch_token
from tests.test_server_helpers import free_port, in_thread, start_server
from tests.test_store import fresh_database

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

TABLES = ["kauri", "rimu"]


# ---------------------------------------------------------------------- the outbox's rules
def _row(key: str, kind: str, owner: str | None, table: str, ago: float) -> dict[str, Any]:
    at = (datetime.now(UTC) - timedelta(seconds=ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"key": key, "account": "ana", "kind": kind, "amount": 700, "table_id": table} | {
        "status": "pending",
        "at": at,
        "owner": owner,
    }


def test_an_outbox_ends_its_own_calls_a_dead_owners_of_its_tables_and_those_of_no_table(
    tmp_path: Path,
) -> None:
    """Each process sends its own calls, and a dead owner's of the tables it serves; a table
    no process serves (closed, or no longer configured) is any process's to end."""
    operator = Operator(SECRET, {"ana": 20_000})
    url = f"sqlite:///{tmp_path / 'o.db'}"
    hour = 3600.0
    with Store(url) as store, in_thread(operator.app()) as host:
        Accounts(store).launched("ana")
        config = OperatorConfig(f"http://{host}", SECRET, ISSUER, timeout=0.5, attempts=1)

        async def run() -> None:
            a = OperatorWallet(store, config, {}, leased=True)  # another live process
            b = OperatorWallet(store, config, {}, leased=True)  # this one
            assert take(store, "rimu", a.owner, "a:1", hour) and take(
                store, "kauri", b.owner, "b:1", hour
            )
            a.serve("rimu")
            b.serve("kauri")
            rows = [
                _row("a-in-flight", "debit", a.owner, "kauri", 0.0),  # (kauri was a's)
                _row("a-credit", "credit", a.owner, "kauri", 0.0),
                _row("dead-debit", "debit", "a-process-gone", "kauri", hour),
                _row("dead-debit-rimu", "debit", "a-process-gone", "rimu", hour),
                _row("untaken-credit", "credit", None, "kauri", 0.0),
                _row("closed-debit", "debit", "a-process-gone", "totara", hour),  # nobody's table
                _row("closed-credit", "credit", None, "totara", 0.0),
                _row("closed-young-debit", "debit", "a-process-gone", "totara", 0.0),
            ]
            with store.write() as conn:
                conn.execute(insert(operator_calls), rows)
            a.in_flight.add("a-in-flight")
            assert await b.flush() == 4
            assert _statuses(store) == {
                "a-in-flight": ("pending", a.owner),  # a live process's, in flight
                "a-credit": ("pending", a.owner),  # a's to send
                "dead-debit": ("rolled-back", b.owner),  # older than the longest debit
                "dead-debit-rimu": ("pending", "a-process-gone"),  # not a table b serves
                "untaken-credit": ("done", b.owner),  # written at b's table, sent at once
                "closed-debit": ("rolled-back", b.owner),  # no process serves totara
                "closed-credit": ("done", b.owner),
                "closed-young-debit": ("pending", "a-process-gone"),  # maybe in flight still
            }
            assert await a.flush() == 2  # its credit, and rimu's old debit; not its own in flight
            a.settled([("a-in-flight", "ana", 700)])  # its wager was not recorded
            assert await a.flush() == 1
            assert _statuses(store)["a-in-flight"] == ("rolled-back", a.owner)
            assert _statuses(store)["dead-debit-rimu"] == ("rolled-back", a.owner)
            for w in (a, b):
                await w.close()

        asyncio.run(run())
    rolled = [key for kind, key in operator.calls if kind == "rollback"]
    assert sorted(rolled) == ["a-in-flight", "closed-debit", "dead-debit", "dead-debit-rimu"]
    assert config.longest == 0.5 + 0.05 + 0.5


def _statuses(store: Store) -> dict[str, tuple[str, str | None]]:
    c = operator_calls.c
    with store.read() as conn:
        return {k: (s, o) for k, s, o in conn.execute(select(c.key, c.status, c.owner))}


# ---------------------------------------------------------------------- serve --processes 2
@contextmanager
def _cluster(tmp_path: Path, url: str, host: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``pontoon serve --processes 2`` (1 s leases) with the operator at ``host``, once each
    process holds one of the two tables; yields the parent and its port."""
    secret = tmp_path / "operator-secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    port = free_port()
    options = [
        "--db", url, "--processes", "2", "--lease", "1", "--operator-url", f"http://{host}",
        "--operator-secret-file", str(secret), "--operator-issuer", ISSUER,
    ]  # fmt: skip
    for t in TABLES:
        options += ["--table", t]
    parent = start_server(tmp_path, port, options)
    try:  # a table each (shared out as they start), and the parent has read who holds which
        _until(lambda: len(set(_holders(url).values())) == len(TABLES), 30.0)
        # a clock, not an event: the parent's last read of the holders is older than
        # OWNERS_SECONDS by then, so it reads them again at the next connection
        time.sleep(2 * OWNERS_SECONDS)
        yield parent, port
    finally:
        parent.terminate()
        parent.wait(30)
        assert parent.stdout is not None
        parent.stdout.close()


def _holders(url: str) -> dict[str, str]:
    with Store(url) as store:
        return {t: h.owner for t, h in holders(store).items()}


class Seat:
    """A player the operator launched, seated at kauri through the parent's port."""

    def __init__(self, port: int, name: str) -> None:
        self.name = name
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as http:
            r = http.get(f"/launch?token={launch_token(name)}&table=kauri")
            assert r.status_code == 303, r.text
            csrf = http.get("/api/me").json()["csrf"]
            joined = http.post("/api/tables/kauri/join", headers={CSRF_HEADER: csrf})
            assert joined.status_code == 200, joined.text
            cookie = f"{COOKIE}={http.cookies[COOKIE]}"
        self._ws = connect(f"ws://127.0.0.1:{port}/ws/kauri", additional_headers={"Cookie": cookie})
        self.ws: ClientConnection = self._ws.__enter__()
        self.state: dict[str, Any] = json.loads(self.ws.recv(timeout=20))
        self.n = 0

    def post(self, **msg: Any) -> None:
        self.n += 1
        self.ws.send(json.dumps({"id": f"{self.name}-{self.n}", **msg}))

    def reply(self) -> dict[str, Any]:
        while True:
            m: dict[str, Any] = json.loads(self.ws.recv(timeout=60))
            if m["type"] == "state":
                self.state = m
            else:
                return m

    def send(self, **msg: Any) -> dict[str, Any]:
        self.post(**msg)
        return self.reply()

    def timed(self, **msg: Any) -> tuple[dict[str, Any], float]:
        start = time.monotonic()
        reply = self.send(**msg)
        return reply, time.monotonic() - start

    def close(self) -> None:
        self._ws.__exit__(None, None, None)


def _calls(url: str) -> list[dict[str, Any]]:
    with Store(url) as store, store.read() as conn:
        rows = conn.execute(select(operator_calls).order_by(operator_calls.c.at))
        return [dict(r._mapping) for r in rows]


def _row_of(url: str, key: str) -> dict[str, Any]:
    (row,) = [c for c in _calls(url) if c["key"] == key]
    return row


def _owed(url: str) -> int:
    return sum(c["status"] in ("pending", "rollback", "disputed") for c in _calls(url))


def _last_debit(operator: Operator) -> str:
    return [key for kind, key in operator.calls if kind == "debit"][-1]


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[str]:
    with fresh_database("postgresql", tmp_path) as url:
        yield url


def test_a_debit_in_flight_at_one_process_is_left_to_it(tmp_path: Path, pg: str) -> None:
    """The operator answers each debit of ana's after 1.5 s, within the call's 2 s: the other
    process's outbox (a pass a second) must leave it to the process that sent it."""
    operator = Operator(SECRET, {"ana": 20_000})
    operator.hang = {"ana": 1.5}
    with in_thread(operator.app()) as host, _cluster(tmp_path, pg, host) as (_, port):
        ana = Seat(port, "ana")
        for box in (1, 2, 3):
            reply = ana.send(type="bet", box=box, amount=1000)
            assert reply["type"] == "ok", reply
        ana.close()
        debits = [c for c in _calls(pg) if c["kind"] == "debit"]
        assert [c["status"] for c in debits] == ["done"] * 3
        assert len({c["owner"] for c in debits}) == 1  # kauri's process's
        assert not [k for k, _ in operator.calls if k == "rollback"]
        assert operator.balances["ana"] == 17_000
    assert main(["verify", "--db", pg]) == 0


def test_a_process_killed_in_a_debit_has_it_rolled_back_once_by_the_tables_next_holder(
    tmp_path: Path, pg: str
) -> None:
    operator = Operator(SECRET, {"ana": 20_000})
    operator.hang = {"ana": 4.0}  # ana's debit held at the operator while its process dies
    with in_thread(operator.app()) as host, _cluster(tmp_path, pg, host) as (_, port):
        ana = Seat(port, "ana")
        ana.post(type="bet", box=1, amount=1000)
        _until(lambda: operator.held > 0, 10.0)
        key = _last_debit(operator)
        dead = _row_of(pg, key)["owner"]
        victim = _holders(pg)["kauri"]
        os.kill(int(victim.split(":")[-2]), signal.SIGKILL)  # in the middle of the debit
        killed = time.monotonic()
        operator.hang = {}
        ana.ws.close_socket()  # (its process is gone)
        _until(lambda: _holders(pg).get("kauri") not in (None, victim), 10.0)
        _until(lambda: _row_of(pg, key)["status"] == "rolled-back", 40.0)
        waited = time.monotonic() - killed
        _until(lambda: operator.held == 0, 10.0)  # the held debit was answered (or refused)
        row = _row_of(pg, key)
        assert row["owner"] != dead  # ended by the table's next holder
        assert [c for c in operator.calls if c == ("rollback", key)] == [("rollback", key)]
        assert operator.balances["ana"] == 20_000  # whole
        assert _owed(pg) == 0
        # not before the debit could have ended at its own process (its bound, 10.75 s)
        assert waited > OperatorConfig("u", "s").longest - 1.0, waited
        print(f"measured: rolled back by the table's next holder {waited:.1f} s after the kill")
    assert main(["verify", "--db", pg]) == 0


def test_the_table_answers_within_a_bound_whatever_the_operator_does(
    tmp_path: Path, pg: str
) -> None:
    """ana's debits hang (no answer in 4 tries of 2 s), then come back 503, then 402; ben's
    at the same table, meanwhile, are answered at once; the operator slow but in time is
    waited for."""
    operator = Operator(SECRET, {"ana": 20_000, "ben": 20_000})
    operator.hang = {"ana": 10.0}
    with in_thread(operator.app()) as host, _cluster(tmp_path, pg, host) as (_, port):
        ana, ben = Seat(port, "ana"), Seat(port, "ben")
        out: dict[str, Any] = {}

        def ana_bets() -> None:
            out["hung"] = ana.timed(type="bet", box=1, amount=1000)

        waiting = threading.Thread(target=ana_bets)
        waiting.start()
        _until(lambda: operator.held > 0, 10.0)
        answered, seconds = ben.timed(type="bet", box=2, amount=1000)
        assert answered["type"] == "ok", answered
        assert seconds < 1.0 and "hung" not in out, (seconds, out)  # not behind ana's debit
        waiting.join(30)
        (reply, hung) = out["hung"]
        assert reply["type"] == "error" and reply["code"] == "wallet", reply
        bound = OperatorConfig("u", "s").longest  # 4 × 2 s, the back-off, 2 s for the record
        assert 8.0 <= hung <= bound, (hung, bound)
        print(f"measured: ben answered in {seconds:.3f} s while ana's debit hung {hung:.2f} s")
        operator.hang = {}
        operator.answer = {"debit": 503}  # down: tried 4 times, refused, rolled back
        reply, seconds = ana.timed(type="bet", box=1, amount=1000)
        assert reply["code"] == "wallet" and seconds < 3.0, (reply, seconds)
        operator.answer = {"debit": 402}  # the operator's no: declined, nothing to roll back
        reply, seconds = ana.timed(type="bet", box=1, amount=1000)
        assert reply["code"] == "funds" and "says no" in reply["error"], reply
        operator.answer = {}
        operator.slow, operator.slow_seconds = 1.0, 0.5  # slow, within the 2 s a try
        reply, seconds = ben.timed(type="bet", box=3, amount=1000)
        assert reply["type"] == "ok" and seconds >= 0.5, (reply, seconds)
        operator.slow = 0.0
        _until(lambda: _owed(pg) == 0 and operator.held == 0, 30.0)
        statuses = sorted(c["status"] for c in _calls(pg) if c["account"] == "ana")
        assert statuses == ["declined", "rolled-back", "rolled-back"]
        assert operator.balances == {"ana": 20_000, "ben": 18_000}
        ana.close()
        ben.close()
    assert main(["verify", "--db", pg]) == 0
