"""The nz-pontoon house edge of the optimal chart, checked by playing that chart through the
round engine: every round from a freshly shuffled 6-deck Spanish shoe (the exact analysis is
'off the top'), seeded. Tolerance: 4 standard errors of the simulated mean (about 1 % of
the wager for 200,000 rounds): a wrong reading of a rule worth more than that fails. The
exact agreement of single decisions is tests/test_analysis_engine.py's business."""

from __future__ import annotations

import numpy as np
import pytest

from pontoon.analysis import analyze
from pontoon.analysis.chart import Chart, pair_row, total_row
from pontoon.cards import pack
from pontoon.hand import is_pair, is_soft, total
from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import ScriptedCards

ROUNDS = 60_000  # SE about 0.0045 of a wager; the kernel-vs-engine tests are the fine check
PREFS = {
    "H": ("hit", "stand"),
    "S": ("stand", "hit"),
    "D": ("double", "hit", "stand"),
    "Ds": ("double", "stand", "hit"),
    "P": ("split",),
    "R": ("surrender", "hit", "stand"),
    "Rs": ("surrender", "stand", "hit"),
    "Rp": ("surrender", "split"),
}


def chart_move(rnd: Round, chart: Chart, rules: RuleSet) -> Move:
    """The chart's move: the pair's row, then the total's, the first legal action."""
    cur = rnd.current()
    assert cur is not None
    box, hand = cur
    up = rnd.dealer[0].value
    wish: list[str] = []
    if len(hand.cards) == 2 and is_pair(hand.cards[0], hand.cards[1], rules.split_by):
        wish += PREFS[chart.code(pair_row(hand.cards[0].value), up)]
    wish += PREFS[chart.code(total_row(total(hand.cards), is_soft(hand.cards)), up)]
    for action in (*wish, "hit", "stand"):
        move = Move(action, box.number)
        if rnd.can(move):
            return move
    raise AssertionError("no legal move")


@pytest.mark.slow
def test_nz_pontoon_chart_through_the_round_engine() -> None:
    rules = load_rules("nz-pontoon")
    report = analyze(rules, "basic")
    assert report.chart is not None
    full = pack(rules.deck, rules.decks)
    rng = np.random.default_rng(20240604)
    nets = np.empty(ROUNDS)
    for k in range(ROUNDS):
        order = rng.permutation(len(full))[:40]
        rnd = Round(rules, ScriptedCards([full[i] for i in order]))
        rnd.place_wager(1, "p", 500)
        rnd.deal()
        while not rnd.over:
            rnd.apply(chart_move(rnd, report.chart, rules))
        nets[k] = rnd.net("p") / 500
    mean, se = nets.mean(), nets.std(ddof=1) / np.sqrt(ROUNDS)
    assert abs(mean - report.ev) < 4 * se, (mean, report.ev, se)
