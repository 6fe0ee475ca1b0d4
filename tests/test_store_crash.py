"""Crash safety: a recording ``pontoon play --db`` is killed with SIGKILL at random
moments, over many rounds, and started again each time. Afterwards:

- ``pontoon verify`` passes: every hash chain and the ledger are intact, money is conserved;
- no round is lost: every round whose result was shown is stored, finished, with that result;
- no round is half recorded or settled twice: every round is over (none left open), replays
  to its own log, and the rounds dealt one after another from the recorded shoe are exactly
  the rounds an uninterrupted seeded shoe deals with the same decisions;
- rounds interrupted in the middle were resumed, not voided.

Runs on SQLite and, with ``PONTOON_TEST_POSTGRES_URL``, on PostgreSQL.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pontoon.events import Event
from pontoon.money import parse_dollars
from pontoon.replay import replay
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import Store
from pontoon.store.show import list_rounds
from pontoon.store.verify import verify
from tests.helpers import wait_until
from tests.test_store import BACKENDS, fresh_database

pytestmark = pytest.mark.integration  # pontoon play in a process, killed

SEED = 7
KILLS = 10
HEADER = re.compile(r"Round (\d+)( \(resumed\))?")
NET = re.compile(r"^Round net ([+-]?)\$([\d,]+\.\d\d)")
TOKENS = ["", "", "h", "h", "s", "s", "d", "p", "r"]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as u:
        yield u


def _command(url: str) -> list[str]:
    return [sys.executable, "-m", "pontoon.cli", "play", "--db", url, "--seed", str(SEED)]


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": root, "PYTHONUNBUFFERED": "1", "COLUMNS": "100"}


def _asleep(pid: int) -> bool:
    """Whether the process's main thread is asleep (state S in ``/proc``: blocked, as on a
    read of its input)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "S"


def run_killed(
    url: str, rng: random.Random, early: bool, at_decision: bool = False
) -> tuple[list[str], bool]:
    """Start a session on piped input, SIGKILL it at a random moment after its first round
    has begun (``early``: at any moment from its start, recovery included; ``at_decision``:
    while it waits for a decision, so in the middle of a round); its complete output lines,
    and whether it was still running when killed."""
    lines = "".join(rng.choice(TOKENS) + "\n" for _ in range(4000))
    if at_decision:
        lines = ""  # answers are given one by one below
    proc = subprocess.Popen(
        _command(url),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    out: list[str] = []
    started = threading.Event()
    deciding = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)
            if HEADER.search(line):
                started.set()
            if "<- to act" in line:
                deciding.set()
        started.set()

    def feed() -> None:
        assert proc.stdin is not None
        if at_decision:  # stdin stays open: the session must wait, not see its end
            return
        try:
            proc.stdin.write(lines)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    reader = threading.Thread(target=read, daemon=True)
    writer = threading.Thread(target=feed, daemon=True)
    reader.start()
    writer.start()
    if at_decision:  # wager with Enter until a box waits for a decision, then kill
        assert proc.stdin is not None
        for _ in range(20):
            proc.stdin.write("\n")
            proc.stdin.flush()
            if deciding.wait(10):
                break
        assert deciding.is_set(), "no decision was asked for"
        # in the middle of a round: killed once it waits on its input (asleep in the read)
        wait_until(lambda: _asleep(proc.pid), 30, "the session blocked on its input")
    elif early:
        time.sleep(rng.uniform(0.05, 1.0))  # the moment of the kill, at random: under test
    else:
        assert started.wait(60), "the session did not start"
        time.sleep(rng.uniform(0.0, 0.4))  # the moment of the kill, at random: under test
    running = proc.poll() is None
    proc.kill()  # SIGKILL; nothing to do when the session has already ended and been reaped
    proc.wait(30)
    reader.join(30)
    writer.join(30)
    err = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in err, err
    return [line for line in out if line.endswith("\n")], running


def shown_results(lines: list[str]) -> tuple[dict[int, int], int]:
    """Round number -> the net shown for it; and how many rounds were resumed."""
    shown: dict[int, int] = {}
    number, resumed = None, 0
    for line in lines:
        if (h := HEADER.search(line)) and "─" in line:
            number = int(h.group(1))
            resumed += bool(h.group(2))
        elif (m := NET.match(line)) and number is not None:
            cents = parse_dollars(m.group(2).replace(",", ""))
            assert number not in shown, f"round {number} shown twice"
            shown[number] = -cents if m.group(1) == "-" else cents
    return shown, resumed


def replay_on_one_shoe(rounds: list[list[Event]]) -> None:
    """The stored rounds, dealt in order from one uninterrupted seeded shoe with the same
    wagers and decisions, are the stored rounds: resumption lost, repeated or reordered no
    card."""
    shoe = Shoe(load_rules("nz-pontoon"), seeded(SEED))
    for events in rounds:
        assert replay(events, shoe).events == events


def test_sigkill_at_random_moments_loses_and_repeats_nothing(url: str) -> None:
    rng = random.Random(int(os.environ.get("PONTOON_CRASH_SEED", "2024")))
    shown: dict[int, int] = {}
    resumed = killed = 0
    for i in range(KILLS):
        lines, running = run_killed(url, rng, early=i % 4 == 3, at_decision=i % 4 == 1)
        killed += running
        results, n = shown_results(lines)
        assert not set(results) & set(shown), "a round's result shown by two processes"
        shown |= results
        resumed += n
    # a last session on no input at all: it finishes an unfinished round (16.6) and leaves
    last = subprocess.run(
        _command(url), input="", capture_output=True, text=True, env=_env(), timeout=60
    )
    assert last.returncode == 0, last.stderr
    results, n = shown_results(last.stdout.splitlines(keepends=True))
    shown |= results
    resumed += n
    assert killed >= KILLS // 2, "most kills should land in a running session"

    with Store(url) as store:
        report = verify(store)
        assert report.ok, report.problems
        rounds = sorted(list_rounds(store, table="terminal"), key=lambda r: r["number"])
        assert rounds, "nothing was recorded"
        assert [r["number"] for r in rounds] == list(range(1, len(rounds) + 1))
        assert {r["status"] for r in rounds} == {"over"}, "a round left open or voided"
        nets = {r["number"]: r["players"]["you"] for r in rounds}
        for number, net in shown.items():  # write-ahead: what was shown was stored
            assert nets[number] == net, f"round {number}: shown {net}, stored {nets[number]}"
        events = [[s["event"] for s in store.round_events(r["id"])] for r in rounds]
        balances = report.balances["terminal"]
    replay_on_one_shoe(events)
    # the money: everything you brought, less what you took away, is what the rounds made
    assert balances.get("player:you", 0) == 0 and balances.get("layout", 0) == 0
    # (verify leaves out accounts at zero: when the rounds made nothing, so did the cashier)
    assert -balances.get("cashier", 0) == balances.get("house", 0)
    assert balances.get("house", 0) == -sum(nets.values())
    print(f"rounds {len(rounds)} shown {len(shown)} resumed {resumed} killed {killed}")  # -s
    assert resumed >= 1, "no kill landed in the middle of a round: nothing was resumed"
