"""Exact analysis: house edge, optimal strategy and a hand calculator for any rule set.

>>> from pontoon.analysis import analyze
>>> from pontoon.rules import load_rules
>>> report = analyze(load_rules("nz-pontoon"), "composition", infinite=True)
>>> -0.02 < report.ev < 0.02
True

The names are loaded on first use, so ``pontoon`` commands that do not analyse stay quick.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Chart", "HandReport", "Report", "analyze", "hand_values"]


def __getattr__(name: str) -> Any:
    if name == "Chart":
        from pontoon.analysis.chart import Chart

        return Chart
    if name in ("HandReport", "Report", "analyze", "hand_values"):
        from pontoon.analysis import report

        return getattr(report, name)
    raise AttributeError(name)
