"""A `pontoon serve` playing several tables at once — their writes in shared group commits —
is killed with SIGKILL while decisions are on their way, and started again: every decision a
player was told was done is in the store, at most the one in flight per table more, nothing
twice; `pontoon verify` passes; and the players go on with their old tokens."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import httpx
import websockets

from pontoon.cli import main
from tests.test_server_helpers import free_port, start_server

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

TABLES = ("t1", "t2", "t3", "t4")


def _start(cwd: Path, port: int) -> subprocess.Popen[str]:
    options = ["--supervisor-token", "crash-test-supervisor", "--bankroll", "10000000"]
    for t in TABLES:
        options += ["--table", t]
    return start_server(cwd, port, options)


async def _play(port: int, table: str, token: str, acked: dict[str, int], stop: float) -> None:
    """One player at one table: bets, deals and decides (hit below 17) until ``stop`` or
    until the connection breaks; counts the decisions acknowledged."""
    rng = random.Random(table)
    url = f"ws://127.0.0.1:{port}/ws/{table}?token={token}"
    try:
        async with websockets.connect(url) as ws:
            state: dict[str, Any] = json.loads(await ws.recv())
            if state["type"] != "state":  # refused (the table moving, say): try again later
                return
            n = 0
            while time.monotonic() < stop:
                if state["phase"] in ("idle", "over"):
                    msg: dict[str, Any] = {"type": "bet", "box": 1, "amount": 500}
                elif state["phase"] == "betting":
                    msg = {"type": "deal"}
                elif state["legal"]:
                    acts = {m["action"]: m for m in state["legal"]}
                    aw = state["awaiting"] or {}
                    hand = state["boxes"][0]["hands"][aw.get("hand") or 0]
                    want = "hit" if hand["total"] < 17 else "stand"
                    move = acts.get("no-insurance") or acts.get(want) or state["legal"][0]
                    msg = {"type": "act", "action": move["action"], "box": 1}
                else:
                    state = json.loads(await ws.recv())
                    continue
                n += 1
                msg["id"] = f"{table}-{time.monotonic_ns()}-{n}"
                await asyncio.sleep(rng.uniform(0, 0.01))  # a player's own pace, at random
                await ws.send(json.dumps(msg))
                while (m := json.loads(await ws.recv()))["type"] == "state":
                    state = m
                if m["type"] == "ok" and msg["type"] == "act":
                    acked[table] += 1
                elif m["type"] == "error":  # refused, nothing changed: look again
                    await ws.send(json.dumps({"type": "state"}))
                    while (m := json.loads(await ws.recv()))["type"] != "state":
                        pass
                    state = m
    except (websockets.ConnectionClosed, websockets.InvalidMessage, OSError):
        pass  # the server was killed (in the handshake: closed before its response)


def _recorded(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT table_id, count(*) FROM events WHERE kind = 'action' AND player IS NOT NULL "
        "GROUP BY table_id"
    ).fetchall()
    con.close()
    return {t: 0 for t in TABLES} | {str(t): int(n) for t, n in rows}


@pytest.mark.slow
def test_a_sigkilled_server_lost_no_acknowledged_decision(tmp_path: Path) -> None:
    port = free_port()
    proc = _start(tmp_path, port)
    acked = {t: 0 for t in TABLES}
    try:
        tokens = {
            t: httpx.post(
                f"http://127.0.0.1:{port}/api/tables/{t}/join", json={"name": f"p{t}"}
            ).json()["token"]
            for t in TABLES
        }

        async def run() -> None:
            stop = time.monotonic() + 120  # (the kill ends the play well before)
            tasks = [asyncio.create_task(_play(port, t, tokens[t], acked, stop)) for t in TABLES]
            # the kill lands in the middle of play: once the tables are playing (an event: on
            # a loaded host 2 s of the clock saw 8 decisions), at a random moment after
            deadline = time.monotonic() + 60
            while sum(acked.values()) <= 20:
                assert time.monotonic() < deadline, f"the tables are not playing: {acked}"
                await asyncio.sleep(0.05)  # (the poll's interval)
            await asyncio.sleep(random.random())  # the moment of the kill, at random
            proc.send_signal(signal.SIGKILL)
            await asyncio.gather(*tasks)

        asyncio.run(run())
    finally:
        proc.kill()
        proc.wait(20)
    db = tmp_path / "pontoon.db"
    recorded = _recorded(db)
    assert sum(acked.values()) > 20  # the tables were playing when the kill came
    for t in TABLES:  # told means recorded; at most the one decision in flight more
        assert acked[t] <= recorded[t] <= acked[t] + 1, (t, acked, recorded)
    proc = _start(tmp_path, port)
    try:
        again = {t: 0 for t in TABLES}

        async def resume() -> None:
            stop = time.monotonic() + 2
            await asyncio.gather(*(_play(port, t, tokens[t], again, stop) for t in TABLES))

        asyncio.run(resume())
        assert all(n > 0 for n in again.values()), again  # the old tokens play on
    finally:
        proc.terminate()
        proc.wait(20)
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0
