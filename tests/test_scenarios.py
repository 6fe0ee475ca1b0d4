"""Every scripted round in tests/data/scenarios plays to the money its author worked out
from the Gazette text, and replays from its event log to the same log (8.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.replay import replay
from pontoon.scenario import load_scenario, play_scenario, result_document

SCENARIOS = sorted((Path(__file__).parent / "data" / "scenarios").glob("*.json"))


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 40


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    data = load_scenario(path)
    expect = data["expect"]
    if "error" in expect:
        with pytest.raises(InputError) as info:
            play_scenario(data)
        assert expect["error"] in str(info.value)
        return
    rnd = play_scenario(data)
    doc = result_document(rnd)
    assert {p: v["net"] for p, v in doc["players"].items()} == expect["net"]
    if "dealer_total" in expect:
        assert doc["dealer"]["total"] == expect["dealer_total"]
    assert rnd.table == 0
    assert sum(rnd.balance.values()) + rnd.house == 0
    again = replay([Event.from_json(e.to_json()) for e in rnd.events])
    assert again.events == rnd.events
    json.dumps(doc)  # the document is JSON
