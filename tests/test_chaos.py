"""Chaos: three server processes on one PostgreSQL store play six tables by lease
while bots play them through whichever process they reach; every few seconds one process is
killed with SIGKILL and another started in its place, or stopped (SIGSTOP) for two leases and
woken — its tables taken meanwhile, what it held locked let go by the database. Every decision
a player was told was done is in the store, at most one per table and kill or stall more (the
one in flight); no table was ever written by two owners — each event carries the fencing
token it was written under, and ``pontoon verify`` checks that a table's tokens never go back;
every table plays on to the end. ``PONTOON_CHAOS_SECONDS`` (default 16) sets how long the bots
play."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

import httpx
import websockets
from sqlalchemy import func, select

from pontoon.cli import main
from pontoon.store.db import Store
from pontoon.store.schema import events, lease_log
from tests.helpers import wait_until
from tests.test_server_crash import _play
from tests.test_server_helpers import free_port, start_server
from tests.test_store import fresh_database

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

TABLES = [f"c{i}" for i in range(1, 7)]
SECONDS = float(os.environ.get("PONTOON_CHAOS_SECONDS", "16"))


def _options(url: str) -> list[str]:
    options = ["--db", url, "--lease", "1", "--bankroll", "10000000"]
    options += ["--supervisor-token", "chaos-test-supervisor"]
    for t in TABLES:
        options += ["--table", t]
    return options


def _spawn(cwd: Path, url: str) -> tuple[subprocess.Popen[str], int]:
    """A process started, not waited for (the players find it when it listens)."""
    port = free_port()
    cmd = [sys.executable, "-m", "pontoon.cli", "serve", "--port", str(port), *_options(url)]
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True), port


@pytest.mark.slow
def test_processes_killed_at_random_lose_nothing_and_never_share_a_table(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        servers = []
        for _ in range(3):
            port = free_port()
            servers.append((start_server(tmp_path, port, _options(url)), port))
        rng = random.Random(20)
        acked = {t: 0 for t in TABLES}
        at_last_kill: dict[str, int] = {}
        kills = stalls = 0
        try:
            wait_until(
                lambda: all(_served(servers[0][1], t) for t in TABLES),
                timeout=30,
                what="every table taken by a process",
            )
            tokens = {t: _join(servers[rng.randrange(3)][1], t) for t in TABLES}

            async def player(t: str, stop: float) -> None:
                """Plays through a live process; when it dies, through another. After
                ``stop``, on until its table has had a decision acknowledged since the last
                kill or stall (for at most 30 s more): the test ends on the table's
                progress, not on a clock a loaded host may outrun."""
                while True:
                    now = time.monotonic()
                    if now >= stop and (acked[t] > at_last_kill.get(t, -1) or now > stop + 30):
                        return
                    port = rng.choice([p for s, p in servers if s.poll() is None])
                    with suppress(websockets.InvalidStatus):  # not listening yet, say
                        await _play(port, t, tokens[t], acked, max(stop, now + 1))
                    await asyncio.sleep(0.2)  # (a client's pause before it tries again)

            async def chaos(stop: float) -> None:
                """A process killed, then one stalled for two leases, and so on."""
                nonlocal kills, stalls
                while True:  # the last 4 s before the end at least: time to play on
                    await asyncio.sleep(2.5 + rng.random())  # the chaos's own clock
                    if time.monotonic() + 4 > stop:
                        return
                    i = rng.randrange(3)
                    if kills > stalls:  # stopped, perhaps inside a write; woken, refused
                        servers[i][0].send_signal(signal.SIGSTOP)
                        await asyncio.sleep(2.0)  # the stall under test: two leases
                        servers[i][0].send_signal(signal.SIGCONT)
                        stalls += 1
                    else:
                        servers[i][0].send_signal(signal.SIGKILL)
                        servers[i][0].wait(10)
                        kills += 1
                        servers[i] = _spawn(tmp_path, url)
                    at_last_kill.update(acked)

            async def run() -> None:
                stop = time.monotonic() + SECONDS
                await asyncio.gather(chaos(stop), *(player(t, stop) for t in TABLES))

            asyncio.run(run())
        finally:
            for proc, _ in servers:
                proc.send_signal(signal.SIGCONT)  # (one stalled when a test failed)
                proc.terminate()
            for proc, _ in servers:
                proc.wait(20)
                assert proc.stdout is not None
                proc.stdout.close()
        assert kills >= 1 and stalls >= 1  # (a third comes when the pauses were short)
        assert all(acked[t] > at_last_kill[t] for t in TABLES), (at_last_kill, acked)  # play on
        with Store(url) as store, store.read() as conn:
            n = func.count()
            rows = conn.execute(
                select(events.c.table_id, n)
                .where(events.c.kind == "action", events.c.player.is_not(None))
                .group_by(events.c.table_id)
            ).all()
            recorded = {t: 0 for t in TABLES} | {str(t): int(c) for t, c in rows}
            owners = conn.execute(select(lease_log.c.table_id, n).group_by(lease_log.c.table_id))
            takes = {str(t): int(c) for t, c in owners}
        for t in TABLES:  # told means recorded; at most the one in flight per kill more
            most = acked[t] + kills + stalls
            assert acked[t] > 0 and acked[t] <= recorded[t] <= most, (acked, recorded)
        assert sum(takes.values()) > len(TABLES)  # tables changed hands
        assert main(["verify", "--db", url]) == 0  # each table's tokens in order, one owner each


def _join(port: int, table: str) -> str:
    """Joined through any process (the owner makes the session); 503 while the table moves
    between processes (they share the tables out as they start): a client tries again."""
    deadline = time.monotonic() + 10
    while True:
        r = httpx.post(f"http://127.0.0.1:{port}/api/tables/{table}/join", json={"name": table})
        if r.status_code != 503 or time.monotonic() > deadline:
            assert r.status_code == 200, r.text
            return str(r.json()["token"])
        time.sleep(0.1)  # (a client's pause before it tries again)


def _served(port: int, table: str) -> bool:
    url = f"http://127.0.0.1:{port}/api/tables/{table}/state"
    return httpx.get(url, timeout=5).status_code == 200
