"""The optimal basic strategy charts of the presets, worked out once and shipped beside them
(``pontoon/presets/<preset>.chart.csv``), for whoever needs one at once: the trainer's worker
grades against a rule set's chart, and working one out takes seconds of CPU, which a worker
at a tenth of a core would spend for a minute before its first question.

A shipped chart is :func:`~pontoon.analysis.basic.optimal_chart`'s for the preset exactly as
:func:`~pontoon.rules.load_rules` makes it (every knob, its name too) at the default wager;
any other rule set or wager gets None, and is worked out. ``tests/test_shipped_charts.py``
works each out again and compares, so a change to the rules or the analysis that changes a
chart fails there until ``python -m pontoon.analysis.shipped`` writes them again.

>>> from pontoon.rules import load_rules
>>> chart = shipped_chart(load_rules("nz-pontoon"), 500)
>>> chart.code("H16", 10), chart.code("P8", 10)
('H', 'P')
>>> shipped_chart(load_rules("nz-pontoon", {"decks": 2}), 500) is None
True
"""

from __future__ import annotations

import functools
from pathlib import Path

from pontoon.analysis.chart import Chart
from pontoon.rules import PRESETS, RuleSet, load_rules

WAGER = 500  # cents: the analysis's default wager (payments are rounded to the cent)
FOLDER = Path(__file__).resolve().parent.parent / "presets"


def path_of(preset: str) -> Path:
    return FOLDER / f"{preset}.chart.csv"


@functools.cache
def _presets() -> dict[str, RuleSet]:
    return {name: load_rules(name) for name in PRESETS}


def shipped_chart(rules: RuleSet, wager: int) -> Chart | None:
    """The shipped optimal chart of ``rules`` at ``wager``, or None (not a preset's exactly,
    not the default wager, or no file)."""
    if wager != WAGER or _presets().get(rules.name) != rules:
        return None
    path = path_of(rules.name)
    return Chart.read(str(path)) if path.is_file() else None


def work_out(preset: str) -> Chart:
    """The preset's optimal chart, worked out (seconds)."""
    from pontoon.analysis.basic import optimal_chart
    from pontoon.analysis.game import Game

    return optimal_chart(Game(load_rules(preset), WAGER))


def main() -> None:
    """Write every preset's chart again."""
    for preset in PRESETS:
        path_of(preset).write_text(work_out(preset).to_csv(), "utf-8")
        print(f"wrote {path_of(preset)}")


if __name__ == "__main__":
    main()
