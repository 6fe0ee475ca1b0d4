"""Accounts, staff roles and the built-in wallet behind the tables, on the store and
through the server in accounts mode (``create_app(accounts=True)``, ``pontoon serve
--accounts``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text
from starlette.websockets import WebSocketDisconnect

from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.accounts import COOKIE, CSRF_HEADER
from pontoon.server.app import create_app
from pontoon.server.limits import Limits
from pontoon.server.table import TableConfig
from pontoon.server.tenure import Leasing
from pontoon.store.accounts import AccountError, Accounts, Movement, Role, hasher
from pontoon.store.db import Store
from pontoon.store.schema import staff_actions, wallet_entries
from pontoon.store.verify import verify
from tests.test_server_helpers import OPEN, SUPERVISOR, serving, stacked

pytestmark = pytest.mark.integration  # the server, served in this process

# burn, box 1, dealer, box 1: ana holds Q-7 against the dealer's 9 and stands; the dealer
# draws 6 (15) and a king: bust, ana's wager is paid at evens
ROUND = ["4D", "QS", "9C", "7H", "6D", "KD", "2C", "3C", "8C"]
# with ana on box 1 and ben on box 2: Q 7 and 5 6 against the dealer's 9
TWO = ["4D", "QS", "5H", "9C", "7H", "6S", "KD", "2C", "3C"]
PASSWORD = "correct horse battery"


def _url(db: Path) -> str:
    return f"sqlite:///{db}"


def _people(db: Path) -> Accounts:
    return Accounts(Store(_url(db)), hasher("minimum"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "accounts.db"
    people = _people(path)
    people.create("mere", PASSWORD, Role.SUPERVISOR)
    people.create("tama", PASSWORD, Role.CASHIER)
    people.create("hemi", PASSWORD, Role.DEALER)
    people.store.close()
    return path


def _app(
    db: Path,
    limits: Limits | None = None,
    hours: float = 24.0,
    cards: list[str] = ROUND,
    leasing: Leasing | None = None,
) -> Any:
    rules = load_rules("nz-pontoon")
    configs = [TableConfig("kauri", rules, 30.0, 30.0, 100_000, stacked(cards))]
    return create_app(
        _url(db),
        configs,
        SUPERVISOR,
        limits=limits,
        accounts=True,
        password_strength="minimum",
        login_hours=hours,
        leasing=leasing,
    )


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with serving(_app(db)) as c:
        yield c


def login(client: TestClient, name: str, password: str = PASSWORD) -> dict[str, str]:
    """The headers of ``name``'s logged-in requests (cookie and CSRF token); the client's own
    cookie jar is emptied, so that each request says whose it is."""
    r = client.post("/api/login", json={"name": name, "password": password})
    assert r.status_code == 200, r.text
    token = r.cookies[COOKIE]
    client.cookies.clear()
    return {"cookie": f"{COOKIE}={token}", CSRF_HEADER: r.json()["csrf"]}


def register(client: TestClient, name: str) -> dict[str, str]:
    r = client.post("/api/accounts", json={"name": name, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return login(client, name)


def deposit(client: TestClient, name: str, amount: int, ref: str) -> int:
    cashier = login(client, "tama")
    r = client.post(
        "/api/cashier",
        json={"account": name, "kind": "deposit", "amount": amount, "reference": ref},
        headers=cashier,
    )
    assert r.status_code == 200, r.text
    balance: int = r.json()["balance"]
    return balance


class Socket:
    """A WebSocket of a logged-in account (its cookie, no token)."""

    def __init__(self, client: TestClient, headers: dict[str, str], table: str = "kauri"):
        self._cm = client.websocket_connect(f"/ws/{table}", headers={"cookie": headers["cookie"]})
        self.ws = self._cm.__enter__()
        OPEN.append(self)  # closed by serving() even when a test fails
        self.state: dict[str, Any] = self.ws.receive_json()
        self.n = 0

    def send(self, **msg: Any) -> dict[str, Any]:
        self.n += 1
        self.ws.send_json({"id": f"m{self.n}", **msg})
        while True:
            m: dict[str, Any] = self.ws.receive_json()
            if m["type"] == "state":
                self.state = m
            else:
                return m

    def close(self) -> None:
        if self in OPEN:
            OPEN.remove(self)
            self._cm.__exit__(None, None, None)


def _play_out(sock: Socket) -> None:
    """Stand when the rules allow it, else hit (14.1(d)); decline insurance."""
    for _ in range(20):
        sock.send(type="state")
        st = sock.state
        if st["phase"] == "over":
            return
        legal = {m["action"] for m in st["legal"]}
        if not legal:
            return
        for action in ("no-insurance", "stand", "hit"):
            if action in legal:
                box = next(m["box"] for m in st["legal"] if m["action"] == action)
                assert sock.send(type="act", action=action, box=box)["type"] == "ok"
                break
    raise AssertionError("the round did not end")


# ---------------------------------------------------------------------- the store


def test_a_password_is_kept_only_as_an_argon2id_hash(tmp_path: Path) -> None:
    people = _people(tmp_path / "a.db")
    people.create("ana", PASSWORD)
    with people.store.read() as conn:
        stored = conn.execute(text("SELECT password_hash FROM accounts")).scalar()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert people.check("ana", PASSWORD) == ("ana", Role.PLAYER, 0, False)
    assert people.check("ana", PASSWORD + "x") is None
    assert people.check("nobody", PASSWORD) is None
    with pytest.raises(AccountError, match="taken"):
        people.create("ana", PASSWORD)
    with pytest.raises(Exception, match="8 to 128"):
        people.create("ben", "short")
    assert PASSWORD.encode() not in (tmp_path / "a.db").read_bytes()


def test_a_login_session_expires_and_is_closed(tmp_path: Path) -> None:
    people = _people(tmp_path / "a.db")
    people.create("ana", PASSWORD)
    token = people.open_session("ana", 3600)
    assert people.session(token) is not None and people.session(token + "x") is None
    people.revoke("ana")
    assert people.session(token) is None
    brief = people.open_session("ana", 0.01)
    time.sleep(0.05)  # the clock under test: its 0.01 s pass
    assert people.session(brief) is None


def test_a_cashier_reference_moves_money_once(tmp_path: Path) -> None:
    people = _people(tmp_path / "a.db")
    people.create("ana", PASSWORD)
    assert people.cashier("ana", Movement.DEPOSIT, 5000, "R-1", "tama") == 5000
    assert people.cashier("ana", Movement.DEPOSIT, 5000, "R-1", "tama") == 5000  # again: once
    with pytest.raises(AccountError, match="another movement"):
        people.cashier("ana", Movement.DEPOSIT, 7000, "R-1", "tama")
    with pytest.raises(AccountError, match="too little"):
        people.cashier("ana", Movement.WITHDRAWAL, 5001, "R-2", "tama")
    assert people.cashier("ana", Movement.WITHDRAWAL, 2000, "R-3", "tama") == 3000
    assert [e["kind"] for e in people.entries("ana")] == ["deposit", "withdrawal"]
    assert verify(people.store).ok


def test_pontoon_staff_add_and_cashier_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _url(tmp_path / "c.db")
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD + "\n")
    args = ["staff", "add", "tama", "--role", "cashier", "--password-file", str(secret)]
    assert main([*args, "--password-strength", "minimum", "--db", url, "--json"]) == 0
    assert capsys.readouterr().out.strip() == '{"name": "tama", "role": "cashier"}'
    assert main([*args, "--db", url]) == 2  # the name is taken
    assert "taken" in capsys.readouterr().err
    assert main(["staff", "add", "x", "--role", "croupier", "--db", url]) == 2
    assert "invalid choice: 'croupier'" in capsys.readouterr().err
    _people(tmp_path / "c.db").create("ana", PASSWORD)
    move = ["cashier", "deposit", "ana", "2500", "--reference", "R9", "--db", url, "--json"]
    move += ["--by-password-file", str(secret)]
    assert main([*move, "--by", "tama"]) == 0
    assert '"balance": 2500' in capsys.readouterr().out
    assert main([*move, "--by", "ana"]) == 2  # not a cashier
    assert "not a cashier" in capsys.readouterr().err


# ---------------------------------------------------------------------- the server


def test_login_sets_an_http_only_same_site_cookie_and_logout_ends_it(client: TestClient) -> None:
    assert client.post("/api/accounts", json={"name": "ana", "password": PASSWORD}).status_code
    r = client.post("/api/login", json={"name": "ana", "password": PASSWORD})
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert "secure" not in cookie  # not over TLS here
    client.cookies.clear()
    me = login(client, "ana")
    assert client.get("/api/me", headers=me).json()["name"] == "ana"
    assert client.post("/api/logout", headers={"cookie": me["cookie"]}).status_code == 403
    assert client.post("/api/logout", headers=me).status_code == 200
    assert client.get("/api/me", headers=me).status_code == 401  # the session is gone


def test_a_forged_or_expired_cookie_opens_nothing(db: Path) -> None:
    with serving(_app(db, hours=0.5 / 3600)) as client:
        forged = {"cookie": f"{COOKIE}=not-a-session", CSRF_HEADER: "x"}
        assert client.get("/api/me", headers=forged).status_code == 401
        assert client.post("/api/tables/kauri/join", headers=forged).status_code == 401
        register(client, "ana")
        brief = login(client, "ana")
        time.sleep(0.6)  # the clock under test: the login's half second passes
        assert client.get("/api/me", headers=brief).status_code == 401
        with client.websocket_connect("/ws/kauri", headers={"cookie": brief["cookie"]}) as ws:
            assert ws.receive_json()["code"] == "auth"


def test_csrf_is_refused_on_every_state_changing_request(client: TestClient) -> None:
    ana = register(client, "ana")
    cookie_only = {"cookie": ana["cookie"]}
    wrong = ana | {CSRF_HEADER: "0" * 32}
    for headers in (cookie_only, wrong):
        assert client.post("/api/tables/kauri/join", headers=headers).status_code == 403
        assert client.post("/api/tables/kauri/leave", headers=headers).status_code == 403
    assert client.post("/api/tables/kauri/join", headers=ana).status_code == 200


def test_failed_logins_are_throttled_per_account(
    db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with serving(_app(db, Limits(login_failures=3))) as client:
        register(client, "ana")
        for _ in range(3):
            r = client.post("/api/login", json={"name": "ana", "password": "wrong-password"})
            assert r.status_code == 401
        r = client.post("/api/login", json={"name": "ana", "password": PASSWORD})
        assert r.status_code == 429  # the right password too, while throttled
        assert "wrong-password" not in caplog.text and "failed login for 'ana'" in caplog.text
        r = client.post("/api/login", json={"name": "mere", "password": PASSWORD})
        assert r.status_code == 200  # another account is not concerned


def test_guessing_from_other_addresses_never_locks_the_owner_out(db: Path) -> None:
    """20 guesses from 127.0.0.2: that address is throttled for ana, ana at 127.0.0.3 logs in
    and is told of the failures. Guessing spread over many addresses reaches the account's
    own cap: then a new browser is refused, but ana's, which logged in before, is not."""
    app = _app(db, Limits(login_failures=3, failures=1000))
    with serving(app) as client:
        register(client, "ana")
        owner = TestClient(app, client=("127.0.0.3", 50001))
        assert (
            owner.post("/api/login", json={"name": "ana", "password": PASSWORD}).json()[
                "failed_logins"
            ]
            == 0
        )  # (and owner now holds ana's device cookie)
        attacker = TestClient(app, client=("127.0.0.2", 50002))
        wrong = {"name": "ana", "password": "wrong-password"}
        codes = [attacker.post("/api/login", json=wrong).status_code for _ in range(20)]
        assert codes == [401] * 3 + [429] * 17, codes
        r = owner.post("/api/login", json={"name": "ana", "password": PASSWORD})
        assert r.status_code == 200 and r.json()["failed_logins"] == 3, r.text
        for i in range(10, 19):  # 27 more failures, from nine more addresses: 30 in all
            spread = TestClient(app, client=(f"127.0.1.{i}", 50000 + i))
            for _ in range(3):
                assert spread.post("/api/login", json=wrong).status_code == 401
        stranger = TestClient(app, client=("127.0.0.9", 50009))
        r = stranger.post("/api/login", json={"name": "ana", "password": PASSWORD})
        assert r.status_code == 429 and "this account" in r.text
        r = owner.post("/api/login", json={"name": "ana", "password": PASSWORD})
        assert r.status_code == 200 and r.json()["failed_logins"] == 27, r.text


def test_registrations_are_throttled_per_address_on_a_pool_of_their_own(db: Path) -> None:
    """A burst of registrations from one address: the first few are made, the rest answered
    429 without hashing a password; their hashing never takes the logins' threads."""
    with serving(_app(db, Limits(registrations=3))) as client:
        codes = [
            client.post("/api/accounts", json={"name": f"bot{i}", "password": PASSWORD}).status_code
            for i in range(10)
        ]
        assert codes == [201] * 3 + [429] * 7, codes
        hub = client.app.state.hub  # type: ignore[attr-defined]
        assert hub.door.making is not hub.door.pool  # (their own thread)
        r = client.post("/api/login", json={"name": "mere", "password": PASSWORD})
        assert r.status_code == 200  # logins go on


def test_the_wallet_pays_each_wager_and_takes_each_win_in_the_events_transaction(
    db: Path, client: TestClient
) -> None:
    ana = register(client, "ana")
    assert deposit(client, "ana", 5000, "R-100") == 5000
    assert client.post("/api/tables/kauri/join", headers=ana).status_code == 200
    sock = Socket(client, ana)
    assert sock.state["you"] == "ana" and sock.state["balance"] == 5000
    assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert sock.state["balance"] == 4000  # 1000 on the layout, 4000 in the wallet
    assert sock.send(type="deal")["type"] == "ok"
    _play_out(sock)
    sock.close()
    with Store(_url(db)) as store:
        with store.read() as conn:
            moves = [dict(r._mapping) for r in conn.execute(select(wallet_entries))]
            net = conn.execute(text("SELECT net FROM round_players WHERE player='ana'")).scalar()
        report = verify(store)
    assert report.ok, report.problems
    debit = next(m for m in moves if m["kind"] == "debit")
    assert (debit["account"], debit["amount"], debit["table_id"]) == ("ana", 1000, "kauri")
    assert debit["key"] == f"table:kauri:{debit['seq']}"
    credits = sum(m["amount"] for m in moves if m["kind"] == "credit")
    assert net == 1000 and credits == 2000  # the stake back with the win
    me = client.get("/api/me", headers=login(client, "ana")).json()
    assert me["balance"] == 5000 + net


def test_a_wager_beyond_the_wallet_is_refused_and_changes_nothing(
    db: Path, client: TestClient
) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 500, "R-1")
    client.post("/api/tables/kauri/join", headers=ana)
    sock = Socket(client, ana)
    before = sock.state["version"]
    r = sock.send(type="bet", box=1, amount=1000)
    assert r["code"] == "funds" and "500" in r["error"]
    sock.send(type="state")
    assert sock.state["boxes"] == [] and sock.state["version"] == before
    sock.close()
    with Store(_url(db)) as store:
        assert verify(store).ok


def test_staff_act_by_role_and_every_staff_action_is_recorded_with_its_name(
    db: Path, client: TestClient
) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 5000, "R-1")
    client.post("/api/tables/kauri/join", headers=ana)
    player = Socket(client, ana)
    assert player.send(type="bet", box=1, amount=1000)["type"] == "ok"
    cashier = Socket(client, login(client, "tama"))
    assert cashier.send(type="deal")["code"] == "role"  # a cashier does not pace the table
    dealer = Socket(client, login(client, "hemi"))
    assert dealer.state["role"] == "dealer"
    assert dealer.send(type="deal")["type"] == "ok"  # the dealer calls no more bets (8.2)
    assert dealer.send(type="irregularity", kind="void")["code"] == "role"  # 16: supervisor's
    assert player.send(type="irregularity", kind="void")["code"] == "role"
    supervisor = Socket(client, login(client, "mere"))
    assert supervisor.send(type="irregularity", kind="void")["type"] == "ok"  # 16.5
    for s in (player, cashier, dealer, supervisor):
        s.close()
    with Store(_url(db)) as store:
        with store.read() as conn:
            done = [(r.account, r.role) for r in conn.execute(select(staff_actions))]
        report = verify(store)
    assert done == [("hemi", "dealer"), ("mere", "supervisor")]
    assert report.ok, report.problems
    me = client.get("/api/me", headers=login(client, "ana")).json()
    assert me["balance"] == 5000  # 16.5: the void gave the wager back to the wallet


def test_the_shared_supervisor_token_opens_nothing_in_accounts_mode(client: TestClient) -> None:
    """A token left from a demonstration (the environment's) opens neither the socket, the
    state, the report, any round's recall nor the pit's controls; and nobody can register
    the name of a role to be taken for it."""
    with client.websocket_connect(f"/ws/kauri?token={SUPERVISOR}") as ws:
        assert ws.receive_json()["code"] == "auth"
    assert client.get(f"/api/tables/kauri/state?token={SUPERVISOR}").status_code == 401
    assert client.get(f"/api/report?token={SUPERVISOR}").status_code == 401
    assert client.get(f"/api/recall/1?token={SUPERVISOR}").status_code == 401
    assert client.get(f"/api/pit/tables?token={SUPERVISOR}").status_code == 401
    r = client.post(f"/api/pit/tables/kauri?token={SUPERVISOR}", json={"open": False})
    assert r.status_code in (401, 403), r.text
    for role in ("supervisor", "Pitboss", "cashier", "dealer", "player", "house", "policy"):
        r = client.post("/api/accounts", json={"name": role, "password": PASSWORD})
        assert r.status_code == 422 and "reserved" in r.text, (role, r.text)
    staff = login(client, "mere")
    r = client.post("/api/tables/kauri/join", headers=staff)
    assert r.status_code == 403  # staff do not sit down


def test_verify_proves_every_wallet_equals_its_ledger(db: Path, client: TestClient) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 5000, "R-1")
    client.post("/api/tables/kauri/join", headers=ana)
    sock = Socket(client, ana)
    sock.send(type="bet", box=1, amount=1000)
    sock.close()
    url = _url(db)
    assert main(["verify", "--db", url]) == 0
    with Store(url) as store, store.write() as conn:
        conn.execute(text("UPDATE accounts SET balance = balance + 1 WHERE name = 'ana'"))
    assert main(["verify", "--db", url]) == 3
    with Store(url) as store, store.write() as conn:
        conn.execute(text("UPDATE accounts SET balance = balance - 1 WHERE name = 'ana'"))
        conn.execute(text("UPDATE wallet_entries SET amount = 999 WHERE kind = 'debit'"))
    with Store(url) as store:
        problems = verify(store).problems
    assert any("names table 'kauri'" in p for p in problems), problems


# ---------------------------------------------------------------------- limits on play


def _limit(client: TestClient, who: dict[str, str], kind: str, value: int | None) -> str:
    r = client.post("/api/limits", json={"kind": kind, "value": value}, headers=who)
    assert r.status_code == 200, r.text
    effective: str = r.json()["effective_at"]
    return effective


def test_a_lower_limit_holds_at_once_a_higher_one_after_a_day(client: TestClient) -> None:
    ana = register(client, "ana")
    first = _limit(client, ana, "deposit-day", 10_000)
    assert client.get("/api/limits", headers=ana).json()["limits"] == {"deposit-day": 10_000}
    later = _limit(client, ana, "deposit-day", 20_000)  # a raise waits a day
    assert later > first
    shown = client.get("/api/limits", headers=ana).json()
    assert shown["limits"] == {"deposit-day": 10_000} and shown["pending"][0]["value"] == 20_000
    _limit(client, ana, "deposit-day", 5_000)  # lower: at once
    assert client.get("/api/limits", headers=ana).json()["limits"] == {"deposit-day": 5_000}
    assert deposit(client, "ana", 3000, "R-1") == 3000
    cashier = login(client, "tama")
    move = {"account": "ana", "kind": "deposit", "amount": 2001, "reference": "R-2"}
    r = client.post("/api/cashier", json=move, headers=cashier)
    assert r.status_code == 409 and "deposit-day limit is 5000" in r.json()["detail"]


def test_a_wager_past_the_loss_limit_is_refused_in_its_transaction(
    db: Path, client: TestClient
) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 5000, "R-1")
    _limit(client, ana, "loss-day", 1500)
    client.post("/api/tables/kauri/join", headers=ana)
    sock = Socket(client, ana)
    assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
    r = sock.send(type="bet", box=2, amount=1000)  # lost, 2000 would pass 1500
    assert r["code"] == "funds" and "loss-day limit is 1500" in r["error"]
    assert [b["box"] for b in sock.state["boxes"]] == [1]  # nothing changed
    sock.close()
    with Store(_url(db)) as store:
        assert verify(store).ok


def test_the_reality_check_holds_wagers_until_acknowledged(db: Path, client: TestClient) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 5000, "R-1")
    _limit(client, ana, "reality-minutes", 30)
    client.post("/api/tables/kauri/join", headers=ana)
    sock = Socket(client, ana)
    assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"  # the clock starts
    clocks = client.app.state.hub.door.clocks  # type: ignore[attr-defined]
    clocks.clock = lambda: time.time() + 31 * 60  # 31 minutes on
    r = sock.send(type="bet", box=2, amount=1000)
    assert (
        r["code"] == "reality" and "played 31 minutes, net -10.00" in r["error"]
    )  # the wager on the layout
    assert r["reality"] == {"minutes": 31, "net": -1000, "every": 30}  # for the page's dialog
    assert sock.send(type="reality")["type"] == "ok"
    assert sock.send(type="bet", box=2, amount=1000)["type"] == "ok"
    sock.close()
    with Store(_url(db)) as store, store.read() as conn:
        acks = conn.execute(text("SELECT value FROM play_limits WHERE kind='reality-ack'"))
        assert [int(v) for (v,) in acks] == [31]


def test_a_time_out_logs_out_and_refuses_logins_deposits_and_wagers(client: TestClient) -> None:
    ana = register(client, "ana")
    deposit(client, "ana", 5000, "R-1")
    token = client.post("/api/tables/kauri/join", headers=ana).json()["token"]
    r = client.post("/api/pause", json={"kind": "time-out", "days": 50}, headers=ana)
    assert r.status_code == 422  # a time-out is 1 to 42 days
    r = client.post("/api/pause", json={"kind": "time-out", "days": 2}, headers=ana)
    assert r.status_code == 200, r.text
    assert client.get("/api/me", headers=ana).status_code == 401  # logged out at once
    r = client.post("/api/login", json={"name": "ana", "password": PASSWORD})
    assert r.status_code == 403 and "paused until" in r.json()["detail"]
    client.cookies.clear()
    cashier = login(client, "tama")
    move = {"account": "ana", "kind": "deposit", "amount": 100, "reference": "R-2"}
    assert client.post("/api/cashier", json=move, headers=cashier).status_code == 409
    with client.websocket_connect(f"/ws/kauri?token={token}") as ws:  # the table's token
        assert ws.receive_json()["code"] == "auth"  # opens nothing any more


# ---------------------------------------------------------------------- a hostile player

_ACTIONS = ["hit", "stand", "double", "split", "surrender", "rescue", "insure", "decline"]
_MESSAGES = st.one_of(
    st.builds(dict, type=st.just("bet"), box=st.integers(1, 7), amount=st.integers(1, 10**6)),
    st.builds(dict, type=st.just("deal")),
    st.fixed_dictionaries(
        {"type": st.just("act"), "action": st.sampled_from(_ACTIONS), "box": st.integers(1, 3)},
        optional={
            "hand": st.integers(0, 1),
            "amount": st.integers(1, 10**4),
            "follow": st.sampled_from(["both", 0, 1]),
        },
    ),
    st.builds(
        dict,
        type=st.just("irregularity"),
        kind=st.sampled_from(["void", "absent", "reconstruct"]),
        box=st.integers(1, 7),
        player=st.just("ana"),
    ),
    st.builds(dict, type=st.sampled_from(["leave", "reality", "state", "ping"])),
)


def test_no_message_of_another_player_changes_a_players_money_or_cards(db: Path) -> None:
    """15.3(a): only the seated player decides for the box. While ana is to act, whatever
    ben sends (his own box's moves out of turn, moves on ana's box, procedures, leaving,
    wagers after no more bets) changes neither ana's wallet nor her box, and the ledger holds."""
    with serving(_app(db, cards=TWO)) as client:
        _hostile_ben(db, client)


def _hostile_ben(db: Path, client: TestClient) -> None:
    ana, ben = register(client, "ana"), register(client, "ben")
    for name, ref in (("ana", "R-1"), ("ben", "R-2")):
        deposit(client, name, 5000, ref)
    client.post("/api/tables/kauri/join", headers=ana)
    client.post("/api/tables/kauri/join", headers=ben)
    a, b = Socket(client, ana), Socket(client, ben)
    assert a.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert b.send(type="bet", box=2, amount=1000)["type"] == "ok"
    assert a.send(type="deal")["type"] == "ok"
    a.send(type="state")
    assert a.state["awaiting"]["box"] == 1  # ana's turn (8.3: the dealer's left first)
    before = (a.state["balance"], a.state["boxes"][0])

    @settings(max_examples=40, deadline=None, database=None)
    @given(st.lists(_MESSAGES, min_size=1, max_size=6))
    def ben_tries(messages: list[dict[str, Any]]) -> None:
        for m in messages:
            reply = b.send(**m)
            assert reply["type"] == "error" or m["type"] in ("state", "ping", "reality"), m
        a.send(type="state")
        assert (a.state["balance"], a.state["boxes"][0]) == before

    ben_tries()
    a.close()
    b.close()
    with Store(_url(db)) as store:
        assert verify(store).ok


def test_a_welcome_gives_each_new_player_play_money_once(db: Path) -> None:
    """``pontoon serve --accounts --welcome CENTS`` (make run): a house deposit on registering."""
    rules = load_rules("nz-pontoon")
    app = create_app(
        _url(db),
        [TableConfig("kauri", rules)],
        accounts=True,
        password_strength="minimum",
        welcome=100_000,
    )
    with serving(app) as client:
        ana = register(client, "ana")
        assert client.get("/api/me", headers=ana).json()["balance"] == 100_000
    with Store(_url(db)) as store:
        entries = Accounts(store).entries("ana")
        assert [(e["kind"], e["reference"]) for e in entries] == [("deposit", "welcome:ana")]
        assert verify(store).ok


def test_a_double_the_wallet_cannot_pay_is_refused_and_its_card_goes_back(
    db: Path, client: TestClient
) -> None:
    """12: ana doubles 17, and her wallet was emptied meanwhile behind the server's back (the
    store is the truth, the server's copy of the balance is stale): the debit fails in the
    store, the double is refused (funds) and taken back, its card back on the shoe: the
    dealer draws it, as if nothing had happened."""
    ana = register(client, "ana")
    deposit(client, "ana", 2500, "R-1")
    client.post("/api/tables/kauri/join", headers=ana)
    sock = Socket(client, ana)
    assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert sock.send(type="deal")["type"] == "ok"
    sock.send(type="state")
    dealt = sock.state["events"]
    with Store(_url(db)) as store:  # another process pays 1000 out of the wallet
        Accounts(store).cashier("ana", Movement.WITHDRAWAL, 1000, "R-2", "tama")
    r = sock.send(type="act", action="double", box=1)
    assert r["code"] == "funds" and "not recorded" in r["error"], r
    sock.send(type="state")
    assert sock.state["boxes"][0]["hands"][0]["cards"] == ["QS", "7H"]
    assert sock.state["events"] == dealt  # nor is the double among the round's events
    assert sock.send(type="act", action="stand", box=1)["type"] == "ok"
    sock.send(type="state")
    assert sock.state["dealer"]["cards"] == ["9C", "6D", "KD"]  # 6D, not lost with the double
    sock.close()
    with Store(_url(db)) as store:
        assert verify(store).ok
    assert client.get("/api/me", headers=login(client, "ana")).json()["balance"] == 2500


def _replaced(sock: Socket) -> str:
    """The words ``sock`` was closed with for one socket too many (4409); a socket still
    open answers the ping, and the test fails."""
    with contextlib.suppress(Exception):  # (closed already: nothing to send on)
        sock.ws.send_json({"type": "ping", "id": "still-open?"})
    m = sock.ws.receive_json()
    while m["type"] == "state":
        m = sock.ws.receive_json()
    assert m.get("code") == "sockets", f"the socket is still open: {m}"
    with pytest.raises(WebSocketDisconnect) as closing:
        sock.ws.receive_json()
    assert closing.value.code == 4409
    return str(m["error"])


@pytest.mark.parametrize("processes, bound", [(1, 3), (2, 2)])
def test_an_accounts_sockets_are_bounded_over_its_sessions_and_its_processes(
    db: Path, processes: int, bound: int
) -> None:
    """A bound of 3 sockets an account: one process allows 3 over all its sessions (each
    session alone may hold 4 at a table); each of 2 processes allows 2, so that together they
    allow no more than the bound rounded up (a table's sockets all go to its one owner)."""
    leasing = Leasing("127.0.0.1:9", 30.0, processes=processes) if processes > 1 else None
    with serving(_app(db, Limits(sockets_per_account=3), leasing=leasing)) as client:
        phone = register(client, "ana")
        laptop = login(client, "ana")
        client.post("/api/tables/kauri/join", headers=phone)
        socks = [Socket(client, phone if i % 2 else laptop) for i in range(bound)]
        Socket(client, phone)  # one more than this process allows the account
        assert "this account opened more than" in _replaced(socks[0])
        socks[1].send(type="ping")  # the others stay


def test_what_a_stranger_reads_of_the_server_names_nobody_and_no_money(db: Path) -> None:
    """``/api/stats``, ``/api/server``, ``/livez`` and ``/readyz`` answer anyone (a load
    balancer, the bench): after a round played for money, none of them names a player, a
    table, a balance or a card."""
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        deposit(client, "ana", 98_765, "R-1")
        assert client.post("/api/tables/kauri/join", headers=ana).status_code == 200
        sock = Socket(client, ana)
        assert sock.send(type="bet", box=1, amount=4321)["type"] == "ok"
        assert sock.send(type="deal")["type"] == "ok"
        _play_out(sock)
        client.cookies.clear()
        for path in ("/api/stats", "/api/server", "/livez", "/readyz"):
            r = client.get(path)
            assert r.status_code == 200, path
            said = r.text.lower()
            for secret in ("ana", "kauri", "98765", "987.65", "4321", "43.21", "queen", '"qs"'):
                assert secret not in said, (path, secret)
