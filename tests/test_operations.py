"""What operations watch: ``/livez`` and ``/readyz``; the Prometheus metrics, whose counters are
the messages the players were answered, served on an address of their own and not on the
tables'; and the logs as JSON lines, each saying which table, round, player and request it is
about."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pontoon.server.logs import about, done, use_json
from pontoon.server.metrics import ServerMetrics
from tests.test_server import _app, _seat_three
from tests.test_server_helpers import Player, free_port, serving, start_server

pytestmark = pytest.mark.integration  # the server, in this process and in one of its own


def _samples(state: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry()
    registry.register(ServerMetrics(state))
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_health_and_the_metrics_count_what_the_players_were_answered(tmp_path: Path) -> None:
    with serving(_app(tmp_path / "o.db")) as client:
        assert client.get("/livez").json() == {"status": "ok"}
        assert client.get("/readyz").json() == {"status": "ready"}
        ana, ben, cat = _seat_three(client)  # four messages answered ok
        replies = [ana.send(type="bet", box=3, amount=1000)]  # no bets after no more bets
        for p in (ana, ben, cat):
            for _ in range(3):
                stands = [m for m in p.state["legal"] if m["action"] == "stand"]
                if stands:
                    replies.append(p.send(type="act", action="stand", box=stands[0]["box"]))
                p.send(type="state")
        ok = 4 + sum(r["type"] == "ok" for r in replies)
        refused = sum(r["type"] == "error" for r in replies)
        m = _samples(client.app.state)  # type: ignore[attr-defined]
        assert m["pontoon_messages_total", (("answer", "ok"),)] == ok
        assert m["pontoon_messages_total", (("answer", "refused"),)] == refused >= 1
        assert m["pontoon_message_seconds_count", ()] == ok + refused
        assert m["pontoon_message_seconds_bucket", (("le", "+Inf"),)] == ok + refused
        assert m["pontoon_store_commits_total", ()] >= 1
        assert m["pontoon_sockets", ()] == 3
        assert m["pontoon_tables", ()] == 2
        assert m["pontoon_tables_in_round", ()] == 1
        assert 0 <= m["pontoon_round_idle_seconds", (("table", "kauri"),)] < 60
        hub = client.app.state.hub  # type: ignore[attr-defined]
        hub.writer.busy_for = lambda: 60.0  # the writer stuck in a commit
        r = client.get("/readyz")
        assert r.status_code == 503 and "one commit for 60 s" in r.json()["why"][0]


def test_the_metrics_are_served_apart_from_the_tables(tmp_path: Path) -> None:
    port, metrics = free_port(), free_port()
    proc = start_server(tmp_path, port, ["--metrics-port", str(metrics), "--log-json"])
    try:
        text = httpx.get(f"http://127.0.0.1:{metrics}/metrics", timeout=5).text
        assert "pontoon_messages_total" in text and "pontoon_store_commits_total" in text
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).status_code == 404
        assert httpx.get(f"http://127.0.0.1:{port}/livez", timeout=5).status_code == 200
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_json_log_line_says_what_it_is_about() -> None:
    out = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        use_json(stream=out)
        token = about(table="kauri", round=12, player="ana", request="r-1")
        logging.getLogger("pontoon.server.app").warning("a %s", "thing")
        done(token)
        logging.getLogger("pontoon.server.app").warning("after")
    finally:
        root.handlers, root.level = handlers, level
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "a thing" and first["level"] == "WARNING"
    assert (first["table"], first["round"], first["player"], first["request"]) == (
        "kauri",
        12,
        "ana",
        "r-1",
    )
    assert "table" not in second and second["logger"] == "pontoon.server.app"


def test_a_players_message_is_logged_with_its_table(tmp_path: Path) -> None:
    out = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        use_json(stream=out)
        with serving(_app(tmp_path / "j.db")) as client:
            hub = client.app.state.hub  # type: ignore[attr-defined]
            table = hub.tables["kauri"]
            original = table.bet

            def bet(*args: Any) -> None:  # a line logged while the wager is handled
                logging.getLogger("pontoon.server.table").info("a wager")
                original(*args)

            table.bet = bet
            ana = Player(client, "kauri", "ana")
            assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
    finally:
        root.handlers, root.level = handlers, level
    lines = [json.loads(x) for x in out.getvalue().splitlines() if '"a wager"' in x]
    assert lines and lines[0]["table"] == "kauri" and lines[0]["player"] == "ana"
    assert lines[0]["round"] == 1
