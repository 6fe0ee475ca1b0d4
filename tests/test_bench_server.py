"""The bench's bots read the server's state texts as the server writes them: a bot decodes a
state only when it may concern it (``bench/server.py``, ``_idle``). A predicate that never
matches makes every bot decode every state of its table — the bench then measures its own
bots (it did: the personal part came to end with the balance, not the legal moves)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("fastapi")

from tests.test_server import _app, _seat_three
from tests.test_server_helpers import Player, serving

BENCH = Path(__file__).parent.parent / "bench" / "server.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_server", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_bot_skips_exactly_the_states_that_cannot_concern_it(tmp_path: Path) -> None:
    idle = _bench()._idle
    with serving(_app(tmp_path / "s.db")) as client:
        ana, ben, cat = _seat_three(client)
        texts = []
        for p in (ana, ben, cat):  # every state each has been sent since the deal
            p.send(type="state")
            while True:
                text = p.ws.receive_text()
                if json.loads(text)["type"] != "state":
                    continue
                texts.append(text)
                if json.loads(text)["version"] >= cat.state["version"]:
                    break
        assert texts
        for text in texts:
            s = json.loads(text)
            in_play = s["phase"] in ("playing", "insurance")
            assert idle(text) == (in_play and not s["legal"]), (s["phase"], s["legal"])
        # the deal's state asks each of them about insurance (the dealer's ace): none idle;
        # once ana has declined, her own state has no move left while the others decide
        assert ana.act("no-insurance", 1)["type"] == "ok"
        ana.send(type="state")
        while True:
            text = ana.ws.receive_text()
            if json.loads(text)["type"] == "state":
                s = json.loads(text)
                if not s["legal"]:
                    assert idle(text)
                    break


def test_a_bot_that_bet_skips_the_betting_until_the_deal(tmp_path: Path) -> None:
    """A bot waiting for another to call the deal skips the states of the betting once its
    own box holds its wager, and only then."""
    idle = _bench()._idle
    with serving(_app(tmp_path / "s.db")) as client:
        ana, ben = Player(client, "kauri", "ana"), Player(client, "kauri", "ben")
        assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
        ben.send(type="state")
        while True:  # ben sees ana's wager and has none of his own
            text = ben.ws.receive_text()
            if json.loads(text).get("boxes"):
                break
        assert json.loads(text)["phase"] == "betting"
        assert not idle(text, "ben") and not idle(text)
        assert ben.send(type="bet", box=2, amount=1000)["type"] == "ok"
        ben.send(type="state")
        while True:
            text = ben.ws.receive_text()
            if len(json.loads(text).get("boxes", ())) == 2:
                break
        assert idle(text, "ben") and idle(text, "ana") and not idle(text, "cat")
        assert not idle(text)  # (the bot that calls the deal reads it)
