"""Strategy charts: what to do for each hard total, soft total and pair against each dealer's
first card, in the CSV format of docs/reference/files.md (Strategy charts).

Cells: ``H`` hit, ``S`` stand, ``D`` double else hit, ``Ds`` double else stand, ``P`` split,
``R`` surrender else hit, ``Rs`` surrender else stand, ``Rp`` surrender else split. A cell is
a preference order; the rules decide what is legal (a double on three cards falls back, a
stand on a hard 11 or less is a hit under 14.1(d)). A pair's row applies to the two-card pair;
where it says split and the split is not allowed, the total's row applies.

Under ``double_rescue`` (12) a chart may carry the rescue rows ``X6`` ... ``X20``: a doubled
hand that has taken its card and ends on that total (hard or soft alike: what standing is
worth depends only on the total) is rescued (``R``) or stands (``S``). The rows come all
together or not at all; a chart without them rescues a doubled hand where its total's row
surrenders first (``R``, ``Rs``), as before they existed.

>>> chart = Chart.initial()
>>> chart.code("H16", 10), chart.code("H12", 10), chart.code("PA", 1)
('H', 'H', 'P')
>>> Chart.from_csv(chart.to_csv()) == chart
True
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np

from pontoon.analysis.composition import Compositions, Floats
from pontoon.errors import InputError

UP_COLUMNS: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "A")
UP_VALUES: Final = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
HARD_ROWS: Final = tuple(f"H{t}" for t in range(4, 21))
SOFT_ROWS: Final = tuple(f"S{t}" for t in range(12, 21))
PAIR_ROWS: Final = (*(f"P{v}" for v in range(2, 10)), "PT", "PA")
ROWS: Final = (*HARD_ROWS, *SOFT_ROWS, *PAIR_ROWS)
# 12 (double_rescue): a doubled hand's final total, 2-2-2 (6) to 20; 21 and a bust settle.
RESCUE_TOTALS: Final = tuple(range(6, 21))
RESCUE_ROWS: Final = tuple(f"X{t}" for t in RESCUE_TOTALS)
RESCUE_CODES: Final = ("R", "S")
CODES: Final = ("H", "S", "D", "Ds", "P", "R", "Rs", "Rp")
TOTAL_CODES: Final = ("H", "S", "D", "Ds", "R", "Rs")
# Preference of [stand, hit, double, surrender] for each code (higher first).
SCORES: Final = {
    "H": (1.0, 3.0, -1.0, -1.0),
    "S": (3.0, 1.0, -1.0, -1.0),
    "D": (1.0, 2.0, 3.0, -1.0),
    "Ds": (2.0, 1.0, 3.0, -1.0),
    "R": (1.0, 2.0, -1.0, 4.0),
    "Rs": (2.0, 1.0, -1.0, 4.0),
}


def pair_row(value: int) -> str:
    return "PA" if value == 1 else "PT" if value == 10 else f"P{value}"


def total_row(total: int, soft: bool) -> str:
    """The chart row of a total (a 21 stands: no decision)."""
    if soft:
        return f"S{min(max(total, 12), 20)}" if total < 21 else "S20"
    return f"H{min(max(total, 4), 20)}" if total < 21 else "H20"


def column(up: int) -> int:
    """The index (0-9) of a dealer's first-card value in a row's cells, value order."""
    return up - 1


@dataclass
class Chart:
    """Cells by row name, each a list of ten codes in value order (A, 2, ..., 10)."""

    cells: dict[str, list[str]] = field(default_factory=dict)
    name: str = "chart"

    def code(self, row: str, up: int) -> str:
        return self.cells[row][column(up)]

    def set(self, row: str, up: int, code: str) -> None:
        self.cells[row][column(up)] = code

    @property
    def has_rescues(self) -> bool:
        """Whether the chart carries the rescue rows ``X6`` ... ``X20`` (12)."""
        return RESCUE_ROWS[0] in self.cells

    def rows(self) -> tuple[str, ...]:
        """The chart's rows in CSV order: the rescue rows last when present."""
        return (*ROWS, *RESCUE_ROWS) if self.has_rescues else ROWS

    def with_rescues(self) -> Chart:
        """A copy with rescue rows: the ones it has, else where its totals surrender first."""
        out = self.copy()
        if not out.has_rescues:
            table = self.rescues()
            for t in RESCUE_TOTALS:
                out.cells[f"X{t}"] = ["R" if table[0, t, u] else "S" for u in range(10)]
        return out

    def rescues(self) -> np.ndarray:
        """(2 soft, 22 total, 10 up) bool: whether a doubled hand still open after its card
        is rescued (12). From the rescue rows when the chart has them (soft and hard alike);
        else where the total's row surrenders first (``R``, ``Rs``)."""
        out = np.zeros((2, 22, 10), dtype=bool)
        for soft in (0, 1):
            for t in range(2, 21):
                for up in range(1, 11):
                    if self.has_rescues:
                        hit = t in RESCUE_TOTALS and self.code(f"X{t}", up) == "R"
                    else:
                        hit = self.code(total_row(t, bool(soft)), up) in ("R", "Rs")
                    out[soft, t, up - 1] = hit
        return out

    def copy(self) -> Chart:
        return Chart({k: list(v) for k, v in self.cells.items()}, self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Chart) and self.cells == other.cells

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def initial(cls) -> Chart:
        """A starting chart: stand on 17 or more (soft 18), hit below, split aces and eights."""
        cells: dict[str, list[str]] = {}
        for t in range(4, 21):
            cells[f"H{t}"] = ["S" if t >= 17 else "H"] * 10
        for t in range(12, 21):
            cells[f"S{t}"] = ["S" if t >= 18 else "H"] * 10
        for v in (*range(2, 10), 10, 1):
            cells[pair_row(v)] = ["P" if v in (1, 8) else ("S" if v == 10 else "H")] * 10
        return cls(cells, "initial")

    # ------------------------------------------------------------------ CSV
    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["hand", *UP_COLUMNS])
        for row in self.rows():
            w.writerow([row, *(self.code(row, v) for v in UP_VALUES)])
        return out.getvalue()

    @classmethod
    def from_csv(cls, text: str, name: str = "chart") -> Chart:
        """A chart from CSV text; :class:`InputError` naming the line when it is wrong."""
        lines = list(csv.reader(io.StringIO(text)))
        lines = [ln for ln in lines if ln and any(x.strip() for x in ln)]
        if not lines or [x.strip() for x in lines[0]] != ["hand", *UP_COLUMNS]:
            raise InputError(f"{name}: the header must be 'hand,{','.join(UP_COLUMNS)}'")
        cells: dict[str, list[str]] = {}
        for n, line in enumerate(lines[1:], start=2):
            row = line[0].strip().upper()
            if row not in ROWS and row not in RESCUE_ROWS:
                raise InputError(f"{name} line {n}: unknown row {line[0]!r}")
            if row in cells:  # (two answers for one hand: which would be played?)
                raise InputError(f"{name} line {n}: row {row} given twice")
            codes = [x.strip() for x in line[1:]]
            if len(codes) != 10:
                raise InputError(f"{name} line {n}: row {row} needs 10 cells")
            fixed = []
            for code in codes:
                norm = next((c for c in CODES if c.lower() == code.lower()), None)
                if norm is None:
                    raise InputError(f"{name} line {n}: unknown cell {code!r} (one of {CODES})")
                if norm in ("P", "Rp") and not row.startswith("P"):
                    raise InputError(f"{name} line {n}: {norm!r} only in a pair's row")
                if row.startswith("X") and norm not in RESCUE_CODES:
                    raise InputError(
                        f"{name} line {n}: {norm!r} in rescue row {row}: R (rescue) or S (stand)"
                    )
                fixed.append(norm)
            cells[row] = [fixed[UP_VALUES.index(v)] for v in range(1, 11)]
        wanted = (*ROWS, *RESCUE_ROWS) if any(r in cells for r in RESCUE_ROWS) else ROWS
        missing = [r for r in wanted if r not in cells]
        if missing:
            raise InputError(f"{name}: missing rows {', '.join(missing)}")
        return cls(cells, name)

    @classmethod
    def read(cls, path: str) -> Chart:
        p = Path(path)
        if not p.is_file():
            raise InputError(f"no strategy chart {path!r}: give basic, composition or a CSV file")
        try:
            text = p.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read the chart ({exc})") from None
        return cls.from_csv(text, p.name)

    # ------------------------------------------------------------------ as a policy
    def row_of(self, comps: Compositions, i: int, rank_tens: bool) -> tuple[str, str | None]:
        """(total row, pair row or None) of composition ``i``."""
        total = total_row(int(comps.total[i]), bool(comps.soft[i]))
        c = comps.comps[i]
        if comps.ncards[i] == 2 and max(c) == 2:
            value = c.index(2) + 1
            if not (value == 10 and rank_tens):
                return total, pair_row(value)
        return total, None

    def fallback_code(self, total: str, pair: str | None, up: int) -> str:
        """The code that decides among stand, hit, double and surrender."""
        if pair is not None:
            code = self.code(pair, up)
            if code not in ("P", "Rp"):
                return code
            if code == "Rp":
                base = self.code(total, up)
                return "Rs" if base in ("S", "Ds", "Rs") else "R"
        return self.code(total, up)

    def scores(self, comps: Compositions, rank_tens: bool) -> Floats:
        """(M, 10 up, 4) preferences of stand, hit, double and surrender."""
        out = np.zeros((len(comps), 10, 4))
        table = {code: np.array(s) for code, s in SCORES.items()}
        for i in range(len(comps)):
            total, pair = self.row_of(comps, i, rank_tens)
            for up in range(1, 11):
                out[i, up - 1] = table[self.fallback_code(total, pair, up)]
        return out
