"""An operator's wallet behind the tables: players launched with a signed token,
every wager debited and every win credited through the operator's HTTP wallet, exactly once,
across failures, lost answers and timeouts (``tests/operator_double.py``)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jwt")

import jwt
from fastapi.testclient import TestClient
from sqlalchemy import select

from pontoon.rules import load_rules
from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.server.app import create_app
from pontoon.server.operator import OPEN, OperatorConfig
from pontoon.server.table import TableConfig
from pontoon.shoe import seeded
from pontoon.store.db import Store
from pontoon.store.schema import events, operator_calls
from pontoon.store.verify import verify
from tests.helpers import wait_until
from tests.operator_double import Operator
from tests.test_accounts import Socket
from tests.test_server_helpers import in_thread, serving

pytestmark = pytest.mark.integration  # the server, served in this process

SECRET = "a-secret-the-operator-and-we-share"
ISSUER = "kiwi-casino"


def launch_token(sub: str, secret: str = SECRET, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": "pontoon", "sub": sub, "iat": now, "exp": now + 60}
    body |= {"jti": uuid.uuid4().hex} | claims
    return str(jwt.encode(body, secret, "HS256"))


SHOE = 3  # the tables' shoe seed


def _app(db: Path, url: str, attempts: int = 6) -> Any:
    # a seeded shoe: with a secure one, the round played with the operator down was now and
    # then lost by both players, and nothing was owed to be left pending
    table = TableConfig("kauri", load_rules("nz-pontoon"), 30.0, 30.0, 0, lambda: seeded(SHOE))
    config = OperatorConfig(url, SECRET, ISSUER, timeout=0.3, attempts=attempts)
    return create_app(f"sqlite:///{db}", [table], operator=config, password_strength="minimum")


def _launch(client: TestClient, name: str) -> dict[str, str]:
    r = client.get(f"/launch?token={launch_token(name)}&table=kauri", follow_redirects=False)
    assert r.status_code == 303, r.text
    assert r.headers["location"] == "/?table=kauri"
    cookie = {"cookie": f"{COOKIE}={r.cookies[COOKIE]}"}
    client.cookies.clear()
    csrf = client.get("/api/me", headers=cookie).json()["csrf"]
    return cookie | {CSRF_HEADER: csrf}


def _play_round(socks: list[Socket], dealt: Callable[[], None] = lambda: None) -> None:
    """Each bets 1000 on a box of its own (a refusal is fine: funds, or the wallet did not
    answer), then everyone stands or hits (14.1(d)) and declines insurance until it is over;
    ``dealt`` is called once the cards are dealt."""
    placed = [
        s for i, s in enumerate(socks) if s.send(type="bet", box=i + 1, amount=1000)["type"] == "ok"
    ]
    if not placed:
        return
    assert placed[0].send(type="deal")["type"] == "ok"
    dealt()
    deadline = time.monotonic() + 60  # (a loaded host's dealer and operator: not a count of tries)
    while time.monotonic() < deadline:
        moved = False
        for s in socks:
            s.send(type="state")
            if s.state["phase"] == "over":
                return
            legal = {m["action"]: m for m in s.state["legal"]}
            for action in ("no-insurance", "decline", "stand", "hit"):
                if action in legal:
                    reply = s.send(type="act", action=action, box=legal[action]["box"])
                    moved = moved or reply["type"] == "ok"
                    break
        if not moved:
            time.sleep(0.05)  # (the poll's interval: nobody may move until the table does)
    raise AssertionError("the round did not end")


def test_launch_tokens_are_checked_and_used_once(tmp_path: Path) -> None:
    operator = Operator(SECRET, {"ana": 10_000})
    with in_thread(operator.app()) as host, serving(_app(tmp_path / "o.db", f"http://{host}")) as c:
        ana = _launch(c, "ana")
        assert c.get("/api/me", headers=ana).json()["balance"] == 10_000  # the operator's
        bad = [
            launch_token("ana", secret="not-the-secret-the-operator-shares"),
            launch_token("ana", exp=int(time.time()) - 10),
            launch_token("ana", iss="someone-else"),
            launch_token("ana", aud="another-game"),
            "not.a.token",
        ]
        for token in bad:
            assert c.get(f"/launch?token={token}", follow_redirects=False).status_code == 401
        once = launch_token("ana")
        assert c.get(f"/launch?token={once}", follow_redirects=False).status_code == 303
        r = c.get(f"/launch?token={once}", follow_redirects=False)
        assert r.status_code == 401 and "used already" in r.json()["detail"]
        r = c.post("/api/accounts", json={"name": "eve", "password": "correct horse"})
        assert r.status_code == 403  # the operator keeps its players' accounts
        r = c.post("/api/login", json={"name": "ana", "password": "!"})
        assert r.status_code == 401  # an operator's player has no password here


def test_every_wager_is_charged_once_and_every_win_paid_once_across_faults(
    tmp_path: Path,
) -> None:
    db = tmp_path / "o.db"
    start = {"ana": 20_000, "ben": 20_000}
    operator = Operator(SECRET, start, seed=7, fail=0.3, lost=0.15, slow=0.1)
    # three tries: about one debit in six goes unanswered, its wager refused, rolled back (the
    # calls' order, and so each one's fault, is the threads' timing: one such debit is forced)
    with in_thread(operator.app()) as host, serving(_app(db, f"http://{host}", 3)) as client:
        people = {name: _launch(client, name) for name in start}
        for who in people.values():
            assert client.post("/api/tables/kauri/join", headers=who).status_code == 200
        socks = [Socket(client, people[name]) for name in start]
        for _ in range(6):
            _play_round(socks)
        operator.fail = 1.0  # a debit no try gets through: the wager refused, rolled back
        assert socks[0].send(type="bet", box=1, amount=1000)["type"] == "error"
        operator.fail = 0.3

        def down() -> None:  # the operator goes down with the round in play
            operator.fail = 1.0

        for _ in range(10):  # what a round leaves is owed: pending while the operator is down
            _play_round(socks, down)  # (a round everyone lost leaves nothing: another)
            time.sleep(0.5)  # (the outbox's first try while the operator is down; no event)
            if _pending(db):
                break
            operator.fail = 0.3
        assert _pending(db)
        operator.fail = 0.3
        for _ in range(6):
            _play_round(socks)
        for s in socks:
            s.close()
        hub = client.app.state.hub  # type: ignore[attr-defined]
        # (a rollback unanswered on a loaded host is an open dispute, tried again 2 s later,
        # then 4 s, ...: the record and the operator agree once every call is closed)
        wait_until(lambda: not _pending(db, OPEN), 120, "the outbox closing every call")
        assert hub.remote.in_flight == set()
    with Store(f"sqlite:///{db}") as store:
        report = verify(store)
        with store.read() as conn:
            calls = [dict(r._mapping) for r in conn.execute(select(operator_calls))]
            wallet_events = conn.execute(
                select(events.c.kind, events.c.player, events.c.amount).where(
                    events.c.detail == "wallet"
                )
            ).all()
    assert report.ok, report.problems
    done = [c for c in calls if c["status"] == "done"]
    assert any(c["kind"] == "debit" for c in done) and any(c["kind"] == "credit" for c in done)
    assert len(done) == len(wallet_events)  # one call for each movement recorded
    faults = Counter(kind for kind, _ in operator.calls)
    assert sum(faults.values()) > len(done)  # retries happened: the faults bit
    for name in start:  # the operator's balance is what our record says it must be
        moved = sum(
            c["amount"] * (1 if c["kind"] == "credit" else -1) for c in done if c["account"] == name
        )
        assert operator.balances[name] == start[name] + moved
    charged = {k for (kind, k) in operator.applied if kind == "debit"} - operator.rolled_back
    assert charged == {c["key"] for c in done if c["kind"] == "debit"}  # charged iff recorded
    rolled = {c["key"] for c in calls if c["status"] == "rolled-back"}
    assert rolled and rolled <= operator.rolled_back  # unanswered debits were taken back


def _pending(db: Path, statuses: tuple[str, ...] = ("pending", "rollback")) -> int:
    """The calls in ``statuses`` (by default those the outbox has yet to send)."""
    with Store(f"sqlite:///{db}") as store, store.read() as conn:
        return len(
            conn.execute(
                select(operator_calls.c.key).where(operator_calls.c.status.in_(statuses))
            ).all()
        )


def test_serve_checks_the_operator_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from pontoon.errors import InputError
    from pontoon.server.serve import operator_config

    def args(**kw: Any) -> argparse.Namespace:
        base = {"operator_url": "http://127.0.0.1:9/w", "operator_secret_file": None}
        return argparse.Namespace(**(base | {"operator_issuer": ISSUER} | kw))

    monkeypatch.delenv("PONTOON_OPERATOR_SECRET", raising=False)
    with pytest.raises(InputError, match="32 characters"):
        operator_config(args())
    with pytest.raises(InputError, match="http"):
        operator_config(args(operator_url="ftp://wallet"))
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o644)
    with pytest.raises(InputError, match="readable by others"):
        operator_config(args(operator_secret_file=str(secret)))
    secret.chmod(0o600)
    config = operator_config(args(operator_secret_file=str(secret)))
    assert (config.secret, config.issuer) == (SECRET, ISSUER)
    assert operator_config(args(operator_url=None)) is None
