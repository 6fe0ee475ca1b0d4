"""Post-split strategies (CDZ-, CDP1, CDP) and the hand calculator following a strategy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pontoon.analysis import analyze, hand_values
from pontoon.analysis.chart import Chart
from pontoon.cli import main
from pontoon.errors import InputError
from pontoon.rules import load_rules

ONE_DECK = {"decks": 1, "split_max_hands": 2}


def test_cdp_is_at_least_cdp1_at_least_cdz() -> None:
    """Each post-split strategy may do what the one before it does, so it is worth no less."""
    rules = load_rules("classic-blackjack", {"decks": 1, "split_max_hands": 3})
    ev = {p: analyze(rules, "composition", post_split=p).ev for p in ("cdz", "cdp1", "cdp")}
    assert ev["cdz"] <= ev["cdp1"] + 1e-15 and ev["cdp1"] <= ev["cdp"] + 1e-15
    assert ev["cdp"] - ev["cdz"] < 0.0001  # a small gain (Farmer: 0.001 % at one deck)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["classic-blackjack", "nz-pontoon"])
def test_a_one_shot_analysis_and_any_chunk_of_the_walk_give_the_same_values(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk steps a group of hands in chunks, and a one-shot analysis lets each pair's
    split-hand dealer tables go: neither changes a single bit of any value."""
    from collections import OrderedDict

    import pontoon.analysis.game as game
    import pontoon.analysis.walk as walk

    rules = load_rules(preset, {"decks": 1, "split_max_hands": 3})
    monkeypatch.setattr(game, "_DEALER_CACHE", OrderedDict())  # no tables known yet
    with monkeypatch.context() as m:
        m.setattr(walk, "CHUNK", 7)
        got = analyze(rules, "composition", one_shot=True)
    kept = len(next(iter(game._DEALER_CACHE.values())))
    monkeypatch.setattr(game, "_DEALER_CACHE", OrderedDict())
    want = analyze(rules, "composition")
    assert kept < len(next(iter(game._DEALER_CACHE.values())))  # the split hands' went
    assert got.ev == want.ev
    assert (got.outcome.ev_by_up == want.outcome.ev_by_up).all()


def test_post_split_is_named_in_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    sets = ["--set", "decks=1", "--set", "split_max_hands=2"]
    args = ["analyze", "--rules", "classic-blackjack", *sets, "--strategy", "composition"]
    assert main([*args, "--post-split", "cdp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["post_split"] == "CDP" and "CDP" in doc["method"]
    assert main(["analyze", "--rules", "classic-blackjack", *sets, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["post_split"] == "chart"
    with pytest.raises(InputError, match="post-split"):
        analyze(load_rules("classic-blackjack", ONE_DECK), "composition", post_split="cdq")


def test_hand_calculator_follows_a_chart_after_hitting() -> None:
    """With a chart that always stands, hitting 7-8 against a 6 is worth the average of
    standing on each three-card hand (bust: -1), the shoe short of 7, 8 and 6."""
    rules = load_rules("classic-blackjack", ONE_DECK)
    stand_all = Chart({row: ["S"] * 10 for row in Chart.initial().cells}, "stand")
    rep = hand_values(rules, "7,8", "6", strategy=stand_all)
    assert "chart stand" in rep.note
    counts = [4] * 9 + [16]
    for v in (7, 8, 6):
        counts[v - 1] -= 1
    expected = 0.0
    for x in range(1, 11):
        if 15 + x > 21:
            value = -1.0
        else:
            card = "A" if x == 1 else "T" if x == 10 else str(x)
            values = hand_values(rules, f"7,8,{card}", "6", strategy=stand_all).values
            value = values["21"] if 15 + x == 21 else values["stand"]
        expected += counts[x - 1] / sum(counts) * value
    assert rep.values["hit"] == pytest.approx(expected, abs=1e-12)
    best = hand_values(rules, "7,8", "6")  # composition: the best play after the hit
    assert best.values["stand"] == pytest.approx(rep.values["stand"], abs=1e-12)
    assert best.values["hit"] >= rep.values["hit"]


def test_hand_calculator_basic_and_chart_file_agree(tmp_path: Path) -> None:
    rules = load_rules("classic-blackjack", ONE_DECK)
    chart = analyze(rules, "basic").chart
    assert chart is not None
    path = tmp_path / "basic.csv"
    path.write_text(chart.to_csv())
    by_name = hand_values(rules, "8,8", "T", strategy="basic")
    by_file = hand_values(rules, "8,8", "T", strategy=Chart.read(str(path)))
    assert by_name.values == pytest.approx(by_file.values, abs=1e-12)
    cdp = hand_values(rules, "8,8", "T", post_split="cdp")
    cdz = hand_values(rules, "8,8", "T")
    assert "CDP" in cdp.note and cdp.values["split"] >= cdz.values["split"] - 1e-15
