"""The round store's cost: events written durably per second, and the milliseconds a round's
recording adds, on SQLite (a file, WAL, synchronous=FULL) and, when PONTOON_TEST_POSTGRES_URL
is set, PostgreSQL.

Rounds are played as ``pontoon play --db`` records them: one box, a simple strategy, one
transaction per action (wagers and deal, each decision) with the shoe's state. Each figure is
also measured for single-event transactions (one deposit each: one durable commit per event).

Then 20 tables play together, each step of every table in one group commit
(``Store.append_many``, as the table server writes under load).

Prints a line per back end, then one JSON object as the last line, also appended to
bench/results/store.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/store.py [--quick]
"""

from __future__ import annotations

import argparse
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
from pontoon.vocab import Action, TurnKind


def step(rnd: Round) -> None:
    """One step of a simple play: the round's defaults for insurance and players behind, else
    stand from 17, hit below (:meth:`Round.to_act` says which)."""
    turn = rnd.to_act()
    if turn is None or turn.kind is not TurnKind.DECIDE or turn.box is None:
        rnd.apply_defaults()
        return
    hand = rnd.boxes[turn.box].hands[turn.hand or 0]
    hit_first = hand.total < 17
    for action in (Action.HIT, Action.STAND) if hit_first else (Action.STAND, Action.HIT):
        if rnd.can(m := Move(action, turn.box)):
            rnd.apply(m)
            return
    rnd.apply(rnd.legal_moves()[0])


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
            step(rnd)
            if rl is not None:
                rl.commit(shoe)
                commits += 1
        events += len(rnd.events)
    return time.perf_counter() - start, events, commits


def grouped(store: Store, rules: RuleSet, tables: int, rounds: int) -> tuple[float, int, int]:
    """Seconds, events and transactions for ``rounds`` rounds at each of ``tables`` tables,
    each step of every table written in one group commit with the other tables' steps (as
    the table server does under load)."""
    prefix = uuid.uuid4().hex[:6]
    logs = [TableLog(store, f"g{prefix}-{t}") for t in range(tables)]
    for log in logs:
        log.deposit("p", 10**12)
    shoes = [Shoe(rules, seeded(t)) for t in range(tables)]
    commits = 0
    start = time.perf_counter()
    for _ in range(rounds):
        live = []
        for log, shoe in zip(logs, shoes, strict=True):
            rnd = Round(rules, shoe)
            rl = log.start(rnd)
            rnd.place_wager(1, "p", rules.table_min)
            rnd.deal()
            live.append((rl, shoe))
        while live:
            prepared = [(rl, rl.prepare(shoe)) for rl, shoe in live]
            written = store.append_many([p.batch for _, p in prepared if p is not None])
            commits += 1
            for (rl, p), w in zip(prepared, written, strict=True):
                assert p is not None and not isinstance(w, Exception), w
                rl.applied(p, w)
            live = [(rl, shoe) for rl, shoe in live if not rl.round.over]
            for rl, _ in live:
                rnd = rl.round
                step(rnd)
    events = sum(log.head_seq - 1 for log in logs)  # all but each table's deposit
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
        group_s, group_events, group_commits = grouped(store, rules, 20, max(1, rounds // 20))
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
        "group_tables": 20,
        "group_events_per_second": round(group_events / group_s),
        "group_ms_per_commit": round(group_s * 1000 / group_commits, 2),
        "verify_events_per_second": round(report.events / checked),
    }
    print(
        f"{name:<10} {out['events_per_second']:>7} events/s in {out['transactions_per_second']} "
        f"commits/s; +{out['ms_added_per_round']} ms a round; "
        f"{out['single_event_commits_per_second']} one-event commits/s; 20 tables in group "
        f"commits: {out['group_events_per_second']} events/s, {out['group_ms_per_commit']} ms a "
        "commit; verify "
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
    from record import emit  # bench/record.py, beside this file

    emit(results)


if __name__ == "__main__":
    main()
