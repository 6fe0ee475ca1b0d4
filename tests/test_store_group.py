"""Group commit (issue 7): the writes of several tables in one transaction, on SQLite and,
when ``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL. A group gives the same records as the
tables written one by one; a refused batch is rolled back alone."""

from __future__ import annotations

import asyncio

from pontoon.events import Event
from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import ConflictError, Store, Written
from pontoon.store.group import GroupWriter
from pontoon.store.recorder import Prepared, RoundLog, TableLog
from pontoon.store.verify import verify
from tests.test_store import simple_move, url  # noqa: F401 - the fixture: both back ends

TABLES = ("t1", "t2", "t3", "t4")


def _step(rnd: Round) -> None:
    if rnd.follow_ups is not None or rnd.phase == "insurance":
        rnd.apply_defaults()
    else:
        rnd.apply(simple_move(rnd))


def _kinds(store: Store, table: str) -> list[tuple[object, ...]]:
    from sqlalchemy import select

    from pontoon.store.schema import events

    with store.read() as conn:
        rows = conn.execute(
            select(events.c.seq, events.c.kind, events.c.box, events.c.card, events.c.amount)
            .where(events.c.table_id == table)
            .order_by(events.c.seq)
        )
        return [tuple(r) for r in rows]


def _play_grouped(store: Store, rounds: int) -> None:
    """``rounds`` rounds at each of the tables, every step of every table committed in one
    group (one transaction) with the other tables' steps."""
    rules = load_rules("nz-pontoon")
    logs = {t: TableLog(store, t) for t in TABLES}
    shoes = {t: Shoe(rules, seeded(i)) for i, t in enumerate(TABLES)}
    deposits = [logs[t].prepare(_deposit("ana")) for t in TABLES]
    written = store.append_many([p.batch for p in deposits])
    for log, p, w in zip(logs.values(), deposits, written, strict=True):
        assert isinstance(w, Written)
        log.applied(p, w)
    for _ in range(rounds):
        live: dict[str, RoundLog] = {}
        for t in TABLES:
            rnd = Round(rules, shoes[t])
            rnd.place_wager(1, "ana", 1000)
            rnd.deal()
            live[t] = logs[t].start(rnd)
        while live:
            group: list[tuple[RoundLog, Prepared]] = []
            for t, rl in live.items():
                p = rl.prepare(shoes[t])
                assert p is not None
                group.append((rl, p))
            results = store.append_many([p.batch for _, p in group])
            for (rl, p), w in zip(group, results, strict=True):
                assert isinstance(w, Written), w
                rl.applied(p, w)
            for t in list(live):
                if live[t].round.over:
                    del live[t]
                else:
                    _step(live[t].round)


def _deposit(player: str) -> list[tuple[Event, bool]]:
    return [(Event("deposit", player=player, amount=100_000, detail="buy-in"), False)]


def _play_alone(store: Store, rounds: int) -> None:
    rules = load_rules("nz-pontoon")
    for i, t in enumerate(TABLES):
        log = TableLog(store, t)
        log.deposit("ana", 100_000)
        shoe = Shoe(rules, seeded(i))
        for _ in range(rounds):
            rnd = Round(rules, shoe)
            rl = log.start(rnd)
            rnd.place_wager(1, "ana", 1000)
            rnd.deal()
            rl.commit(shoe)
            while not rnd.over:
                _step(rnd)
                rl.commit(shoe)


def test_a_group_commit_records_what_tables_written_alone_record(url: str) -> None:  # noqa: F811
    with Store(url) as store:
        _play_grouped(store, 5)
        report = verify(store)
        assert report.ok, report.problems
        assert report.rounds == 5 * len(TABLES)
        grouped = {t: _kinds(store, t) for t in TABLES}
    other = url.replace("store.db", "alone.db") if url.startswith("sqlite") else None
    if other is None:
        return  # the comparison below needs a second database: SQLite is enough
    with Store(other) as store:
        _play_alone(store, 5)
        assert {t: _kinds(store, t) for t in TABLES} == grouped


def test_a_refused_batch_is_rolled_back_alone(url: str) -> None:  # noqa: F811
    with Store(url) as store:
        logs = [TableLog(store, t) for t in TABLES]
        stale = TableLog(store, "t2")  # a second writer of t2, which will be behind
        logs[1].deposit("ben", 10)
        prepared = [log.prepare(_deposit("ana")) for log in logs]
        prepared[1] = stale.prepare(_deposit("ana"))
        results = store.append_many([p.batch for p in prepared])
        assert isinstance(results[1], ConflictError)
        assert all(isinstance(r, Written) for i, r in enumerate(results) if i != 1)
        report = verify(store)
        assert report.ok, report.problems
        assert report.balances["t1"]["player:ana"] == 100_000
        assert report.balances["t2"] == {"cashier": -10, "player:ben": 10}


def test_the_group_writer_shares_commits_between_waiting_tables(url: str) -> None:  # noqa: F811
    async def main(store: Store) -> GroupWriter:
        writer = GroupWriter(store)
        logs = [TableLog(store, f"g{i}") for i in range(20)]

        async def deposits(log: TableLog) -> None:
            for _ in range(5):
                p = log.prepare(_deposit("ana"))
                log.applied(p, await writer.append(p.batch))

        await asyncio.gather(*(deposits(log) for log in logs))
        return writer

    with Store(url) as store:
        writer = asyncio.run(main(store))
        assert writer.batches == 100 and writer.commits < 100
        report = verify(store)
        assert report.ok and all(
            report.balances[f"g{i}"]["player:ana"] == 500_000 for i in range(20)
        )
