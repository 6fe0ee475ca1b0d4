"""What a table is made of (:class:`TableConfig`): its name, its rule set with its limits, its
timers and its players' bankroll; the knobs it shows, and the pit boss's limits put into its
rule set (:func:`with_limits`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.rules import RuleSet, rules_from_dict
from pontoon.shoe import Shuffler

from .errors import Refused

PUBLIC_KNOBS = (
    "name",
    "deck",
    "decks",
    "boxes",
    "players_per_box",
    "boxes_per_player",
    "table_min",
    "table_max",
    "box_max",
    "natural_pays",
    "insurance",
    "surrender",
    "dealer_peeks",
    "split_max_hands",
    "interrupted",
    "interrupted_minutes",
)


@dataclass
class TableConfig:
    """A table: its name, rule set (with its limits) and timers. ``shuffler`` is for tests (a
    seeded or stacked shoe); real tables shuffle with ``secrets.SystemRandom``."""

    name: str
    rules: RuleSet
    turn_seconds: float = 30.0  # a decision not made by then: 16.6 (or the 15.3 default)
    deal_seconds: float = 30.0  # after the first wager the dealer calls "no more bets"
    bankroll: int = 100_000  # what a new player brings to the table, in cents
    shuffler: Callable[[], Shuffler] | None = None
    session_seconds: float = 24 * 3600.0  # a session not connected for so long is closed
    # the wall clock the interrupted-round policy counts by (seconds since the epoch, as the
    # store's event times): injected by tests, which move it on instead of waiting minutes
    clock: Callable[[], float] = time.time
    # the optimal chart the policy ``complete`` plays (None: worked out from the rules, once)
    chart: Callable[[RuleSet], Chart] | None = None


def public_rules(rules: RuleSet) -> dict[str, Any]:
    """The knobs a table shows its players."""
    return {k: v for k, v in rules.to_dict().items() if k in PUBLIC_KNOBS}


def with_limits(rules: RuleSet, table_min: int, table_max: int) -> RuleSet:
    """``rules`` with the pit boss's limits (15.6, 15.2); :class:`Refused` when the rule set
    refuses them (the minimum above the maximum, …)."""
    values = rules.to_dict() | {"table_min": table_min, "table_max": table_max}
    try:
        return rules_from_dict(values)
    except InputError as exc:
        raise Refused(str(exc), "15.6", code="limits") from None


__all__ = ["PUBLIC_KNOBS", "TableConfig", "public_rules", "with_limits"]
