"""The pit boss's table list across processes: whichever process of several on one
store answers ``GET /api/pit/tables``, it lists every configured table once — its own, and
each other process's as that owner reports them (its players, the limits set through it) —
and a table whose owner does not answer is still listed, marked so, with what the store
knows of it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from pontoon.store.leases import holders, take
from pontoon.store.table_settings import record
from tests.test_leases import _until
from tests.test_store import fresh_database

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

TOKEN = "pit-test-supervisor-token"
PASSWORD = "correct horse battery"
TABLES = ["t1", "t2", "t3"]
GHOST = "ghost"  # held by a process that is gone, its lease not yet lapsed
LEASE = 5.0  # seconds: long, as no table changes hands here but by giving back (a stalled
# pass of a 1 s lease let the other process take a table between two looks)


@contextmanager
def _serve(cwd: Path, url: str) -> Iterator[str]:
    from tests.test_server_helpers import free_port, start_server

    port = free_port()
    options = ["--db", url, "--lease", str(LEASE), "--supervisor-token", TOKEN]
    options += ["--accounts", "--password-strength", "minimum", "--welcome", "100000"]
    for name in [*TABLES, GHOST]:
        options += ["--table", name]
    proc = start_server(cwd, port, options)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


def _pit(base: str, headers: dict[str, str], **query: str) -> list[dict[str, Any]]:
    import httpx

    r = httpx.get(f"{base}/api/pit/tables", params=query, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    listed: list[dict[str, Any]] = r.json()
    return listed


def _login(base: str, name: str) -> dict[str, str]:
    """The headers of ``name``'s logged-in requests (cookie and CSRF token)."""
    import httpx

    r = httpx.post(f"{base}/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"cookie": f"{COOKIE}={r.cookies[COOKIE]}", CSRF_HEADER: r.json()["csrf"]}


def _owners(url: str) -> dict[str, str]:
    with Store(url) as store:
        return {t: h.owner for t, h in holders(store).items()}


def test_every_process_lists_every_table_with_its_owners_figures(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import httpx

    from tests.test_server_helpers import free_port

    with fresh_database("sqlite", tmp_path) as url:
        with Store(url) as store:  # a lease of a process that died a moment ago
            people = Accounts(store, hasher("minimum"))
            people.create("pita", PASSWORD, Role.PITBOSS)
            people.create("ana", PASSWORD)
            gone = f"127.0.0.1:{free_port()}"  # nothing listens there
            assert take(store, GHOST, "gone:1:x", gone, 120.0) is not None
            record(store, "pita", "pitboss", GHOST, "limits 2000 40000")
            record(store, "pita", "pitboss", GHOST, "close")
        with ExitStack() as stack:
            at_a = stack.enter_context(_serve(tmp_path, url))
            at_b = stack.enter_context(_serve(tmp_path, url))
            # a gives b a table back once it sees b beating: a holds two, b one
            _until(lambda: len(set(_owners(url).values())) == 3, 30.0)
            pit = _login(at_a, "pita")  # the session's cookie serves at every process
            a_own = {t["table"] for t in _pit(at_a, pit, local="1")}
            b_own = {t["table"] for t in _pit(at_b, pit, local="1")}
            assert a_own and b_own and not a_own & b_own and a_own | b_own == set(TABLES)
            b_table = sorted(b_own)[0]
            # the pit boss sets limits through b; a player sits down there, through a
            changed = httpx.post(
                f"{at_b}/api/pit/tables/{b_table}",
                json={"table_min": 1000, "table_max": 30_000},
                headers=pit,
            )
            assert changed.status_code == 200, changed.text
            joined = httpx.post(f"{at_a}/api/tables/{b_table}/join", headers=_login(at_b, "ana"))
            assert joined.status_code == 200, joined.text
            shared = httpx.get(f"{at_a}/api/pit/tables", params={"token": TOKEN}, timeout=10)
            assert shared.status_code == 401  # accounts mode: the shared token opens nothing
            for listed in (_pit(at_a, pit), _pit(at_b, pit)):
                assert [t["table"] for t in listed] == [*TABLES, GHOST]  # each once
                by_name = {t["table"]: t for t in listed}
                b = by_name[b_table]
                assert (b["table_min"], b["table_max"]) == (1000, 30_000)
                assert b["players"] == ["ana"] and b["in_play"] is False and b["open"]
                for t in TABLES:
                    assert "unreachable" not in by_name[t], by_name[t]
                ghost = by_name[GHOST]
                assert ghost["elsewhere"] is True and ghost["unreachable"] is True
                assert ghost["open"] is False
                assert (ghost["table_min"], ghost["table_max"]) == (2000, 40_000)
                assert ghost["players"] == [] and ghost["in_play"] is None
            # what the pit asks another process for is the pit's too
            for who in ({}, _login(at_a, "ana")):
                asked = httpx.get(f"{at_a}/api/pit/tables", params={"local": "1"}, headers=who)
                assert asked.status_code in (401, 403), asked.text
