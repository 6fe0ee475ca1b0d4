"""The house's people over their lifetime, as an attacker and an auditor would try them: staff
disabled, enabled, moved to another role, a password reset or changed — each by a member of
staff who proves who they are, each in the house's chained record — and every way a person's
sessions end (a logout, a pause, a disabled account, a changed password) ending their logins,
table tokens and sockets at once, in this process and in any other on the store."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from sqlalchemy import select
from starlette.websockets import WebSocketDisconnect

from pontoon.cli import main
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from pontoon.store.house import HOUSE
from pontoon.store.schema import account_sessions, events
from pontoon.store.verify import verify
from tests.test_accounts import PASSWORD, Socket, _app, _people, _url, deposit, login, register
from tests.test_server_helpers import serving

pytestmark = pytest.mark.integration  # the server, served in this process


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "people.db"
    people = _people(path)
    people.create("mere", PASSWORD, Role.SUPERVISOR)
    people.create("tama", PASSWORD, Role.CASHIER)
    people.create("rangi", PASSWORD, Role.PITBOSS)
    people.store.close()
    return path


def _house_records(url: str) -> list[dict[str, Any]]:
    with Store(url) as store, store.read() as conn:
        c = events.c
        rows = conn.execute(
            select(c.by, c.detail).where(c.table_id == HOUSE, c.kind == "record").order_by(c.seq)
        )
        return [{"by": by, **json.loads(str(detail))} for by, detail in rows]


def _closed(sock: Socket, within: float = 0.0) -> dict[str, Any]:
    """The message the server closed ``sock`` with, at once or ``within`` seconds: a socket
    still open answers a ping (``ok``), asked again until then, and after that the test
    fails."""
    deadline = time.monotonic() + within
    with contextlib.suppress(Exception):  # (already closed: nothing to send on)
        sock.ws.send_json({"type": "ping", "id": "still-open?"})
    while True:
        m: dict[str, Any] = sock.ws.receive_json()
        if m["type"] == "ok" and time.monotonic() < deadline:
            time.sleep(0.05)  # (the poll's interval)
            with contextlib.suppress(Exception):
                sock.ws.send_json({"type": "ping", "id": "still-open?"})
            continue
        assert m["type"] != "ok", "the socket is still open"
        if m["type"] == "error":
            with pytest.raises(WebSocketDisconnect) as closing:
                sock.ws.receive_json()
            assert closing.value.code == 4401
            return m


# ---------------------------------------------------------------------- the command line


def test_a_cashier_on_the_command_line_proves_who_they_are(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--by`` names a cashier, and only that cashier's password makes the entry: a name
    given unproven, a wrong password, or another role's password are refused (exit 2)."""
    url = _url(db)
    _people(db).create("ana", PASSWORD)
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    right.write_text(PASSWORD + "\n")
    wrong.write_text("not the password\n")
    move = ["cashier", "deposit", "ana", "2500", "--reference", "R9", "--db", url, "--json"]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # nothing typed: an empty password
    assert main([*move, "--by", "tama"]) == 2
    assert "not authenticated" in capsys.readouterr().err
    assert main([*move, "--by", "tama", "--by-password-file", str(wrong)]) == 2
    assert "not authenticated" in capsys.readouterr().err
    assert main([*move, "--by", "mere", "--by-password-file", str(right)]) == 2  # no cashier
    assert main([*move, "--by", "tama", "--by-password-file", str(right)]) == 0
    assert '"balance": 2500' in capsys.readouterr().out
    (entry,) = _people(db).entries("ana")
    assert entry["by"] == "tama"


def test_a_cashier_opens_a_players_account_at_the_cage(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pontoon player add NAME --by CASHIER``: the cashier proves who they are; the player's
    account opens with the password given, and is a player's (a role name stays reserved)."""
    url = _url(db)
    right, theirs = tmp_path / "right", tmp_path / "theirs"
    right.write_text(PASSWORD + "\n")
    theirs.write_text("bob's own passphrase\n")
    add = ["player", "add", "bob", "--db", url, "--password-file", str(theirs)]
    wrong = tmp_path / "wrong"
    wrong.write_text("not it\n")
    assert main([*add, "--by", "tama", "--by-password-file", str(wrong)]) == 2
    assert _people(db).get("bob") is None
    assert main([*add, "--by", "tama", "--by-password-file", str(right)]) == 0
    bob = _people(db).check("bob", "bob's own passphrase")
    assert bob is not None and str(bob.role) == "player"
    capsys.readouterr()
    taken = ["player", "add", "pitboss", "--db", url, "--password-file", str(theirs)]
    assert main([*taken, "--by", "tama", "--by-password-file", str(right)]) == 2


def test_staff_are_managed_by_a_pit_boss_who_authenticates_and_each_change_is_chained(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _url(db)
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    fresh = tmp_path / "fresh"
    fresh.write_text("a new long password\n")
    add = ["staff", "add", "hemi", "--role", "dealer", "--password-file", str(pw), "--db", url]
    add += ["--password-strength", "minimum"]
    assert main(add) == 2  # a pit boss exists: only a pit boss adds staff
    assert "--by PITBOSS" in capsys.readouterr().err
    assert main([*add, "--by", "tama", "--by-password-file", str(pw)]) == 2  # a cashier
    assert main([*add, "--by", "rangi", "--by-password-file", str(pw)]) == 0
    boss = ["--by", "rangi", "--by-password-file", str(pw), "--db", url, "--json"]
    assert main(["staff", "role", "hemi", "supervisor", *boss]) == 0
    assert main(["staff", "disable", "hemi", *boss]) == 0
    capsys.readouterr()
    people = _people(db)
    assert people.check("hemi", PASSWORD) is not None  # the password is right,
    assert people.get("hemi") == ("hemi", Role.SUPERVISOR, 0, True)  # but the account is off
    assert main(["staff", "enable", "hemi", *boss]) == 0
    assert main(["staff", "reset", "hemi", *boss, "--password-file", str(fresh)]) == 0
    assert people.check("hemi", PASSWORD) is None
    assert people.check("hemi", "a new long password") is not None
    own = ["staff", "password", "hemi", "--db", url, "--password-file", str(pw)]
    assert main([*own, "--by-password-file", str(pw)]) == 2  # the old one is wrong now
    assert main([*own, "--by-password-file", str(fresh)]) == 0
    assert people.check("hemi", PASSWORD) is not None
    assert main(["staff", "role", "mere", "player", *boss]) == 2  # staff stay staff
    assert "invalid choice" in capsys.readouterr().err
    records = [r for r in _house_records(url) if r["table"] == "accounts"]
    mine = [r for r in records if r["row"]["name"] == "hemi"]
    assert [r["by"] for r in mine] == [None, "rangi", "rangi", "rangi", "rangi", "hemi"]
    rows = [r["row"] for r in mine]
    assert [r["role"] for r in rows] == ["dealer"] + ["supervisor"] * 5
    assert [r["disabled_at"] is not None for r in rows[1:4]] == [False, True, False]
    assert len({r["password"] for r in rows}) == 3
    assert verify(people.store).ok


# ---------------------------------------------------------------------- the server


def test_a_logout_ends_every_login_table_token_and_socket_at_once(db: Path) -> None:
    """Before: the socket and the table's token outlived the logout."""
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        other = login(client, "ana")  # another device
        deposit(client, "ana", 5000, "R-1")
        token = client.post("/api/tables/kauri/join", headers=ana).json()["token"]
        sock = Socket(client, ana)
        assert client.post("/api/logout", headers=ana).status_code == 200
        assert "log in again" in str(_closed(sock)["error"])
        assert client.get("/api/me", headers=other).status_code == 401
        assert client.get(f"/api/tables/kauri/state?token={token}").status_code == 401
        again = login(client, "ana")  # the seat and its money are still there
        sock = Socket(client, again)
        assert (
            "ana" in sock.state["players"]
            or any(b.get("player") == "ana" for b in sock.state.get("boxes", []))
            or sock.state.get("you") == "ana"
        )
        sock.close()


def test_a_pit_boss_disables_an_account_and_it_opens_nothing_at_once(db: Path) -> None:
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        client.post("/api/tables/kauri/join", headers=ana)
        sock = Socket(client, ana)
        boss = login(client, "rangi")
        cashier = login(client, "tama")
        r = client.post("/api/staff/ana", json={"action": "disable"}, headers=cashier)
        assert r.status_code == 403  # a cashier changes no account
        r = client.post("/api/staff/ana", json={"action": "disable"}, headers=boss)
        assert r.status_code == 200, r.text
        _closed(sock)
        r = client.post("/api/login", json={"name": "ana", "password": PASSWORD})
        assert r.status_code == 403 and "disabled" in r.text
        client.cookies.clear()
        r = client.post("/api/login", json={"name": "ana", "password": "wrong password"})
        assert r.status_code == 401  # a guesser is not told
        client.cookies.clear()
        r = client.post("/api/staff/ana", json={"action": "enable"}, headers=boss)
        assert r.status_code == 200
        login(client, "ana")
        r = client.post("/api/staff/nobody", json={"action": "disable"}, headers=boss)
        assert r.status_code == 404


def test_a_password_change_ends_the_other_sessions(db: Path) -> None:
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        phone = login(client, "ana")
        body = {"old": "wrong password", "new": "a new long password"}
        assert client.post("/api/password", json=body, headers=ana).status_code == 403
        body["old"] = PASSWORD
        assert client.post("/api/password", json=body, headers=ana).status_code == 200
        assert client.get("/api/me", headers=phone).status_code == 401
        assert client.get("/api/me", headers=ana).status_code == 401
        login(client, "ana", "a new long password")


def test_a_self_exclusion_closes_the_players_sockets_at_once(db: Path) -> None:
    """Before: the socket went on, and the table's token opened the table."""
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        token = client.post("/api/tables/kauri/join", headers=ana).json()["token"]
        sock = Socket(client, ana)
        r = client.post("/api/pause", json={"kind": "self-exclusion", "days": 180}, headers=ana)
        assert r.status_code == 200
        _closed(sock)
        with client.websocket_connect(f"/ws/kauri?token={token}") as ws:
            assert ws.receive_json()["code"] == "auth"


def test_sessions_ended_by_another_process_close_the_sockets_here(db: Path) -> None:
    """Another process on the store (here: the store's API from the test, as any process
    would) ends ana's sessions: this server closes her socket within its watch's second."""
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        client.post("/api/tables/kauri/join", headers=ana)
        sock = Socket(client, ana)
        elsewhere = Accounts(Store(_url(db)), hasher("minimum"))
        elsewhere.revoke("ana")
        _closed(sock, within=20.0)  # (the watch looks every second)
        assert client.get("/api/me", headers=ana).status_code == 401
        elsewhere.store.close()


def test_expired_logins_are_purged(db: Path) -> None:
    people = _people(db)
    people.create("ana", PASSWORD)
    people.open_session("ana", 0.01)
    kept = people.open_session("ana", 3600)
    time.sleep(0.05)  # the clock under test: the brief login's 0.01 s pass
    assert people.purge_sessions() == 1
    with people.store.read() as conn:
        assert len(conn.execute(account_sessions.select()).all()) == 1
    assert people.session(kept) is not None
