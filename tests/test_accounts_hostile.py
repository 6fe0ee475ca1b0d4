"""The hostile-client suite over a logged-in account's socket (the cookie, no token):
a replayed message applied once and the wallet debited once, a reordered (stale) decision
refused, oversized and malformed frames refused while the socket goes on, and the ledger and
wallets whole after all of it."""

from __future__ import annotations

import json
from pathlib import Path

from pontoon.server.protocol import MAX_MESSAGE
from pontoon.store.db import Store
from pontoon.store.verify import verify
from tests.test_accounts import (  # noqa: F401
    Socket,
    _app,
    _url,
    db,
    deposit,
    register,
)
from tests.test_server_helpers import serving


def test_replayed_reordered_oversized_and_malformed_messages(db: Path) -> None:  # noqa: F811
    with serving(_app(db)) as client:
        ana = register(client, "ana")
        deposit(client, "ana", 5000, "R-1")
        client.post("/api/tables/kauri/join", headers=ana)
        sock = Socket(client, ana)
        bet = {"type": "bet", "box": 1, "amount": 1000, "id": "click-1"}
        for _ in range(3):  # replayed: applied once, answered as a duplicate after
            sock.ws.send_json(bet)
        replies = [_reply(sock) for _ in range(3)]
        assert [bool(r.get("duplicate")) for r in replies] == [False, True, True], replies
        assert client.get("/api/me", headers=ana).json()["balance"] == 4000  # debited once
        assert sock.send(type="deal")["type"] == "ok"
        sock.send(type="state")
        old = sock.state["version"]
        assert sock.send(type="act", action="hit", box=1, v=old)["type"] == "ok"
        # reordered: a decision made on a state the player has since seen change
        stale = sock.send(type="act", action="stand", box=1, v=old)
        assert stale["type"] == "error" and stale["code"] == "stale", stale
        for frame in (
            "[" * 4000,  # nested past the parser's depth
            "{not json",
            json.dumps({"type": "act", "action": "hit", "box": "one"}),  # a field of the wrong type
            '"' + "é" * (MAX_MESSAGE // 2 + 50) + '"',  # over the limit in bytes
        ):
            sock.ws.send_text(frame)
            m = _reply(sock)
            assert m["type"] == "error", (frame[:40], m)
        sock.ws.send_bytes(b"\x00" * (MAX_MESSAGE + 1))  # an oversized binary frame
        assert _reply(sock)["type"] == "error"
        assert sock.send(type="ping")["type"] == "ok"  # the socket goes on
        sock.close()
    with Store(_url(db)) as store:
        assert verify(store).ok


def _reply(sock: Socket) -> dict[str, object]:
    while True:
        m: dict[str, object] = sock.ws.receive_json()
        if m["type"] != "state":
            return m
