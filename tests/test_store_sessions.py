"""The table server's sessions in the store (migration 0003), on SQLite and, when
``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL: a token is kept only as its SHA-256; a name
has one session per table, also when the session comes in a group commit."""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from pontoon.events import Event
from pontoon.store.db import NameTakenError, Store, Written, token_digest
from pontoon.store.recorder import TableLog
from pontoon.store.schema import ledger, sessions
from pontoon.store.verify import verify
from tests.test_store import url  # noqa: F401 - the fixture: both back ends


def _join(log: TableLog, player: str, token: str, deposit: int = 0) -> Written | Exception:
    items = [(Event("deposit", player=player, amount=deposit), False)] if deposit else []
    p = log.prepare(items)
    p.batch.session = (token_digest(token), player)
    try:
        written = log.store.append(p.batch)
    except NameTakenError as exc:
        return exc
    log.applied(p, written)
    return written


def test_a_session_is_stored_as_its_digest_and_found_again(url: str) -> None:  # noqa: F811
    with Store(url) as store:
        log = TableLog(store, "kauri")
        assert isinstance(_join(log, "ana", "secret-token-a", 1000), Written)
        assert isinstance(_join(log, "ben", "secret-token-b"), Written)  # no deposit: no event
        with store.read() as conn:
            rows = conn.execute(select(sessions.c.token_hash, sessions.c.player)).all()
        assert sorted(rows) == sorted(
            [
                (hashlib.sha256(b"secret-token-a").hexdigest(), "ana"),
                (hashlib.sha256(b"secret-token-b").hexdigest(), "ben"),
            ]
        )
    with Store(url) as store:  # as after a restart
        assert store.find_session("secret-token-a") == ("kauri", "ana", None)
        assert store.find_session("secret-token-x") is None
        assert store.session_players("kauri") == ["ana", "ben"]
        report = verify(store)
        assert report.ok and report.balances["kauri"]["player:ana"] == 1000


def test_a_name_has_one_session_per_table_and_a_refused_join_writes_nothing(
    url: str,  # noqa: F811
) -> None:
    with Store(url) as store:
        kauri, rimu = TableLog(store, "kauri"), TableLog(store, "rimu")
        assert isinstance(_join(kauri, "ana", "t1", 1000), Written)
        head = kauri.head_seq
        assert isinstance(_join(kauri, "ana", "t2", 1000), NameTakenError)
        assert TableLog(store, "kauri").head_seq == head  # the deposit went with it
        assert isinstance(_join(rimu, "ana", "t3", 1000), Written)  # another table: fine
        # in a group commit, the refused join is rolled back alone
        logs = [TableLog(store, "kauri"), TableLog(store, "rimu"), TableLog(store, "kahikatea")]
        prepared = []
        for log, name in zip(logs, ("ana", "ben", "cat"), strict=True):
            p = log.prepare([(Event("deposit", player=name, amount=500), False)])
            p.batch.session = (token_digest(f"g-{name}"), name)
            prepared.append(p)
        results = store.append_many([p.batch for p in prepared])
        assert isinstance(results[0], NameTakenError)
        assert all(isinstance(r, Written) for r in results[1:])
        assert store.session_players("rimu") == ["ana", "ben"]
        assert store.find_session("g-ana") is None and store.find_session("g-cat")
        report = verify(store)
        assert report.ok, report.problems
        assert report.balances["kauri"] == {"cashier": -1000, "player:ana": 1000}


def test_a_write_keeps_the_id_of_the_message_that_made_it(url: str) -> None:  # noqa: F811
    with Store(url) as store:
        log = TableLog(store, "kauri")
        assert isinstance(_join(log, "ana", "tok-a", 1000), Written)
        for n in (1, 2):
            p = log.prepare([(Event("withdraw", player="ana", amount=10), False)])
            p.batch.ack = (token_digest("tok-a"), f"msg-{n}")
            log.applied(p, log.store.append(p.batch))
        assert store.find_session("tok-a") == ("kauri", "ana", "msg-2")
        # in a group commit too, each session its own
        other = TableLog(store, "rimu")
        assert isinstance(_join(other, "ben", "tok-b", 1000), Written)
        group = []
        for log_, tok, player in ((log, "tok-a", "ana"), (other, "tok-b", "ben")):
            p = log_.prepare([(Event("withdraw", player=player, amount=10), False)])
            p.batch.ack = (token_digest(tok), f"{player}-3")
            group.append((log_, p))
        for (log_, p), w in zip(group, store.append_many([p.batch for _, p in group]), strict=True):
            assert isinstance(w, Written)
            log_.applied(p, w)
        assert store.find_session("tok-a").last_id == "ana-3"  # type: ignore[union-attr]
        assert store.find_session("tok-b").last_id == "ben-3"  # type: ignore[union-attr]
        assert verify(store).ok


def test_a_player_who_leaves_is_cashed_out_and_the_name_is_free_again(
    url: str,  # noqa: F811
) -> None:
    with Store(url) as store:
        log = TableLog(store, "kauri")
        assert isinstance(_join(log, "ana", "tok-a", 1000), Written)
        assert isinstance(_join(log, "ben", "tok-b", 700), Written)
        p = log.prepare_leave("ana")
        log.applied(p, store.append(p.batch))
        assert log.balance("ana") == 0
        assert store.find_session("tok-a") is None  # the old token opens nothing
        assert store.session_players("kauri") == ["ben"]
        assert isinstance(_join(log, "ana", "tok-a2", 1000), Written)  # a new session
        # in a group commit with another table's write, and with nothing to cash out
        other = TableLog(store, "rimu")
        assert isinstance(_join(other, "cat", "tok-c"), Written)
        group = [(log, log.prepare_leave("ben")), (other, other.prepare_leave("cat"))]
        results = store.append_many([p.batch for _, p in group])
        for (log_, p), w in zip(group, results, strict=True):
            assert isinstance(w, Written)
            log_.applied(p, w)
        assert store.session_players("kauri") == ["ana"] and store.session_players("rimu") == []
        report = verify(store)
        assert report.ok, report.problems
        balances = {k: v for k, v in report.balances["kauri"].items() if v}
        assert balances == {"cashier": -1000, "player:ana": 1000}
        with store.read() as conn:
            withdrawn = conn.execute(
                select(ledger.c.player, ledger.c.amount).where(ledger.c.kind == "withdrawal")
            ).all()
        assert sorted(withdrawn) == [("ana", 1000), ("ben", 700)]
