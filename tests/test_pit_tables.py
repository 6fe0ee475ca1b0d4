"""The pit boss opens and closes tables and sets their limits; each change
is recorded with who made it and outlives a restart (a round in play under the new limits
is resumed, not voided); nobody else may make it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from pontoon.store.accounts import Role
from pontoon.store.db import Store
from pontoon.store.schema import staff_actions
from tests.test_accounts import (  # noqa: F401
    PASSWORD,
    Socket,
    _app,
    _people,
    _play_out,
    _url,
    db,
    deposit,
    login,
    register,
)
from tests.test_server_helpers import serving

pytestmark = pytest.mark.integration  # the server, served in this process


def test_the_pit_boss_closes_opens_and_sets_limits_and_they_outlive_a_restart(
    db: Path,  # noqa: F811
) -> None:
    people = _people(db)
    people.create("pita", PASSWORD, Role.PITBOSS)
    people.store.close()
    with serving(_app(db)) as client:
        pit = login(client, "pita")
        (kauri,) = client.get("/api/pit/tables", headers=pit).json()
        assert kauri["open"] and kauri["table_min"] == 500
        ana = register(client, "ana")
        deposit(client, "ana", 50_000, "r1")
        assert client.post("/api/tables/kauri/join", headers=ana).status_code == 200
        sock = Socket(client, ana)
        r = client.post("/api/pit/tables/kauri", json={"open": False}, headers=pit)
        assert r.status_code == 200 and r.json()["open"] is False
        refused = sock.send(type="bet", box=1, amount=1000)
        assert refused["type"] == "error" and refused["code"] == "closed"
        assert sock.state["boxes"] == [] or all(not b["players"] for b in sock.state["boxes"])
        client.post("/api/pit/tables/kauri", json={"open": True}, headers=pit)
        assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
        # limits change between rounds only
        r = client.post("/api/pit/tables/kauri", json={"table_min": 2000}, headers=pit)
        assert r.status_code == 409 and "between rounds" in r.json()["detail"]
        assert sock.send(type="deal")["type"] == "ok"
        _play_out(sock)
        r = client.post(
            "/api/pit/tables/kauri", json={"table_min": 2000, "table_max": 40_000}, headers=pit
        )
        assert r.status_code == 200 and r.json()["table_min"] == 2000
        low = sock.send(type="bet", box=1, amount=1000)
        assert low["type"] == "error" and low["rule"] == "15.6"
        r = client.post("/api/pit/tables/kauri", json={"table_min": 50_000}, headers=pit)
        assert r.status_code == 409 and "table_min" in r.json()["detail"]  # above the maximum
        assert sock.send(type="bet", box=1, amount=2000)["type"] == "ok"  # left in play
        assert sock.send(type="deal")["type"] == "ok"
        # nobody else: a player, a supervisor, a request without its CSRF token
        assert (
            client.post("/api/pit/tables/kauri", json={"open": False}, headers=ana).status_code
            == 403
        )
        mere = login(client, "mere")
        assert (
            client.post("/api/pit/tables/kauri", json={"open": False}, headers=mere).status_code
            == 403
        )
        no_csrf = {"cookie": pit["cookie"]}
        assert (
            client.post("/api/pit/tables/kauri", json={"open": False}, headers=no_csrf).status_code
            == 403
        )
        assert (
            client.post("/api/pit/tables/kauri", json={"open": False}, headers=pit).status_code
            == 200
        )
        sock.close()
    with Store(_url(db)) as store, store.read() as conn:
        rows = conn.execute(select(staff_actions.c.account, staff_actions.c.action)).all()
    assert [tuple(r) for r in rows if r[0] == "pita"] == [
        ("pita", "close"),
        ("pita", "open"),
        ("pita", "limits 2000 40000"),
        ("pita", "close"),
    ]
    with serving(_app(db)) as client:  # a restart: still closed, still its limits
        (kauri,) = client.get("/api/pit/tables", headers=login(client, "pita")).json()
        assert kauri["open"] is False and (kauri["table_min"], kauri["table_max"]) == (2000, 40_000)
        # the round left in play under the new limits is resumed, not voided (16.5)
        assert kauri["in_play"] is True
        state = client.get("/api/tables/kauri/state").json()
        assert state["boxes"][0]["original"] == {"ana": 2000}
        assert client.get("/api/pit/tables").status_code == 401
