"""The bench's bots read the server's state texts as the server writes them: a bot decodes a
state only when it may concern it (``bench/server.py``, ``_idle``). A predicate that never
matches makes every bot decode every state of its table — the bench then measures its own
bots (it did: the personal part came to end with the balance, not the legal moves)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from tests.test_server import _app, _seat_three
from tests.test_server_helpers import Player, serving

pytestmark = pytest.mark.integration  # the bench's bots against a server

BENCH = Path(__file__).parent.parent / "bench" / "server.py"


def _idle() -> Callable[..., bool]:
    spec = importlib.util.spec_from_file_location("bench_server", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._idle  # type: ignore[no-any-return]


def _states(p: Player) -> list[str]:
    """Every state text ``p`` is sent up to the table as it is now (asked for with a
    ``state`` message: its answer names the version)."""
    p.n += 1
    p.ws.send_text(json.dumps({"type": "state", "id": f"look-{p.n}"}))
    texts, version = [], None
    while True:
        text = p.ws.receive_text()
        m: dict[str, Any] = json.loads(text)
        if m["type"] == "state":
            texts.append(text)
        elif m.get("ref") == f"look-{p.n}":
            version = m["version"]
        if version is not None and texts and json.loads(texts[-1])["version"] >= version:
            return texts


def test_a_bot_skips_exactly_the_states_that_cannot_concern_it(tmp_path: Path) -> None:
    idle = _idle()
    with serving(_app(tmp_path / "s.db")) as client:
        ana, ben, cat = _seat_three(client)
        # the deal's state asks each of them about insurance (the dealer's ace): none idle
        for p in (ana, ben, cat):
            text = _states(p)[-1]
            assert json.loads(text)["legal"] and not idle(text)
        # once ben and cat have declined, they have no move while ana plays her box
        assert ben.act("no-insurance", 1)["type"] == "ok"
        assert cat.act("no-insurance", 2)["type"] == "ok"
        texts = [t for p in (ana, ben, cat) for t in _states(p)]
        assert any(idle(t) for t in texts)
        for text in texts:
            s = json.loads(text)
            in_play = s["phase"] in ("playing", "insurance")
            assert idle(text) == (in_play and not s["legal"]), (s["you"], s["legal"])


def test_a_bot_that_bet_skips_the_betting_until_the_deal(tmp_path: Path) -> None:
    """A bot waiting for another to call the deal skips the states of the betting once its
    own box holds its wager, and only then."""
    idle = _idle()
    with serving(_app(tmp_path / "s.db")) as client:
        ana, ben = Player(client, "kauri", "ana"), Player(client, "kauri", "ben")
        assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
        text = _states(ben)[-1]  # ben sees ana's wager and has none of his own
        assert json.loads(text)["phase"] == "betting"
        assert not idle(text, "ben") and not idle(text) and idle(text, "ana")
        assert ben.send(type="bet", box=2, amount=1000)["type"] == "ok"
        text = _states(ben)[-1]
        assert len(json.loads(text)["boxes"]) == 2
        assert idle(text, "ben") and idle(text, "ana") and not idle(text, "cat")
        assert not idle(text)  # (the bot that calls the deal reads it)


def test_the_bots_play_a_short_bench_and_every_decision_is_recorded_once(tmp_path: Path) -> None:
    """The bench end to end, briefly: its bots (on picows) join, play, and are answered; the
    store holds every decision they were told was recorded, once, and verifies; the server's
    metrics, scraped every second meanwhile (``--metrics``), count every message the bots were
    answered."""
    import subprocess
    import sys

    run = [sys.executable, str(BENCH), "--tables", "2", "--seconds", "5", "--think", "20"]
    done = subprocess.run(
        [*run, "--metrics", "--scrape-every", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["rounds"] >= 1 and result["decisions_acknowledged"] >= 2
    assert result["lost"] == 0 and result["duplicated"] == 0 and result["verify"] == "ok"
    assert result["decisions_recorded"] == result["decisions_acknowledged"]
    assert result["metrics_scrapes"] >= 3 and result["metrics_match"], result


def test_the_bench_drill_load_in_accounts_mode(tmp_path: Path) -> None:
    """``--drills``: learners log in as accounts and drill beside the bots; the trainer's
    worker (a process under the server) did the work, and the tables' records are whole."""
    import subprocess
    import sys

    run = [sys.executable, str(BENCH), "--tables", "2", "--seconds", "8", "--think", "20"]
    run += ["--accounts", "--drills", "2", "--drill-think", "100"]  # (answering as people do)
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["drills"] == 2 and result["accounts"] is True
    assert result["drill_think_ms"] == 100
    assert result["drill_worker_cpu_share"] > 0  # a process of its own did the drills' work
    # (how many drills it got through depends on the host's idle CPU: the worker runs at the
    # lowest priority, and a busy test host may leave it none)
    assert (result["drill_starts"] == 0) == (result["drill_p50_ms"] == 0)
    assert result["lost"] == 0 and result["duplicated"] == 0 and result["verify"] == "ok"


def test_the_bench_in_operator_mode(tmp_path: Path) -> None:
    """``--operator``: the bots are an operator's players, launched with its tokens, each wager
    a debit call to its wallet (a local double) and each round's leavings a credit; every
    decision recorded once and the store, operator calls included, verifies."""
    import subprocess
    import sys

    run = [sys.executable, str(BENCH), "--tables", "2", "--seconds", "5", "--think", "20"]
    done = subprocess.run(
        [*run, "--operator"], cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["operator"] and result["rounds"] >= 1
    # no refusal but, now and then on a loaded host, "look again" (stale: the table moved on
    # while a debit was asked for with its lock let go); a bot acts on the next state
    assert set(result["refused"]) <= {"stale"}, result["refused"]
    assert result["refused"].get("stale", 0) <= max(1, result["actions"] // 100), result
    assert result["lost"] == 0 and result["duplicated"] == 0 and result["verify"] == "ok"
