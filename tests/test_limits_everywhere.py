"""A player's limits hold across every table and every process on the store: two servers
(two processes, one table each) take one player's wagers at the same moment against one
loss limit, and together never pass it; the reality check's clock is the store's."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.store.accounts import Accounts, Movement, Role, hasher
from pontoon.store.db import Store
from pontoon.store.play_limits import Limit, net_since
from pontoon.store.verify import verify
from tests.test_store import fresh_database

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

PASSWORD = "correct horse battery"
LIMIT = 3000  # ana's daily loss limit, in cents
WAGER = 1000
BOXES = range(1, 4)  # three boxes at each table (15.4): six wagers of 1000 against 3000


@contextmanager
def _serve(cwd: Path, url: str, table: str) -> Iterator[str]:
    from tests.test_server_helpers import free_port, start_server

    port = free_port()
    options = ["--db", url, "--table", table, "--accounts", "--password-strength", "minimum"]
    options += ["--deal-seconds", "600"]
    proc = start_server(cwd, port, options)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


PLAYERS = ("ana", "ben", "cai")  # each a race of its own, run at once


def _login(address: str, name: str) -> dict[str, str]:
    import httpx

    r = httpx.post(f"http://{address}/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"cookie": f"{COOKIE}={r.cookies[COOKIE]}", CSRF_HEADER: r.json()["csrf"]}


def _wagers(address: str, table: str, headers: dict[str, str], go: threading.Barrier) -> list[Any]:
    """A player's three wagers at ``table``, sent at once when every table is ready; the
    replies."""
    import httpx
    from websockets.sync.client import connect

    r = httpx.post(f"http://{address}/api/tables/{table}/join", headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    replies = []
    with connect(f"ws://{address}/ws/{table}", additional_headers=headers) as ws:
        ws.recv(timeout=10)  # the state
        go.wait(timeout=30)
        for box in BOXES:
            ws.send(f'{{"type": "bet", "box": {box}, "amount": {WAGER}, "id": "b{box}"}}')
        while len(replies) < len(BOXES):
            m = json.loads(ws.recv(timeout=30))
            if m["type"] != "state":
                replies.append(m)
    return replies


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_tables_in_two_processes_never_pass_one_loss_limit(
    backend: str, tmp_path: Path
) -> None:
    """Three players, each wagering at both tables at once. Before: on PostgreSQL the limit
    was checked before the account's row was locked, so each process's wager passed it with
    the other's not yet committed."""
    with fresh_database(backend, tmp_path) as url:
        with Store(url) as store:
            people = Accounts(store, hasher("minimum"))
            people.create("tama", PASSWORD, Role.CASHIER)
            for name in PLAYERS:
                people.create(name, PASSWORD)
                people.cashier(name, Movement.DEPOSIT, 100_000, f"R-{name}", "tama")
                people.set_limit(name, Limit.LOSS_DAY, LIMIT)
        cwd = Path(__file__).resolve().parent.parent
        out: dict[tuple[str, str], list[Any]] = {}
        with ExitStack() as stack:
            a = stack.enter_context(_serve(cwd, url, "kauri"))
            b = stack.enter_context(_serve(cwd, url, "rimu"))
            go = threading.Barrier(2 * len(PLAYERS))

            def play(address: str, table: str, name: str) -> None:
                out[name, table] = _wagers(address, table, _login(address, name), go)

            threads = [
                threading.Thread(target=play, args=(address, table, name))
                for name in PLAYERS
                for address, table in ((a, "kauri"), (b, "rimu"))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        for name in PLAYERS:
            replies = out[name, "kauri"] + out[name, "rimu"]
            taken = [m for m in replies if m["type"] == "ok"]
            refused = [m for m in replies if m["type"] == "error"]
            assert all(m["code"] == "funds" and "loss-day limit" in m["error"] for m in refused)
            assert len(taken) * WAGER <= LIMIT, f"{name}: {len(taken)} wagers of {WAGER} taken"
            assert len(taken) * WAGER == LIMIT  # (and the limit is reached: not all refused)
        with Store(url) as store, store.read() as conn:
            for name in PLAYERS:
                assert -net_since(conn, name, "1970-01-01T00:00:00.000000Z") == LIMIT
            assert verify(store).ok


# ---------------------------------------------------------------------- the play clock


def test_the_reality_check_and_the_session_time_survive_a_restart(tmp_path: Path) -> None:
    """The play clock is the store's: a server started again (or another process) knows when
    the login's play began and when the last reality check was seen. Before: it lived in one
    process's memory, and a restart began it again."""
    from tests.test_accounts import Socket, _app, deposit, login, register
    from tests.test_server_helpers import serving

    db = tmp_path / "clock.db"
    with Store(f"sqlite:///{db}") as store:
        Accounts(store, hasher("minimum")).create("tama", PASSWORD, Role.CASHIER)
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        deposit(client, "ana", 50_000, "R-1")
        for kind, minutes in (("reality-minutes", 30), ("session-minutes", 60)):
            r = client.post("/api/limits", json={"kind": kind, "value": minutes}, headers=ana)
            assert r.status_code == 200, r.text
        client.post("/api/tables/kauri/join", headers=ana)
        sock = Socket(client, ana)
        assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"  # the clock starts
        sock.close()
    later = time.time() + 31 * 60
    with serving(_app(db)) as client:  # started again, 31 minutes on
        client.app.state.hub.door.clocks.clock = lambda: later  # type: ignore[attr-defined]
        sock = Socket(client, ana)  # the same login (its cookie): the same clock
        sock.n = 10  # (m1 was applied before the restart: the same id is a duplicate)
        r = sock.send(type="bet", box=2, amount=1000)
        assert r["code"] == "reality" and r["reality"]["minutes"] == 31, r
        assert sock.send(type="reality")["type"] == "ok"
        assert sock.send(type="bet", box=2, amount=1000)["type"] == "ok"
        sock.close()
    later += 30 * 60  # 61 minutes since the first wager: past the session's 60
    with serving(_app(db)) as client:
        client.app.state.hub.door.clocks.clock = lambda: later  # type: ignore[attr-defined]
        sock = Socket(client, ana)
        sock.n = 20
        r = sock.send(type="bet", box=3, amount=1000)
        assert r["code"] == "session" and "log in again" in r["error"], r
        sock.close()
        client.app.state.hub.door.clocks.clock = time.time  # type: ignore[attr-defined]
        sock = Socket(client, login(client, "ana"))  # a new login: a new session, clock
        sock.n = 30
        assert sock.send(type="bet", box=3, amount=1000)["type"] == "ok"
        sock.close()


def test_a_first_wager_waits_on_nothing_and_the_clock_is_the_wagers_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The login's first wager starts the clock in memory, touching the store not at all (a
    write there, under the table's lock, held every table of the process up); the store's
    clock is the wagers' own record, so nothing is written for it (the restart test above
    reads it back through a server)."""
    from pontoon.server.playclock import PlayClocks

    with Store(f"sqlite:///{tmp_path / 'c.db'}") as store:
        people = Accounts(store, hasher("minimum"))
        people.create("ana", PASSWORD)
        people.open_session("ana", 3600)
        people.set_limit("ana", Limit.REALITY, 30)
        here = PlayClocks(people)
        assert here.read("ana").start is None  # no wager yet in this login

        def touched(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the store was asked during the wager")

        with monkeypatch.context() as m:
            m.setattr(store, "write", touched)
            m.setattr(store, "read", touched)
            here.check("ana")  # the first wager: allowed, its clock started
            here.check("ana")
        started, since = here.known["ana"].start, here.known["ana"].since
        assert started is not None and people.play_clock("ana") == (None, None)
        assert here.read("ana").since == since  # kept until the wager's record is read
        here.clock = lambda: started + 31 * 60 + 1
        with pytest.raises(Exception, match="reality check: you have played 31 minutes"):
            here.check("ana")


def test_the_play_clocks_rows_are_no_limit_a_wager_is_checked_against(tmp_path: Path) -> None:
    """A login's first wager and a reality check seen are rows of ``play_limits`` but limit
    nothing: with only them, a wager is written unchecked (no row lock, no sums over the
    windows; before, every wager of a player who had played once paid for both) and they are
    not among the limits in force; a loss limit or a pause is."""
    from sqlalchemy import insert

    from pontoon.store import play_limits
    from pontoon.store.schema import play_limits as play_limits_table

    with Store(f"sqlite:///{tmp_path / 'l.db'}") as store:
        people = Accounts(store, hasher("minimum"))
        people.create("ana", PASSWORD)
        people.open_session("ana", 3600)
        people.acknowledge("ana", 30)
        with store.write() as conn:  # a first wager's row, as version 0.9.0 wrote it
            now = play_limits.chain.now()
            row = {"account": "ana", "kind": "play-start", "value": None}
            conn.execute(insert(play_limits_table), [row | {"effective_at": now, "at": now}])
        people.set_limit("ana", Limit.DEPOSIT_DAY, 50_000)  # a deposit's limit: not a wager's
        sql = store._sql

        def checked() -> bool:
            with store.read() as conn:
                return sql.one(conn, sql.has_limits, {"b_account": "ana"}) is not None

        assert not checked()
        assert people.limits("ana")["limits"] == {"deposit-day": 50_000}
        people.set_limit("ana", Limit.LOSS_DAY, 3000)
        assert checked()
