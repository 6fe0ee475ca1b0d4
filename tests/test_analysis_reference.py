"""The analysis against published exact figures (tests/data/analysis/reference.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pontoon.analysis import analyze
from pontoon.analysis.composition import comp_of
from pontoon.analysis.dealer import dealer_paths, dealer_table
from pontoon.analysis.game import STAND, Context, Game
from pontoon.analysis.report import Report
from pontoon.rules import load_rules

DATA = json.loads((Path(__file__).parent / "data" / "analysis" / "reference.json").read_text())


@pytest.fixture(scope="module")
def classic() -> dict[str, Report]:
    rules = load_rules("classic-blackjack")
    return {s: analyze(rules, s) for s in ("basic", "composition")}


@pytest.mark.parametrize("ref", DATA["published"], ids=lambda r: r["name"])
def test_published_house_edge(ref: dict[str, Any], classic: dict[str, Report]) -> None:
    if ref["rules"] == "classic-blackjack" and not ref["set"]:
        rep = classic[ref["strategy"]]
    else:
        rep = analyze(load_rules(ref["rules"], ref["set"]), ref["strategy"])
    assert rep.ev * 100 == pytest.approx(ref["ev_percent"], abs=ref["tolerance_percent"])


def test_total_dependent_chart_is_close_below_the_composition_optimum(
    classic: dict[str, Report],
) -> None:
    td, cd = classic["basic"].ev, classic["composition"].ev
    assert cd - 0.0002 < td < cd  # a chart gives up a little (~0.003 % at 6 decks)
    assert td * 100 == pytest.approx(DATA["computed"]["classic-blackjack basic"], abs=1e-5)


def test_published_stand_values() -> None:
    ref = DATA["stand_values"]
    game = Game(load_rules(ref["rules"], ref["set"]))
    v = game.evaluate(Context())
    pn = game.rows(Context()).pn
    up = ref["dealer"] - 1
    for hand, value in ref["hands"]:
        i = game.comps.index[comp_of(hand)]
        assert v.act[i, up, STAND] / (1 - pn[i, up]) == pytest.approx(value, abs=ref["tolerance"])


def test_dealer_probabilities_sum_to_one_and_infinite_matches_finite_limit() -> None:
    probs = np.array([1 / 13] * 9 + [4 / 13])
    for up in range(1, 11):
        for h17 in (False, True):
            paths = dealer_paths(up, h17)
            inf = dealer_table(paths, probs[None], infinite=True)[0]
            big = dealer_table(paths, (probs * 52 * 10_000)[None], infinite=False)[0]
            assert inf.sum() == pytest.approx(1.0, abs=1e-12)
            assert big == pytest.approx(inf, abs=1e-4)


def test_infinite_shoe_classic_basic_strategy() -> None:
    rep = analyze(load_rules("classic-blackjack"), "basic", infinite=True)
    assert rep.ev * 100 == pytest.approx(
        DATA["computed"]["classic-blackjack infinite basic"], abs=1e-5
    )
