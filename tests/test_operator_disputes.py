"""An operator's wallet that says no, or nothing: a rollback or a credit the operator
refuses or never confirms is an open dispute — logged, listed to the pit boss
(``GET /api/pit/disputes``) and in ``pontoon report``, tried again on a back-off schedule until
the operator acknowledges it; one player's debit that hangs holds up nobody else at the table
(no table lock is held across a call to the operator); the limits a player set hold for an
operator's wagers, and a paused player is not launched. Each test fails on the code before
these changes (the dispute was marked done, the credit left pending, the table waited, the
limit and the pause were not asked)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jwt")

import httpx
from sqlalchemy import select
from websockets.sync.client import connect

from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.server.app import create_app
from pontoon.server.operator import OperatorConfig
from pontoon.server.table import TableConfig
from pontoon.shoe import seeded
from pontoon.store.accounts import Accounts, hasher
from pontoon.store.db import Store
from pontoon.store.play_limits import Limit, Pause
from pontoon.store.roles import Role
from pontoon.store.schema import operator_calls
from tests.operator_double import Operator
from tests.test_accounts import ROUND
from tests.test_leases import _until
from tests.test_operator_wallet import ISSUER, SECRET, launch_token
from tests.test_server_helpers import Stacked, in_thread

pytestmark = pytest.mark.integration  # the server, served in this process

PASSWORD = "correct horse battery"
OPERATOR_LOG = "pontoon.server.operator"


class Restacked(Stacked):
    """Every shuffle puts ``codes`` on top: a round that opens with a shuffle deals them even
    when the first wager's shuffle was taken back (its debit awaited with the lock let go:
    the generator is not wound back, :meth:`pontoon.shoe.Shoe.rollback`)."""

    def shuffle(self, x: Any, /) -> None:
        self.used = False
        super().shuffle(x)


@contextmanager
def _tables(
    db: Path, operator: str, cards: list[str] | None = None, **config: Any
) -> Iterator[str]:
    """The table server in a thread of this process, table kauri, its players' wallets the
    operator's at ``operator`` (host:port); yields its base URL."""
    shuffler = (lambda: Restacked(cards)) if cards else (lambda: seeded(3))
    table = TableConfig("kauri", load_rules("nz-pontoon"), 30.0, 30.0, 0, shuffler)
    cfg = OperatorConfig(f"http://{operator}", SECRET, ISSUER, **config)
    app = create_app(f"sqlite:///{db}", [table], operator=cfg, password_strength="minimum")
    with in_thread(app) as host:
        yield f"http://{host}"


class Player:
    """A player the operator launched, seated at kauri, with a socket open."""

    def __init__(self, base: str, name: str) -> None:
        self.name = name
        self.http = httpx.Client(base_url=base, timeout=30)
        r = self.http.get(f"/launch?token={launch_token(name)}&table=kauri")
        assert r.status_code == 303, r.text
        csrf = self.http.get("/api/me").json()["csrf"]
        joined = self.http.post("/api/tables/kauri/join", headers={CSRF_HEADER: csrf})
        assert joined.status_code == 200, joined.text
        cookie = f"{COOKIE}={self.http.cookies[COOKIE]}"
        ws = f"ws{base[4:]}/ws/kauri"
        self._ws = connect(ws, additional_headers={"Cookie": cookie}, open_timeout=20)
        self.ws = self._ws.__enter__()
        self.state: dict[str, Any] = json.loads(self.ws.recv(timeout=20))
        self.n = 0

    def send(self, **msg: Any) -> dict[str, Any]:
        self.n += 1
        self.ws.send(json.dumps({"id": f"{self.name}-{self.n}", **msg}))
        while True:
            m: dict[str, Any] = json.loads(self.ws.recv(timeout=60))
            if m["type"] == "state":
                self.state = m
            else:
                return m

    def close(self) -> None:
        self._ws.__exit__(None, None, None)
        self.http.close()


def _staff(db: Path) -> None:
    with Store(f"sqlite:///{db}") as store:
        Accounts(store, hasher("minimum")).create("pita", PASSWORD, Role.PITBOSS)


def _login(base: str, name: str) -> dict[str, str]:
    r = httpx.post(f"{base}/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"cookie": f"{COOKIE}={r.cookies[COOKIE]}", CSRF_HEADER: r.json()["csrf"]}


def _calls(db: Path) -> list[dict[str, Any]]:
    with Store(f"sqlite:///{db}") as store, store.read() as conn:
        rows = conn.execute(select(operator_calls).order_by(operator_calls.c.at))
        return [dict(r._mapping) for r in rows]


def _call(db: Path, kind: str, player: str = "ana") -> dict[str, Any] | None:
    """The player's last call of ``kind``."""
    found = [c for c in _calls(db) if c["kind"] == kind and c["account"] == player]
    return found[-1] if found else None


def _status(db: Path, kind: str, status: str) -> bool:
    """Whether ana's last call of ``kind`` is ``status``."""
    row = _call(db, kind)
    return row is not None and row["status"] == status


def _play_round(p: Player) -> None:
    """Bet 1000 on box 1, deal, stand (or hit to 12, 14.1(d)) until the round is over."""
    assert p.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert p.send(type="deal")["type"] == "ok"
    for _ in range(20):
        if p.state["phase"] == "over":
            return
        legal = {m["action"] for m in p.state["legal"]}
        action = next(a for a in ("no-insurance", "stand", "hit") if a in legal)
        assert p.send(type="act", action=action, box=1)["type"] == "ok"
    raise AssertionError("the round did not end")


def _dispute_logged(caplog: pytest.LogCaptureFixture, row: dict[str, Any], reason: str) -> None:
    """An error logged for the dispute: its key, player, amount, the operator's reason; never
    the shared secret."""
    said = [r.getMessage() for r in caplog.records if r.name == OPERATOR_LOG]
    errors = [
        r.getMessage()
        for r in caplog.records
        if r.name == OPERATOR_LOG and r.levelno >= logging.ERROR
    ]
    assert any(
        row["key"] in m and row["account"] in m and str(row["amount"]) in m and reason in m
        for m in errors
    ), errors
    assert not any(SECRET in m for m in said)


def test_a_rollback_the_operator_refuses_is_an_open_dispute_until_it_acknowledges(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger=OPERATOR_LOG)
    db = tmp_path / "o.db"
    _staff(db)
    # every answer lost (the debit applied all the same), every rollback refused
    operator = Operator(SECRET, {"ana": 20_000}, lost=1.0)
    operator.answer = {"rollback": 409}
    with in_thread(operator.app()) as host, _tables(db, host, timeout=0.3, attempts=2) as base:
        ana = Player(base, "ana")
        refused = ana.send(type="bet", box=1, amount=1000)
        assert refused["type"] == "error", refused
        assert operator.balances["ana"] == 19_000  # the operator kept the debit it applied
        _until(lambda: _status(db, "debit", "disputed"), 10.0)
        assert refused["code"] == "wallet", refused  # (no answer; "funds": the operator's no)
        row = _call(db, "debit")
        assert row is not None and row["tries"] == 1 and row["next_at"] > row["at"]
        assert "says no to this rollback" in row["error"]
        _dispute_logged(caplog, row, "says no to this rollback")
        # tried again after the first back-off (2 s), then the next is twice as far off
        _until(lambda: (_call(db, "debit") or {}).get("tries") == 2, 10.0)
        again = _call(db, "debit")
        assert again is not None and again["status"] == "disputed"
        first = _seconds(row["next_at"]) - _seconds(row["at"])
        second = _seconds(again["next_at"]) - _seconds(row["next_at"])
        assert 1.9 <= first <= 3.0 and 3.9 <= second <= 5.0, (first, second)
        # the pit boss reads the open disputes; nobody else does
        listed = httpx.get(f"{base}/api/pit/disputes", headers=_login(base, "pita"))
        assert listed.status_code == 200, listed.text
        (d,) = listed.json()
        assert (d["key"], d["player"], d["amount"], d["table"]) == (
            row["key"],
            "ana",
            1000,
            "kauri",
        )
        assert d["kind"] == "rollback" and d["tries"] == 2 and "says no" in d["error"]
        assert d["since"] == row["at"]
        assert httpx.get(f"{base}/api/pit/disputes").status_code == 401
        player = {"cookie": f"{COOKIE}={ana.http.cookies[COOKIE]}"}
        assert httpx.get(f"{base}/api/pit/disputes", headers=player).status_code == 403
        # and so does the report
        assert main(["report", "--db", f"sqlite:///{db}", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [x["key"] for x in doc["disputes"]] == [row["key"]]
        assert main(["report", "--db", f"sqlite:///{db}"]) == 0
        text = capsys.readouterr().out
        assert "Open disputes" in text and row["key"] in text and "says no" in text
        # the operator acknowledges at last: rolled back, the money whole, nothing open
        operator.answer, operator.lost = {}, 0.0
        _until(lambda: _status(db, "debit", "rolled-back"), 15.0)
        assert operator.balances["ana"] == 20_000
        assert httpx.get(f"{base}/api/pit/disputes", headers=_login(base, "pita")).json() == []
        ana.close()


def _seconds(stored: str) -> float:
    """A time as the store keeps it (UTC ISO 8601), in seconds since the epoch."""
    from datetime import UTC, datetime

    return datetime.strptime(stored, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def test_a_credit_the_operator_refuses_is_kept_and_paid_once_it_accepts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=OPERATOR_LOG)
    db = tmp_path / "o.db"
    operator = Operator(SECRET, {"ana": 20_000})
    operator.answer = {"credit": 403}
    with in_thread(operator.app()) as host, _tables(db, host, ROUND, timeout=0.3) as base:
        ana = Player(base, "ana")
        _play_round(ana)  # Q-7 stands against the dealer's 9, who busts: 2000 owed to ana
        _until(lambda: _status(db, "credit", "disputed"), 10.0)
        row = _call(db, "credit")
        assert row is not None and row["amount"] == 2000 and row["tries"] >= 1
        _dispute_logged(caplog, row, "says no to this credit")
        assert operator.balances["ana"] == 19_000
        operator.answer = {}
        _until(lambda: _status(db, "credit", "done"), 15.0)
        assert operator.balances["ana"] == 21_000  # paid once
        assert [k for k, key in operator.calls if key == row["key"]].count("credit") >= 2
        ana.close()
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0


def test_the_table_answers_others_while_one_players_debit_hangs(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    operator = Operator(SECRET, {"ana": 20_000, "ben": 20_000})
    operator.hang = {"ana": 4.0}  # ana's debits: no answer within the caller's 1 s, twice
    with in_thread(operator.app()) as host, _tables(db, host, timeout=1.0, attempts=2) as base:
        ana, ben = Player(base, "ana"), Player(base, "ben")
        out: dict[str, Any] = {}

        def ana_bets() -> None:
            start = time.monotonic()
            out["reply"] = ana.send(type="bet", box=1, amount=1000)
            out["seconds"] = time.monotonic() - start

        waiting = threading.Thread(target=ana_bets)
        waiting.start()
        _until(lambda: operator.held > 0, 10.0)  # ana's debit is at the operator, unanswered
        start = time.monotonic()
        answered = ben.send(type="bet", box=2, amount=1000)  # the same table, meanwhile
        ben_seconds = time.monotonic() - start
        assert answered["type"] == "ok", answered
        assert ben_seconds < 0.5 and "reply" not in out, (ben_seconds, out)
        waiting.join(30)
        reply, seconds = out["reply"], out["seconds"]
        # refused within the config's bound (2 tries of 1 s and their back-off), and why
        assert reply["type"] == "error" and reply["code"] == "wallet", reply
        assert "did not answer" in reply["error"]
        assert 1.9 <= seconds < 3.5, seconds
        print(
            f"measured: ben answered in {ben_seconds:.3f} s while ana's debit hung {seconds:.2f} s"
        )
        # the hung debit is rolled back (before the operator came to apply it): ana whole
        _until(lambda: _status(db, "debit", "rolled-back") and operator.held == 0, 15.0)
        assert operator.balances == {"ana": 20_000, "ben": 19_000}
        ana.close()
        ben.close()


def test_a_loss_limit_refuses_an_operators_wager_that_would_pass_it(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    operator = Operator(SECRET, {"ana": 20_000})
    with in_thread(operator.app()) as host, _tables(db, host, timeout=0.5) as base:
        ana = Player(base, "ana")
        with Store(f"sqlite:///{db}") as store:
            Accounts(store).set_limit("ana", Limit.LOSS_DAY, 1500)  # lower: at once
        assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
        over = ana.send(type="bet", box=2, amount=1000)  # 2000 could be lost: past 1500
        assert over["type"] == "error" and over["code"] == "funds", over
        assert "loss-day limit is 1500" in over["error"]
        assert [k for k, _ in operator.calls].count("debit") == 1  # never sent
        assert ana.send(type="bet", box=2, amount=500)["type"] == "ok"  # 1500: within it
        assert operator.balances["ana"] == 18_500
        ana.close()


def test_a_paused_player_is_not_launched(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    operator = Operator(SECRET, {"ana": 20_000})
    with in_thread(operator.app()) as host, _tables(db, host) as base:
        first = httpx.get(f"{base}/launch?token={launch_token('ana')}&table=kauri")
        assert first.status_code == 303
        with Store(f"sqlite:///{db}") as store:
            until = Accounts(store).pause("ana", Pause.TIME_OUT, 2)
        again = httpx.get(f"{base}/launch?token={launch_token('ana')}&table=kauri")
        assert again.status_code == 403, again.text
        assert until[:10] in again.json()["detail"] and "paused" in again.json()["detail"]
