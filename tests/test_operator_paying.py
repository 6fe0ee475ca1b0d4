"""A wager at an operator's wallet is paid for before it is applied: the table works out what
the player lacks (refused as a wager is refused, with its rule), asks the operator with no
lock held, then applies it once. A refused wager costs the operator no call; a paid one moves
the table on by one version (nothing is applied, taken back and told in between)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jwt")

from tests.operator_double import Operator
from tests.test_accounts import Socket
from tests.test_operator_wallet import SECRET, _app, _launch
from tests.test_server_helpers import in_thread, serving

pytestmark = pytest.mark.integration  # the server, served in this process


def test_a_wager_is_refused_by_its_rule_before_the_operator_is_asked(tmp_path: Path) -> None:
    operator = Operator(SECRET, {"ana": 10**9})
    with in_thread(operator.app()) as host, serving(_app(tmp_path / "o.db", f"http://{host}")) as c:
        ana = _launch(c, "ana")
        assert c.post("/api/tables/kauri/join", headers=ana).status_code == 200
        sock = Socket(c, ana)
        most = sock.state["rules"]["table_max"]
        reply = sock.send(type="bet", box=1, amount=most + 100)
        assert reply["type"] == "error" and reply["rule"] == "15.2", reply
        assert [kind for kind, _ in operator.calls if kind == "debit"] == []
        sock.close()


def test_a_paid_wager_is_applied_once(tmp_path: Path) -> None:
    operator = Operator(SECRET, {"ana": 100_000})
    with in_thread(operator.app()) as host, serving(_app(tmp_path / "o.db", f"http://{host}")) as c:
        ana = _launch(c, "ana")
        assert c.post("/api/tables/kauri/join", headers=ana).status_code == 200
        sock = Socket(c, ana)
        before = sock.state["version"]
        reply = sock.send(type="bet", box=1, amount=1000)
        assert reply["type"] == "ok", reply
        assert reply["version"] == before + 1  # applied once, told once
        assert [kind for kind, _ in operator.calls] == ["debit"]
        sock.close()
