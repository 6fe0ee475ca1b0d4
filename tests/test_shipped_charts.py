"""The presets' shipped optimal charts (:mod:`pontoon.analysis.shipped`) are the analysis's:
each worked out again here and compared, cell by cell."""

from __future__ import annotations

import pytest

from pontoon.analysis.shipped import path_of, shipped_chart, work_out
from pontoon.rules import PRESETS, load_rules
from pontoon.train.grade import Grader


@pytest.mark.parametrize("preset", PRESETS)
def test_a_shipped_chart_is_the_one_the_analysis_works_out(preset: str) -> None:
    shipped = shipped_chart(load_rules(preset), 500)
    assert shipped is not None, f"{path_of(preset)} is missing"
    assert shipped == work_out(preset), (
        f"{path_of(preset)} is not the analysis's chart: python -m pontoon.analysis.shipped"
    )


def test_only_a_preset_exactly_at_the_default_wager_has_one() -> None:
    rules = load_rules("spanish-21")
    assert shipped_chart(rules, 500) is not None
    assert shipped_chart(rules, 1000) is None  # (payments are rounded to the cent)
    assert shipped_chart(load_rules("spanish-21", {"double_rescue": False}), 500) is None
    # the trainer grades against it: no chart worked out in the worker for a preset
    assert Grader(rules).chart == shipped_chart(rules, 500)
