"""The compiled rules, the chart's preference orders, the shuffle and counting systems."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.rules import RuleSet, load_rules
from pontoon.sim import compiled as C
from pontoon.sim.counting import Counting
from pontoon.sim.job import CHUNK_ROUNDS, Job
from pontoon.sim.rng import KernelShuffler, Stream
from pontoon.sim.runner import chunk_keys


def test_every_knob_is_compiled_or_cannot_change_a_simulated_round() -> None:
    """The kernel holds no second opinion of a rule: it reads each from the rule set. A new
    knob fails here until the kernel reads it (compiled.COMPILED) or it is shown not to
    matter (NOT_SIMULATED)."""
    knobs = {f.name for f in dataclasses.fields(RuleSet)}
    assert knobs == C.COMPILED | C.NOT_SIMULATED
    assert not C.COMPILED & C.NOT_SIMULATED


def test_compiled_values_come_from_the_rule_set() -> None:
    r = load_rules("spanish-21", {"decks": "2", "penetration": "0.5", "natural_pays": "6:5"})
    p = C.compile_rules(r)
    assert p[C.BEHIND_CUT] == 48 and p[C.CARDS_PER_DECK] == 48
    assert (p[C.ODDS + 2 * C.NATURAL], p[C.ODDS + 2 * C.NATURAL + 1]) == (6, 5)
    assert p[C.PEEK] == 1 and p[C.SURRENDER] == 1 and p[C.RESCUE] == 1
    assert (p[C.ODDS + 2 * C.SEVEN], p[C.ODDS + 2 * C.SEVEN + 1]) == (3, 1)


def test_preferences_follow_the_chart_codes() -> None:
    prefs = C.preferences()
    names = {
        code: [C.ACTION_NAMES[a] for a in prefs[k] if a >= 0] for k, code in enumerate(C.CODES)
    }
    assert names == {
        "H": ["hit", "stand"],
        "S": ["stand", "hit"],
        "D": ["double", "hit", "stand"],
        "Ds": ["double", "stand", "hit"],
        "P": ["split"],
        "R": ["surrender", "hit", "stand"],
        "Rs": ["surrender", "stand", "hit"],
        "Rp": ["surrender", "split"],
    }


def test_shuffle_is_canonical_and_uniform() -> None:
    """Whatever order the cards come in, the same stream gives the same shoe; the first card
    of many shuffles of three cards is spread evenly."""
    from pontoon.cards import pack

    cards = pack("spanish", 1)
    a, b = list(cards), list(reversed(cards))
    KernelShuffler(9).shuffle(a)
    KernelShuffler(9).shuffle(b)
    assert a == b and sorted(a, key=str) == sorted(cards, key=str)
    firsts = [Stream(k, 0).below(3) for k in range(3000)]
    assert all(900 < firsts.count(v) < 1100 for v in range(3))


def test_chunks_do_not_depend_on_workers() -> None:
    job = Job.build(load_rules("nz-pontoon"), Chart.initial(), hands_per_session=300, bankroll=5000)
    sizes = job.chunk_rounds(3 * CHUNK_ROUNDS)
    assert all(s % 300 == 0 for s in sizes[:-1]) and sum(sizes) == 3 * CHUNK_ROUNDS
    assert chunk_keys(7, 4)[:2] == chunk_keys(7, 2)


def test_counting_files() -> None:
    c = Counting.from_dict({"tags": {"T": -2, "K": -1, "5": 2}, "ramp": {"0": 1, "2": 3}}, "x")
    assert c.tags[12] == -1 and c.tags[11] == -2 and c.tags[4] == 2 and c.tags[0] == 0
    assert list(c.ramp[8:13]) == [1, 1, 1, 1, 3]  # below the lowest key: its units
    for bad in (
        {"tags": {"Z": 1}, "ramp": {"0": 1}},
        {"tags": {"A": 1.5}, "ramp": {"0": 1}},
        {"tags": {"A": 1}, "ramp": {"x": 1}},
        {"tags": {"A": 1}, "ramp": {"0": 0}},
        {"tags": {"A": 1}},
    ):
        with pytest.raises(InputError):
            Counting.from_dict(bad, "bad")
    assert np.array_equal(Counting.builtin("hi-lo").ramp, Counting.read("hi-lo").ramp)


def test_a_chart_without_rescue_rows_rescues_where_its_total_surrenders() -> None:
    """12 (double_rescue): a chart without the rescue rows (X6-X20) rescues a doubled hand
    where its total's cell surrenders first (R or Rs), as before the rows existed; any other
    cell stands."""
    chart = Chart.initial()
    chart.set("H16", 10, "R")
    chart.set("H15", 1, "Rs")
    chart.set("S17", 10, "R")
    chart.set("H14", 10, "H")
    rules = load_rules("nz-pontoon", {"double_rescue": "true"})
    job = Job.build(rules, chart)
    rescues = job.rescues[0]  # (the one chart: an index chart has one per true count)
    assert rescues[0, 16, 9] and rescues[0, 15, 0] and rescues[1, 17, 9]
    assert not rescues[0, 14, 9] and not rescues[0, 16, 8] and not rescues[0, 17, 9]
    assert C.compile_rules(rules)[C.RESCUE] == 1


def test_rescue_rows_decide_the_rescue_by_final_total_soft_or_hard() -> None:
    """12: with the rescue rows the chart's R/Rs cells no longer rescue; X<total> does, for a
    hard and a soft total alike, and they read back from CSV."""
    chart = Chart.initial()
    chart.set("H16", 10, "R")
    chart = chart.with_rescues()
    assert chart.has_rescues and chart.code("X16", 10) == "R"  # carried over from H16
    chart.set("X16", 10, "S")
    chart.set("X15", 7, "R")
    chart.set("X18", 1, "R")
    again = Chart.from_csv(chart.to_csv())
    assert again == chart and again.to_csv().splitlines()[-1].startswith("X20,")
    _, _, rescues = C.compile_chart(again)
    assert rescues[0, 15, 6] and rescues[1, 15, 6] and rescues[0, 18, 0] and rescues[1, 18, 0]
    assert not rescues[0, 16, 9] and int(rescues.sum()) == 4


def test_a_changed_layout_changes_every_file_whose_kernels_numba_caches() -> None:
    """numba caches a compiled function on disk and loads it again while its own file is
    unchanged; the constants of ``pontoon.sim.compiled`` and ``pontoon.env.layout`` are frozen
    into that machine code. A layout changed without the files that compile it in (a
    parameter added shifts the env's fields) loads stale code that reads the wrong fields:
    the env's workers crashed so. Each such file names the layout's digest, so a new layout
    changes them too, and their caches are compiled again."""
    import hashlib
    import importlib

    parts = []
    for name in ("pontoon.sim.compiled", "pontoon.env.layout"):
        module = importlib.import_module(name)
        for key in sorted(vars(module)):
            v = getattr(module, key)
            if key.isupper() and isinstance(v, int) and not isinstance(v, bool):
                parts.append(f"{name}.{key}={v}")
    digest = hashlib.sha256(";".join(parts).encode()).hexdigest()[:16]
    for name in ("sim.kernel", "env.kernel", "env.run", "env.settle", "env.steps"):
        module = importlib.import_module(f"pontoon.{name}")
        assert digest == module.COMPILED_LAYOUT, (
            f"{name}: set COMPILED_LAYOUT = {digest!r} (its cached kernels hold the old layout)"
        )
