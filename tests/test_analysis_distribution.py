"""The exact distribution of a round's net (pontoon/analysis/distribution.py).

Its mean is `analyze`'s expected value to rounding error for every preset, strategy and
post-split play; a single hand's distribution agrees with every card sequence played
through the round engine; classic blackjack's split-once distribution is Eric Farmer's exact
one to every printed digit (tests/data/reference/farmer_pdf.csv), and the approximation used
for three and four hands is measured there; the variance and two boxes' covariance agree with
the simulator's within 4 standard errors, and classic six-deck variances with the published
ones.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from pontoon.analysis import pairs
from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import comp_of
from pontoon.analysis.covariance import simulated_covariance
from pontoon.analysis.distribution import RoundDistribution, round_distribution
from pontoon.analysis.endings import Endings
from pontoon.analysis.game import DOUBLE, STAND, SURRENDER, Context, Game
from pontoon.analysis.reach import Forward
from pontoon.analysis.report import analyze
from pontoon.cards import Card, parse_cards
from pontoon.rules import RuleSet, load_rules
from pontoon.sim import kernel as K
from pontoon.sim.job import Job, run_chunk
from pontoon.sim.runner import simulate
from pontoon.vocab import Ending
from tests.test_analysis_engine import NZ1, WAGER, engine_outcomes

FARMER = Path(__file__).parent / "data" / "reference" / "farmer_pdf.csv"
# The approximation of splits to three or four hands (hands independent given the pattern of
# second cards, the first card and the dealer's outcome), measured on two-hand splits against
# the exact enumeration: variance 3.6e-5 to 5.0e-5 too high, no probability off by more than
# 1.0e-5 (docs/analysts/par.md).
SPLIT_VARIANCE = 1e-4
SPLIT_PROBABILITY = 2e-5


@dataclasses.dataclass(frozen=True)
class Analysed:
    """What the tests read of an analysis: its EV, its EV and chance by the dealer's first
    card, and its round's distribution."""

    ev: float
    up_prob: Sequence[float]
    ev_by_up: Sequence[float]
    d: RoundDistribution


def analysed(
    rules: RuleSet,
    strategy: str = "composition",
    post_split: str = "cdz",
    wager: int = 500,
    infinite: bool = False,
) -> Analysed:
    """``analyze`` and ``round_distribution`` of one game, worked out once in a test process
    for the tests that ask about the same game (the exact analysis is deterministic): the
    classic split-once game with late surrender is both Farmer's row and the peek game's
    test, six-deck nz-pontoon's composition optimum three tests' game. Keyed by the rule set
    and every argument, and by whether two-hand splits are enumerated exactly (a test turns
    that off)."""
    return _analysed(rules, strategy, post_split, wager, infinite, pairs.EXACT_TWO_HANDS)


@functools.cache
def _analysed(
    rules: RuleSet, strategy: str, post_split: str, wager: int, infinite: bool, exact: bool
) -> Analysed:
    assert exact == pairs.EXACT_TWO_HANDS
    rep = analyze(rules, strategy, post_split=post_split, wager=wager, infinite=infinite)
    out = rep.outcome
    return Analysed(rep.ev, out.up_prob.tolist(), out.ev_by_up.tolist(), round_distribution(rep))


def dist_of(
    preset: str, strategy: str = "composition", **kw: object
) -> tuple[float, RoundDistribution]:
    post = str(kw.pop("post_split", "cdz"))
    wager = int(kw.pop("wager", 500))  # type: ignore[call-overload]
    infinite = bool(kw.pop("infinite", False))
    a = analysed(load_rules(preset, kw), strategy, post, wager, infinite)
    return a.ev, a.d


def assert_exact_mean(ev: float, d: RoundDistribution) -> None:
    assert d.ev == pytest.approx(ev, abs=1e-12)
    assert d.total == pytest.approx(1.0, abs=1e-12)
    assert d.dist.probs.min() > -1e-15


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "strategy", "post_split"),
    [
        ("classic-blackjack", "composition", "cdz"),
        ("classic-blackjack", "basic", "cdz"),
        ("nz-blackjack", "composition", "cdp"),
        ("nz-pontoon", "composition", "cdz"),
        ("nz-pontoon", "composition", "cdp1"),
        ("nz-pontoon", "basic", "cdz"),
        ("spanish-21", "composition", "cdz"),  # 12: rescue
        ("spanish-21", "basic", "cdz"),
    ],
)
def test_the_mean_is_analyze_expected_value(preset: str, strategy: str, post_split: str) -> None:
    a = analysed(load_rules(preset), strategy, post_split)
    d = a.d
    assert_exact_mean(a.ev, d)
    for u in range(10):  # and against each first card
        mean = d.by_up(u).mean() / d.wager / a.up_prob[u]
        assert mean == pytest.approx(a.ev_by_up[u], abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize(
    "knobs",
    [
        {"dealer_natural_takes": "all"},  # 13.7 either way
        {"surrender": "late"},  # 9.3 without 9.4
        {"split_max_hands": 1},
        {"split_max_hands": 2, "resplit_aces": True, "hit_split_aces": True, "decks": 1},
        {"wager": 501},  # 3:2 of an odd wager rounds down
        {"wager": 2500},  # 11.2: the large Super Bonus
        {"infinite": True},
        {"double_rescue": True, "double_on": "9-11"},
    ],
    ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()),
)
def test_the_mean_is_the_expected_value_under_each_knob(knobs: dict[str, object]) -> None:
    ev, d = dist_of("nz-pontoon", **dict(knobs))
    assert_exact_mean(ev, d)


@pytest.mark.slow
def test_a_natural_and_the_super_bonus_are_exact_frequencies() -> None:
    rules = load_rules("nz-pontoon")
    d = analysed(rules, "composition").d
    n = rules.decks * 48  # Spanish decks: no tens
    aces, tens = 4 * rules.decks, 12 * rules.decks
    pontoon = sum(c for why, _, _, c in d.endings() if why == Ending.PONTOON)
    # the player's first two cards are an ace and a ten-value card (9.1), whatever the dealer's
    assert pontoon == pytest.approx(2 * aces * tens / (n * (n - 1)), rel=1e-12)
    sb = [(cents, c) for why, cents, _, c in d.endings() if why == Ending.SUPER_BONUS]
    assert [cents for cents, _ in sb] == [100_000]  # 11.2: $1,000 on a wager under $25


@pytest.mark.slow  # beside the test above: the same game, its analysis and dealer's tables
def test_13_7_two_hand_splits_are_exact_in_the_expected_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """13.7 (no hole card, the original wager only): a dealer pontoon takes one wager from all
    the split hands standing. Enumerating both hands of an ace split counts P(no hand stood)
    where the product of the hands' chances approximated it: the EV moves by the size
    `bench/analysis.py --measure-13-7` measured for A-A (0.0000086 pp), and the distribution's
    mean moves with it."""
    rules = load_rules("nz-pontoon")
    exact = analysed(rules, "composition")
    monkeypatch.setattr(pairs, "EXACT_TWO_HANDS", False)
    product = analyze(rules, "composition")
    assert -9.0e-8 < exact.ev - product.ev < -8.0e-8
    assert round_distribution(product).ev == pytest.approx(product.ev, abs=1e-12)


# ---------------------------------------------------------------- one hand, by the engine


def forward_hand(rules: object, hand: str, up: str, action: int) -> dict[int, float]:
    """The distribution of one two-card hand playing ``action`` (then standing), by the
    forward pass; in the peek game given no dealer pontoon."""
    game = Game(rules, WAGER)  # type: ignore[arg-type]
    cards = parse_cards(hand)
    u = Card.parse(up).value - 1
    i = game.comps.index[comp_of([c.value for c in cards])]
    vals = game.evaluate(Context())
    choice = vals.choice.copy()
    choice[i, u] = action
    ends = Endings(game)
    start = np.zeros((len(game.comps), 10, 1))
    start[i, u, 0] = 1.0
    play = (Context(), dataclasses.replace(vals, choice=choice, by_suits=False))
    joint = Forward(game, ends, [play]).run([start])[0][0, u]
    out: dict[int, float] = {}
    for k, mass in enumerate(joint.sum(axis=0)):
        if mass:
            out[ends.ends[k].cents] = out.get(ends.ends[k].cents, 0.0) + float(mass)
    total = sum(out.values())
    return {net: p / total for net, p in out.items()}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "hand", "up", "action", "code", "draws"),
    [
        (NZ1, "QH 6D", "KC", STAND, "stand", 0),  # 13.7: a dealer pontoon takes the wager
        (NZ1, "5H 6D", "KC", DOUBLE, "double", 1),  # 13.7: ... only the original of a double
        (NZ1, "5H 6D", "9C", DOUBLE, "double", 1),  # 9.2: a doubled 21 paid at once, 1:1
        (NZ1, "QH 6D", "KC", SURRENDER, "surrender", 0),  # 9.4: void on a pontoon
        (NZ1.replace(dealer_natural_takes="all"), "5H 6D", "KC", DOUBLE, "double", 1),
        (load_rules("classic-blackjack", {"decks": 1}), "5H 6D", "KC", DOUBLE, "double", 1),
    ],
)
def test_9_2_9_4_13_7_one_hand_distribution_agrees_with_the_round_engine(
    rules: object, hand: str, up: str, action: int, code: str, draws: int
) -> None:
    engine = engine_outcomes(rules, hand, up, code, draws)  # type: ignore[arg-type]
    ours = forward_hand(rules, hand, up, action)
    assert set(ours) == {net for net, p in engine.items() if p > 0}
    for net, p in engine.items():
        assert ours[net] == pytest.approx(float(p), abs=1e-12), net
    assert sum(engine.values()) == Fraction(1)


# ---------------------------------------------------------------- Farmer's exact distributions


# Each game's tests together: the dealer's tables of one shoe are kept for two shoes at a time
# (pontoon.analysis.game), and this game is also Farmer's late-surrender row below (one
# analysis for both: ``analysed``).
@pytest.mark.slow
def test_peek_game_with_late_surrender_and_the_insured_round() -> None:
    ev, d = dist_of("classic-blackjack", surrender="late", split_max_hands=2)
    assert_exact_mean(ev, d)
    nets = dict(zip(d.dist.keys.tolist(), d.dist.probs.tolist(), strict=True))
    assert nets[-250] > 0.04  # a surrender gives up half the wager (9.3)


def farmer_rows() -> dict[tuple[bool, bool, str], dict[str, float]]:
    out: dict[tuple[bool, bool, str], dict[str, float]] = {}
    with FARMER.open() as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            key = (row["h17"] == "true", row["das"] == "true", row["surrender"])
            out.setdefault(key, {})[row["net"]] = float(row["probability"])
    return out


FARMER_ROWS = farmer_rows()


def split_once(key: tuple[bool, bool, str]) -> tuple[float, RoundDistribution]:
    h17, das, surrender = key
    return dist_of(
        "classic-blackjack",
        dealer_hits_soft_17=h17,
        double_after_split=das,
        surrender=surrender,
        split_max_hands=2,
    )


def nets_of(d: RoundDistribution) -> dict[str, float]:
    return {f"{k / d.wager:+.1f}": p for k, p in zip(d.dist.keys, d.dist.probs, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(FARMER_ROWS), ids=lambda k: f"h17={k[0]},das={k[1]},{k[2]}")
def test_classic_split_once_distribution_is_farmers(key: tuple[bool, bool, str]) -> None:
    ref = FARMER_ROWS[key]
    ev, d = split_once(key)
    mean, var, skew, _ = d.moments()
    assert mean == pytest.approx(ev, abs=1e-12)
    assert mean == pytest.approx(ref["mean"], abs=1e-9)  # he prints 9 decimals
    assert var == pytest.approx(ref["variance"], abs=1e-9)
    assert skew == pytest.approx(ref["skewness"], abs=1e-5)
    win, push, loss = d.chances()
    assert win == pytest.approx(ref["p_win"], abs=1e-9)
    assert push == pytest.approx(ref["p_push"], abs=1e-9)
    assert loss == pytest.approx(ref["p_loss"], abs=1e-9)
    nets = nets_of(d)
    assert set(nets) == set(ref) - {"mean", "variance", "skewness", "p_win", "p_push", "p_loss"}
    for net, p in nets.items():
        assert p == pytest.approx(ref[net], abs=1e-12), net  # and 12 here


@pytest.mark.slow
def test_the_approximation_for_more_hands_measured_on_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """Splits to three or four hands take the hands as independent given the pattern of
    second cards, the first card and the dealer's outcome; on two-hand splits, where the
    exact enumeration exists, that is this close (the same mean, a slightly wider spread)."""
    key = (False, True, "none")
    ref = FARMER_ROWS[key]
    monkeypatch.setattr(pairs, "EXACT_TWO_HANDS", False)
    ev, d = split_once(key)
    assert d.ev == pytest.approx(ev, abs=1e-12)
    assert 0 < d.variance - ref["variance"] < SPLIT_VARIANCE
    for net, p in nets_of(d).items():
        assert p == pytest.approx(ref[net], abs=SPLIT_PROBABILITY), net
    assert nets_of(d)["+1.5"] == pytest.approx(ref["+1.5"], abs=1e-12)  # no split touches it


# ---------------------------------------------------------------- the simulator


def simulated(
    rules: RuleSet, chart: Chart, d: RoundDistribution, boxes: int, rounds: int, seed: int
) -> tuple[float, float]:
    """(variance of a round's net over ``boxes`` boxes, its standard error) from ``rounds``
    rounds of ``chart``, each from a fresh shoe; the standard error of a sample variance is
    sqrt((mu4 - var^2) / n), mu4 from the exact distribution of ``boxes`` boxes. A game
    without the Super Bonus pays the other boxes nothing (11.2)."""
    assert not rules.super_bonus
    job = Job.build(rules, chart, boxes=boxes, wager=500, others=True)
    acc = simulate(job, rounds, seed, workers=1, progress=False).result.acc
    n = acc[K.A_PLAYED]
    s = acc[K.A_NET] / 500
    var = (acc[K.A_SQ] - s * s / n) / (n - 1)
    table = d.boxes(boxes)
    v, mu4 = table.central(2) / d.wager**2, table.central(4) / d.wager**4
    return var, math.sqrt(max(mu4 - v * v, 0.0) / n)


@pytest.mark.slow
def test_variance_and_covariance_agree_with_the_simulator() -> None:
    rep = analyze(load_rules("classic-blackjack", {"penetration": 0.01}), "basic")
    assert rep.chart is not None
    d = round_distribution(rep)
    var, se = simulated(rep.rules, rep.chart, d, 1, 4_000_000, 11)
    assert abs(var - d.variance) < 4 * se, (var, d.variance, se)
    # two boxes: the simulated covariance (each box's cards out of the other's shoe) explains
    # the simulated variance of their total; the exact side's covariance (boxes independent
    # given the dealer's first card and outcome) overstates it by about 0.001 (docs/analysts/par.md)
    cov = simulated_covariance(rep.rules, rep.chart, 500, 2_000_000, 5, 1)
    # the two boxes' total, round by round, from the covariance's own compiled kernel
    job = Job.build(rep.rules, rep.chart, boxes=2, wager=500, others=False)
    total = run_chunk(job, 12, 2_000_000, trace=True)[1].sum(axis=1) / 500
    var2 = float(total.var(ddof=1))
    mu4 = d.boxes(2).central(4) / d.wager**4
    se2 = math.sqrt(max(mu4 - var2 * var2, 0.0) / len(total))
    expect = 2 * d.variance + 2 * cov.value
    assert abs(var2 - expect) < 4 * math.hypot(se2, 2 * cov.se), (var2, expect, se2)
    assert abs(cov.value - d.covariance()) < 0.003 + 4 * cov.se


# ---------------------------------------------------------------- published variances


def wizard_rows() -> list[dict[str, str]]:
    path = FARMER.with_name("wizard_variance.csv")
    with path.open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


@pytest.mark.slow
@pytest.mark.parametrize("row", wizard_rows(), ids=lambda r: "-".join(list(r.values())[:4]))
def test_classic_six_deck_variance_matches_the_published_figures(row: dict[str, str]) -> None:
    rules = load_rules(
        "classic-blackjack",
        {
            "dealer_hits_soft_17": row["soft17"] == "hit",
            "surrender": "late" if row["surrender"] == "yes" else "none",
            "resplit_aces": row["rsa"] == "yes",
        },
    )
    rep = analyze(rules, "basic")  # the chart of the game with double after split
    if row["das"] == "no":
        assert rep.chart is not None
        rep = analyze(rules.replace(double_after_split=False), rep.chart)
    d = round_distribution(rep)
    assert d.variance == pytest.approx(float(row["variance"]), abs=0.005)
    assert d.covariance() == pytest.approx(float(row["covariance"]), abs=0.01)
    assert rep.ev == pytest.approx(float(row["ev"]), abs=0.0005)  # off the top vs a cut card


def test_split_boxes_summed_on_a_lattice_or_keyed_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A split box's hands are summed densely on a lattice of whole units of cents, or keyed
    where the unit is too fine (an odd wager): both give the same masses."""
    import pontoon.analysis.distribution as distribution

    rep = analyze(load_rules("nz-pontoon", {"decks": 1, "split_max_hands": 3}), "composition")
    dense = round_distribution(rep).dist
    monkeypatch.setattr(distribution, "LATTICE_SPAN", -1)  # every box keyed
    keyed = round_distribution(rep).dist
    assert dense.keys.tolist() == keyed.keys.tolist()
    np.testing.assert_allclose(dense.probs, keyed.probs, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "preset", ["nz-pontoon", "nz-blackjack", "classic-blackjack", "spanish-21"]
)
@pytest.mark.parametrize("infinite", [False, True])
def test_the_forward_pass_compiled_or_by_numpy_agree(
    preset: str, infinite: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forward pass steps its hands by the compiled loops (built by the install) or,
    without them, by numpy's weighted counts: the same distribution to a few roundings,
    finite and infinite shoes."""
    from pontoon.analysis import compiled

    assert compiled.add_endings is not None and compiled.forward_step is not None
    rep = analyze(load_rules(preset, {"decks": 1}), "composition", infinite=infinite)
    added = round_distribution(rep).dist
    monkeypatch.setattr(compiled, "add_endings", None)
    monkeypatch.setattr(compiled, "forward_step", None)
    counted = round_distribution(rep).dist
    assert added.keys.tolist() == counted.keys.tolist()
    np.testing.assert_allclose(added.probs, counted.probs, rtol=0, atol=1e-15)


def test_k_boxes_moments_are_the_convolved_boxes() -> None:
    """The PAR sheet's k-box figures come from each box's conditional moments; they are the
    mean and variance of the convolved distribution of k boxes, 11.2's payments included."""
    _, d = dist_of("nz-pontoon", decks=1)
    assert d.super_cents is not None and d.super_others > 0
    for k in (1, 2, 3):
        for others in (False, True):
            table = d.boxes(k, others)
            mean, var = d.box_moments(k, others)
            assert mean == pytest.approx(table.mean() / d.wager, abs=1e-12)
            assert var == pytest.approx(table.central(2) / d.wager**2, abs=1e-10)


@pytest.mark.parametrize("preset", ["nz-pontoon", "classic-blackjack"])
def test_split_hands_played_forwards_as_each_pair_is_valued(preset: str) -> None:
    """`pontoon par` plays each pair's split hands forwards while its dealer tables are there
    (then lets them go); the distribution is the one played after the analysis."""
    rules = load_rules(preset, {"decks": 1})
    later = analysed(rules, "composition").d.dist
    rep = analyze(rules, "composition", one_shot=True, forward=True)
    assert any(sv.played for sv in rep.outcome.splits.values())
    now = round_distribution(rep).dist
    assert now.keys.tolist() == later.keys.tolist()
    np.testing.assert_allclose(now.probs, later.probs, rtol=0, atol=1e-15)


@pytest.mark.slow
def test_a_suit_configuration_keeps_its_chance_when_the_completing_rank_is_gone() -> None:
    """One Spanish deck, a split 7-7 against a dealer's 7: a hand of the pair card and the
    last 7 can never be 7-7-7, yet the configuration of its suits keeps its chance (it was
    dropped, and the two-hand enumeration lost 2 in 45 of that pair's rounds: the distribution
    summed to 0.99999 and the EV missed 4e-6); its completing card, were one left, would not
    match."""
    from pontoon.analysis.composition import ShoeModel
    from pontoon.analysis.payoffs import Payoffs
    from pontoon.analysis.suits import pattern_configs

    rules = load_rules("nz-pontoon", {"decks": 1})
    suits = ShoeModel.of(rules).pattern_suits()
    confs = pattern_configs(
        Payoffs(rules, 500), suits=suits, infinite=False, up=7, hand=(7, 7), split=True
    )
    assert sum(c.prob for c in confs) == pytest.approx(1.0, abs=1e-12)
    ev, d = dist_of("nz-pontoon", decks=1, split_max_hands=2)
    assert_exact_mean(ev, d)
