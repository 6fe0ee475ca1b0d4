"""The durable round store, on SQLite and, when ``PONTOON_TEST_POSTGRES_URL`` is
set (``.ci/postgres.sh``), on a real PostgreSQL server: every test that takes ``url`` runs on
both. The crash test is in ``test_store_crash.py``."""

from __future__ import annotations

import io
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from pontoon.cli import main
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store import chain
from pontoon.store.db import ConflictError, Store, StoreError
from pontoon.store.recorder import LedgerError, TableLog
from pontoon.store.schema import HEAD
from pontoon.store.secret import ShoeKeys
from pontoon.store.session import TerminalRecorder
from pontoon.store.verify import verify

SCENARIOS = Path(__file__).parent / "data" / "scenarios"
PG_ENV = "PONTOON_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]


@contextmanager
def fresh_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """A store URL on an empty database: a SQLite file, or a new PostgreSQL database that
    is dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    admin = os.environ.get(PG_ENV)
    if not admin:
        pytest.skip(f"{PG_ENV} is not set (run .ci/postgres.sh)")
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"pontoon_t_{uuid.uuid4().hex[:12]}"
    base = make_url(admin)
    conninfo = base.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as u:
        yield u


def cli(args: list[str], capsys: pytest.CaptureFixture[str], stdin: str = "") -> tuple[int, str]:
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        code = main(args)
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return code, out + err


def simple_move(rnd: Round) -> Move:
    """Hit below 17, else stand; double on 10-11; split aces and eights."""
    cur = rnd.current()
    assert cur is not None
    box, hand = cur
    wishes = ["stand", "hit"] if hand.total >= 17 else ["hit", "stand"]
    if hand.total in (10, 11):
        wishes.insert(0, "double")
    pair = len(hand.cards) == 2 and hand.cards[0].rank == hand.cards[1].rank
    if pair and hand.cards[0].rank in (1, 8):
        wishes.insert(0, "split")
    for action in wishes:
        if rnd.can(m := Move(action, box.number)):
            return m
    return rnd.legal_moves()[0]


def record_rounds(
    url: str,
    n: int,
    seed: int = 11,
    table: str = "t1",
    anchors: str | None = None,
    after: Callable[[int], None] | None = None,
) -> None:
    """``n`` rounds of two players on two boxes, committed action by action (the signed
    heads also to ``anchors``, else the default anchors file); ``after(number)`` is called
    once each round is over."""
    rules = load_rules("nz-pontoon")
    with Store(url, anchors=anchors) as store:
        log = TableLog(store, table)
        for p in ("ana", "ben"):
            log.deposit(p, 50_000)
        shoe = Shoe(rules, seeded(seed))
        for _ in range(n):
            rnd = Round(rules, shoe)
            rl = log.start(rnd)
            rnd.place_wager(1, "ana", 1000)
            rnd.place_wager(2, "ben", 500)
            rnd.place_wager(2, "ana", 500)
            rnd.deal()
            rl.commit(shoe)
            while not rnd.over:
                if rnd.follow_ups is not None or rnd.phase == "insurance":
                    rnd.apply_defaults()
                else:
                    rnd.apply(simple_move(rnd))
                rl.commit(shoe)
            if after is not None:
                after(rl.number)
        log.withdraw("ben")


# ---------------------------------------------------------------------------- schema
def test_a_store_of_the_first_schema_is_upgraded_and_keeps_its_rounds(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from alembic.config import Config
    from alembic.migration import MigrationContext
    from alembic.operations import Operations
    from alembic.script import ScriptDirectory

    from pontoon.store.db import MIGRATIONS

    with Store(url) as store, store.write() as conn:  # take the store back to revision 0001
        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        script = ScriptDirectory.from_config(cfg)
        ctx = MigrationContext.configure(
            conn, opts={"script": script, "fn": lambda rev, _: script._downgrade_revs("0001", rev)}
        )
        with Operations.context(ctx):
            ctx.run_migrations()
    with Store(url) as store:
        assert store.revision() == HEAD  # opening upgrades it
    code, _ = cli(
        [
            "round",
            str(SCENARIOS / "16_4_exposed_card_refused_by_all_becomes_dealer_second_card.json"),
            "--db",
            url,
        ],
        capsys,
    )
    assert code == 0
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 0 and out.startswith("intact"), out


def test_15_3_d_a_store_written_before_follow_was_a_field_reads_verifies_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store of schema 0004, written by the previous version: players behind following a
    split (15.3(d)) were recorded as ``detail`` "split/both" and "split/1". Opened now it is
    upgraded, its hash chain is intact once ``rekey`` has signed its heads (a store from
    before heads were signed is refused until then), and its rounds replay to the same money,
    the follower's choice read as the move's ``follow``."""
    import shutil

    from pontoon.replay import move_of, replay

    db = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "data" / "stores" / "v0004_followed_splits.db", db)
    url = f"sqlite:///{db}"
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 3 and "its head is not signed" in out, out
    assert cli(["rekey", "--db", url], capsys)[0] == 0
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 0 and out.startswith("intact"), out
    with Store(url) as store:
        assert store.revision() == HEAD
        rounds = [[s["event"] for s in store.round_events(n)] for n in (1, 2)]
    follows = [
        m.follow for e in rounds[1] if (m := move_of(e)) is not None and m.follow is not None
    ]
    assert follows == ["both", 1]  # ben covers both hands, cat's wager follows hand 1
    assert all(e.follow is None for r in rounds for e in r)  # as written, never rewritten
    for events in rounds:
        rebuilt = replay(events)
        assert rebuilt.over
        nets: dict[str, int] = {}
        for e in events:
            if e.kind in ("stake", "return", "pay") and e.player and e.amount:
                nets[e.player] = nets.get(e.player, 0) + (-1 if e.kind == "stake" else 1) * e.amount
        assert {p: rebuilt.net(p) for p in rebuilt.players} == nets
    code, out = cli(["replay", "--db", url, "--round", "2"], capsys)
    assert code == 0 and "split/1" in out and "split/both" in out


def test_rounds_with_irregularities_record_verify_and_replay(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = 0
    for f in sorted(SCENARIOS.glob("1[56]_*.json")):
        code, out = cli(["round", str(f), "--db", url], capsys)
        if code == 2:  # a refused procedure: nothing is recorded
            continue
        assert code == 0, (f.name, out)
        recorded += 1
        doc = json.loads(out)
        code, out = cli(["replay", "--db", url, "--round", str(recorded), "--json"], capsys)
        rep = json.loads(out)
        stored = [
            {k: v for k, v in e.items() if k not in ("seq", "at", "hash")} for e in rep["events"]
        ]
        assert stored == doc["events"], f.name  # who applied each procedure included
    assert recorded >= 20
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 0 and out.startswith("intact"), out


def test_schema_created_upgraded_and_matching_the_code(url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.config import Config
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from pontoon.store.db import MIGRATIONS
    from pontoon.store.schema import metadata

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_current_head() == HEAD
    with Store(url) as store:
        assert store.revision() == HEAD
        with store.read() as conn:
            if store.dialect == "sqlite":  # WAL, and each commit synced to disk
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
            else:
                assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if d[0] in ("add_table", "remove_table", "add_column")] == []
        assert not [d for d in diffs if d[0] == "remove_column"]
    with Store(url) as store:  # opening again changes nothing
        assert store.revision() == HEAD
        with store.write() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="newer than this pontoon"):
        Store(url)


# ---------------------------------------------------------------------------- recording
def test_rounds_recorded_action_by_action_verify_and_replay(url: str) -> None:
    record_rounds(url, 6)
    with Store(url) as store:
        report = verify(store)
        assert report.ok, report.problems
        assert report.rounds == 6
        bal = report.balances["t1"]
        # money is conserved: house + players + layout = what was put in less what left
        assert sum(v for k, v in bal.items() if k != chain.CASHIER) == -bal[chain.CASHIER]
        assert bal.get(chain.LAYOUT, 0) == 0 and "player:ben" not in bal
        from pontoon.store.show import replay_document

        doc = replay_document(store, 3)
        assert doc["reconstructed"] is True
        assert doc["round"]["status"] == "over"
        assert [e["kind"] for e in doc["events"]][:2] == ["rules", "wager"]
        assert doc["result"]["dealer"]["cards"]


def test_scenario_rounds_cli_round_db_rounds_replay(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = []
    for f in sorted(SCENARIOS.glob("*.json"))[:12]:
        code, out = cli(["round", str(f), "--db", url], capsys)
        if code == 2:  # a refusal scenario: nothing is recorded
            assert out.startswith("pontoon: illegal action"), out
            continue
        assert code == 0, out
        docs.append(json.loads(out))
    files = docs
    assert len(docs) >= 6
    assert [d["recorded"]["round"] for d in docs] == list(range(1, len(files) + 1))
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 0 and out.startswith("intact"), out
    for i, doc in enumerate(docs, 1):
        code, out = cli(["replay", "--db", url, "--round", str(i), "--json"], capsys)
        assert code == 0
        rep = json.loads(out)
        assert rep["reconstructed"] is True
        stored = [
            {k: v for k, v in e.items() if k not in ("seq", "at", "hash")} for e in rep["events"]
        ]
        assert stored == doc["events"]  # the round's whole log, in order (8.6)
        assert {p: v["net"] for p, v in doc["players"].items()} == rep["round"]["players"]
    code, out = cli(["replay", "--db", url, "--round", "1"], capsys)
    assert code == 0 and "Reconstruction (8.6)" in out and "No more bets" in out
    code, out = cli(["rounds", "--db", url, "--json"], capsys)
    listed = json.loads(out)["rounds"]
    assert [r["id"] for r in listed] == list(range(len(files), 0, -1))
    players = {p for d in docs for p in d["players"]}
    for p in players:
        for outcome, test in (("win", 1), ("lose", -1), ("push", 0)):
            code, out = cli(
                ["rounds", "--db", url, "--player", p, "--outcome", outcome, "--json"], capsys
            )
            got = {r["id"] for r in json.loads(out)["rounds"]}
            want = {
                i
                for i, d in enumerate(docs, 1)
                if p in d["players"]
                and (d["players"][p]["net"] > 0) - (d["players"][p]["net"] < 0) == test
            }
            assert got == want, (p, outcome)
    code, out = cli(
        ["rounds", "--db", url, "--since", "2000-01-01", "--until", "2000-01-02"], capsys
    )
    assert code == 0 and out.strip() == "No rounds."
    code, out = cli(["rounds", "--db", url, "--table", "scenario", "--limit", "2"], capsys)
    assert code == 0 and len(out.strip().splitlines()) == 3


def test_ledger_refuses_to_go_below_zero_and_writes_nothing(url: str) -> None:
    rules = load_rules("nz-pontoon")
    with Store(url) as store:
        log = TableLog(store, "t")
        log.deposit("ana", 700)
        rnd = Round(rules, Shoe(rules, seeded(1)))
        rl = log.start(rnd)
        rnd.place_wager(1, "ana", 1000)
        rnd.deal()
        head = log.head_seq
        with pytest.raises(LedgerError, match="player:ana holds 700"):
            rl.commit()
        assert log.head_seq == head
        assert TableLog(store, "t").head_seq == head  # nothing reached the store
        assert verify(store).ok


def test_a_second_writer_on_the_same_table_is_refused(url: str) -> None:
    with Store(url) as store:
        a, b = TableLog(store, "t"), TableLog(store, "t")
        a.deposit("ana", 100)
        with pytest.raises(ConflictError):
            b.deposit("ben", 100)
        b.reload()
        b.deposit("ben", 100)
        report = verify(store)
        assert report.ok and report.balances["t"] == {
            "cashier": -200,
            "player:ana": 100,
            "player:ben": 100,
        }


# ---------------------------------------------------------------------------- recovery
def _crash_mid_round(
    url: str,
    seed: int,
    rules_name: str = "nz-pontoon",
    keys: ShoeKeys | None = None,
    table: str = "terminal",
) -> tuple[int, Round]:
    """A terminal session at ``table`` that deals a round, commits, and 'dies' (its shoe
    sealed with ``keys``, by default the default key file's)."""
    rules = load_rules(rules_name)
    rec = TerminalRecorder(url, table, rules, "you", keys)
    try:
        rcv = rec.recover(100_000, seed)
        while True:
            rnd = Round(rules, rcv.shoe)
            rl = rec.start(rnd)
            rnd.place_wager(1, "you", 2000)
            rnd.deal()
            rl.commit(rcv.shoe)
            if not rnd.over:
                return rec.log.balance("you"), rnd
    finally:
        rec.close()


def test_an_interrupted_round_resumes_exactly_where_it_stopped(url: str) -> None:
    rules = load_rules("nz-pontoon")
    balance, crashed = _crash_mid_round(url, seed=5)
    rec = TerminalRecorder(url, "terminal", rules, "you")
    rcv = rec.recover(100_000, 5)
    assert rcv.resumed is not None and "reconstructed" in rcv.notes[0]
    rnd = rcv.resumed.round
    assert rnd.events == crashed.events
    assert rcv.bankroll == balance + 2000 - 0  # the money before the round
    # an uninterrupted twin: same seed, same rounds, same decisions
    twin_shoe = Shoe(rules, seeded(5))
    with Store(url) as store:
        from pontoon.store.show import list_rounds

        numbers = sorted(r["id"] for r in list_rounds(store))
    for _ in numbers[:-1]:
        t = Round(rules, twin_shoe)
        t.place_wager(1, "you", 2000)
        t.deal()
    twin = Round(rules, twin_shoe)
    twin.place_wager(1, "you", 2000)
    twin.deal()
    assert twin.events == rnd.events
    while not rnd.over:
        move = simple_move(rnd)
        rnd.apply(move)
        twin.apply(move)
        rcv.resumed.commit(rcv.shoe)
    assert rnd.events == twin.events  # the same cards, in the same order, after the crash
    rec.end()
    rec.close()
    with Store(url) as store:
        report = verify(store)
        assert report.ok, report.problems
        assert report.balances["terminal"].get("player:you", 0) == 0


def test_a_round_that_cannot_be_reconstructed_is_void_and_its_wagers_returned(
    url: str,
) -> None:
    balance, crashed = _crash_mid_round(url, seed=9)
    other = load_rules("nz-pontoon", {"decks": "8"})
    rec = TerminalRecorder(url, "terminal", other, "you")
    rcv = rec.recover(100_000, 9)
    assert rcv.resumed is None and "void" in rcv.notes[0]
    staked = -crashed.net("you")
    assert rcv.bankroll == balance + staked  # every wager still on the layout came back
    rec.close()
    with Store(url) as store:
        report = verify(store)
        assert report.ok, report.problems
        from pontoon.store.show import list_rounds, replay_document

        last = list_rounds(store)[0]
        assert last["status"] == "void"
        doc = replay_document(store, last["id"])
        kinds = [e["kind"] for e in doc["events"]]
        assert kinds[-1] == "end" and "void" in kinds and kinds.count("end") == 1
        assert doc["reconstructed"] is True  # the log up to the void replays


def test_recording_changes_nothing_the_player_sees(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = "\nh\ns\n\nd\n\ns\n\np\ns\ns\n\nh\nh\n"
    args = ["play", "--seed", "6", "--rounds", "5"]
    code, plain = cli(args, capsys, lines)
    assert code == 0
    code, recorded = cli([*args, "--db", url], capsys, lines)
    assert code == 0
    assert recorded == plain
    assert plain.count("The dealer shuffles the shoe") == 1  # each event told once


def test_play_records_every_round_and_recovers_its_money(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(
        ["play", "--db", url, "--seed", "1", "--rounds", "3"], capsys, "\nh\ns\n\ns\n\nh\nh\ns\n"
    )
    assert code == 0, out
    code, out = cli(["rounds", "--db", url, "--json"], capsys)
    rounds = json.loads(out)["rounds"]
    assert [r["number"] for r in rounds] == [3, 2, 1]
    assert all(r["status"] == "over" and set(r["players"]) == {"you"} for r in rounds)
    code, out = cli(["verify", "--db", url, "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["rounds"] == 3
    # the session cashed out: the table holds nothing of yours
    assert "player:you" not in report["balances"]["terminal"]
    code, out = cli(["play", "--db", url, "--seed", "1", "--rounds", "1"], capsys, "\ns\n")
    assert code == 0 and "Round 4" in out


def test_round_db_voids_an_unfinished_round_it_finds_first(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = load_rules("nz-pontoon")
    with Store(url) as store:
        log = TableLog(store, "scenario", top_up=True)
        rnd = Round(rules, Shoe(rules, seeded(3)))
        rl = log.start(rnd)
        rnd.place_wager(1, "cat", 2500)
        rl.commit()  # the wager is on the layout; the process 'dies' here
    code, out = cli(
        ["round", str(SCENARIOS / "13_7_obo_back_bettor_followed_both.json"), "--db", url], capsys
    )
    assert code == 0, out
    recorded = json.loads(out)["recorded"]
    assert recorded == {"table": "scenario", "round": 2, "voided": [1]}
    with Store(url) as store:
        report = verify(store)
        assert report.ok, report.problems
        assert "player:cat" not in report.balances["scenario"]  # returned, then cashed out
        from pontoon.store.show import replay_document

        doc = replay_document(store, 1)
        assert doc["round"]["status"] == "void" and doc["round"]["players"] == {"cat": 0}
        assert [e["kind"] for e in doc["events"]][-3:] == ["void", "return", "end"]


def test_export_jsonl_and_parquet(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record_rounds(url, 3)
    out_dir = tmp_path / "out"
    code, out = cli(["export", "--db", url, "--format", "jsonl", "--output", str(out_dir)], capsys)
    assert code == 0, out
    rows = {
        name: [json.loads(line) for line in (out_dir / f"{name}.jsonl").read_text().splitlines()]
        for name in ("rounds", "events", "ledger")
    }
    assert len(rows["rounds"]) == 3
    assert [e["seq"] for e in rows["events"]] == list(range(1, len(rows["events"]) + 1))
    assert all("state" not in e and "cards" not in e for e in rows["events"])
    money = [e for e in rows["events"] if e["kind"] in chain.MONEY_KINDS]
    assert [(x["seq"], x["amount"]) for x in rows["ledger"]] == [
        (e["seq"], e["amount"]) for e in money
    ]
    code, out = cli(
        ["export", "--db", url, "--format", "parquet", "--output", str(out_dir), "--json"], capsys
    )
    assert code == 0 and json.loads(out)["rows"] == {k: len(v) for k, v in rows.items()}
    import pyarrow.parquet as pq

    for name, want in rows.items():
        got = pq.read_table(out_dir / f"{name}.parquet").to_pylist()
        if name == "rounds":
            for g, w in zip(got, want, strict=True):
                assert g["players"] == w["players"] and g["id"] == w["id"]
        else:
            assert got == want


def test_store_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'e.db'}"
    for command in (
        ["verify"],
        ["rounds"],
        ["replay", "--round", "1"],
        ["export", "--output", str(tmp_path)],
    ):
        code, out = cli([*command, "--db", db], capsys)  # reading never creates a store
        assert (
            code == 2
            and out.strip()
            == f"pontoon: no store at {tmp_path / 'e.db'}: nothing has been recorded there"
        )
    assert not (tmp_path / "e.db").exists()
    Store(db).close()  # an empty store
    code, out = cli(["replay", "--db", db, "--round", "7"], capsys)
    assert code == 2 and out.strip() == "pontoon: no round 7 in the store"
    code, out = cli(["rounds", "--db", "mysql://x/y"], capsys)
    assert code == 2 and "unknown store URL" in out
    code, out = cli(["rounds", "--db", db, "--since", "yesterday"], capsys)
    assert code == 2 and "not a date" in out
    code, out = cli(["verify", "--db", db], capsys)
    assert code == 0 and out.startswith("intact: 0 table(s)")
    code, out = cli(["play", "--db", f"sqlite:///{tmp_path}/no/such/dir.db"], capsys)
    assert code == 2 and out.startswith("pontoon: cannot open the store")


# ---------------------------------------------------------------------------- tampering
def _tampered(url: str, sql: str | list[str], params: dict[str, Any] | None = None) -> str | None:
    """Run ``sql`` on the store behind pontoon's back; verify's first broken link, or None
    when the database itself refused the change."""
    from sqlalchemy.exc import IntegrityError

    with Store(url) as store:
        try:
            with store.write() as conn:
                for statement in [sql] if isinstance(sql, str) else sql:
                    conn.execute(text(statement), params or {})
        except IntegrityError:
            return None
        report = verify(store)
        assert not report.ok, f"not caught: {sql}"
        return report.problems[0]


def _one(url: str, sql: str) -> Any:
    with Store(url) as store, store.read() as conn:
        return conn.execute(text(sql)).scalar()


TAMPERS = [
    # (what, SQL, a word the first broken link must contain)
    ("a wager's amount", "UPDATE events SET amount = amount + 1 WHERE seq = :s", "event"),
    (
        "a card",
        "UPDATE events SET card = CASE WHEN card = 'AS' THEN 'KD' ELSE 'AS' END WHERE seq = :d",
        "event",
    ),
    (
        "a decision",
        "UPDATE events SET detail = CASE WHEN detail = 'hit' THEN 'stand' ELSE 'hit' END "
        "WHERE seq = :a",
        "event",
    ),
    ("a rule", "UPDATE events SET rule = '9.9' WHERE seq = :d", "event"),
    (
        "an event's time",
        "UPDATE events SET at = '2000-01-01T00:00:00.000000Z' WHERE seq = :d",
        "event",
    ),
    ("an event's round", "UPDATE events SET round_id = NULL WHERE seq = :d", "event"),
    ("a hash", "UPDATE events SET hash = :zeros WHERE seq = :d", "event"),
    ("the last event removed", "DELETE FROM events WHERE seq = :last", "head"),
    ("a middle event removed", "DELETE FROM events WHERE seq = :d", "missing"),
    ("a ledger amount", "UPDATE ledger SET amount = amount + 100 WHERE seq = :s", "ledger"),
    ("a ledger account", "UPDATE ledger SET to_account = 'house' WHERE seq = :s", "ledger"),
    ("a ledger entry removed", "DELETE FROM ledger WHERE seq = :s", "ledger"),
    ("a round's house net", "UPDATE rounds SET house = house + 1 WHERE id = 2", "round 2"),
    ("a round's status", "UPDATE rounds SET status = 'void' WHERE id = 2", "round 2"),
    ("a player's net", "UPDATE round_players SET net = net + 1 WHERE round_id = 2", "round 2"),
    ("the head", "UPDATE tables SET head_seq = head_seq - 1", "head"),
]


@pytest.mark.parametrize("what,sql,word", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampering_is_caught_and_named(
    url: str, what: str, sql: str, word: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record_rounds(url, 3)
    q = "SELECT MIN(seq) FROM events WHERE round_id = 2 AND kind = '{}'"
    params = {
        "s": _one(url, q.format("stake")),
        "d": _one(url, q.format("deal")),
        "a": _one(
            url,
            "SELECT MIN(seq) FROM events WHERE round_id = 2 AND kind = 'action' "
            "AND box IS NOT NULL",
        ),
        "last": _one(url, "SELECT MAX(seq) FROM events WHERE kind <> 'withdraw'"),
        "zeros": "0" * 64,
    }
    if "last event" in what:
        with Store(url) as store, store.write() as conn:  # the tail: the cash-out goes too
            conn.execute(text("DELETE FROM ledger WHERE seq > :last"), params)
            conn.execute(text("DELETE FROM events WHERE seq > :last"), params)
    first = _tampered(url, sql, params)
    if first is None:
        pytest.skip(f"the database itself refuses: {what}")
    assert word in first, first
    code, out = cli(["verify", "--db", url], capsys)
    assert code == 3 and out.startswith("BROKEN: "), out


def test_swapping_two_events_is_caught(url: str) -> None:
    """Order: two stored events exchanged (their positions, then their contents)."""
    record_rounds(url, 2)
    d = _one(url, "SELECT MIN(seq) FROM events WHERE kind = 'deal'")
    swap = [
        "UPDATE events SET seq = -1 WHERE seq = :a",
        "UPDATE events SET seq = :a WHERE seq = :b",
        "UPDATE events SET seq = :b WHERE seq = -1",
    ]
    first = _tampered(url, swap, {"a": d, "b": d + 1})
    assert first is not None and f"event {d}" in first
    with Store(url) as store:
        with store.write() as conn:
            for statement in swap:
                conn.execute(text(statement), {"a": d, "b": d + 1})
        assert verify(store).ok
    first = _tampered(
        url,
        [
            "UPDATE events SET card = 'XX' WHERE seq = :a",
            "UPDATE events SET card = (SELECT card FROM events WHERE seq = :a + 1) WHERE seq = :a",
            "UPDATE events SET card = :c WHERE seq = :a + 1",
        ],
        {"a": d, "c": _one(url, f"SELECT card FROM events WHERE seq = {d}")},
    )
    assert first is not None and f"event {d}" in first


def test_every_column_of_every_kind_of_row_is_covered(url: str) -> None:
    """Any stored value of an event, a ledger entry or a round, changed: caught."""
    record_rounds(url, 2)
    seq = _one(url, "SELECT MIN(seq) FROM events WHERE kind = 'pay' OR kind = 'collect'")
    changes = {
        "events": [
            "seq",
            "round_id",
            "at",
            "kind",
            "box",
            "hand",
            "player",
            "amount",
            "rule",
            "hash",
            "detail",
            "odds",
            "card",
        ],
        "ledger": [
            "seq",
            "round_id",
            "at",
            "kind",
            "player",
            "from_account",
            "to_account",
            "amount",
        ],
        "rounds": [
            "number",
            "status",
            "rules",
            "started_at",
            "ended_at",
            "first_seq",
            "last_seq",
            "house",
        ],
    }
    numeric = {
        "seq",
        "round_id",
        "box",
        "hand",
        "amount",
        "number",
        "first_seq",
        "last_seq",
        "house",
    }
    where = {"events": f"seq = {seq}", "ledger": f"seq = {seq}", "rounds": "id = 1"}
    caught = 0
    for table, columns in changes.items():
        for col in columns:
            if col in numeric:
                new = f"COALESCE({col}, 0) + 1"
            elif col == "status":
                new = "'void'"
            else:
                new = f"COALESCE({col}, '') || 'x'"
            with Store(url) as store:
                with store.read() as conn:
                    before = conn.execute(
                        text(f"SELECT {col} FROM {table} WHERE {where[table]}")
                    ).scalar()
                try:
                    with store.write() as conn:
                        conn.execute(text(f"UPDATE {table} SET {col} = {new} WHERE {where[table]}"))
                except Exception:  # the database itself refuses (a key, a constraint)
                    continue
                assert not verify(store).ok, f"{table}.{col} changed and not caught"
                caught += 1
                restore = f"{col} = :v"
                key = where[table]
                if col == "seq":
                    key = f"seq = {seq + 1}"
                with store.write() as conn:
                    conn.execute(text(f"UPDATE {table} SET {restore} WHERE {key}"), {"v": before})
                assert verify(store).ok, f"{table}.{col} not restored"
    assert caught >= 25


def test_every_migration_only_adds_so_the_previous_version_goes_on(url: str) -> None:
    """A rolling upgrade runs the previous version's processes on the store a new one has
    migrated (docs/operators/deploying.md, "Upgrading"). They go on only if each migration
    keeps every table and column they name and every column they do not know of fills
    itself: applied one at a time from an empty store, no migration drops or renames a
    table or column, makes a nullable column required, or adds to an existing table a
    required column without a default."""
    from alembic.config import Config
    from alembic.migration import MigrationContext
    from alembic.operations import Operations
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine, inspect

    from pontoon.store.db import MIGRATIONS

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    script = ScriptDirectory.from_config(cfg)
    order = [s.revision for s in reversed(list(script.walk_revisions()))]
    assert order[0] == "0001" and order[-1] == HEAD
    engine = create_engine(url)
    Columns = dict[str, dict[str, tuple[bool, bool]]]  # table -> column -> (nullable, default)

    def schema() -> Columns:
        with engine.connect() as conn:
            seen = inspect(conn)
            return {
                t: {
                    c["name"]: (bool(c["nullable"]), c.get("default") is not None)
                    for c in seen.get_columns(t)
                }
                for t in seen.get_table_names()
                if t != "alembic_version"
            }

    before: Columns = {}
    problems = []
    try:
        for rev in order:
            with engine.begin() as conn:
                ctx = MigrationContext.configure(
                    conn,
                    opts={"script": script, "fn": lambda r, _, to=rev: script._upgrade_revs(to, r)},
                )
                with Operations.context(ctx):
                    ctx.run_migrations()
            after = schema()
            for table, cols in before.items():
                if table not in after:
                    problems.append(f"{rev}: table {table} dropped")
                    continue
                for name, (nullable, _) in cols.items():
                    if name not in after[table]:
                        problems.append(f"{rev}: {table}.{name} dropped or renamed")
                    elif nullable and not after[table][name][0]:
                        problems.append(f"{rev}: {table}.{name} made required")
                for name, (nullable, default) in after[table].items():
                    if name not in cols and not nullable and not default:
                        problems.append(f"{rev}: {table}.{name} added, required, no default")
            before = after
    finally:
        engine.dispose()
    assert not problems, problems
    assert set(before) >= {"events", "tables", "accounts", "operator_calls"}
