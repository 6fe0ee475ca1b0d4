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

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.progress import Advance, progress_bar
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
    tasks = [Task(rules, strategy, wager, post_split, k, v) for k, v in variations(rules)]
    with progress_bar(len(tasks), progress, "rule effects", _per_second) as advance:
        if scheduler is not None:
            results = _dask(tasks, scheduler, advance)
        elif workers == 1:
            results = []
            for t in tasks:
                results.append(run_task(t))
                advance(1)
        else:
            results = _local(tasks, workers, advance)
    for r in results:
        r["delta_ev"] = r["ev"] - base_ev
    return results


def _per_second(speed: float) -> str:
    return f"{speed * 60:.1f} variations/min"


def _local(tasks: list[Task], workers: int, advance: Advance) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    out: dict[int, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx) as pool:
        futures = {pool.submit(run_task, t): i for i, t in enumerate(tasks)}
        for fut in as_completed(futures):
            out[futures[fut]] = fut.result()
            advance(1)
    return [out[i] for i in range(len(tasks))]


def _dask(tasks: list[Task], address: str, advance: Advance) -> list[dict[str, Any]]:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError("--scheduler needs Dask: pip install 'pontoon[sim]'") from None
    try:
        client = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        futures = client.map(run_task, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        out: dict[int, dict[str, Any]] = {}
        for fut, result in dask_completed(futures, with_results=True):  # type: ignore[no-untyped-call]
            out[index[fut.key]] = result
            advance(1)
    return [out[i] for i in range(len(tasks))]
