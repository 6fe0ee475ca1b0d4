"""Effects of removal: for every rank, the exact change in the expected value of a round when
one card of it leaves the full shoe, each shoe analysed exactly (:mod:`pontoon.analysis`).

Two ways of playing the shoe less a card: the full shoe's optimal chart *fixed* (``basic``:
what a counter who does not deviate gains), or the composition-dependent optimum
*re-optimised* for that shoe (``composition``: the most that card's absence is worth). A
card of a rank is one of its suits at random: where suits pay (6-7-8 and 7-7-7: 11.1, 11.2),
the spade and a heart are analysed apart and weighed 1:3 (hearts, diamonds and clubs pay
alike); a ten-value card is one of the first ten-value rank the deck holds (every ten-value
rank plays alike, and the analysis splits tens by rank only through the counts).

The linear estimate of a shoe's EV is the full shoe's plus the sum of the effects of its
cards out; ``sum`` (the effects weighed by the full shoe's cards of each rank) is about 0
for a fixed strategy, as theory says (removing a whole shoe's worth of cards, one of each in
proportion, changes nothing), and above it when play is re-optimised.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import Floats, Removal, ShoeModel
from pontoon.analysis.evaluate import Outcome
from pontoon.cards import Card
from pontoon.cluster import TaskPool
from pontoon.errors import InputError
from pontoon.rules import RuleSet

KEYS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
STRATEGIES: Final = {
    "basic": "fixed: the full shoe's optimal total-dependent chart, played as written",
    "composition": "re-optimised: the composition-dependent optimum for each shoe",
}


@dataclass(frozen=True)
class Shoe:
    """One shoe to analyse: the rules' less ``removed``."""

    rules: RuleSet
    strategy: str | Chart
    wager: int
    post_split: str
    removed: tuple[Removal, ...]


def expected_value(task: Shoe) -> tuple[float, Floats]:
    """The EV of one shoe, and every two-card hand's action values (hands, 10 up, 5
    actions; NaN where not allowed) against each first card (in a worker)."""
    from pontoon.analysis.report import analyze

    rep = analyze(
        task.rules,
        task.strategy,
        wager=task.wager,
        post_split=task.post_split,
        removed=task.removed,
    )
    return rep.ev, rep.outcome.actions


@dataclass(frozen=True)
class Decision:
    """One decision of the strategy: a two-card hand against a first card, how often it
    arises, what the better of the other plays gains over the strategy's in the full shoe
    (``gain``, at most 0), and that gain's effects of removal."""

    hand: tuple[int, int]
    up: int
    play: int  # pontoon.analysis.evaluate.ACTION_NAMES
    other: int
    frequency: float
    gain: float
    eor: dict[str, float]


@dataclass
class Effects:
    """The effects of removal of a rule set under a strategy (fractions of the wager)."""

    rules: RuleSet
    strategy: str
    ev: float  # the full shoe's
    eor: dict[str, float]  # by KEYS
    evs: dict[str, float]  # each shoe less one card
    cards: dict[str, float]  # the full shoe's cards of each key
    seconds: float
    chart: Chart | None = None
    analyses: int = 0
    decisions: list[Decision] = field(default_factory=list)

    @property
    def sum(self) -> float:
        """The effects weighed by the full shoe's cards (about 0 for a fixed strategy)."""
        return sum(self.cards[k] * self.eor[k] for k in KEYS)

    def linear(self, removed: dict[str, float]) -> float:
        """The linear estimate of the EV of the shoe less ``removed`` cards by key."""
        return self.ev + sum(n * self.eor[k] for k, n in removed.items())

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "strategy": self.strategy,
            "played": STRATEGIES[self.strategy],
            "ev": self.ev,
            "eor": self.eor,
            "ev_less_one": self.evs,
            "cards": self.cards,
            "sum": self.sum,
            "analyses": self.analyses,
            "method": "exact combinatorial analysis of each shoe (pontoon analyze --removed)",
            "seconds": round(self.seconds, 3),
        }


def removals(rules: RuleSet) -> dict[str, list[tuple[float, tuple[Removal, ...]]]]:
    """Each key's shoes to analyse, with their weights (see the module's docstring)."""
    shoe = ShoeModel.of(rules)
    by_suits = rules.bonuses or rules.super_bonus
    ten = next(r for r in range(10, 14) if shoe.rank_counts[r - 1] > 0)
    out: dict[str, list[tuple[float, tuple[Removal, ...]]]] = {}
    for k, key in enumerate(KEYS):
        rank = ten if key == "T" else k + 1
        if by_suits and rank in (6, 7, 8):
            out[key] = [(0.25, (Card(rank, "S"),)), (0.75, (Card(rank, "H"),))]
        else:
            out[key] = [(1.0, (rank,))]
    return out


def effects_of_removal(
    rules: RuleSet,
    strategy: str = "basic",
    *,
    wager: int = 500,
    post_split: str = "cdz",
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
) -> Effects:
    """Every rank's effect of removal under ``strategy`` (``basic``: fixed; ``composition``:
    re-optimised), each shoe analysed on the local workers or a Dask cluster."""
    from pontoon.analysis.report import analyze

    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}: {', '.join(STRATEGIES)}")
    start = time.perf_counter()
    full = analyze(rules, strategy, wager=wager, post_split=post_split)
    played: str | Chart = full.chart if full.chart is not None else "composition"
    plan = removals(rules)
    tasks = [
        Shoe(rules, played, wager, post_split, removed)
        for ways in plan.values()
        for _, removed in ways
    ]
    with TaskPool(
        expected_value,
        tasks,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        label="effects of removal",
    ) as pool:
        results = iter(pool.results())
    shoe = ShoeModel.of(rules)
    out: dict[str, float] = {}
    actions: dict[str, Floats] = {}
    for key, ways in plan.items():
        got = [(w, next(results)) for w, _ in ways]
        out[key] = sum(w * ev for w, (ev, _) in got)
        actions[key] = np.sum([w * a for w, (_, a) in got], axis=0)
    cards = {key: float(shoe.counts[k]) for k, key in enumerate(KEYS)}
    return Effects(
        rules,
        strategy,
        full.ev,
        {k: out[k] - full.ev for k in KEYS},
        out,
        cards,
        time.perf_counter() - start,
        full.chart,
        len(tasks) + 1,
        decisions(full.outcome, actions),
    )


def decisions(outcome: Outcome, actions: dict[str, Floats]) -> list[Decision]:
    """Every decision with two plays or more (:class:`Decision`), from the full shoe's
    outcome and each key's shoe's action values."""
    out = []
    for k, (_, a, b) in enumerate(outcome.hands):
        for u in range(10):
            vals = outcome.actions[k, u]
            play = int(outcome.choice[k, u])
            legal = np.flatnonzero(np.isfinite(vals))
            others = [int(x) for x in legal if x != play]
            if play < 0 or not others:
                continue
            other = max(others, key=lambda x: vals[x])
            gain = float(vals[other] - vals[play])
            eor = {
                key: float(acts[k, u, other] - acts[k, u, play]) - gain
                for key, acts in actions.items()
            }
            freq = float(outcome.up_prob[u] * outcome.deal_prob[k, u])
            out.append(Decision((a, b), u + 1, play, other, freq, gain, eor))
    return out
