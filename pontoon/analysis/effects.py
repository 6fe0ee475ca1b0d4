"""The effect of each rule a casino may vary, one knob at a time from the rule set in use:
the exact house edge, its change, and the variance, each variation analysed afresh (a chart
strategy is played as written; ``basic`` and ``composition`` are re-optimised for the rules,
as a player would). Variations run on all local cores, or on a Dask cluster.

>>> from pontoon.rules import load_rules
>>> rules = load_rules("nz-pontoon")
>>> [f"{k}={shown(rules, k, v)}" for k, v in variations(rules)][:4]
['decks=4', 'decks=8', 'dealer_hits_soft_17=False', 'surrender=none']
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from pontoon.analysis.chart import Chart
from pontoon.cluster import TaskPool
from pontoon.rules import RuleSet

KNOBS: Final[tuple[tuple[str, tuple[object, ...]], ...]] = (
    ("decks", (4, 6, 8)),
    ("dealer_hits_soft_17", (True, False)),
    ("surrender", ("none", "late", "void-on-pontoon")),
    ("double_on", ("any-two", "9-11", "10-11", "any-number")),
    ("double_after_split", (True, False)),
    ("double_rescue", (True, False)),
    ("split_max_hands", (2, 3, 4)),
    ("resplit_aces", (True, False)),
    ("hit_split_aces", (True, False)),
    ("dealer_natural_takes", ("original", "all")),
    ("bonuses", (False,)),  # bonuses off, where they are on
    ("super_bonus", (False,)),
    ("natural_pays", (Fraction(3, 2), Fraction(1, 1))),
)


def variations(rules: RuleSet) -> list[tuple[str, object]]:
    """(knob, value) for every one-knob change of ``rules`` in :data:`KNOBS`."""
    return [
        (knob, value) for knob, values in KNOBS for value in values if getattr(rules, knob) != value
    ]


def shown(rules: RuleSet, knob: str, value: object) -> Any:
    """A knob's value as rule files and JSON write it (odds as ``"3:2"``)."""
    return rules.replace(**{knob: value}).to_dict()[knob]


@dataclass(frozen=True)
class Task:
    """One variation to analyse."""

    rules: RuleSet
    strategy: str | Chart
    wager: int
    post_split: str
    knob: str
    value: object


def run_task(task: Task) -> dict[str, Any]:
    """One variation's figures (in a worker)."""
    from pontoon.analysis.distribution import round_distribution
    from pontoon.analysis.report import analyze

    rules = task.rules.replace(**{task.knob: task.value})
    rep = analyze(rules, task.strategy, wager=task.wager, post_split=task.post_split)
    d = round_distribution(rep)
    var = d.variance
    return {
        "knob": task.knob,
        "value": shown(task.rules, task.knob, task.value),
        "ev": rep.ev,
        "house_edge": -rep.ev,
        "variance": var,
        "sd": var**0.5,
        "seconds": rep.seconds,
    }


class RuleEffects(TaskPool[Task, dict[str, Any]]):
    """The variations of a rule set, started on entering (on the local workers or the Dask
    cluster, the slowest first) so that the caller can work meanwhile; :meth:`effects` waits
    for them."""

    def __init__(
        self,
        rules: RuleSet,
        strategy: str | Chart,
        wager: int,
        post_split: str,
        *,
        workers: int,
        scheduler: str | None = None,
        progress: bool = False,
        enabled: bool = True,
    ) -> None:
        """``enabled`` False: no variations (a sheet without its rule effects)."""
        pairs = variations(rules) if enabled else []
        tasks = [Task(rules, strategy, wager, post_split, k, v) for k, v in pairs]
        order = sorted(range(len(tasks)), key=lambda i: -_cost(tasks[i]))
        super().__init__(
            run_task,
            tasks,
            workers=workers,
            scheduler=scheduler,
            order=order,
            progress=progress,
            label="rule effects",
            rate=_per_second,
        )

    def effects(self, base_ev: float) -> list[dict[str, Any]]:
        """Every variation's figures, with ``delta_ev`` against ``base_ev``, in KNOBS order."""
        results = self.results()
        for r in results:
            r["delta_ev"] = r["ev"] - base_ev
        return results


def rule_effects(
    rules: RuleSet,
    strategy: str | Chart,
    wager: int,
    post_split: str,
    base_ev: float,
    *,
    workers: int,
    scheduler: str | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Every variation's figures, with ``delta_ev`` against ``base_ev``, in KNOBS order."""
    with RuleEffects(
        rules, strategy, wager, post_split, workers=workers, scheduler=scheduler, progress=progress
    ) as run:
        return run.effects(base_ev)


def _cost(task: Task) -> int:
    """A rough order of the variations' cost: splits enumerated for every pair, a new shoe."""
    return {"split_max_hands": 2, "decks": 1}.get(task.knob, 0)


def _per_second(speed: float) -> str:
    return f"{speed * 60:.1f} variations/min"
