"""The insider: someone who can write the database (a DBA, a backup job, a compromised host)
but holds neither the shoe key nor the record key. Each attack is made as such a person would
make it — plain SQL, the documented hash formula, copies of rows taken earlier — and each must
be refused when the table opens (nothing dealt) or caught by ``pontoon verify`` (exit 3), with
the anchors file where nothing inside the database can remember. On SQLite and, when
``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, text, update

from pontoon.cards import Card
from pontoon.errors import InputError
from pontoon.shoe import Shoe
from pontoon.store import chain
from pontoon.store.db import Store, event_of
from pontoon.store.heads import Head, digest, sign
from pontoon.store.recorder import TableLog
from pontoon.store.schema import events, metadata, shoe_states, signatures, tables
from pontoon.store.shoestate import snapshot
from pontoon.store.signing import RecordKeys, generate
from pontoon.store.verify import verify
from tests.test_store import cli, record_rounds
from tests.test_store import url as url  # the fixture: both back ends


def _open(url: str, table: str = "t1") -> TableLog:
    with Store(url) as store:
        return TableLog(store, table)


def _refused(url: str, table: str = "t1") -> str:
    """The one line the table's opening is refused with (nothing dealt)."""
    with pytest.raises(InputError) as info:
        _open(url, table)
    message = str(info.value)
    assert "\n" not in message and repr(table) in message, message
    return message


def _broken(url: str, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    code, out = cli(["verify", "--db", url, *more], capsys)
    assert code == 3 and out.startswith("BROKEN: "), out
    return out.splitlines()[0]


def _sql(url: str, statements: list[Any]) -> None:
    with Store(url) as store, store.write() as conn:
        for s in statements:
            conn.execute(text(s) if isinstance(s, str) else s)


def _row(url: str, table: str = "t1") -> dict[str, Any]:
    """The table's row and its shoe's row, as the database holds them."""
    with Store(url) as store, store.read() as conn:
        head = conn.execute(select(tables).where(tables.c.id == table)).one()._asdict()
        shoe = conn.execute(select(shoe_states).where(shoe_states.c.table_id == table)).first()
    return head | {"state": shoe and shoe.state, "state_seq": shoe and shoe.seq}


def _put_back(url: str, saved: dict[str, Any], table: str = "t1") -> None:
    """The table's shoe and head rows as they were in ``saved`` (the insider kept a copy)."""
    _sql(
        url,
        [
            update(shoe_states)
            .where(shoe_states.c.table_id == table)
            .values(state=saved["state"], seq=saved["state_seq"]),
            update(tables)
            .where(tables.c.id == table)
            .values(shoe_seq=saved["shoe_seq"], shoe_drawn=saved["shoe_drawn"]),
        ],
    )


def _rehash(url: str, table: str = "t1") -> None:
    """Every hash of the table's chain recomputed by the documented formula, and its head set
    to the last: what a writer without the record key can do after changing an event."""
    with Store(url) as store, store.write() as conn:
        rows = conn.execute(select(events).where(events.c.table_id == table).order_by("seq"))
        prev, seq = chain.GENESIS, 0
        for row in list(rows):
            rid = None if row.round_id is None else int(row.round_id)
            prev = chain.link(prev, table, int(row.seq), rid, str(row.at), event_of(row))
            seq = int(row.seq)
            conn.execute(
                update(events)
                .where(events.c.table_id == table, events.c.seq == seq)
                .values(hash=prev)
            )
        conn.execute(
            update(tables).where(tables.c.id == table).values(head_seq=seq, head_hash=prev)
        )


# ---------------------------------------------------------------------------- the shoe
def test_a_clear_stacked_shoe_is_never_dealt(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    record_rounds(url, 2)

    class Stacker:  # "shuffles" the black aces to the top, as a cheat would
        def shuffle(self, cards: list[Card]) -> None:
            cards.sort(key=lambda c: c.code in ("AS", "AC"))  # (the next card is the last)

    stacked = Shoe(_rules(), Stacker())
    stacked.start_round()
    assert {c.code for c in stacked.remaining[:10]} == {"AS", "AC"}
    _sql(
        url,
        [
            update(shoe_states)
            .where(shoe_states.c.table_id == "t1")
            .values(state=snapshot(stacked)),
            update(tables).where(tables.c.id == "t1").values(shoe_drawn=0),
        ],
    )
    assert "not the one the house sealed" in _refused(url)
    code, out = cli(["play", "--db", url, "--table", "t1", "--rounds", "1"], capsys, "q\n")
    assert code == 2 and out.count("\n") == 1 and "'t1'" in out and "AS" not in out, out
    assert "'t1'" in _broken(url, capsys)


def test_the_drawn_count_changed_is_refused(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    record_rounds(url, 2)
    drawn = _row(url)["shoe_drawn"]
    _sql(url, [update(tables).where(tables.c.id == "t1").values(shoe_drawn=drawn + 3)])
    assert "shoe is not where the signed head says" in _refused(url)
    assert "'t1'" in _broken(url, capsys)


def test_a_sealed_shoe_of_another_table_is_refused(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record_rounds(url, 2, table="t1")
    record_rounds(url, 2, seed=5, table="t2")
    mine, other = _row(url, "t1"), _row(url, "t2")
    _put_back(url, other, "t1")  # t2's shoe, where it stands, into t1
    assert "'t1'" in _refused(url)
    _put_back(url, mine | {"state": other["state"]}, "t1")  # only t2's sealed text
    assert "not the one the house sealed" in _refused(url)
    assert "'t1'" in _broken(url, capsys)


def test_an_older_moment_of_the_same_table_is_refused(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record_rounds(url, 1)
    earlier = _row(url)  # the insider's copy of the rows after round 1
    record_rounds(url, 2, seed=12)
    _put_back(url, earlier)
    assert "shoe is not where the signed head says" in _refused(url)
    assert "'t1'" in _broken(url, capsys)


# ---------------------------------------------------------------------------- history
def test_an_event_altered_and_the_chain_recomputed_is_caught(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record_rounds(url, 3)
    _sql(
        url,
        [
            "UPDATE events SET at = '2024-01-01T00:00:00.000000Z' WHERE round_id = 2",
            "UPDATE rounds SET started_at = '2024-01-01T00:00:00.000000Z', "
            "ended_at = '2024-01-01T00:00:00.000000Z' WHERE id = 2",
        ],
    )
    _rehash(url)
    with Store(url) as store:  # the plain chain holds: only the signature tells
        problems = verify(store).problems
    assert problems and all("hash does not match" not in p for p in problems), problems
    assert "signed head is event" in _refused(url) or "signed" in _refused(url)
    first = _broken(url, capsys)
    assert "'t1'" in first and "signed" in first, first


def test_events_removed_from_the_end_are_caught(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Cut short with the plain hashes: the signed head says more; cut short with an older
    signed head put back (the careless insider leaves the later signatures): the store's own
    signatures say more; with those removed too, only the anchors can tell."""
    anchors = tmp_path / "anchors.jsonl"
    with Store(url, anchors=str(anchors)) as store:
        log = TableLog(store, "t1")
        log.deposit("ana", 1000)
        earlier = _row(url)
        old = earlier["signed"]
        log.deposit("ana", 2000)
        log.deposit("ana", 3000)
    cut = earlier["head_seq"]
    _sql(
        url,
        [
            f"DELETE FROM ledger WHERE table_id = 't1' AND seq > {cut}",
            f"DELETE FROM events WHERE table_id = 't1' AND seq > {cut}",
        ],
    )
    _rehash(url)
    assert "'t1'" in _refused(url)
    _sql(url, [update(tables).where(tables.c.id == "t1").values(signed=old)])
    _open(url)  # a consistent older head: it opens...
    first = _broken(url, capsys)  # ...but the later signatures are still in the store
    assert "'t1'" in first and "the store's signatures hold its head" in first, first
    _sql(url, [delete(signatures).where(signatures.c.id != old)])
    code, _ = cli(["verify", "--db", url], capsys)
    assert code == 0  # nothing in the database remembers
    first = _broken(url, capsys, "--anchors", str(anchors))
    assert "'t1'" in first and "cut short" in first, first


def _copy(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table: a copy of the database as a backup holds it."""
    with Store(url) as store, store.read() as conn:
        return {
            t.name: [r._asdict() for r in conn.execute(select(t))] for t in metadata.sorted_tables
        }


def _restore(url: str, copy: dict[str, list[dict[str, Any]]]) -> None:
    """The database put back to ``copy`` (children emptied first, parents filled first)."""
    order = metadata.sorted_tables
    with Store(url) as store, store.write() as conn:
        for t in reversed(order):
            conn.execute(delete(t))
        for t in order:
            if copy[t.name]:
                conn.execute(insert(t), copy[t.name])


def test_a_database_restored_to_an_earlier_copy_is_caught_by_the_anchors(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    anchors = tmp_path / "anchors.jsonl"
    backups = []
    record_rounds(url, 4, anchors=str(anchors), after=lambda n: backups.append(_copy(url)))
    backup = backups[1]  # as it was after round 2 (rounds 3 and 4 are played after it)
    assert cli(["verify", "--db", url, "--anchors", str(anchors)], capsys)[0] == 0
    _restore(url, backup)
    assert cli(["verify", "--db", url], capsys)[0] == 0  # by its own chain: intact
    first = _broken(url, capsys, "--anchors", str(anchors))
    assert "'t1'" in first and "earlier copy" in first and "round 4" in first, first


def test_a_head_signed_with_another_key_is_refused(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The insider's own key: a genuine signature over the recomputed head, but not the
    house's."""
    record_rounds(url, 2)
    _sql(
        url,
        [
            "UPDATE events SET amount = amount + 100 WHERE kind = 'pay'",
            "UPDATE ledger SET amount = amount + 100 WHERE kind = 'payment'",
        ],
    )
    _rehash(url)
    row = _row(url)
    mine = RecordKeys([generate()])
    with Store(url) as store:
        shoe = (row["state_seq"], row["shoe_seq"], row["shoe_drawn"], digest(row["state"]))
        forged = sign(
            mine, store.store_id, chain.now(), [Head("t1", row["head_seq"], row["head_hash"], shoe)]
        )
    _sql(
        url,
        [
            insert(signatures).values(forged.to_dict()),
            update(tables).where(tables.c.id == "t1").values(signed=forged.id),
        ],
    )
    assert "not among the public keys given" in _refused(url)
    first = _broken(url, capsys)
    assert "'t1'" in first and "not among the public keys" in first, first


def _rules() -> Any:
    from pontoon.rules import load_rules

    return load_rules("nz-pontoon")


# ---------------------------------------------------------------------------- the record key
def _keyfile(path: Path, *keys: str) -> str:
    path.write_text("".join(k + "\n" for k in keys))
    path.chmod(0o600)
    return str(path)


def test_the_record_key_rotates_and_a_lost_one_is_replaced(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b, c = generate(), generate(), generate()
    anchors = str(tmp_path / "anchors.jsonl")
    first = _keyfile(tmp_path / "a.key", a)
    with Store(url, record_keys=RecordKeys([a]), anchors=anchors) as store:
        TableLog(store, "t1").deposit("ana", 500)
    public = tmp_path / "ab.pub"
    public.write_text(
        "".join(
            cli(["public-key", "--record-key-file", f], capsys)[1]
            for f in (_keyfile(tmp_path / "ba.key", b, a), first)
        )
    )  # (b's and a's public keys: the first line of each file's output is its signer)
    code, out = cli(
        ["rekey", "--db", url, "--record-key-file", str(tmp_path / "ba.key"), "--anchors", anchors],
        capsys,
    )
    assert code == 0 and "1 table head" in out, out
    assert (
        cli(["verify", "--db", url, "--public-key", str(public), "--anchors", anchors], capsys)[0]
        == 0
    )  # the anchors' older lines with a's public key, the head b's
    only_b = tmp_path / "b.pub"
    only_b.write_text(public.read_text().splitlines()[0] + "\n")
    assert cli(["verify", "--db", url, "--public-key", str(only_b)], capsys)[0] == 0
    lost = _keyfile(tmp_path / "c.key", c)  # b is lost: c alone cannot check b's heads
    code, out = cli(["rekey", "--db", url, "--record-key-file", lost], capsys)
    assert code == 2 and "not among the public keys" in out, out
    code, out = cli(
        ["rekey", "--db", url, "--record-key-file", lost, "--public-key", str(only_b)], capsys
    )
    assert code == 0, out
    with Store(url, record_keys=RecordKeys([c])) as store:
        TableLog(store, "t1").deposit("ana", 500)  # signed by c from now on


# ---------------------------------------------------------------------------- money and control
def _house(url: str) -> None:
    """Accounts, a cashier's deposit, a limit, an exclusion and a table setting, each written
    as the pages and the cashier write them."""
    from pontoon.store.accounts import Accounts, hasher
    from pontoon.store.play_limits import Limit, Pause
    from pontoon.store.roles import Movement, Role
    from pontoon.store.table_settings import record

    with Store(url) as store:
        people = Accounts(store, hasher("minimum"))
        people.create("ana", "a long enough password")
        people.create("bob", "a long enough password")
        people.create("cash", "a long enough password", Role.CASHIER)
        people.cashier("ana", Movement.DEPOSIT, 50_000, "ref-1", "cash")
        people.set_limit("ana", Limit.LOSS_DAY, 2_000)
        people.pause("bob", Pause.SELF_EXCLUSION, 365)
        TableLog(store, "t1")
        record(store, "cash", "pitboss", "t1", "limits 500 10000")


HOUSE_TAMPERS = [
    # (what, SQL, words the first broken link must hold)
    (
        "a deposit's amount and the balance with it",
        [
            "UPDATE wallet_entries SET amount = 90000, balance = 90000 WHERE key = 'cashier:ref-1'",
            "UPDATE accounts SET balance = 90000 WHERE name = 'ana'",
        ],
        ["wallet_entries", "amount"],
    ),
    (
        "a deposit added behind the cashier",
        [
            "INSERT INTO wallet_entries (key, account, kind, amount, balance, at, reference, by) "
            "VALUES ('cashier:x', 'ana', 'deposit', 100, 50100, '2026-01-01T00:00:00.000000Z', "
            "'x', 'cash')",
            "UPDATE accounts SET balance = 50100 WHERE name = 'ana'",
        ],
        ["wallet_entries", "not in the house's record"],
    ),
    (
        "a loss limit raised",
        ["UPDATE play_limits SET value = 9000000 WHERE kind = 'loss-day'"],
        ["play_limits", "value"],
    ),
    (
        "a self-exclusion removed",
        ["DELETE FROM play_limits WHERE kind = 'self-exclusion'"],
        ["play_limits", "not in the store"],
    ),
    (
        "a player made pit boss",
        ["UPDATE accounts SET role = 'pitboss' WHERE name = 'ana'"],
        ["accounts", "role"],
    ),
    (
        "a staff password replaced",
        ["UPDATE accounts SET password_hash = '$argon2id$forged' WHERE name = 'cash'"],
        ["accounts", "password"],
    ),
    (
        "a table's limits changed",
        ["UPDATE staff_actions SET action = 'limits 500 900000'"],
        ["staff_actions", "action"],
    ),
]


@pytest.mark.parametrize("what,sql,words", HOUSE_TAMPERS, ids=[t[0] for t in HOUSE_TAMPERS])
def test_money_and_control_rows_changed_behind_the_house_are_caught(
    url: str, capsys: pytest.CaptureFixture[str], what: str, sql: list[str], words: list[str]
) -> None:
    _house(url)
    assert cli(["verify", "--db", url], capsys)[0] == 0
    _sql(url, list(sql))
    first = _broken(url, capsys)
    assert all(w in first for w in words), first


def test_the_house_record_recomputed_without_the_key_is_caught(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The images in the house's chain changed too, and its hashes recomputed: its signed
    head says otherwise."""
    _house(url)
    from sqlalchemy import func

    _sql(
        url,
        [
            "UPDATE play_limits SET value = 9000000 WHERE kind = 'loss-day'",
            update(events)
            .where(events.c.table_id == "@house")
            .values(detail=func.replace(events.c.detail, '"value":2000', '"value":9000000')),
        ],
    )
    _rehash(url, "@house")
    first = _broken(url, capsys)
    assert "'@house'" in first and "signed head" in first, first


def test_an_old_stores_money_and_control_rows_are_recorded_once_by_rekey(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _house(url)
    _sql(
        url,
        [
            "UPDATE tables SET signed = NULL",
            "DELETE FROM signatures",
            "DELETE FROM events WHERE table_id = '@house'",
            "DELETE FROM tables WHERE id = '@house'",
        ],
    )
    first = _broken(url, capsys)  # rows outside any record, heads unsigned: as an old store's
    assert "not signed" in first or "not in the house's record" in first, first
    assert cli(["rekey", "--db", url], capsys)[0] == 0
    assert cli(["verify", "--db", url], capsys)[0] == 0
    _sql(
        url,
        [
            "DELETE FROM events WHERE table_id = '@house'",
            update(tables)
            .where(tables.c.id == "@house")
            .values(head_seq=0, head_hash=chain.GENESIS, signed=None),
        ],
    )
    code, out = cli(["rekey", "--db", url], capsys)  # once: never again to launder a change
    assert code == 2 and "'@house'" in out, out


# ---------------------------------------------------------------------------- the committed shoe
def test_a_finished_shoe_dealt_other_than_committed_is_caught_even_with_the_key(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Someone holding the record key (a rogue operator) rewrites a dealt card and signs the
    recomputed head: the signature holds, the revealed shoe does not."""
    from pontoon.round import Round
    from pontoon.rules import load_rules
    from pontoon.shoe import seeded
    from tests.test_store import simple_move

    rules = load_rules("nz-pontoon", {"decks": "1"})
    with Store(url) as store:
        log = TableLog(store, "t1")
        log.deposit("ana", 100_000)
        shoe = Shoe(rules, seeded(3))
        while shoe.shuffles < 2:  # a first shoe played out and revealed at the next shuffle
            rnd = Round(rules, shoe)
            rl = log.start(rnd)
            rnd.place_wager(1, "ana", 1000)
            rnd.deal()
            while not rnd.over:
                rnd.apply(simple_move(rnd))
            rl.commit(shoe)
    assert cli(["verify", "--db", url], capsys)[0] == 0
    with Store(url) as store, store.read() as conn:
        seq, card = conn.execute(
            select(events.c.seq, events.c.card)
            .where(events.c.kind == "deal", events.c.rule != "16.4")
            .order_by(events.c.seq)
            .limit(1)
        ).one()
    other = "KD" if card != "KD" else "QD"
    _sql(url, [update(events).where(events.c.seq == seq).values(card=other)])
    _rehash(url)
    row = _row(url)
    with Store(url) as store, store.write() as conn:
        shoe_at = (row["state_seq"], row["shoe_seq"], row["shoe_drawn"], digest(row["state"]))
        signed = store.sign_and_insert(
            conn, [Head("t1", row["head_seq"], row["head_hash"], shoe_at)], chain.now()
        )
        conn.execute(update(tables).where(tables.c.id == "t1").values(signed=signed.id))
    first = _broken(url, capsys)
    assert "'t1'" in first and "revealed shoe" in first and other in first, first


# ---------------------------------------------------------------------------- the anchors' places
def test_anchors_go_to_a_url_again_after_it_failed_and_to_syslog_with_a_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A URL that fails first is sent the lines again; its bearer token goes in a header, not
    the URL; syslog's lines read back with their prefix."""
    import http.server
    import syslog
    import threading

    from pontoon.store import anchors as anchors_module
    from pontoon.store.anchors import Anchors, Sender, read

    got: list[tuple[str | None, bytes]] = []
    answers = [500, 200]

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            code = answers.pop(0) if answers else 200
            if code == 200:
                got.append((self.headers.get("Authorization"), body))
            self.send_response(code)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        signed = [sign(RecordKeys([generate()]), "s", chain.now(), [Head("t1", 1, "ab" * 32)])]
        sender = Sender(f"http://127.0.0.1:{server.server_port}/anchors", "tok", retry=0.05)
        sender.put([json_line(signed[0])])
        for _ in range(200):
            if sender.sent:
                break
            threading.Event().wait(0.02)
        sender.close()
    finally:
        server.shutdown()
    assert answers == [] and len(got) == 1 and got[0][0] == "Bearer tok"
    assert got[0][1].decode() == json_line(signed[0]) + "\n"
    logged: list[str] = []
    monkeypatch.setattr(anchors_module.syslog, "syslog", lambda _prio, line: logged.append(line))
    monkeypatch.setattr(anchors_module.syslog, "openlog", lambda *a: None)
    Anchors(anchors_module.SYSLOG).write(signed)
    path = tmp_path / "syslog.txt"
    path.write_text("".join(f"Dec  7 03:00:00 host pontoon-anchors[7]: {x}\n" for x in logged))
    assert list(read(str(path))) == signed
    assert syslog.LOG_LOCAL0  # (the facility the anchors are logged under)


def json_line(signed: Any) -> str:
    import json

    return json.dumps(signed.to_dict(), separators=(",", ":"))
