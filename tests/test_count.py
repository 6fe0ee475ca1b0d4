"""Advantage play: the analysis of any shoe, effects of removal, a count judged."""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pontoon.analysis import analyze
from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import ShoeModel
from pontoon.analysis.evaluate import same_rank_tens
from pontoon.analysis.game import Game
from pontoon.cards import deck
from pontoon.cli import main
from pontoon.count.curve import curve, insurance_line, slope
from pontoon.count.eor import KEYS, Effects, effects_of_removal
from pontoon.count.indices import expected_shoe, strategy_indices
from pontoon.count.judge import correlation, judge
from pontoon.rules import RuleSet, load_rules
from pontoon.sim.counting import HI_LO
from pontoon.sim.results import document
from pontoon.sim.runner import Run

DATA = Path(__file__).parent / "data" / "reference"
EXAMPLES = Path(__file__).parent.parent / "examples"
FAST = {"split_max_hands": 2}
NOSPLIT = ["--set", "split_max_hands=1"]  # the commands' plumbing: the quickest analyses


@functools.cache
def classic_effects() -> Effects:
    return effects_of_removal(load_rules("classic-blackjack", FAST), "basic", workers=2)


@pytest.mark.slow
def test_a_whole_deck_removed_is_the_game_of_one_deck_fewer() -> None:
    """Any shoe: removing one of every card of a deck leaves exactly the shoe of one deck
    fewer (both decks: the standard and the Spanish, whose 6-7-8 pay by suits, 11.1)."""
    for name, over in (("classic-blackjack", FAST), ("nz-pontoon", {})):
        rules = load_rules(name, over)
        less = analyze(rules, "composition", removed=deck(rules.deck))
        five = analyze(load_rules(name, {**over, "decks": rules.decks - 1}), "composition")
        assert less.ev == pytest.approx(five.ev, abs=1e-12)


def test_cards_removed_change_the_shoe_and_refuse_what_it_does_not_hold() -> None:
    rules = load_rules("nz-pontoon")
    shoe = ShoeModel.of(rules, removed=[5, 5])  # ranks alone: a quarter of each suit
    assert shoe.counts[4] == 22 and shoe.suit_counts[4].tolist() == [5.5] * 4
    with pytest.raises(Exception, match="no more TS"):
        ShoeModel.of(rules, removed=[*deck("standard")])  # the Spanish deck has no tens
    with pytest.raises(Exception, match="finite shoe"):
        ShoeModel.of(rules, infinite=True, removed=[5])


def test_ten_pairs_of_one_rank_against_a_ten() -> None:
    """13.1 by rank: the chance two ten-value cards pair, after the dealer's ten of any rank,
    counted card by card (the Spanish deck: J, Q, K, 24 each in six decks)."""
    game = Game(load_rules("nz-pontoon"))
    q = same_rank_tens(game)
    # after the dealer's ten: 23 of its rank, 24 of each other, 71 in all
    assert q[9] == pytest.approx((23 * 22 + 2 * 24 * 23) / (71 * 70), abs=1e-15)
    assert q[4] == pytest.approx(23 / 71, abs=1e-15)


@pytest.mark.slow
def test_effects_of_removal_sum_to_zero_and_give_the_simulated_ev_near_zero() -> None:
    """One nz-pontoon analysis (the costliest fixture of the suite: one test, so that it is
    never made twice on two workers), two checks.

    A card removed unseen changes nothing for a fixed strategy: the effects, weighed by the
    shoe's cards, sum to 0: exactly (up to rounding) where the analysis is exact, and for
    nz-pontoon to 1e-8 of a wager, the size of its approximations (13.7 with three or four
    split hands, resplit pair cards taken from every suit alike: docs/analysts/analysis.md).

    nz-pontoon, hi-lo (unbalanced on the Spanish deck: the line is shifted by the count's
    drift): the simulated EV at true counts -1, 0 and +1 (10^7 rounds, the chart fixed)
    within 3 standard errors of the line from the effects of removal."""
    from pontoon.count.commands import _counting, _simulate

    nz_effects = effects_of_removal(load_rules("nz-pontoon"), "basic", workers=2)
    classic = classic_effects()
    for e, tol in ((classic, 1e-12), (nz_effects, 1e-7)):
        assert abs(e.sum) < tol
        assert e.eor["5"] > 0 > e.eor["T"]  # small cards out help the player, tens hurt

    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    args = argparse.Namespace(wager=500, rounds=10_000_000, seed=3, workers=2)
    args.scheduler, args.no_progress = None, True
    sim = _simulate(nz_effects.rules, nz_effects, _counting("hi-lo"), args)
    rows = {r["true_count"]: r for r in curve(nz_effects, tags, sim)}
    for tc in (-1, 0, 1):
        r = rows[tc]
        assert abs(r["simulated"] - r["linear"]) < 3 * r["stderr"], r
    assert 0.002 < slope(nz_effects, tags) < 0.008  # about half a percent a true count


def test_single_deck_effects_of_removal_against_griffin() -> None:
    """Griffin's single-deck table (tests/data/reference/griffin_eor_single_deck.csv), to
    0.02 percentage points: his rules differ in details we do not know (resplits)."""
    with open(DATA / "griffin_eor_single_deck.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rules = load_rules("classic-blackjack", {"decks": 1, "double_after_split": False})
    e = effects_of_removal(rules, "basic", workers=2)
    for row in rows:
        assert e.eor[row["card"]] * 100 == pytest.approx(float(row["eor"]), abs=0.02)


def test_six_deck_effects_of_removal_against_the_wizard_of_odds() -> None:
    """The Wizard of Odds' six-deck table (S17; tests/data/reference/wizard_eor_six_deck.csv:
    re-optimised play, split once, DAS, and late surrender, which the page leaves unsaid) to
    the 0.003 percentage points asked of it, every rank (the H17 column: docs/analysts/count.md)."""
    with open(DATA / "wizard_eor_six_deck.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rules = load_rules("classic-blackjack", {"split_max_hands": 2, "surrender": "late"})
    e = effects_of_removal(rules, "composition", workers=2)
    for row in rows:
        assert e.eor[row["card"]] * 100 == pytest.approx(float(row["s17"]), abs=0.003), row


def test_hi_lo_judged_as_published() -> None:
    """Hi-lo's betting and insurance correlations, as the literature gives them (0.97, 0.76:
    Griffin; Wong, Professional Blackjack); playing efficiency by Griffin's method about half."""
    e = classic_effects()
    doc = judge(e, HI_LO["tags"])
    assert doc["betting_correlation"] == pytest.approx(0.97, abs=0.01)
    assert doc["insurance_correlation"] == pytest.approx(0.76, abs=0.01)
    assert 0.4 < doc["playing_efficiency"] < 0.6
    one = doc["best_counts"]["1"]
    assert one["betting_correlation"] >= doc["betting_correlation"] - 1e-12
    assert set(one["tags"].values()) <= {-1, 0, 1}


def test_correlation_of_a_count_with_itself() -> None:
    w = np.arange(1, 11)
    x = np.linspace(-1, 1, 10)
    assert correlation(w, x, x) == pytest.approx(1.0)
    assert correlation(w, x, -2 * x) == pytest.approx(-1.0)


def _once(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
    """``module.name`` keeps each call's answer for a call with the same arguments: the
    effects of removal and the strategy indices are exact analyses, deterministic, so two
    commands that ask the same question share one analysis (the commands import the
    function when they run, so they call this one)."""
    real: Callable[..., Any] = getattr(module, name)
    done: dict[object, Any] = {}

    def frozen(v: object) -> object:
        return tuple(sorted(v.items())) if isinstance(v, dict) else v

    def once(*args: Any, **kw: Any) -> Any:
        key = (tuple(map(frozen, args)), tuple(sorted((k, frozen(v)) for k, v in kw.items())))
        if key not in done:
            done[key] = real(*args, **kw)
        return done[key]

    monkeypatch.setattr(module, name, once)


@pytest.mark.slow
def test_count_commands_json_and_refusals(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pontoon.count.eor
    import pontoon.count.indices

    # `count eor` and `count judge` of one game analyse the same shoes; the CSV and the PNG
    # of `count indices` are one set of indices
    _once(monkeypatch, pontoon.count.eor, "effects_of_removal")
    _once(monkeypatch, pontoon.count.indices, "strategy_indices")
    args = ["--rules", "classic-blackjack", *NOSPLIT, "--json"]
    assert main(["count", "eor", *args, "--workers", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["eor"]) == set(KEYS) and doc["strategy"] == "basic"
    count = tmp_path / "mine.toml"  # hi-lo written out: tags only, no ramp
    count.write_text("tags = { A = -1, 2 = 1, 3 = 1, 4 = 1, 5 = 1, 6 = 1, T = -1 }\n")
    (tmp_path / "flat.toml").write_text("tags = { A = 0 }\n")
    png = tmp_path / "curve.png"
    judged = ["count", "judge", *args, "--count", str(count), "--rounds", "200000"]
    judged += ["--workers", "1"]  # as `count eor` above: the same analysis
    assert main([*judged, "--plot", str(png)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 10_000 and doc["ev_per_true_count"] > 0
    assert any("simulated" in r for r in doc["ev_by_true_count"])
    assert {"betting_correlation", "playing_efficiency", "insurance_correlation"} <= set(doc)
    assert doc["tags"]["6"] == 1 and doc["tags"]["7"] == 0
    assert main(["count", "indices", *args[:-1], "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cell,dealer,below,above,index\n") and "\nH16,T,H,S," in out
    by_depth = tmp_path / "by-depth.csv"  # indices by depth, played by simulate
    ix = ["count", "indices", *args[:-1], "--depth", "0.75,0.25", "--format", "csv"]
    assert main([*ix, "--output", str(by_depth), "--workers", "2"]) == 0
    rows = by_depth.read_text().splitlines()
    assert rows[0] == "cell,dealer,below,above,index,depth"
    assert {r.rsplit(",", 1)[1] for r in rows[1:]} == {"0.75", "0.25"}
    played = ["simulate", *args, "--count", "hi-lo", "--indices", str(by_depth)]
    assert main([*played, "--rounds", "100000", "--seed", "1", "--workers", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["indices"] == str(by_depth)
    png = tmp_path / "indices.png"
    assert main(["count", "indices", *args[:-1], "--format", "png", "--output", str(png)]) == 0
    assert png.stat().st_size > 50_000
    for bad in (
        ["count", "indices", *args[:-1], "--format", "png"],  # no --output
        ["count", "indices", *args, "--depth", "3"],
        ["count", "indices", *args, "--depth", "0.5,x"],
        ["count", "indices", *args[:-1], "--depth", "0.5,0.25", "--format", "png", "--output", "x"],
        ["count", "judge", *args, "--count", str(tmp_path / "none.toml")],
        ["count", "eor", *args, "--workers", "0"],
        ["count", "judge", *args, "--rounds", "-1"],
        ["count", "judge", *args, "--count", str(tmp_path / "flat.toml")],
        ["analyze", "--removed", "ZZ"],
        ["analyze", "--removed", "TS"],  # the Spanish deck has no tens
        ["analyze", "--removed", "5S", "--infinite"],
    ):
        assert main(bad) == 2, bad
        err = capsys.readouterr().err.strip()
        assert err.startswith("pontoon:") and "\n" not in err


def test_analyze_removed_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["analyze", "--rules", "classic-blackjack", "--set", "split_max_hands=2", "--json"]
    assert main([*args, "--removed", "5S,5H,KD"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["removed"] == ["5S", "5H", "KD"] and "5S, 5H, KD out" in doc["method"]
    full = analyze(load_rules("classic-blackjack", FAST), "basic")
    assert doc["ev"] > full.ev  # two fives out help the player more than a king hurts
    assert main([*args[:-1], "--removed", "5S", "--hand", "TS,6D", "--dealer", "T"]) == 0
    assert "stand" in capsys.readouterr().out


@pytest.mark.slow
def test_hi_lo_indices_against_the_illustrious_18() -> None:
    """Six-deck classic blackjack, hi-lo: each of the eighteen most valuable published indices
    (tests/data/reference/illustrious_18.csv) within 1 of ours, the same plays either side."""
    with open(DATA / "illustrious_18.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    ix = strategy_indices(load_rules("classic-blackjack"), tags, workers=2)
    ours = {(i["cell"], i["dealer"]): i for i in ix.indices}
    for row in rows:
        got = ours[row["cell"], row["dealer"]]
        assert (got["below"], got["above"]) == (row["below"], row["above"]), row
        assert abs(got["index"] - int(row["index"])) <= 1, (row, got)


def test_the_expected_shoe_of_a_count() -> None:
    """At true count 0 a balanced count expects the full shoe's make-up; at +4 fewer small
    cards and more tens; the cards left are the depth's."""
    rules = load_rules("classic-blackjack")
    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    zero = expected_shoe(rules, tags, 0, 0.5)
    assert zero.counts.tolist() == pytest.approx([12.0] * 9 + [48.0])
    hot = expected_shoe(rules, tags, 4, 0.5)
    assert hot.counts.sum() == pytest.approx(156) and hot.counts[4] < 12 < hot.counts[6] + 1
    assert hot.counts[9] > 48 and "true count +4" in hot.note


def _play(
    rules: RuleSet,
    chart: Chart,
    rounds: int,
    charts: list[Chart],
    depths: tuple[float, ...] = (),
    count: str = "hi-lo",
) -> Run:
    """(On the generic kernel, which the other tests compile too: the results are the same.)"""
    from pontoon.sim.counting import Counting
    from pontoon.sim.job import Job, Kernel
    from pontoon.sim.runner import simulate

    counting = Counting.read(count)
    job = Job.build(
        rules, chart, counting=counting, indices=charts, index_depths=depths, kernel=Kernel.GENERIC
    )
    return simulate(job, rounds, 11, workers=2, progress=False)


@pytest.mark.slow
def test_an_index_chart_by_depth_plays_the_nearest_depths_charts() -> None:
    """Indices by depth: the kernel plays the charts of the depth nearest the part of the shoe
    left at the deal. Charts for 75 % and 25 % left, the deep ones standing on every hard
    total: with the cutting card at 45 % every round is dealt with more than half the shoe
    left, so the deep charts are never played and the game is the plain one to the cent; at
    90 % they are played, and standing costs."""
    from pontoon.analysis.chart import HARD_ROWS

    chart = analyze(load_rules("classic-blackjack"), "basic").chart
    assert chart is not None
    stands = chart.copy()
    for row in HARD_ROWS:
        for up in range(1, 11):
            stands.set(row, up, "S")
    charts = [chart] * 21 + [stands] * 21
    for penetration, same in ((0.45, True), (0.9, False)):
        rules = load_rules("classic-blackjack", {"penetration": penetration})
        plain = _play(rules, chart, 10**6, [])
        deep = _play(rules, chart, 10**6, charts, (0.75, 0.25))
        assert np.array_equal(plain.result.acc, deep.result.acc) is same, penetration
        if not same:
            assert document(deep, "basic")["ev"] < document(plain, "basic")["ev"] - 0.005


def test_an_index_chart_of_the_charts_own_plays_deals_the_plain_game() -> None:
    """An index chart whose plays are the chart's own plays deals exactly the plain game
    (what an index chart gains is measured under nz-pontoon below; the Illustrious 18 in
    classic blackjack gained 0.30 % ± 0.08 % of a unit at 6e7 rounds: docs/analysts/count.md)."""
    from pontoon.count.indices import index_charts

    rules = load_rules("classic-blackjack")
    chart = analyze(rules, "basic").chart
    assert chart is not None
    same = [{"cell": "H16", "dealer": "T", "below": "H", "above": "H", "index": 0}]
    plain, copy = (
        _play(rules, chart, 10**6, []),
        _play(rules, chart, 10**6, index_charts(chart, same)),
    )
    assert np.array_equal(plain.result.acc, copy.result.acc)


@pytest.mark.slow
def test_nz_pontoon_index_chart_wins_more_at_the_same_count_and_ramp() -> None:
    """nz-pontoon: the index chart `count indices` writes for a count balanced on the Spanish
    deck (examples/: hi-lo with the nines -1 too, its ramp 1-8, sitting out below 0), played
    by `simulate`, wins more than the plain chart with the same count and ramp: by more than
    three standard errors of the difference, 2e7 rounds each (about 0.63 % of a unit more,
    +1.52 % to +2.14 % at 2e8 rounds: docs/analysts/count.md)."""
    from pontoon.count.indices import index_charts, read_indices

    rules = load_rules("nz-pontoon")
    chart = analyze(rules, "basic").chart
    assert chart is not None
    indices = index_charts(chart, read_indices(str(EXAMPLES / "nz-pontoon-balanced-indices.csv")))
    count = str(EXAMPLES / "spanish-balanced.toml")
    runs = [_play(rules, chart, 2 * 10**7, c, count=count) for c in ([], indices)]
    docs = [document(r, "basic") for r in runs]
    gain = docs[1]["ev"] - docs[0]["ev"]
    assert gain > 3 * math.hypot(docs[0]["stderr"], docs[1]["stderr"]), gain


def test_index_chart_files_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    for text in ("cell,dealer,below,above,index\nH16,T,H,S,zero\n", "cell,dealer\n", "x"):
        bad.write_text(text)
        assert main(["simulate", "--rounds", "10", "--count", "hi-lo", "--indices", str(bad)]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    good = tmp_path / "good.csv"
    good.write_text("cell,dealer,below,above,index\nH16,T,H,S,0\n")
    assert main(["simulate", "--rounds", "10", "--indices", str(good)]) == 2  # no --count


@pytest.mark.slow
def test_bet_ramp_and_its_risk(capsys: pytest.CaptureFixture[str]) -> None:
    """count ramp: Kelly bets in whole chips within the spread; SCORE = DI^2 and N0 = 10^6 /
    DI^2 (Schlesinger's definitions); a flat bet on a game the house wins ruins for sure."""
    from pontoon.count.ramp import Table, ramp

    e = classic_effects()
    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    doc = ramp(e, tags, 1_000_000, Table(500, 8, 500, 100_000), 1.33)
    bets = list(doc["bets"].values())
    assert all(b % 500 == 0 and 500 <= b <= 4000 for b in bets) and max(bets) == 4000
    assert doc["score"] == pytest.approx(doc["di"] ** 2)
    assert doc["n0"] == pytest.approx(1e6 / doc["di"] ** 2)
    assert 0 < doc["risk_of_ruin"] < 1 and doc["win_per_100"] > 0
    flat = ramp(e, tags, 1_000_000, Table(500, 1, 500, 100_000), 1.33)
    assert flat["risk_of_ruin"] == 1.0 and flat["win_per_100"] == pytest.approx(
        e.ev * 500 * 100, rel=0.05
    )
    out = ramp(e, tags, 1_000_000, Table(500, 8, 500, 100_000, wong_out=0), 1.33)
    assert out["bets"]["-1"] == 0 and out["win_per_100"] > doc["win_per_100"]
    two = ramp(e, tags, 1_000_000, Table(500, 8, 500, 100_000, boxes=((2, 2),)), 1.33, None, 0.489)
    assert two["boxes"] == {str(tc): 2 for tc in range(2, 11) if str(tc) in two["bets"]}
    assert two["win_per_100"] > doc["win_per_100"] and two["sd_per_100"] > doc["sd_per_100"]
    args = ["count", "ramp", "--rules", "classic-blackjack", "--bankroll", "1000000"]
    for bad in (
        [*args, "--spread", "8", "--boxes-from", "3"],
        [*args, "--spread", "8", "--boxes-from", "3:9"],
        [*args, "--spread", "0.5"],
        [*args, "--spread", "8", "--kelly", "0"],
        [*args, "--spread", "8", "--chip", "300"],
        ["count", "ramp", "--bankroll", "100", "--spread", "8"],
    ):
        assert main(bad) == 2, bad
        assert capsys.readouterr().err.count("\n") == 1
    assert main([*args, "--spread", "8", "--json", *NOSPLIT]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"bets", "win_per_100", "sd_per_100", "score", "n0", "risk_of_ruin"} <= set(doc)


@pytest.mark.slow
def test_risk_of_ruin_within_a_session_closed_form_and_simulated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """count ramp --hands: ruin within 1,000 rounds from 40 units, the first-passage formula
    beside sessions played by the simulator with the ramp's bets (4e6 rounds): within 3 SE."""
    args = ["count", "ramp", "--rules", "classic-blackjack", *NOSPLIT]
    args += ["--bankroll", "20000", "--spread", "8", "--hands", "1000", "--rounds", "4000000"]
    assert main([*args, "--workers", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sim = doc["simulated_risk_of_ruin_within"]
    assert sim["sessions"] > 4000 and 0.1 < sim["risk"] < 0.6
    assert abs(sim["risk"] - doc["risk_of_ruin_within"]) < 3 * sim["stderr"]


@pytest.mark.slow
def test_risk_of_ruin_without_end_and_with_more_boxes_at_high_counts_simulated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """count ramp --goal: sessions that end at ruin or when the bankroll has grown tenfold give
    the risk of ruin without end (the part beyond the goal, R^10, is under 1 %), and with
    --boxes-from one player's sessions play the ramp's boxes at each count: both beside the
    closed forms (the diffusion approximation with the boxes' covariance) within 3 SE. A game
    that pays pontoon 2:1, so that a flat bettor on 40 units has a risk below 1."""
    args = ["count", "ramp", "--rules", "classic-blackjack", *NOSPLIT, "--set", "natural_pays=2"]
    args += ["--bankroll", "20000", "--spread", "4", "--rounds", "4000000", "--goal", "10"]
    args += ["--boxes-from", "2:2", "--boxes-from", "4:3", "--hands", "1000"]
    assert main([*args, "--workers", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["boxes"]["2"] == 2 and doc["boxes"]["9"] == 3
    end = doc["simulated_risk_of_ruin"]
    assert end["sessions"] > 250 and end["beyond_goal"] < 0.01 and 0.3 < end["risk"] < 0.8
    assert abs(end["risk"] - doc["risk_of_ruin"]) < 3 * end["stderr"]
    within = doc["simulated_risk_of_ruin_within"]
    assert within["sessions"] > 4000
    assert abs(within["risk"] - doc["risk_of_ruin_within"]) < 3 * within["stderr"]
    for bad in (["--goal", "1"], ["--goal", "11"], ["--rounds", "0"]):
        assert main([*args, *bad]) == 2, bad
        assert capsys.readouterr().err.count("\n") == 1


def test_12_rescue_rows_take_indices_and_simulate_plays_them() -> None:
    """12 (double_rescue): a rescue row X<t> against a dealer card gets an index where
    forfeiting the original wager overtakes standing on the doubled total. Against a 2 (no
    dealer pontoon) a total of 16 or less stands only on a dealer bust, so the crossing is
    where the dealer busts a quarter of the time. An index chart's rescue rows are played by
    the true count of the deal: each count's chart carries its own rescue table."""
    from pontoon.analysis.dealer import BUST, dealer_tables
    from pontoon.count.indices import COUNTS, _rescues, expected_shoe, index_charts
    from pontoon.sim import kernel as K

    rules = load_rules("nz-pontoon", {"double_rescue": True})
    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    found = {(i["cell"], i["dealer"]): i for i in _rescues(rules, tags, 0.2)}
    x16 = found["X16", "2"]
    assert (x16["below"], x16["above"], x16["index"]) == ("R", "S", 0)
    lo = int(np.floor(x16["crossing"]))
    shoes = np.array([expected_shoe(rules, tags, tc, 0.2).counts for tc in (lo, lo + 1)])
    bust = dealer_tables(True, shoes, infinite=False)[:, 1, BUST]  # the dealer's 2
    assert bust[0] < 0.25 < bust[1] or bust[1] < 0.25 < bust[0]
    assert ("X20", "T") not in found  # a doubled 20 stands at every count

    chart = Chart.from_csv((DATA.parent / "sim" / "nz-pontoon.csv").read_text(), "test")
    always = [{"cell": "X16", "dealer": "T", "below": "R", "above": "R", "index": 0}]
    from_two = [dict(always[0], below="S", index=2)]  # stands below +2 (hi-lo sits out < 0)
    plain = chart.with_rescues()
    plain.set("X16", 10, "R")
    runs = [_play(rules, plain, 400_000, c) for c in ([], index_charts(chart, always))]
    assert np.array_equal(runs[0].result.acc, runs[1].result.acc)
    counted = _play(rules, plain, 400_000, index_charts(chart, from_two))
    rescued = [int(r.result.cats[K.K_RESCUE]) for r in (runs[0], counted)]
    assert 0 < rescued[1] < rescued[0], rescued
    assert len(COUNTS) == K.TCBINS


@pytest.mark.slow
def test_indices_by_simulation_random_plays_at_the_first_decision(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Indices by simulation: each box's first decision is a legal play drawn at random, the
    box's net added up by cell, play and true count. Over the whole shoe each play's mean is
    that play's exact EV (the analysis's values, 16 v T, 11 v 6, 8-8 v T; within 4 SE and
    half a percent for the shoe's depths) and plays the rules forbid are never drawn. The
    index is where the line fitted to the gain by true count crosses 0 (a gain rising 1 %
    a true count from -1.5 % at 0 crosses at +1.5); a slope within two standard errors of 0
    gives none. The output says how far an unbalanced count's true count drifts."""
    from pontoon.count.simulated import _index
    from pontoon.sim import compiled as C
    from pontoon.sim.counting import Counting
    from pontoon.sim.job import Job, Kernel
    from pontoon.sim.runner import simulate

    rules = load_rules("classic-blackjack")
    report = analyze(rules, "basic")
    assert report.chart is not None
    exact = {(r["hand"], r["dealer"]): r for r in report.table}
    flat = Counting.from_dict({"tags": HI_LO["tags"], "ramp": {"0": 1}}, "hi-lo")
    job = Job.build(rules, report.chart, counting=flat, probing=True, kernel=Kernel.GENERIC)
    probes = simulate(job, 4_000_000, 3, workers=2, progress=False).result.probes
    cells = {("H16", "T"): 16 * 10 + 9, ("H11", "6"): 11 * 10 + 5, ("P8", "T"): 51 * 10 + 9}
    for (row, dealer), at in cells.items():
        s, q, n = probes[at].sum(axis=1).T
        assert n[C.SURRENDER_ACTION] == 0  # no surrender in this game
        assert (n[C.SPLIT] > 0) == row.startswith("P")
        for play, word in enumerate(("hit", "stand", "double", "split")):
            if n[play]:
                mean = s[play] / n[play]
                se = math.sqrt((q[play] / n[play] - mean * mean) / n[play])
                assert abs(mean - exact[row, dealer][word]) < 4 * se + 0.005, (row, word)
    tc = np.arange(-10, 11)
    line = np.zeros((5, 21, 3))
    for play, mean in ((C.HIT, -0.53 + 0 * tc), (C.STAND, -0.545 + 0.01 * tc)):
        line[play] = np.stack([mean * 10_000, (mean**2 + 1) * 10_000, 10_000 + 0 * tc], axis=1)
    x, se, below, above, n = _index(line, C.HIT) or (99, 0, "", "", 0)
    assert (below, above, n) == ("H", "S", 420_000) and x == pytest.approx(1.5) and se < 0.5
    line[C.STAND, :, 0] = -0.545 * 10_000 + 0.0001 * tc  # no trend to speak of
    assert _index(line, C.HIT) is None
    args = ["count", "indices", "--rules", "classic-blackjack", *NOSPLIT, "--rounds", "200000"]
    assert main([*args, "--json", "--workers", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rounds"] == 200000 and doc["method"].startswith("simulation")
    assert doc["drift_per_deck"] == 0  # hi-lo is balanced on the standard deck
    assert main([*args[:-1], "-5"]) == 2 and capsys.readouterr().err.count("\n") == 1
    sevens = tmp_path / "sevens.toml"  # hi-lo with the sevens +1: +4 a deck
    sevens.write_text("tags = { A = -1, 2 = 1, 3 = 1, 4 = 1, 5 = 1, 6 = 1, 7 = 1, T = -1 }\n")
    assert main([*args, "--count", str(sevens), "--workers", "1"]) == 0
    assert "unbalanced here (+4 a deck)" in capsys.readouterr().out


def test_a_ramp_of_several_boxes_uses_their_simulated_covariance(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """count ramp --boxes-from: the two boxes' covariance is simulated (the chart's two boxes,
    each from a fresh shoe), reported with its standard error and rounds, the same for the
    same seed; not the exact model's, which leaves out the cards each box takes from the
    other's shoe and is a thousandth or two high. One box at every count needs none."""
    from pontoon.analysis.covariance import simulated_covariance
    from pontoon.analysis.distribution import round_distribution
    from pontoon.rules import load_rules

    args = ["count", "ramp", "--rules", "classic-blackjack", *NOSPLIT, "--bankroll", "1000000"]
    args += ["--spread", "8", "--json", "--workers", "2"]
    assert main([*args, "--boxes-from", "2:2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["covariance_rounds"] == 1_000_000 and 0 < doc["covariance_se"] < 0.003
    assert main([*args, "--boxes-from", "2:2"]) == 0
    assert json.loads(capsys.readouterr().out)["covariance"] == doc["covariance"]
    rules = load_rules("classic-blackjack", {"split_max_hands": 1})
    rep = analyze(rules, "basic", wager=500)
    assert rep.chart is not None
    other = simulated_covariance(rules, rep.chart, 500, 1_000_000, 7, 2)  # another seed
    apart = math.hypot(doc["covariance_se"], other.se)
    assert abs(doc["covariance"] - other.value) < 4 * apart
    assert doc["covariance"] != round_distribution(rep).covariance()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["covariance"] is None


def test_10_the_linear_line_insures_from_the_index_and_insurance_breaks_even_near_plus_3() -> None:
    """10: the linear EV by true count takes insurance from the count given on (as the
    simulated player insures), not below it; by the effects of removal, hi-lo's insurance
    breaks even in classic blackjack between +2 and +4 (its published index is +3, and
    ``count indices``'s exact one), and is worth more the higher the count."""
    effects = classic_effects()
    tags = {k: float(v) for k, v in HI_LO["tags"].items()}
    a, b = insurance_line(effects, tags)
    assert a < 0 < b and 2.0 < -a / b < 4.0
    plain = {r["true_count"]: r["linear"] for r in curve(effects, tags)}
    insured = {r["true_count"]: r["linear"] for r in curve(effects, tags, None, 3)}
    gains = {}
    for tc, line in plain.items():
        if line is None:
            continue
        if tc < 3:
            assert insured[tc] == line
        else:
            gains[tc] = insured[tc] - line
    assert 0 < gains[3] < gains[4] < gains[5]
    off = effects_of_removal(
        load_rules("classic-blackjack", FAST | {"insurance": False}), "basic", workers=2
    )
    assert [r["linear"] for r in curve(off, tags, None, 3)] == [
        r["linear"] for r in curve(off, tags)
    ]


def test_10_a_simulated_ramp_insures_from_the_counts_exact_index(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """count ramp --rounds: the simulated player insures against an ace from the count's
    exact insurance index (hi-lo in classic blackjack: +3), and that is worth something: the
    same shoes (the peek game: insuring draws no card) with insurance off the table win less."""
    args = ["count", "ramp", "--rules", "classic-blackjack", *NOSPLIT, "--bankroll", "1000000"]
    args += ["--spread", "8", "--rounds", "2000000", "--json", "--workers", "2"]
    wins = []
    for offered in ("true", "false"):
        assert main([*args, "--set", f"insurance={offered}"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["source"] == "simulated"
        assert doc["insures_from"] == (3 if offered == "true" else None)
        wins.append(doc["win_per_100"])
    assert wins[0] > wins[1], wins
