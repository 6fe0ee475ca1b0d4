"""Strategy indices: for every cell of the chart, the true count at which the best play
changes, by exact analysis of count-conditioned shoes.

At a true count ``TC`` with ``R`` cards left, the shoe a count expects holds, of each value
``r``, ``R * p_r * (1 - F * t'_r / (D * V))`` cards: ``p`` the full shoe's proportions,
``t' = t - tbar`` the centred tags, ``V = sum_r p_r t'_r^2``, ``D`` cards a deck, and ``F = TC
- D * tbar * (N / R - 1)`` the part of the true count the cards move (:mod:`pontoon.count.curve`;
``F = TC`` for a balanced count). That is the regression of the shoe's make-up on the count,
the linear model the effects of removal rest on; the shoe's fractions of cards are analysed
as they are (the analysis's falling powers take any counts). Each such shoe, at every whole
true count from -10 to +10 and each depth of ``--depth`` (the part of the shoe left; half by
default; several give an index chart by depth, each index for its depth), is
analysed with the full shoe's optimal chart fixed: every action of every cell (chart row
against the dealer's first card, the hands of the row weighed as dealt) followed by the
chart. A cell's index is where the better of the other plays overtakes the chart's, the
difference interpolated linearly between whole counts and rounded: above the index the
``above`` play, below it the ``below`` play. Insurance (10) is priced from the shoe's tens
directly. Under ``double_rescue`` (12) the rescue rows ``X6`` ... ``X20`` get indices too:
forfeiting the original wager (-1) against standing on the doubled total, priced from the
dealer's outcomes on the expected shoe (:func:`_rescues`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.analysis.composition import ShoeModel
from pontoon.cluster import TaskPool
from pontoon.count.eor import KEYS
from pontoon.errors import InputError
from pontoon.rules import RuleSet

COUNTS: Final = tuple(range(-10, 11))
LETTERS: Final = {"stand": "S", "hit": "H", "double": "D", "split": "P", "surrender": "R"}


def drift_per_deck(rules: RuleSet, tags: dict[str, float]) -> float:
    """What a count's running count gains a deck dealt, on average: ``D * tbar`` (0 for a
    balanced count; hi-lo on the Spanish deck +4). Its true count then carries ``D * tbar *
    (N / R - 1)`` besides what the cards left move, so a true count means different shoes at
    different depths.

    >>> from pontoon.rules import load_rules
    >>> hi_lo = dict(zip(KEYS, (-1, 1, 1, 1, 1, 1, 0, 0, 0, -1)))
    >>> [round(drift_per_deck(load_rules(r), hi_lo), 9) for r in ("nz-pontoon", "spanish-21")]
    [4.0, 4.0]
    >>> round(drift_per_deck(load_rules("classic-blackjack"), hi_lo), 9)
    0.0
    """
    full = ShoeModel.of(rules)
    n = float(full.counts.sum())
    t = np.array([tags[k] for k in KEYS])
    return n / rules.decks * float(full.counts / n @ t)


def expected_shoe(
    rules: RuleSet, tags: dict[str, float], true_count: float, left: float
) -> ShoeModel:
    """The shoe a count expects at ``true_count`` with a part ``left`` of the shoe left."""
    full = ShoeModel.of(rules)
    n = float(full.counts.sum())
    p = full.counts / n
    t = np.array([tags[k] for k in KEYS])
    centred = t - float(p @ t)
    var = float(p @ centred**2)
    deck = n / rules.decks
    cards = left * n
    moving = true_count - drift_per_deck(rules, tags) * (n / cards - 1)
    share = p * (1 - moving * centred / (deck * var))
    share = np.maximum(share, 1e-6)  # a count beyond the shoe's means: no value runs out
    by_value = cards * share / share.sum()
    return full.scaled(
        by_value, f"the shoe expected at true count {true_count:+g}, {left:.0%} of it left"
    )


@dataclass(frozen=True)
class Shoe:
    rules: RuleSet
    chart: Chart
    wager: int
    tags: tuple[tuple[str, float], ...]
    true_count: int
    left: float


def cell_values(task: Shoe) -> list[dict[str, Any]]:
    """Every cell's action values on one expected shoe, the chart fixed (in a worker)."""
    from pontoon.analysis.report import analyze

    shoe = expected_shoe(task.rules, dict(task.tags), task.true_count, task.left)
    return analyze(task.rules, task.chart, wager=task.wager, shoe=shoe).table


@dataclass
class Indices:
    """The index chart of a count for a rule set: at one depth, or by depth (each index then
    names its ``depth``)."""

    rules: RuleSet
    count: str
    depths: tuple[float, ...]  # (none: by simulation, the shoe as it is dealt)
    indices: list[dict[str, Any]]
    seconds: float
    chart: Chart  # the full shoe's, which the indices change
    method: str = (
        "exact analysis of the shoe expected at each whole true count, the full shoe's chart "
        "fixed (docs/analysts/count.md)"
    )
    rounds: int = 0  # by simulation: the rounds dealt

    @property
    def by_depth(self) -> bool:
        return len(self.depths) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "count": self.count,
            "depth": list(self.depths) if self.by_depth else next(iter(self.depths), None),
            "indices": self.indices,
            "method": self.method,
            "seconds": round(self.seconds, 3),
        } | ({"rounds": self.rounds} if self.rounds else {})

    def to_csv(self) -> str:
        """``cell,dealer,below,above,index``, and ``depth`` by depth."""
        depth = ",depth" if self.by_depth else ""
        lines = [f"cell,dealer,below,above,index{depth}"]
        lines += [
            f"{i['cell']},{i['dealer']},{i['below']},{i['above']},{i['index']}"
            + (f",{i['depth']:g}" if self.by_depth else "")
            for i in self.indices
            if i["index"] is not None  # (insurance that never pays within -10..+10)
        ]
        return "\n".join(lines) + "\n"


def crossing(counts: list[int], gain: list[float]) -> float | None:
    """Where ``gain`` (of the other play over the chart's, by true count) crosses 0 nearest
    to true count 0, interpolated; None if it never does."""
    best: float | None = None
    for i in range(len(counts) - 1):
        a, b = gain[i], gain[i + 1]
        if (a <= 0 < b) or (b <= 0 < a):
            x = counts[i] + (counts[i + 1] - counts[i]) * (-a) / (b - a)
            if best is None or abs(x) < abs(best):
                best = x
    return best


def strategy_indices(
    rules: RuleSet,
    tags: dict[str, float],
    count: str = "hi-lo",
    *,
    depths: Sequence[float] = (0.5,),
    wager: int = 500,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
) -> Indices:
    """Every cell's index for ``tags`` at each of ``depths`` (module docstring)."""
    from pontoon.analysis.report import analyze

    depths = tuple(sorted(set(depths), reverse=True))
    if not depths or not all(0.05 <= d <= 1 for d in depths):
        raise InputError(
            f"--depth must be between 0.05 and 1 (the part of the shoe left), not {depths}"
        )
    start = time.perf_counter()
    full = analyze(rules, "basic", wager=wager)
    assert full.chart is not None
    shoes = [(d, tc) for d in depths for tc in COUNTS]
    tasks = [Shoe(rules, full.chart, wager, tuple(tags.items()), tc, d) for d, tc in shoes]
    with TaskPool(
        cell_values,
        tasks,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        label="expected shoes",
    ) as pool:
        tables = pool.results()
    out = []
    for k, left in enumerate(depths):
        found = _cell_indices(full.table, tables[k * len(COUNTS) : (k + 1) * len(COUNTS)])
        if rules.insurance:
            found.append(insurance_index(rules, tags, left))
        if rules.double_rescue:
            found += _rescues(rules, tags, left)
        out += [i | {"depth": left} for i in found] if len(depths) > 1 else found
    return Indices(rules, count, depths, out, time.perf_counter() - start, full.chart)


def _cell_indices(
    table: list[dict[str, Any]], tables: list[list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The index of every cell of the full shoe's ``table`` from its values on the shoes of
    :data:`COUNTS` (``tables``, at one depth)."""
    by_cell = [{(r["hand"], r["dealer"]): r for r in t} for t in tables]
    out = []
    for row in table:
        cell = (row["hand"], row["dealer"])
        play = row["play"]
        if play is None or any(cell not in t for t in by_cell):
            continue
        found: tuple[float, str] | None = None
        for other in LETTERS:
            if other == play or any(t[cell][other] is None for t in by_cell):
                continue
            gain = [t[cell][other] - t[cell][play] for t in by_cell]
            x = crossing(list(COUNTS), gain)
            if x is not None and (found is None or abs(x) < abs(found[0])):
                found = (x, other)
        if found is None:
            continue
        x, other = found
        rising = by_cell[-1][cell][other] > by_cell[-1][cell][play]
        below, above = (play, other) if rising else (other, play)
        out.append(
            {
                "cell": row["hand"],
                "dealer": row["dealer"],
                "below": LETTERS[below],
                "above": LETTERS[above],
                "index": round(x),
                "crossing": x,
            }
        )
    return out


def insurance_index(rules: RuleSet, tags: dict[str, float], left: float) -> dict[str, Any]:
    """Insurance (10) against an ace: taken above the true count where its odds on the tens
    left pay their way, on the expected shoes of ``left`` of the shoe (an index row)."""
    pays = float(rules.insurance_pays)
    gain = []
    for tc in COUNTS:
        shoe = expected_shoe(rules, tags, tc, left)
        n = float(shoe.counts.sum()) - 1  # the dealer's ace out
        gain.append((pays + 1) * float(shoe.counts[9]) / n - 1)
    x = crossing(list(COUNTS), gain)
    return {
        "cell": "insurance",
        "dealer": "A",
        "below": "no",
        "above": "insure",
        "index": round(x) if x is not None else None,
        "crossing": x,
    }


def _rescues(rules: RuleSet, tags: dict[str, float], left: float) -> list[dict[str, Any]]:
    """12: the index of each rescue row ``X<t>`` against each dealer card: where forfeiting
    the original wager (-1 a wager) overtakes standing on the doubled total ``t``. Standing is
    priced from the dealer's outcomes (17-21, bust, pontoon) on the expected shoe, the
    doubled hand's own cards left in it (an approximation: they are 3 of the shoe's cards);
    in the peek game the dealer has no pontoon by then (8.5), elsewhere a dealer pontoon
    takes what 13.7 lets it. Rows whose play is the same at every count have no index."""
    from pontoon.analysis.chart import RESCUE_TOTALS, UP_COLUMNS
    from pontoon.analysis.dealer import BUST, NATURAL, dealer_tables
    from pontoon.analysis.payoffs import Payoffs

    shoes = np.array([expected_shoe(rules, tags, tc, left).counts for tc in COUNTS])
    tab = dealer_tables(rules.dealer_hits_soft_17, shoes, infinite=False)  # (tc, up, outcome)
    loss = Payoffs(rules, 500).natural_loss(doubled=True)
    out = []
    for t in RESCUE_TOTALS:
        coef = np.zeros(tab.shape[2])
        for o in range(5):  # the dealer's 17..21
            coef[o] = 2.0 if t > 17 + o else 0.0 if t == 17 + o else -2.0
        coef[BUST] = 2.0
        if rules.dealer_peeks:
            stand = tab[:, :, :NATURAL] @ coef[:NATURAL] / (1.0 - tab[:, :, NATURAL])
        else:
            coef[NATURAL] = -loss
            stand = tab @ coef
        for up in range(1, 11):
            gain = [float(-1.0 - g) for g in stand[:, up - 1]]  # rescue over standing
            x = crossing(list(COUNTS), gain)
            if x is None:
                continue
            above, below = ("R", "S") if gain[-1] > 0 else ("S", "R")
            column = UP_COLUMNS[(up - 2) % 10]
            cell = {"cell": f"X{t}", "dealer": column, "below": below, "above": above}
            out.append(cell | {"index": round(x), "crossing": x})
    return out


def _code(play: str, other: str, pair_row: bool) -> str:
    """The chart code that plays ``play`` (a letter of LETTERS), or ``other`` where the rules
    do not allow it (a double or a surrender after the first two cards)."""
    if play in ("D", "R") and not pair_row:
        return play + ("s" if other == "S" else "")
    if play == "R" and pair_row:
        return "Rp" if other == "P" else "Rs" if other == "S" else "R"
    return play


def index_depths(indices: list[dict[str, Any]]) -> tuple[float, ...]:
    """The depths of an index chart by depth, largest first (none for one at one depth)."""
    return tuple(sorted({i["depth"] for i in indices if "depth" in i}, reverse=True))


def insurance_from(indices: list[dict[str, Any]]) -> int | list[int | None] | None:
    """The true count from which an index chart insures (10), for the simulator's job
    (:meth:`pontoon.sim.job.Job.build`'s ``insure_from``): its insurance row's index; by
    depth, one per :func:`index_depths` (None at a depth without one); None without.

    >>> insurance_from([{"cell": "insurance", "dealer": "A", "index": 3}])
    3
    >>> insurance_from([{"cell": "insurance", "index": 3, "depth": 0.5},
    ...                 {"cell": "H16", "index": 0, "depth": 0.25}])
    [3, None]
    """
    rows = [i for i in indices if i["cell"] == "insurance" and i["index"] is not None]
    depths = index_depths(indices)
    if not depths:
        return int(rows[0]["index"]) if rows else None
    at = {i["depth"]: int(i["index"]) for i in rows}
    return [at.get(d) for d in depths] if at else None


def index_charts(chart: Chart, indices: list[dict[str, Any]]) -> list[Chart]:
    """The chart to play at each true count from -10 to +10: ``chart`` with every index's
    cell set to its ``above`` play at that count and higher, its ``below`` play under it.
    Insurance has no cell: the simulator takes it from :func:`insurance_from`. By depth,
    those 21 charts for each of :func:`index_depths` in turn, each from that depth's
    indices."""
    depths = index_depths(indices)
    if depths:
        return [
            c
            for d in depths
            for c in index_charts(
                chart,
                [{k: v for k, v in i.items() if k != "depth"} for i in indices if i["depth"] == d],
            )
        ]
    rescues = any(i["cell"].startswith("X") for i in indices)
    out = []
    for tc in COUNTS:
        c = chart.with_rescues() if rescues else chart.copy()
        for i in indices:
            if i["cell"] == "insurance" or i["index"] is None:
                continue
            up = {"A": 1, "T": 10}.get(i["dealer"]) or int(i["dealer"])
            play, other = (i["above"], i["below"]) if tc >= i["index"] else (i["below"], i["above"])
            if i["cell"].startswith("X"):  # 12: a rescue row is R or S
                c.set(i["cell"], up, play)
                continue
            c.set(i["cell"], up, _code(play, other, i["cell"].startswith("P")))
        out.append(c)
    return out


def read_indices(path: str) -> list[dict[str, Any]]:
    """An index chart written by ``count indices --format csv``; bad input exits 2."""
    import csv
    from pathlib import Path

    from pontoon.analysis.chart import HARD_ROWS, PAIR_ROWS, RESCUE_ROWS, SOFT_ROWS, UP_COLUMNS

    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the index chart {path}: {exc}") from None
    rows = list(csv.DictReader(text.splitlines()))
    cells = {*HARD_ROWS, *SOFT_ROWS, *PAIR_ROWS, *RESCUE_ROWS, "insurance"}
    out = []
    for n, row in enumerate(rows, start=2):
        try:
            cell, dealer = row["cell"], row["dealer"]
            below, above, index = row["below"], row["above"], int(row["index"])
        except (KeyError, TypeError, ValueError):
            raise InputError(
                f"{path}:{n}: cell,dealer,below,above,index with a whole index"
            ) from None
        plays = set(LETTERS.values()) | {"no", "insure"}
        if cell not in cells or dealer not in UP_COLUMNS or not {below, above} <= plays:
            raise InputError(f"{path}:{n}: unknown cell, dealer card or play: {row}")
        item: dict[str, Any] = {"cell": cell, "dealer": dealer, "below": below, "above": above}
        item["index"] = index
        if row.get("depth") is not None:
            try:
                depth = float(row["depth"])
            except ValueError:
                depth = -1.0
            if not 0.05 <= depth <= 1:
                raise InputError(f"{path}:{n}: depth is the part of the shoe left: {row}")
            item["depth"] = depth
        out.append(item)
    if not out:
        raise InputError(f"{path}: no indices")
    if index_depths(out) and any("depth" not in i for i in out):
        raise InputError(f"{path}: a depth for every index or for none")
    return out
