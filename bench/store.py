"""The round store's cost: events written durably per second, and the milliseconds a round's
recording adds, on SQLite (a file, WAL, synchronous=FULL) and, when PONTOON_TEST_POSTGRES_URL
is set, PostgreSQL.

Rounds are played as ``pontoon play --db`` records them: one box, a simple strategy, one
transaction per action (wagers and deal, each decision) with the shoe's state. Each figure is
also measured for single-event transactions (one deposit each: one durable commit per event).

Prints a line per back end, then one JSON object as the last line (INTERFACES.md, Benchmarks).
Run: .venv/bin/python bench/store.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.verify import verify


def choose(rnd: Round) -> Move:
    cur = rnd.current()
    assert cur is not None
    box, hand = cur
    for action in ("stand", "hit") if hand.total >= 17 else ("hit", "stand"):
        if rnd.can(m := Move(action, box.number)):
            return m
    return rnd.legal_moves()[0]


def play(rules: RuleSet, rounds: int, log: TableLog | None) -> tuple[float, int, int]:
    """Seconds, events and transactions for ``rounds`` rounds (recorded when ``log``)."""
    shoe = Shoe(rules, seeded(1))
    events = commits = 0
    if log is not None:
        log.deposit("p", 10**12)
    start = time.perf_counter()
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        rl = log.start(rnd) if log is not None else None
        rnd.place_wager(1, "p", rules.table_min)
        rnd.deal()
        if rl is not None:
            rl.commit(shoe)
            commits += 1
        while not rnd.over:
            if rnd.follow_ups is not None or rnd.phase == "insurance":
                rnd.apply_defaults()
            else:
                rnd.apply(choose(rnd))
            if rl is not None:
                rl.commit(shoe)
                commits += 1
        events += len(rnd.events)
    return time.perf_counter() - start, events, commits


def single(log: TableLog, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        log.deposit("q", 1)
    return time.perf_counter() - start


def measure(name: str, url: str, rules: RuleSet, rounds: int, singles: int) -> dict[str, Any]:
    with Store(url) as store:
        table = f"bench-{uuid.uuid4().hex[:8]}"
        log = TableLog(store, table)
        bare, _, _ = play(rules, rounds, None)
        seconds, events, commits = play(rules, rounds, log)
        one = single(log, singles)
        start = time.perf_counter()
        report = verify(store)
        checked = time.perf_counter() - start
        assert report.ok, report.problems
    out = {
        "rounds": rounds,
        "events": events,
        "transactions": commits,
        "events_per_second": round(events / seconds),
        "transactions_per_second": round(commits / seconds),
        "ms_added_per_round": round((seconds - bare) * 1000 / rounds, 3),
        "single_event_commits_per_second": round(singles / one),
        "verify_events_per_second": round(report.events / checked),
    }
    print(
        f"{name:<10} {out['events_per_second']:>7} events/s in {out['transactions_per_second']} "
        f"commits/s; +{out['ms_added_per_round']} ms a round; "
        f"{out['single_event_commits_per_second']} one-event commits/s; verify "
        f"{out['verify_events_per_second']} events/s"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--rules", default="nz-pontoon")
    args = parser.parse_args()
    rules = load_rules(args.rules)
    rounds, singles = (60, 100) if args.quick else (600, 1000)
    results: dict[str, Any] = {"bench": "store", "rules": rules.name, "cores": 1}
    with tempfile.TemporaryDirectory(dir=Path.cwd(), prefix=".bench-store-") as tmp:
        results["sqlite"] = measure("sqlite", f"sqlite:///{tmp}/bench.db", rules, rounds, singles)
    pg = os.environ.get("PONTOON_TEST_POSTGRES_URL")
    if pg:
        results["postgresql"] = measure("postgresql", pg, rules, rounds, singles)
    else:
        print("postgresql: skipped (set PONTOON_TEST_POSTGRES_URL, e.g. from .ci/postgres.sh)")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
