"""Group commit: the writes of several tables in one transaction, on SQLite and,
when ``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL. A group gives the same records as the
tables written one by one; a refused batch is rolled back alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pontoon.events import Event
from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import ConflictError, Store, Written
from pontoon.store.group import GroupWriter
from pontoon.store.recorder import Prepared, RoundLog, TableLog
from pontoon.store.verify import verify
from tests.helpers import wait_until
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


@pytest.mark.parametrize("process", [False, True], ids=["thread", "process"])
def test_the_group_writer_shares_commits_between_waiting_tables(
    url: str,  # noqa: F811
    process: bool,
) -> None:
    """The same on the writer's thread and in the writer's process (whose CPU is counted)."""

    async def main(store: Store) -> GroupWriter:
        writer = GroupWriter(store, process=process)
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
        assert writer.stats()["cpu_seconds"] > 0
        writer.close()
        assert writer.process is None or writer.process._proc is None
        report = verify(store)
        assert report.ok and all(
            report.balances[f"g{i}"]["player:ana"] == 500_000 for i in range(20)
        )


def test_the_log_is_copied_back_on_a_thread_of_its_own_not_by_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: a store with ``own_checkpoints`` never copies its write-ahead log back after a
    commit (a commit would wait for the copy and an fsync of the database); the group writer
    does it on its checkpoint thread (the writer copies the pages committed meanwhile), and
    the log starts again from its beginning, so it stays small however long the server
    writes. A log the writer kept ahead of is truncated."""
    import pontoon.store.db as db
    import pontoon.store.writer as writer_module
    from pontoon.store.writer import Checkpoints

    def autocheckpoint(store: Store) -> int:
        raw = store.engine.raw_connection()
        try:
            return int(raw.cursor().execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        finally:
            raw.close()

    with Store(f"sqlite:///{tmp_path / 'plain.db'}") as plain:
        assert autocheckpoint(plain) == 1000  # SQLite's own: a commit copies the log back
        assert GroupWriter(plain).stats()["checkpoints"] == 0
    wal = tmp_path / "own.db-wal"

    async def main(store: Store, writer: GroupWriter) -> None:
        log = TableLog(store, "t1")
        for _ in range(400):
            p = log.prepare(_deposit("ana"))
            log.applied(p, await writer.append(p.batch))
            await asyncio.sleep(0)  # (a checkpoint done frees the thread for the next)
            # a copy under way is let finish: the full suite's load could starve its thread
            # for the whole loop (the log then kept every commit: not what this tests)
            running = writer._checkpoints._running if writer._checkpoints else None
            while running is not None and not running.done():
                await asyncio.sleep(0.001)  # (the poll's interval)

    monkeypatch.setattr(writer_module, "CHECKPOINT_SECONDS", 0.0)
    with Store(f"sqlite:///{tmp_path / 'own.db'}", own_checkpoints=True) as store:
        assert autocheckpoint(store) == 0
        writer = GroupWriter(store)
        asyncio.run(main(store, writer))
        writer.close()
        assert writer.stats()["checkpoints"] > 0
        # without the checkpoints the log would hold every commit's pages (> 1,200 frames:
        # 4.8 MB); with them it restarts, however late the copies come on a busy machine
        assert wal.stat().st_size < 1000 * 4096
        # the restart itself, step by step: a copy on the thread, then the writer copies the
        # last pages before its next commit, and that commit starts the log again
        own = Checkpoints(store)
        log = TableLog(store, "t3")
        for _ in range(3):
            p = log.prepare(_deposit("cat"))
            log.applied(p, own.append_many([p.batch])[0])  # type: ignore[arg-type]
            wait_until(lambda: own._running is None, 30, "the copy it began, done")
        frames, copied = store.checkpoint() or (0, 0)
        assert frames == copied and frames < 20  # one commit's pages, not the log's history
        own.close()
        monkeypatch.setattr(db, "WAL_FRAMES", 0)
        p = TableLog(store, "t2").prepare(_deposit("ben"))
        store.append_many([p.batch])
        assert store.checkpoint() == (0, 0) and wal.stat().st_size == 0  # truncated
        assert verify(store).ok


def test_pages_committed_during_a_copy_are_copied_by_the_writer_before_its_next_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite, own checkpoints: a commit made while the checkpoint thread copies leaves its
    pages for the writer, which copies them before its next transaction — so that
    transaction starts the log again. (The copy is held on its thread until the commit.)"""
    import threading

    import pontoon.store.writer as writer_module
    from pontoon.store.writer import Checkpoints

    monkeypatch.setattr(writer_module, "CHECKPOINT_SECONDS", 0.0)
    with Store(f"sqlite:///{tmp_path / 'own.db'}", own_checkpoints=True) as store:
        own = Checkpoints(store)
        real, held, who = store.checkpoint, threading.Event(), []

        def checkpoint() -> tuple[int, int] | None:
            who.append(threading.current_thread())
            if len(who) == 1:
                held.wait(10)  # the thread's first copy waits for the commit below
            return real()

        monkeypatch.setattr(store, "checkpoint", checkpoint)
        log = TableLog(store, "t1")

        def write() -> None:
            p = log.prepare(_deposit("ana"))
            log.applied(p, own.append_many([p.batch])[0])  # type: ignore[arg-type]

        write()  # its commit begins a copy on the thread
        write()  # committed while the copy runs: its pages are not in that copy
        held.set()
        # the copy is done: the writer is to copy the rest
        wait_until(lambda: own._finish, 30, "the copy done")
        write()  # the writer copies the last pages first
        assert who[0] is not threading.current_thread()
        assert who[1] is threading.current_thread()
        frames, copied = real() or (0, 0)
        assert frames == copied and frames < 20  # the log started again at that commit
        own.close()


def test_a_writer_process_that_dies_refuses_its_write_and_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's process dies while it holds a write: that write is refused (a StoreError:
    the table takes itself back from the store, which knows whether it was committed), and
    the next write has a new process; one found dead before a write is replaced first."""
    import os
    import signal

    import pontoon.store.writer as writer_module
    from pontoon.store.db import StoreError

    async def deposit(writer: GroupWriter, log: TableLog) -> None:
        p = log.prepare(_deposit("ana"))
        log.applied(p, await writer.append(p.batch))

    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        writer = GroupWriter(store, process=True)
        log = TableLog(store, "t1")
        asyncio.run(deposit(writer, log))
        proc = writer.process
        assert proc is not None and proc._proc is not None
        first = proc._proc.pid
        receive = writer_module._receive

        def killed_first(stream: object) -> object:
            os.kill(first, signal.SIGKILL)  # the write sent, never answered (or committed)
            return receive(stream)  # type: ignore[arg-type]

        monkeypatch.setattr(writer_module, "_receive", killed_first)
        os.kill(first, signal.SIGSTOP)  # (stopped first: it cannot answer before it dies)
        with pytest.raises(StoreError, match="writer process ended"):
            proc.append_many([log.prepare(_deposit("ana")).batch])
        monkeypatch.setattr(writer_module, "_receive", receive)
        asyncio.run(deposit(writer, log))  # a new process
        assert proc._proc is not None and proc._proc.pid != first
        second = proc._proc.pid
        os.kill(second, signal.SIGKILL)
        proc._proc.wait()
        asyncio.run(deposit(writer, log))  # found dead: replaced before the write
        assert proc._proc.pid not in (first, second)
        writer.close()
        report = verify(store)
        assert report.ok and report.balances["t1"]["player:ana"] == 300_000


@pytest.mark.integration
def test_the_writer_process_ends_with_its_parent_killed(tmp_path: Path) -> None:
    """A server killed with SIGKILL leaves no writer behind to commit after it (Linux)."""
    import os
    import signal
    import subprocess
    import sys

    code = (
        "import sys, time\n"
        "from pontoon.store.db import Store\n"
        "from pontoon.store.writer import WriterProcess\n"
        f"w = WriterProcess('sqlite:///{tmp_path / 's.db'}', None)\n"
        "print(w._proc.pid, flush=True)\n"
        "time.sleep(60)\n"  # (alive until it is killed)
    )
    Store(f"sqlite:///{tmp_path / 's.db'}").close()
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    wait_until(lambda: _ended(child), 30, "the writer ended with its parent")


def _ended(pid: int) -> bool:
    """Whether the process is gone, or ended (a zombie until init reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_writer_process_that_cannot_open_the_store_says_why(tmp_path: Path) -> None:
    from pontoon.store.db import StoreError
    from pontoon.store.writer import WriterProcess

    writer = WriterProcess(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}", None)
    with pytest.raises(StoreError, match="writer cannot open it"):
        writer.append_many([])  # (a server is not held up at start-up: the first write says)
    writer.close()
