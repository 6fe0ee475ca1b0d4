"""The table server's protocol: roles, seats, refusals, a full round, timers, recovery."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.app import create_app
from pontoon.server.protocol import MAX_MESSAGE
from pontoon.server.table import TableConfig
from pontoon.shoe import commitment_of, shoe_text
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.shoestate import uncompact
from tests.helpers import wait_until
from tests.test_server_helpers import (
    SUPERVISOR,
    Player,
    free_port,
    in_thread,
    serving,
    stacked,
    start_server,
)

pytestmark = pytest.mark.integration  # the server, served in this process

# Draw order: burn, box 1, box 2, dealer, box 1, box 2, then the play (see test_full_round)
ROUND = ["4D", "8S", "5C", "AS", "8H", "6D", "7C", "KD", "9H", "9C", "6S", "2C"]


def _app(
    db: Path, cards: list[str] | None = None, turn: float = 30.0, session: float = 86400.0
) -> Any:
    rules = load_rules("nz-pontoon")
    configs = [
        TableConfig("kauri", rules, turn, 30.0, 100_000, stacked(cards or ROUND), session),
        TableConfig("rimu", rules.replace(table_min=2000), turn, 30.0, 100_000, None, session),
    ]
    return create_app(f"sqlite:///{db}", configs, SUPERVISOR)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "server.db"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with serving(_app(db)) as c:
        yield c


def _verify(db: Path) -> None:
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0


def _seat_three(client: TestClient) -> tuple[Player, Player, Player]:
    ana, ben, cat = (Player(client, "kauri", n) for n in ("ana", "ben", "cat"))
    assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert ben.send(type="bet", box=1, amount=500)["type"] == "ok"  # behind ana (15.3)
    assert cat.send(type="bet", box=2, amount=2000)["type"] == "ok"
    assert cat.send(type="deal")["type"] == "ok"
    return ana, ben, cat


def _events(state: dict[str, Any]) -> list[dict[str, Any]]:
    return list(state["events"])


def test_tables_join_and_names(client: TestClient) -> None:
    tables = client.get("/api/tables").json()
    assert [t["name"] for t in tables] == ["kauri", "rimu"]
    assert tables[1]["rules"]["table_min"] == 2000  # each table its own limits
    r = client.post("/api/tables/kauri/join", json={"name": "ana"})
    token = r.json()["token"]
    assert len(token) >= 32
    assert client.post("/api/tables/kauri/join", json={"name": "ana"}).status_code == 409
    assert client.post("/api/tables/kauri/join", json={"name": "a b<"}).status_code == 422
    assert client.post("/api/tables/nope/join", json={"name": "x"}).status_code == 404
    s = client.get(f"/api/tables/kauri/state?token={token}").json()
    assert s["you"] == "ana" and s["balance"] == 100_000
    assert client.get("/api/tables/kauri/state?token=forged").status_code == 401
    assert "<html" in client.get("/").text.lower()


@pytest.mark.parametrize("token", [None, "forged-token"])
def test_missing_or_forged_token_is_refused(client: TestClient, token: str | None) -> None:
    ana = Player(client, "kauri", "ana")
    url = "/ws/kauri" + (f"?token={token}" if token else "")
    with client.websocket_connect(url) as ws:
        m = ws.receive_json()
        assert m["type"] == "error" and m["code"] == "auth"
    # a token of another table is no good here either
    with client.websocket_connect(f"/ws/rimu?token={ana.token}") as ws:
        assert ws.receive_json()["code"] == "auth"
    assert ana.fresh()["you"] == "ana"  # the others are still connected
    ana.close()


def test_refusals_change_nothing(client: TestClient) -> None:
    ana, ben, cat = _seat_three(client)
    before = ana.fresh()
    v = before["version"]
    checks = [
        (cat.act("hit", 2), "8.3"),  # out of turn: box 1 is to act first
        (cat.act("hit", 1), None),  # another player's box
        (ben.act("hit", 1), "15.3(a)"),  # a player behind does not decide for the box
        (ben.act("stand", 1), "15.3(a)"),
        (ana.act("fly", 1), "8.3"),
        (ana.send(type="irregularity", kind="void"), None),  # supervisor only
        (ana.send(type="bet", box=3, amount=1000), "8.2"),  # no bets after no more bets
    ]
    for reply, rule in checks:
        assert reply["type"] == "error", reply
        assert reply["error"]
        if rule:
            assert reply.get("rule") == rule, reply
    assert checks[1][0]["code"] == "seat"
    assert checks[5][0]["code"] == "role"
    bad = [
        cat.send_raw("x" * (MAX_MESSAGE + 1)),
        cat.send_raw("{not json"),
        cat.send_raw("[1, 2]"),
        cat.send_raw('{"type": "act", "action": "hit"}'),
        cat.send_raw('{"type": "act", "action": "hit", "box": 1, "evil": true}'),
        cat.send_raw('{"type": "act", "action": "hit", "box": "1"}'),
        cat.send_raw('{"type": "launch"}'),
    ]
    for reply in bad:
        assert reply["type"] == "error" and reply["code"] == "invalid", reply
    assert "too large" in bad[0]["error"] and "not JSON" in bad[1]["error"]
    assert "box" in bad[3]["error"]
    after = ana.fresh()
    assert after["version"] == v
    assert after["boxes"] == before["boxes"] and after["dealer"] == before["dealer"]
    for p in (ana, ben, cat):  # nobody was disconnected
        assert p.fresh()["version"] == v
        p.close()


def test_full_round_split_behind_double_insurance_bust(client: TestClient, db: Path) -> None:
    ana, ben, cat = _seat_three(client)
    s = ana.fresh()
    assert s["dealer"]["cards"] == ["AS"]
    assert [b["hands"][0]["cards"] for b in s["boxes"]] == [["8S", "8H"], ["5C", "6D"]]
    assert {m["action"] for m in s["legal"]} >= {"split", "insure", "no-insurance"}
    # insurance against the dealer's ace: a player behind insures, the others decline (10)
    assert ben.act("insure", 1, amount=250)["type"] == "ok"
    assert cat.act("no-insurance", 2)["type"] == "ok"
    assert ana.act("no-insurance", 1)["type"] == "ok"
    # the seated player splits; the player behind follows both hands (15.3(d))
    assert ana.act("split", 1)["type"] == "ok"
    s = ben.fresh()
    assert s["awaiting"]["kind"] == "follow" and s["awaiting"]["players"] == ["ben"]
    assert {m["action"] for m in s["legal"]} == {"split", "decline"}
    assert ana.act("hit", 1)["type"] == "error"  # ana waits for ben (15.3(d))
    assert ben.act("split", 1, follow="both")["type"] == "ok"
    assert ana.act("hit", 1)["type"] == "ok"  # 8 7 K: bust
    assert ana.act("stand", 1)["type"] == "ok"  # 8 9
    assert cat.act("double", 2)["type"] == "ok"  # 5 6 9
    s = cat.fresh()
    assert s["phase"] == "over"
    assert s["dealer"]["cards"] == ["AS", "6S", "2C"]
    hands = s["boxes"][0]["hands"]
    assert hands[0]["cards"] == ["8S", "7C", "KD"] and hands[0]["total"] > 21
    assert [w["player"] for w in hands[1]["wagers"]] == ["ana", "ben"]
    kinds = {(e["kind"], e.get("detail")) for e in _events(s)}
    follows = [(e["player"], e["follow"]) for e in _events(s) if "follow" in e]
    assert follows == [("ben", "both")] and ("action", "insure") in kinds  # 15.3(d)
    assert ("outcome", "bust") in kinds
    assert s["result"] == {"ana": -2000, "ben": -1250, "cat": 4000}
    assert s["balance"] == 104_000
    hist = client.get("/api/tables/kauri/history").json()
    assert len(hist) == 1
    doc = client.get(f"/api/rounds/{hist[0]['id']}").json()
    assert doc["round"]["status"] == "over"
    assert all("card" not in e for e in doc["events"] if e["kind"] == "burn")
    for p in (ana, ben, cat):
        p.close()
    _verify(db)


def test_no_state_reveals_the_shoe_or_a_hole_card(db: Path) -> None:
    rules = load_rules("nz-pontoon", {"dealer_peeks": "true"})
    app = create_app(f"sqlite:///{db}", [TableConfig("peek", rules, 30, 30, 100_000)], SUPERVISOR)
    with serving(app) as c:
        ana = Player(c, "peek", "ana")
        ana.send(type="bet", box=1, amount=1000)
        ana.send(type="deal")
        s = ana.fresh()
        assert s["dealer"]["hole"] is True or s["phase"] == "over"
        for e in s["events"]:
            if e["kind"] in ("hole", "burn"):
                assert "card" not in e
        assert not {"shoe", "remaining", "hole_card", "cards_left"} & set(s)
        assert "None" not in str([e["text"] for e in s["events"]])
        # the shoe's commitment, and nothing of its order or salt (docs/operators/fairness.md)
        assert re.fullmatch("[0-9a-f]{64}", s["fairness"]["commitment"])
        assert not {"order", "salt", "text"} & set(s["fairness"])
        assert all("detail" not in e for e in s["events"] if e["kind"] == "disclose")
        ana.close()
    with Store(f"sqlite:///{db}") as store:
        stored = json.loads(TableLog(store, "peek").shoe_state[1])  # type: ignore[index]
    text = json.dumps(s)
    assert stored["salt"] not in text and stored["order"] not in text
    order, salt = uncompact(stored["order"]), bytes.fromhex(stored["salt"])
    committed = shoe_text(order, salt, len(order) - stored["behind_cut"])
    assert commitment_of(committed) == s["fairness"]["commitment"]  # the shoe in play's


def test_two_clicks_apply_once(client: TestClient) -> None:
    ana, ben, cat = _seat_three(client)
    for p in (ana, ben, cat):
        p.act("no-insurance", 1 if p is not cat else 2)
    s = ana.fresh()
    first = ana.send(type="act", action="split", box=1, id="click-1", v=s["version"])
    again = ana.send(type="act", action="split", box=1, id="click-1", v=s["version"])
    assert first["type"] == "ok" and again.get("duplicate") is True
    stale = ana.send(type="act", action="stand", box=1, v=s["version"])
    assert stale["type"] == "error" and stale["code"] == "stale"
    assert len(ana.fresh()["boxes"][0]["hands"]) == 2
    for p in (ana, ben, cat):
        p.close()


def test_reconnect_gets_the_current_state(client: TestClient) -> None:
    ana, ben, cat = _seat_three(client)
    v = ana.fresh()["version"]
    ana.close()
    again = Player(client, "kauri", "ana", token=ana.token)
    assert again.state["version"] == v and again.state["you"] == "ana"
    assert any(m["action"] == "split" for m in again.state["legal"])
    for p in (again, ben, cat):
        p.close()


def test_timer_applies_16_6_to_an_absent_player(db: Path) -> None:
    with serving(_app(db, turn=0.3)) as c:
        ana = Player(c, "kauri", "ana")
        ana.send(type="bet", box=1, amount=1000)
        ana.send(type="deal")
        assert ana.state["deadline_ms"] is not None  # the deal's state (the timer is 0.3 s)
        s = wait_until(lambda: (t := ana.fresh())["phase"] == "over" and t, 30, "the round over")
        assert any(e["kind"] == "irregularity" and e.get("rule") == "16.6" for e in s["events"])
        ana.close()
    _verify(db)


def test_joining_or_leaving_keeps_the_turn_timer_running(db: Path) -> None:
    with serving(_app(db, turn=0.5)) as c:
        ana = Player(c, "kauri", "ana")
        ana.send(type="bet", box=1, amount=1000)
        ana.send(type="deal")
        ben = Player(c, "kauri", "ben")  # a join and a leave move the version on...
        assert ben.send(type="leave")["type"] == "ok"
        ben.close()
        wait_until(lambda: ana.fresh()["phase"] == "over", 30, "the round over")
        assert ana.fresh()["phase"] == "over"  # ...and the timer still plays ana's turn (16.6)
        ana.close()
    _verify(db)


def test_supervisor_voids_the_round(client: TestClient, db: Path) -> None:
    ana, ben, cat = _seat_three(client)
    sup = Player(client, "kauri", None, token=SUPERVISOR)
    assert sup.state["role"] == "supervisor" and sup.state["legal"] == []
    bad = sup.send(type="irregularity", kind="no-such-thing")
    assert bad["type"] == "error" and bad["rule"] == "16"
    assert sup.act("hit", 1)["code"] == "role"
    assert sup.send(type="irregularity", kind="void")["type"] == "ok"
    s = ana.fresh()
    assert s["phase"] == "over"
    assert s["balance"] == 100_000
    for p in (ana, ben, cat, sup):
        p.close()
    _verify(db)


def test_a_restarted_server_resumes_its_tables(db: Path) -> None:
    with serving(_app(db)) as c:
        ana, ben, cat = _seat_three(c)
        for p, box in ((ana, 1), (ben, 1), (cat, 2)):
            p.act("no-insurance", box)
        ana.act("split", 1)
        before = ana.fresh()
        for p in (ana, ben, cat):
            p.close()
    with serving(_app(db, cards=["4D"])) as c:
        sup = Player(c, "kauri", None, token=SUPERVISOR)
        s = sup.fresh()
        assert s["phase"] == "playing"
        assert s["boxes"] == before["boxes"] and s["dealer"] == before["dealer"]
        assert any("resumed" in n for n in s["notes"])
        sup.close()
    _verify(db)


def test_serve_defaults() -> None:
    from pontoon.cli import build_parser
    from pontoon.server.serve import table_configs

    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.db) == ("127.0.0.1", 8000, "sqlite:///pontoon.db")
    configs = table_configs(args)
    assert [c.name for c in configs] == ["kauri", "rimu"]
    assert configs[1].rules.table_min > configs[0].rules.table_min
    assert configs[0].session_seconds == 24 * 3600
    args = build_parser().parse_args(["serve", "--session-hours", "0.5"])
    assert table_configs(args)[1].session_seconds == 1800


def test_pontoon_serve_prints_its_url_and_serves(tmp_path: Path) -> None:
    import httpx

    port = free_port()
    proc = start_server(tmp_path, port, [])  # checks the URL it prints
    try:
        r = httpx.get(f"http://127.0.0.1:{port}/api/tables", timeout=5)
        assert [t["name"] for t in r.json()] == ["kauri", "rimu"]
        assert (tmp_path / "pontoon.db").exists()  # the embedded default store
    finally:
        proc.terminate()
        proc.wait(20)


def test_one_player_holds_several_boxes(client: TestClient, db: Path) -> None:
    ana = Player(client, "kauri", "ana")  # 15.4: up to boxes_per_player boxes
    assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert ana.send(type="bet", box=2, amount=1000)["type"] == "ok"
    assert ana.send(type="deal")["type"] == "ok"
    for box in (1, 2):
        ana.act("no-insurance", box)
    for _ in range(20):
        s = ana.fresh()
        if s["phase"] == "over":
            break
        move = next(m for m in s["legal"] if m["action"] in ("stand", "hit"))
        assert ana.act(move["action"], move["box"])["type"] == "ok"
    assert s["phase"] == "over" and {b["seated"] for b in s["boxes"]} == {"ana"}
    ana.close()
    _verify(db)


def test_sigkilled_server_resumes_its_round(tmp_path: Path) -> None:
    import json
    import signal
    import subprocess

    import httpx
    from websockets.sync.client import connect

    port = free_port()

    def start() -> subprocess.Popen[str]:
        return start_server(tmp_path, port, ["--supervisor-token", SUPERVISOR, "--table", "kauri"])

    def state(token: str) -> dict[str, Any]:
        r = httpx.get(f"http://127.0.0.1:{port}/api/tables/kauri/state?token={token}")
        out: dict[str, Any] = r.json()
        return out

    proc = start()
    try:
        r = httpx.post(f"http://127.0.0.1:{port}/api/tables/kauri/join", json={"name": "ana"})
        token = r.json()["token"]
        with connect(f"ws://127.0.0.1:{port}/ws/kauri?token={token}") as ws:
            ws.recv()
            for msg in ({"type": "bet", "box": 1, "amount": 1000}, {"type": "deal"}):
                ws.send(json.dumps(msg | {"id": msg["type"]}))
                while (m := json.loads(ws.recv()))["type"] == "state":
                    pass
                assert m["type"] == "ok", m
        before = state(token)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(20)
    proc = start()
    try:
        after = state(SUPERVISOR)
        if before["phase"] == "over":  # a pontoon ended the round at once (9.1)
            assert after["phase"] == "idle" and after["round"] == 2
        else:
            assert after["boxes"] == before["boxes"] and after["dealer"] == before["dealer"]
            assert after["phase"] == before["phase"]
        # ana's session outlived the kill: her old token gives her seat and her decisions
        with connect(f"ws://127.0.0.1:{port}/ws/kauri?token={token}") as ws:
            mine = json.loads(ws.recv())
            assert mine["you"] == "ana" and mine["boxes"] == after["boxes"]
            assert [m["action"] for m in mine["legal"]] == [m["action"] for m in before["legal"]]
            if mine["legal"]:
                move = mine["legal"][0]
                ws.send(json.dumps({"type": "act", "action": move["action"], "box": 1}))
                while (m := json.loads(ws.recv()))["type"] == "state":
                    pass
                assert m["type"] == "ok", m
        taken = httpx.post(f"http://127.0.0.1:{port}/api/tables/kauri/join", json={"name": "ana"})
        assert taken.status_code == 409
    finally:
        proc.terminate()
        proc.wait(20)
    _verify(tmp_path / "pontoon.db")


def test_sessions_survive_a_restart(db: Path) -> None:
    """A player's token opens the same seat after a restart: the store keeps the session
    (only the token's SHA-256), so the name stays taken and nobody else gets the seat."""
    import hashlib
    import sqlite3

    with serving(_app(db)) as c:
        ana, ben, cat = _seat_three(c)
        for p, box in ((ana, 1), (ben, 1), (cat, 2)):
            p.act("no-insurance", box)
        before = ana.fresh()
        assert any(m["action"] == "split" for m in before["legal"])
        tokens = {p.name: p.token for p in (ana, ben, cat)}
        for p in (ana, ben, cat):
            p.close()
    con = sqlite3.connect(db)
    stored = dict(con.execute("SELECT player, token_hash FROM sessions").fetchall())
    dump = "\n".join(con.iterdump())
    con.close()
    assert stored == {n: hashlib.sha256(t.encode()).hexdigest() for n, t in tokens.items()}
    assert not any(t in dump for t in tokens.values())  # the tokens themselves are nowhere
    with serving(_app(db, cards=["4D"])) as c:
        again = Player(c, "kauri", "ana", token=tokens["ana"])
        assert again.state["you"] == "ana" and again.state["role"] == "player"
        assert again.state["boxes"] == before["boxes"]
        assert again.state["players"]["ben"]["connected"] is False
        assert c.post("/api/tables/kauri/join", json={"name": "ana"}).status_code == 409
        assert c.get(f"/api/tables/rimu/state?token={tokens['ana']}").status_code == 401
        assert again.send(type="act", action="split", box=1, id="after-restart")["type"] == "ok"
        assert len(again.fresh()["boxes"][0]["hands"]) == 2
        again.close()
    _verify(db)


def test_totals_are_announced_as_describe_says_and_watchers_see_the_table(
    client: TestClient,
) -> None:
    empty = client.get("/api/tables/kauri/state").json()  # nobody has joined yet
    assert empty["role"] == "watcher" and empty["phase"] == "idle" and empty["legal"] == []
    assert empty["rules"]["boxes"] == 7 and empty["boxes"] == []  # seven empty seats
    ana, ben, cat = _seat_three(client)
    s = ana.fresh()
    assert s["dealer"]["cards"] == ["AS"] and s["dealer"]["text"] == "soft 11"
    assert [b["hands"][0]["text"] for b in s["boxes"]] == ["hard 16", "hard 11"]
    for p in (ana, ben, cat):
        p.close()


def test_the_state_text_sent_is_the_state_document(client: TestClient) -> None:
    """The socket's text (shared part encoded once per version, events once each) decodes to
    exactly the state document."""
    import json

    ana, ben, cat = _seat_three(client)
    ana.act("no-insurance", 1)
    hub = client.app.state.hub  # type: ignore[attr-defined]
    table = hub.tables["kauri"]
    for token in (ana.token, ben.token, SUPERVISOR):
        session = hub.session("kauri", token)
        for _ in range(2):  # the second time from the caches
            doc, text = table.state(session), json.loads(table.state_text(session))
            doc.pop("deadline_ms"), text.pop("deadline_ms")
            assert text == doc and len(doc["events"]) > 5
    for p in (ana, ben, cat):
        p.close()


def test_a_message_applied_before_a_restart_is_not_applied_again(db: Path) -> None:
    """Two clicks apply once, across a restart too: the id of the last message applied for a
    session is written with what it did, so a client that sends it again after the restart
    (the answer never came) is told it was applied."""
    with serving(_app(db)) as c:
        ana, ben, cat = _seat_three(c)
        for p, box in ((ana, 1), (ben, 1), (cat, 2)):
            p.act("no-insurance", box)
        assert ana.send(type="act", action="split", box=1, id="split-1")["type"] == "ok"
        assert ben.act("split", 1, follow="both")["type"] == "ok"
        assert ana.send(type="act", action="hit", box=1, id="hit-1")["type"] == "ok"  # bust
        cards = [len(h["cards"]) for h in ana.fresh()["boxes"][0]["hands"]]
        for p in (ana, ben, cat):
            p.close()
    with serving(_app(db, cards=["4D"])) as c:
        again = Player(c, "kauri", "ana", token=ana.token)
        reply = again.send(type="act", action="hit", box=1, id="hit-1")
        assert reply["type"] == "ok" and reply.get("duplicate") is True
        assert [len(h["cards"]) for h in again.fresh()["boxes"][0]["hands"]] == cards
        again.close()
    _verify(db)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--port", "99999"], "--port must be 0 to 65535, not 99999"),
        (["--turn-seconds", "0"], "--turn-seconds must be more than 0"),
        (["--deal-seconds", "nan"], "argument --deal-seconds: not a finite number: 'nan'"),
        (["--bankroll", "-1"], "--bankroll must be 0 or more cents"),
        (["--session-hours", "0"], "--session-hours must be more than 0"),
        (["--table", "bad name!"], "bad table name"),
    ],
)
def test_serve_bad_options_exit_2_in_one_line(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *options]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def _withdrawals(db: Path) -> list[tuple[str, int]]:
    from sqlalchemy import select

    from pontoon.store.db import Store
    from pontoon.store.schema import ledger

    with Store(f"sqlite:///{db}") as store, store.read() as conn:
        rows = conn.execute(
            select(ledger.c.player, ledger.c.amount)
            .where(ledger.c.kind == "withdrawal")
            .order_by(ledger.c.seq)
        ).all()
    return [(str(p), int(a)) for p, a in rows]


def test_leaving_with_a_wager_in_play_is_refused_and_changes_nothing(
    client: TestClient, db: Path
) -> None:
    ana, ben, cat = _seat_three(client)
    before = ana.fresh()
    for p, box in ((ana, "1"), (ben, "1"), (cat, "2")):
        reply = p.send(type="leave")
        assert reply["type"] == "error" and reply["code"] == "illegal", reply
        assert reply["rule"] == "8.2" and "stands until it is settled" in reply["error"]
        assert f"box {box}" in reply["error"]
    r = client.post("/api/tables/kauri/leave", json={"token": ana.token})
    assert r.status_code == 409 and "stands until" in r.json()["detail"]
    after = ana.fresh()
    assert after["version"] == before["version"] and after["players"] == before["players"]
    assert after["boxes"] == before["boxes"]
    assert ben.act("hit", 1)["code"] == "illegal"  # still at the table: refused as before
    # betting: a wager placed stands too (none is taken back before 'No more bets')
    dan, eve = Player(client, "rimu", "dan"), Player(client, "rimu", "eve")
    assert dan.send(type="bet", box=1, amount=2000)["type"] == "ok"
    assert dan.send(type="leave")["rule"] == "8.2"
    assert eve.send(type="leave")["cashed_out"] == 100_000  # no wager: free to go
    sup = Player(client, "kauri", None, token=SUPERVISOR)
    assert sup.send(type="leave")["code"] == "role"
    for p in (ana, ben, cat, dan, sup):
        p.close()
    assert _withdrawals(db) == [("eve", 100_000)]
    _verify(db)


def test_leaving_between_rounds_cashes_out_and_frees_the_name(db: Path) -> None:
    # burn, box 1, dealer, box 1: ana 20 stands (16.6), the dealer draws to 17; she wins
    with serving(_app(db, ["4D", "KS", "9C", "QH", "8D"], turn=0.2)) as c:
        ana, ben = Player(c, "kauri", "ana"), Player(c, "kauri", "ben")
        assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
        assert ana.send(type="deal")["type"] == "ok"
        # the timer plays the round out (16.6)
        wait_until(lambda: ana.fresh()["phase"] == "over", 30, "the round over")
        s = ana.fresh()
        assert s["phase"] == "over"
        balance = s["balance"]
        assert balance == 101_000
        old = ana.token
        reply = ana.send(type="leave")
        assert reply["type"] == "ok" and reply["cashed_out"] == balance
        ana.close()  # the server closed the socket after the answer
        s = ben.fresh()
        assert "ana" not in s["players"]
        assert reply["version"] <= s["version"]
        # the old token is refused like a forged one, on the socket and over HTTP
        with c.websocket_connect(f"/ws/kauri?token={old}") as ws:
            assert ws.receive_json()["code"] == "auth"
        assert c.get(f"/api/tables/kauri/state?token={old}").status_code == 401
        r = c.post("/api/tables/kauri/leave", json={"token": old})
        assert r.status_code == 401
        # the name joins again as a new session, with a new bankroll; the seat is free
        again = Player(c, "kauri", "ana")
        assert again.token != old and again.state["balance"] == 100_000
        assert again.send(type="bet", box=1, amount=1000)["type"] == "ok"
        # ben leaves over HTTP
        r = c.post("/api/tables/kauri/leave", json={"token": ben.token})
        assert r.status_code == 200 and r.json() == {
            "table": "kauri",
            "player": "ben",
            "cashed_out": 100_000,
        }
        # his open socket was told at once (and closed): that is what it reads next
        assert ben.send(type="state") == {"type": "left", "player": "ben", "cashed_out": 100_000}
        ben.close()
        again.close()
    assert _withdrawals(db) == [("ana", balance), ("ben", 100_000)]
    _verify(db)
    with serving(_app(db)) as c:  # after a restart: the old token stays refused
        assert c.get(f"/api/tables/kauri/state?token={old}").status_code == 401
        assert sorted(c.get("/api/tables").json()[0]["players"]) == ["ana"]


def test_leaving_closes_every_socket_of_the_session_at_once(db: Path) -> None:
    """Two tabs on one token: the one that leaves is answered ``ok`` and closed, the other is
    sent ``left`` and closed at once, without a message of its own; a leave over HTTP does the
    same to every tab of the session. Through uvicorn, as a browser connects."""
    import json

    import httpx
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import ClientConnection, connect

    def answer(ws: ClientConnection) -> dict[str, Any]:
        while True:
            m: dict[str, Any] = json.loads(ws.recv(timeout=20))
            if m["type"] != "state":
                return m

    def close_code(ws: ClientConnection) -> int:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=20)
        assert closed.value.rcvd is not None
        return closed.value.rcvd.code

    with in_thread(_app(db)) as host:
        tokens = {
            n: httpx.post(f"http://{host}/api/tables/kauri/join", json={"name": n}).json()["token"]
            for n in ("ana", "ben", "cat")
        }
        url = f"ws://{host}/ws/kauri?token="
        with (
            connect(url + tokens["ana"]) as ana1,
            connect(url + tokens["ana"]) as ana2,
            connect(url + tokens["ben"]) as ben1,
            connect(url + tokens["ben"]) as ben2,
            connect(url + tokens["cat"]) as cat,
        ):
            for ws in (ana1, ana2, ben1, ben2, cat):
                assert json.loads(ws.recv(timeout=20))["type"] == "state"
            ana1.send(json.dumps({"type": "leave", "id": "bye"}))
            reply = answer(ana1)
            assert reply["type"] == "ok" and reply["cashed_out"] == 100_000
            assert close_code(ana1) == 1000
            assert answer(ana2) == {"type": "left", "player": "ana", "cashed_out": 100_000}
            assert close_code(ana2) == 1000
            r = httpx.post(f"http://{host}/api/tables/kauri/leave", json={"token": tokens["ben"]})
            assert r.status_code == 200
            for ws in (ben1, ben2):
                assert answer(ws) == {"type": "left", "player": "ben", "cashed_out": 100_000}
                assert close_code(ws) == 1000
            cat.send(json.dumps({"type": "state", "id": "look"}))
            assert answer(cat)["type"] == "ok"  # the others' leaving closed only theirs
            assert list(json.loads(cat.recv(timeout=20))["players"]) == ["cat"]
    assert _withdrawals(db) == [("ana", 100_000), ("ben", 100_000)]
    _verify(db)


def test_a_session_away_too_long_is_closed_and_cashed_out(db: Path) -> None:
    with serving(_app(db, session=2.0)) as c:  # (each joins well within it)
        ana, ben = Player(c, "kauri", "ana"), Player(c, "kauri", "ben")
        cat = Player(c, "kauri", "cat")
        assert cat.send(type="bet", box=1, amount=1000)["type"] == "ok"
        assert cat.send(type="deal")["type"] == "ok"
        old = ana.token
        ana.close()
        cat.close()  # away, but with a wager in play: her session stays
        wait_until(lambda: "ana" not in ben.fresh()["players"], 30, "ana's session closed")
        s = ben.fresh()
        assert "ana" not in s["players"] and {"ben", "cat"} <= set(s["players"])
        assert c.get(f"/api/tables/kauri/state?token={old}").status_code == 401
        assert any("expired" in n for n in s["notes"])
        assert Player(c, "kauri", "ana").send(type="leave")["cashed_out"] == 100_000
        ben.close()
    assert _withdrawals(db) == [("ana", 100_000), ("ana", 100_000)]
    _verify(db)


def test_session_expiry_goes_on_after_an_unexpected_error(
    db: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected error in a pass of the expiry task (the store failing, say) is logged,
    and a later pass still closes a session away too long."""
    with serving(_app(db, session=2.0)) as c:  # (each joins well within it)
        hub = c.app.state.hub
        expire = hub.expire
        failed: list[str] = []

        async def failing_once(table: Any) -> list[str]:
            if not failed:
                failed.append(table.name)
                raise OSError("the store is not there")
            gone: list[str] = await expire(table)
            return gone

        ana, ben = Player(c, "kauri", "ana"), Player(c, "kauri", "ben")
        monkeypatch.setattr(hub, "expire", failing_once)
        ana.close()
        wait_until(lambda: "ana" not in ben.fresh()["players"], 30, "ana's session closed")
        assert failed and "ana" not in ben.fresh()["players"]
        ben.close()
    assert f"session expiry at table {failed[0]} failed" in caplog.text
    assert "OSError: the store is not there" in caplog.text  # with its traceback
    assert _withdrawals(db) == [("ana", 100_000)]


def test_the_expiry_task_is_cancelled_even_inside_a_pass() -> None:
    """The task catches a pass's errors but not its cancellation: the server stopping ends it
    also while a pass is running."""
    import asyncio
    from types import SimpleNamespace

    from pontoon.server.app import _expire_sessions

    async def run() -> None:
        calls: list[str] = []
        inside = asyncio.Event()

        async def expire(table: Any) -> list[str]:
            calls.append(table.name)
            if len(calls) == 1:
                raise RuntimeError("an unexpected error")
            inside.set()
            await asyncio.sleep(3600)  # a pass that never ends: the cancellation under test
            return []

        table = SimpleNamespace(name="kauri", config=SimpleNamespace(session_seconds=0.2))
        hub: Any = SimpleNamespace(tables={"kauri": table}, expire=expire)
        task = asyncio.create_task(_expire_sessions(hub))
        await asyncio.wait_for(inside.wait(), 10)  # a pass after the one that failed
        task.cancel()
        await asyncio.wait({task}, timeout=10)
        assert task.cancelled() and calls == ["kauri", "kauri"]

    loop = asyncio.new_event_loop()  # not asyncio.run: it would wait for a task that goes on
    try:
        loop.run_until_complete(run())
    finally:
        loop.close()


def test_a_failing_test_fails_at_once(db: Path) -> None:
    """A test that fails with players connected mid-round must fail, not hang: ``serving``
    closes every socket a test left open."""
    done = threading.Event()

    def run() -> None:
        with pytest.raises(AssertionError), serving(_app(db)) as c:
            _seat_three(c)
            raise AssertionError("a test fails in the middle of a round")
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(60), "serving did not close the sockets left open"


def test_the_stats_count_how_long_each_message_that_would_change_a_table_took(
    db: Path,
) -> None:
    """``/api/stats`` ``applying``: every bet, deal and decision handled (refused ones too),
    none of the looks (``state``, ``ping``), in a histogram whose counts add up."""
    import os

    with serving(_app(db)) as c:
        assert c.get("/api/stats").json()["applying"]["count"] == 0
        ana, _, _ = _seat_three(c)  # three bets and a deal
        assert ana.act("hit", 2)["type"] == "error"  # not her box: refused, still handled
        ana.fresh()  # a look: not counted
        stats = c.get("/api/stats").json()
        applying = stats["applying"]
        assert applying["count"] == 5 == sum(applying["counts"])
        assert len(applying["counts"]) == len(applying["bounds_ms"]) + 1
        assert 0 < applying["seconds"] < 30
        assert applying["p50_ms_at_most"] <= applying["p99_ms_at_most"] <= 10_000
        assert stats["pid"] == os.getpid()


def test_the_collector_runs_rarely_while_serving_and_the_stats_say_so(db: Path) -> None:
    """While the server serves, the cyclic collector's thresholds are ``GC_THRESHOLDS`` (a
    young pass every 700 allocations stopped the loop and the writer every few actions) and
    ``/api/stats`` reports its passes; the process's own thresholds come back at shutdown."""
    import gc

    from pontoon.server.app import GC_THRESHOLDS

    before = gc.get_threshold()
    assert before != GC_THRESHOLDS
    with serving(_app(db)) as c:
        assert gc.get_threshold() == GC_THRESHOLDS
        _seat_three(c)
        stats = c.get("/api/stats").json()
        assert stats["gc"]["thresholds"] == list(GC_THRESHOLDS)
        assert len(stats["gc"]["collections"]) == len(stats["gc"]["collected"]) == 3
        assert stats["store"]["commits"] >= 4 and "checkpoints" in stats["store"]
    assert gc.get_threshold() == before
