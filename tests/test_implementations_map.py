"""The implementations map (ARCHITECTURE.md, "The implementations map") lists every knob of
the rule set: each field of :class:`pontoon.rules.RuleSet` is named, in backticks, in the
first cell of one of its rows. A knob added without saying where each implementation of the
game reads it (the engine, the simulator's kernel, the env's steps, the analysis) and which
test keeps them equal fails here; so does a name in the map that the code no longer has (a
function renamed, a test removed)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from pontoon.rules import RuleSet

ROOT = Path(__file__).parent.parent
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
SECTION = "## The implementations map"
COLUMNS = ("engine", "simulator kernel", "env steps", "analysis", "kept equal by")


def map_rows() -> list[list[str]]:
    """The cells of each row of the map's table (its header and rule lines left out)."""
    text = ARCHITECTURE.read_text("utf-8")
    assert SECTION in text, f"ARCHITECTURE.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    return [c for c in cells[2:] if not set("".join(c)) <= set("- :")]


def mapped_knobs() -> dict[str, int]:
    """Each knob named in a row's first cell, and how many rows name it."""
    out: dict[str, int] = {}
    for row in map_rows():
        for knob in re.findall(r"`([a-z0-9_]+)`", row[0]):
            out[knob] = out.get(knob, 0) + 1
    return out


def test_the_map_has_a_column_per_implementation() -> None:
    text = ARCHITECTURE.read_text("utf-8").split(SECTION, 1)[1]
    header = next(line for line in text.splitlines() if line.startswith("|"))
    named = [c.strip() for c in header.strip().strip("|").split("|")]
    assert tuple(named[1:]) == COLUMNS, named
    assert all(len(row) == len(named) for row in map_rows())


def test_every_knob_of_the_rule_set_is_in_the_map_once() -> None:
    knobs = {f.name for f in dataclasses.fields(RuleSet)}
    mapped = mapped_knobs()
    assert sorted(knobs - mapped.keys()) == [], "knobs without a row in the map"
    assert sorted(mapped.keys() - knobs) == [], "rows for knobs the rule set no longer has"
    assert {k: n for k, n in mapped.items() if n > 1} == {}, "knobs in more than one row"


def test_every_row_says_something_of_each_implementation() -> None:
    """An empty cell is a row half written: write "—" or "not simulated" where an
    implementation does not read the knob."""
    empty = [row[0] for row in map_rows() if any(not cell for cell in row)]
    assert empty == []


def _source(folder: str, suffixes: tuple[str, ...]) -> str:
    return "\n".join(
        p.read_text("utf-8") for p in (ROOT / folder).rglob("*") if p.suffix in suffixes
    )


def test_the_names_in_the_map_are_in_the_code() -> None:
    """Each dotted name in backticks (``DealerSteps._dealer_turn``, ``settle.dealer_turn``,
    ``C.H17``) names something the package defines, each ``file.py::name`` a name of that
    file, each ``test_….py`` a test file."""
    package = _source("pontoon", (".py", ".pyx", ".js"))
    cells = " ".join(" ".join(row[1:]) for row in map_rows())
    spans = re.findall(r"`([^`]+)`", cells)
    missing = []
    for span in spans:
        span = re.sub(r"[\w.]*…", "", span)  # a name left unfinished: C.SB_…
        for path, name in re.findall(r"([\w/]+\.py)::(\w+)", span):
            top = path.split("/")[0]
            where = ROOT / (path if top in ("pontoon", "tests") else f"pontoon/{path}")
            if "/" not in path:
                where = ROOT / "tests" / path
            if not where.is_file() or not re.search(rf"\b{name}\b", where.read_text("utf-8")):
                missing.append(span)
        for name in re.findall(r"\b(test_\w+\.py)\b", span):
            if not (ROOT / "tests" / name).is_file():
                missing.append(span)
        for dotted in re.findall(r"(?<![\w/.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)", span):
            last = dotted.rsplit(".", 1)[1]
            if last in ("py", "pyx", "pyi", "js", "toml", "csv", "json", "md"):
                continue
            if not re.search(rf"\b{re.escape(last)}\b", package):
                missing.append(span)
    assert missing == []
