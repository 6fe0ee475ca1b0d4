"""Several server processes on one store: each table is served by the process that
holds its lease, and a process that lost the lease can never write to the table again — the
fencing token each lease raises is checked by every write. An owner killed with SIGKILL is
replaced within a bounded time, its round resumed from the store; a stalled owner that wakes
up is refused, not believed, and stops serving the table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text

from pontoon.cli import main
from pontoon.store.db import ConflictError, Store
from pontoon.store.leases import holders, now_ms, release, renew, take
from pontoon.store.recorder import TableLog
from pontoon.store.schema import events, tables
from pontoon.store.verify import verify
from tests.test_store import BACKENDS, fresh_database

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lapsed_owner_can_never_write_again(backend: str, tmp_path: Path) -> None:
    with fresh_database(backend, tmp_path) as url, Store(url) as store:
        a = take(store, "kauri", "a", "10.0.0.1:8000", 3.0)
        assert a is not None and a.fence == 1
        assert take(store, "kauri", "b", "10.0.0.2:8000", 3.0) is None  # a holds it
        assert renew(store, "a", {"kauri": 1}, 3.0)["kauri"].fence == 1
        mine = TableLog(store, "kauri", fence=a.fence)
        mine.deposit("ana", 500)
        b = take(store, "kauri", "b", "10.0.0.2:8000", 3.0, now=a.until + 10_000)  # a lapsed
        assert b is not None and b.fence == 2
        assert renew(store, "a", {"kauri": 1}, 3.0) == {}  # a learns it lost the table
        with pytest.raises(ConflictError, match="lease"):
            mine.deposit("ana", 500)  # the stale owner's write: refused
        mine.reload()  # even at the table's new head, its token is the old one
        with pytest.raises(ConflictError):
            mine.deposit("ana", 500)
        TableLog(store, "kauri", fence=b.fence).deposit("ana", 700)
        assert holders(store)["kauri"].owner == "b"
        release(store, "b")  # b stops: the table may be taken at once
        assert "kauri" not in holders(store)
        c = take(store, "kauri", "c", "10.0.0.3:8000", 3.0)
        assert c is not None and c.fence == 3
        assert TableLog(store, "kauri").balance("ana") == 1200  # nothing of a's second write
        assert verify(store).ok
        with store.read() as conn:  # each event keeps the token it was written under
            fences = conn.execute(select(events.c.fence).order_by(events.c.seq)).scalars()
            assert list(fences) == [1, 2]
        with store.write() as conn:  # as if a had written after b took the table
            conn.execute(insert(events).values(_copy(conn, 2) | {"seq": 3, "fence": 1}))
        problems = verify(store).problems
        assert any("token 1 after token 2" in p for p in problems), problems


def test_a_transaction_left_by_a_stalled_owner_is_ended_and_its_table_taken(
    tmp_path: Path,
) -> None:
    """PostgreSQL: an owner stopped inside a write (SIGSTOP, a frozen VM) holds its rows'
    locks — the table's row, which taking its lease updates. A serving store
    (``stalled_after``) has the database end a write transaction left idle that long, so its
    table can be taken while the owner is still stopped; the owner, woken, finds it ended. Its
    reads are not cut off (a long report)."""
    import threading

    from sqlalchemy.exc import DBAPIError

    with (
        fresh_database("postgresql", tmp_path) as url,
        Store(url, stalled_after=0.5) as mine,
        Store(url) as other,
    ):
        a = take(mine, "kauri", "a", "10.0.0.1:8000", 0.3)
        assert a is not None
        got: list[Any] = []
        taking = threading.Thread(  # (a's lease lapses while b waits for the row)
            target=lambda: got.append(take(other, "kauri", "b", "x:1", 1.0))
        )
        with pytest.raises(DBAPIError, match="idle-in-transaction"), mine.write() as conn:
            start, start_ms = time.monotonic(), now_ms()  # (before the row is taken)
            conn.execute(tables.update().where(tables.c.id == "kauri").values(head_seq=0))
            taking.start()  # a stops here, holding the table's row
            taking.join(10.0)
            assert not taking.is_alive(), "the stalled owner's locks were never let go"
            assert got[0] is not None and got[0].fence == a.fence + 1
            # the lease's second counted from when b had the row, after a's 0.5 s: not from
            # when b asked for it
            assert got[0].until - start_ms >= 1400
            assert 0.4 < time.monotonic() - start < 5.0
            conn.execute(select(tables.c.fence))  # a wakes: its transaction is gone
        with mine.read() as conn:
            conn.execute(select(tables.c.fence))
            time.sleep(0.8)  # the clock under test: a read held past stalled_after
            assert conn.execute(select(tables.c.fence)).scalar_one() == a.fence + 1


def _copy(conn: Any, seq: int) -> dict[str, Any]:
    row = conn.execute(select(events).where(events.c.seq == seq)).one()
    return dict(row._mapping)


LEASE = 1.0  # seconds: a lapsed owner's tables are taken within LEASE + LEASE / 3


@contextmanager
def _server(cwd: Path, url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    from tests.test_server_helpers import free_port, start_server

    port = free_port()
    options = ["--db", url, "--table", "kauri", "--lease", str(LEASE)]
    options += ["--supervisor-token", "lease-test-supervisor", "--bankroll", "100000"]
    proc = start_server(cwd, port, options)
    try:
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        if proc.poll() is None:  # stopped as an operator stops it: it lets go of its leases
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


def _serves(base: str) -> bool:
    """Whether the process at ``base`` holds table kauri (another may answer for it, passing
    the request on to the owner)."""
    import httpx

    listed = httpx.get(base + "/api/tables", timeout=5).json()
    return any(t["name"] == "kauri" and not t.get("elsewhere") for t in listed)


def _until(test: Any, seconds: float) -> float:
    """How long ``test()`` took to come true (fails after ``seconds``)."""
    start = time.monotonic()
    while not test():
        assert time.monotonic() - start < seconds, "not within the time"
        time.sleep(0.05)  # (the poll's interval)
    return time.monotonic() - start


def _state(base: str, token: str) -> dict[str, Any]:
    import httpx

    state: dict[str, Any] = httpx.get(f"{base}/api/tables/kauri/state?token={token}").json()
    return state


def _head(url: str) -> int:
    """The table's last event, as the store has it."""
    with Store(url) as store, store.read() as conn:
        return int(conn.execute(select(tables.c.head_seq)).scalar_one())


def _playing(base: str, token: str) -> bool:
    return _state(base, token)["phase"] == "playing"


def _say(ws: Any, **msg: Any) -> dict[str, Any]:
    """Send ``msg``; the reply (the states on the way skipped)."""
    ws.send(json.dumps(msg | {"id": f"m{time.monotonic_ns()}"}))
    while (m := json.loads(ws.recv(timeout=10)))["type"] == "state":
        pass
    reply: dict[str, Any] = m
    return reply


def _stall(url: str, pid: int) -> None:
    """Stop the process ``pid`` (SIGSTOP). On PostgreSQL, inside a write of its own: its
    lease's renewal, held up by the test's lock on the table's row until the process is
    stopped — the renewal then goes through, and the transaction stays open, holding the row,
    until the database ends it (``stalled_after``). On SQLite, outside any: one stopped inside
    a write holds the file's lock, which nothing can take from it, and every other process
    waits till it wakes (docs/operators/deploying.md); the test's write lock keeps it out of one."""
    with Store(url) as store, store.write() as conn:
        if store.dialect == "postgresql":
            conn.execute(select(tables.c.id).where(tables.c.id == "kauri").with_for_update())
            _until(lambda: _renewal_waits(store), 5.0)
        os.kill(pid, signal.SIGSTOP)


def _renewal_waits(store: Store) -> bool:
    """Whether a lease's renewal waits for a lock (PostgreSQL)."""
    with store.read() as conn:
        waiting = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()"
                " AND query LIKE 'UPDATE tables SET lease_until%'"
            )
        ).scalar_one()
    return bool(waiting)


@pytest.mark.parametrize("backend", BACKENDS)  # (PostgreSQL's kills: tests/test_chaos.py too)
def test_a_killed_owner_is_replaced_and_a_stalled_one_is_refused(
    backend: str, tmp_path: Path
) -> None:
    pytest.importorskip("fastapi")
    import httpx
    from websockets.sync.client import connect

    with fresh_database(backend, tmp_path) as url:
        with _server(tmp_path, url) as (a, at_a), _server(tmp_path, url) as (b, at_b):
            assert _serves(at_a) and not _serves(at_b)  # the first to start holds the table
            join = httpx.post(at_a + "/api/tables/kauri/join", json={"name": "ana"})
            token = join.json()["token"]
            with connect(f"ws{at_a[4:]}/ws/kauri?token={token}") as ws:
                for _ in range(6):  # until a round is in play (not ended by a pontoon at once)
                    assert _say(ws, type="bet", box=1, amount=500)["type"] == "ok"
                    assert _say(ws, type="deal")["type"] == "ok"
                    if _playing(at_a, token):
                        break
                assert _playing(at_a, token)
            a.kill()  # SIGKILL: its lease lapses, b takes the table
            took = _until(lambda: _serves(at_b), 10.0)
            # (the margin is for a loaded host: docs/operators/deploying.md, Failover)
            assert took <= LEASE + LEASE / 3 + 3.0, took
            state = _state(at_b, token)  # the round, resumed where a left it
            assert state["phase"] == "playing" and state["awaiting"]["box"] == 1
            assert any("resumed from the store" in n for n in state["notes"])
            legal = state["legal"][0]  # a decision ana may make
            move = {"type": "act", "action": legal["action"], "box": legal["box"]}
            with _server(tmp_path, url) as (_, at_c):
                assert not _serves(at_c)  # b holds the table
                with connect(f"ws{at_b[4:]}/ws/kauri?token={token}") as ws:
                    ws.recv(timeout=10)  # the state
                    written = _head(url)
                    _stall(url, b.pid)  # b stalls; its lease lapses
                    _until(lambda: _serves(at_c), 5.0)
                    ws.send(json.dumps(move | {"id": "sent-to-a-stalled-owner"}))
                    os.kill(b.pid, signal.SIGCONT)  # b wakes up with a decision to apply
                    _until(lambda: not _serves(at_b), 5.0)  # and stops serving the table
                assert _head(url) == written  # b's write was refused
                after = _state(at_c, token)
                assert after["awaiting"] == state["awaiting"]
                assert after["events"] == state["events"]
                with connect(f"ws{at_c[4:]}/ws/kauri?token={token}") as ws:
                    ws.recv(timeout=10)
                    assert _say(ws, **move)["type"] == "ok"  # c writes it
        with Store(url) as store:
            assert take(store, "kauri", "d", "x:1", 1.0) is not None  # c let go as it stopped
        assert main(["verify", "--db", url]) == 0


@pytest.mark.parametrize("backend", ["sqlite"])  # PostgreSQL's: tests/test_chaos.py
def test_processes_share_the_tables_and_bring_clients_to_their_owner(
    backend: str, tmp_path: Path
) -> None:
    """``serve --processes 2``: the tables are spread between the two, a client reaches every
    table through the one public port — its connection handed to the owner by the parent,
    none passed on from one child to the other (each child's ``/api/stats``) —, a child killed
    is replaced, its tables taken by the other and then shared again, and a stop lets go of
    every lease. The public name is the only ``--allowed-host``: a request passed on reaches
    the owner at the address it advertises, which it answers to as well."""
    pytest.importorskip("fastapi")
    import httpx
    from websockets.sync.client import connect

    from pontoon.server.handoff import OWNERS_SECONDS
    from tests.test_server_helpers import free_port, start_server

    names = ["t1", "t2", "t3", "t4"]
    port = free_port()
    base = f"http://localhost:{port}"
    with fresh_database(backend, tmp_path) as url:
        options = ["--db", url, "--processes", "2", "--lease", str(LEASE)]
        options += ["--supervisor-token", "lease-test-supervisor", "--allowed-host", "localhost"]
        for name in names:
            options += ["--table", name]
        parent = start_server(tmp_path, port, options)
        try:
            _until(lambda: all(_serves_table(base, t) for t in names), 10.0)
            # two tables each (each takes its part, 1/2 of them, and no more while both live)
            _until(lambda: _shares(url) == [2, 2], 15.0)
            # a clock, not an event: the parent's last read of the holders is older than
            # OWNERS_SECONDS by then, so it reads them again at the next connection
            time.sleep(2 * OWNERS_SECONDS)
            for k, t in enumerate(names * 2):  # each connection handed to the owner: it plays
                joined = httpx.post(f"{base}/api/tables/{t}/join", json={"name": f"p{k}"})
                token = joined.json()["token"]
                with connect(f"ws{base[4:]}/ws/{t}?token={token}", origin=base) as ws:
                    assert json.loads(ws.recv(timeout=10))["table"] == t
                    box = 1 + k // len(names)
                    assert _say(ws, type="bet", box=box, amount=500)["type"] == "ok"
            with Store(url) as store:
                children = {h.address for h in holders(store).values()}
            for address in children:  # (asked at each child's own address)
                passed = httpx.get(f"http://{address}/api/stats").json()["passed_on"]
                assert passed.get("websocket", 0) == 0, (address, passed)
            with Store(url) as store:
                victim = holders(store)["t1"]
            pid = int(victim.owner.split(":")[-2])
            os.kill(pid, signal.SIGKILL)
            _until(lambda: _holder(url, "t1") not in (None, victim.owner), 5.0)
            _until(lambda: _serves_table(base, "t1"), 5.0)
            _until(lambda: len(_children(parent.pid)) == 2, 10.0)  # started again
            _until(lambda: _shares(url) == [2, 2], 15.0)  # and given its part back
        finally:
            parent.terminate()
            parent.wait(30)
            assert parent.stdout is not None
            parent.stdout.close()
        with Store(url) as store:
            assert holders(store) == {}  # every lease let go
        assert main(["verify", "--db", url]) == 0


def _serves_table(base: str, table: str) -> bool:
    import httpx

    return httpx.get(f"{base}/api/tables/{table}/state", timeout=5).status_code == 200


def _shares(url: str) -> list[int]:
    """How many tables each process holds, fewest first."""
    with Store(url) as store:
        owners = [h.owner for h in holders(store).values()]
    return sorted(owners.count(o) for o in set(owners))


def _holder(url: str, table: str) -> str | None:
    with Store(url) as store:
        found = holders(store).get(table)
    return None if found is None else found.owner


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--lease", "0.5"], "--lease must be 1 to 60 seconds"),
        (["--advertise", "10.0.0.5:8000"], "--advertise goes with --lease"),
        (["--processes", "0"], "--processes must be 1 to 64"),
        (["--processes", "2", "--login-hours", "0"], "--login-hours must be more than 0"),
        (["--processes", "2", "--welcome", "-1"], "--welcome must be 0 to"),
    ],
)
def test_bad_lease_options_are_refused_in_one_line(
    options: list[str], said: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Refused before anything starts or is made: under ``--processes`` by the parent, not
    by children started again and again."""
    pytest.importorskip("fastapi")
    db = tmp_path / "unused.db"
    assert main(["serve", "--db", f"sqlite:///{db}", *options]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err
    assert not db.exists()


def test_a_process_over_its_part_gives_back_every_idle_table_over_it_at_once(
    tmp_path: Path,
) -> None:
    """A process joins one that holds all eight tables: at the next pass the first gives back
    the four over its part (those between rounds) at once, and the newcomer takes them at its
    own next pass (a process joining 330 tables got its share one table a pass, minutes)."""
    import asyncio

    from pontoon.server.tenure import Leasing, Tenure

    names = [f"t{i}" for i in range(8)]
    busy = {"t0"}  # a round is on there: kept however many are over the part
    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        opened: dict[str, list[str]] = {"a": [], "b": []}

        def tenure(owner: str) -> Tenure:
            return Tenure(
                store,
                Leasing(f"127.0.0.1:{len(owner)}", 30.0, owner),
                names,
                lambda name, fence: opened[owner].append(name),
                lambda name: opened[owner].remove(name),
                lambda name: name not in busy,
            )

        a = tenure("a")
        a.start()
        assert sorted(a.held) == names
        b = tenure("b")
        b.start()  # all held: it takes none yet
        assert not b.held
        asyncio.run(a.tend())  # two alive: a's part is four
        assert len(a.held) == 4 and "t0" in a.held
        asyncio.run(b.tend())
        assert sorted(b.held) == sorted(opened["b"]) and len(b.held) == 4
        assert set(a.held).isdisjoint(b.held) and sorted(opened["a"]) == sorted(a.held)
        # a brings a client of a table it gave back to b, though its last read of the
        # holders (before it gave them back) named itself (a join was answered 503 there)
        for name in b.held:
            assert asyncio.run(a.address_of(name)) == "127.0.0.1:1"
            assert asyncio.run(b.address_of(name)) is None


def test_processes_print_the_supervisors_token_they_made(tmp_path: Path) -> None:
    """``serve --processes 2`` with no token given makes one for every child, and prints it
    on stderr as one process does: the supervisor can use it."""
    pytest.importorskip("fastapi")
    from select import select as readable

    import httpx

    from tests.test_server_helpers import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PONTOON_SUPERVISOR_TOKEN"}
    cmd = ["serve", "--port", str(port), "--processes", "2", "--table", "t1"]
    cmd += ["--db", f"sqlite:///{tmp_path / 'store.db'}", "--lease", str(LEASE)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pontoon.cli", *cmd],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        ready, _, _ = readable([proc.stderr], [], [], 15.0)
        assert ready, "nothing printed on stderr"
        line = proc.stderr.readline()
        assert line.startswith("supervisor token: "), line
        token = line.split(": ", 1)[1].strip()
        base = f"http://127.0.0.1:{port}"
        _until(lambda: _answers(base + "/api/tables"), 15.0)
        _until(lambda: _answers(f"{base}/api/pit/tables?token={token}"), 10.0)
        assert httpx.get(f"{base}/api/pit/tables?token=not-{token}").status_code in (401, 403)
    finally:
        proc.terminate()
        proc.wait(30)
        assert proc.stderr is not None
        proc.stderr.close()


def _answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.parametrize("backend", BACKENDS)
def test_leases_are_timed_by_the_databases_clock_not_a_hosts(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process on a host whose clock is a day fast takes, renews and reads leases by the
    database's clock: it cannot take a lease the database's clock says another still holds,
    sees it held, and renews its own to end when the others see it end."""
    import pontoon.store.leases as leases

    with fresh_database(backend, tmp_path) as url, Store(url) as store:
        a = take(store, "kauri", "a", "10.0.0.1:8000", 30.0)
        assert a is not None
        real = time.time
        monkeypatch.setattr(leases.time, "time", lambda: real() + 86_400)  # b's host
        assert take(store, "kauri", "b", "10.0.0.2:8000", 30.0) is None  # a holds it still
        assert holders(store)["kauri"].owner == "a"
        renewed = renew(store, "a", {"kauri": a.fence}, 30.0)["kauri"]
        assert abs(renewed.until - (real() * 1000 + 30_000)) < 60_000
