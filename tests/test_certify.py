"""Shuffle certification (pontoon certify): the exact null moments the tests rest on, the real
shoe's shuffle passing, biased shuffles failing, and the command line. Every run is seeded."""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pontoon.certify import run as certify_run
from pontoon.certify.commands import add_commands
from pontoon.certify.report import EXIT_FAILED, document, text
from pontoon.certify.run import Generator, certify
from pontoon.certify.tests import Result, adjacent_moments, battery, serial_moments
from pontoon.errors import InputError
from pontoon.rules import load_rules
from pontoon.shoe import seeded

RULES = load_rules("nz-pontoon")  # six Spanish decks: 288 cards


class NaiveShuffle:
    """Fisher-Yates with the classic off-by-one: each card swapped with any card of the whole
    list (``randrange(n)``, not ``randrange(i + 1)``). Its n^(n-1) equally likely paths cannot
    fall evenly on n! orders; the identity is the likeliest."""

    def __init__(self, key: int | None) -> None:
        self.rng = random.Random(key)

    def shuffle(self, x: list[Any]) -> None:
        n = len(x)
        for i in range(n - 1, 0, -1):
            j = self.rng.randrange(n)
            x[i], x[j] = x[j], x[i]


class StickyBottom:
    """A fair shuffle of all but the 20 cards at the bottom of the pile, which stay put: the
    same cards are always the last of the shoe."""

    def __init__(self, key: int | None) -> None:
        self.rng = random.Random(key)

    def shuffle(self, x: list[Any]) -> None:
        top = x[20:]
        self.rng.shuffle(top)
        x[20:] = top


def results(shuffles: int, seed: int, generator: Generator = seeded) -> list[Result]:
    run = certify(RULES, shuffles, seed=seed, workers=1, generator=generator)
    return battery(run.tally, RULES)


def failed(res: list[Result]) -> set[str]:
    return {r.name for r in res if not r.passed}


@pytest.mark.parametrize("counts", [(2, 1, 1), (3, 2), (2, 2, 1, 1), (1, 1, 1)])
def test_null_moments_equal_every_order_of_a_small_shoe(counts: tuple[int, ...]) -> None:
    """The adjacent-pair and serial-correlation moments, against every distinct order."""
    cards = [r for r, c in enumerate(counts) for _ in range(c)]
    rank_value = np.arange(len(counts)) * 3.0 + 1
    values = rank_value[cards]
    pairs, lags = [], []
    for order in set(itertools.permutations(cards)):
        table = np.zeros((len(counts), len(counts)))
        for a, b in itertools.pairwise(order):
            table[a, b] += 1
        pairs.append(table.ravel())
        a = rank_value[list(order)] - values.mean()
        lags.append(float((a[:-1] * a[1:]).sum()))
    mean, cov = adjacent_moments(np.array(counts))
    assert np.allclose(mean.ravel(), np.mean(pairs, axis=0))
    assert np.allclose(cov, np.cov(np.array(pairs).T, bias=True))
    assert np.allclose(serial_moments(values), (np.mean(lags), np.var(lags)))


def test_7_real_shuffle_passes_every_test() -> None:
    """The shoe's own shuffle (Shoe.shuffle with a seeded numpy generator), 3000 times."""
    res = results(3000, seed=1)
    assert [r.name for r in res] == [
        "position-rank",
        "position-suit",
        "card-position",
        "runs",
        "serial-correlation",
        "adjacent-pairs",
        "consecutive-shoes",
        "burn-card",
        "cutting-card",
    ]
    assert failed(res) == set()
    by = {r.name: r for r in res}
    assert by["position-rank"].df == 287 * 11  # 288 positions, 12 ranks (no tens)
    assert by["consecutive-shoes"].df == 7 * 7
    assert by["burn-card"].df == 11
    assert by["cutting-card"].p_value is None and by["cutting-card"].statistic == 0


def test_naive_fisher_yates_fails_across_consecutive_shoes() -> None:
    """The off-by-one shuffle's bias is in what it does to the order it is given: each shoe
    alone looks well mixed after a few shuffles, the next shoe remembers the last."""
    res = results(1000, seed=1, generator=NaiveShuffle)
    assert "consecutive-shoes" in failed(res)
    p_value = next(r for r in res if r.name == "consecutive-shoes").p_value
    assert p_value is not None and p_value < 1e-6


def test_sticky_bottom_fails_the_position_tests() -> None:
    res = results(1000, seed=1, generator=StickyBottom)
    assert {"position-rank", "position-suit", "card-position", "consecutive-shoes"} <= failed(res)


def test_same_seed_same_answer_on_any_number_of_workers() -> None:
    one = certify(RULES, 1500, seed=9, workers=1).tally  # two chunks
    two = certify(RULES, 1500, seed=9, workers=2).tally
    assert np.array_equal(one.position_rank, two.position_rank)
    assert np.array_equal(one.carried_cov, two.carried_cov)
    assert one.pairs_of_shoes == two.pairs_of_shoes == 1498
    other = certify(RULES, 1500, seed=10, workers=1).tally
    assert not np.array_equal(one.position_rank, other.position_rank)


def test_7_secure_generator_by_default() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1})
    seen: list[object] = []

    def spy(key: int | None) -> Any:
        rng = seeded(key)
        seen.append(rng)
        return rng

    run = certify(rules, 100, workers=1, generator=spy)
    doc = document(run, battery(run.tally, rules))
    assert doc["seed"] == "secure" and "SystemRandom" in doc["generator"]
    assert [type(g).__name__ for g in seen] == ["SystemRandom"]


def test_8_1_no_burn_card_no_burn_test_and_standard_decks() -> None:
    rules = load_rules("classic-blackjack", {"decks": 2, "burn_card": False})
    run = certify(rules, 200, seed=4, workers=1)
    res = battery(run.tally, rules)
    assert "burn-card" not in {r.name for r in res}
    assert run.tally.pack.n == 104 and run.tally.pack.ranks == 13
    assert run.tally.position_rank.sum() == 200 * 104


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"shuffles": 99}, "--shuffles must be at least 100"),
        ({"shuffles": 100, "workers": 0}, "--workers must be at least 1"),
        ({"shuffles": 100, "seed": -1}, "--seed must not be negative"),
    ],
)
def test_bad_input_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        certify(RULES, **kwargs)


# the command line, through add_commands on a parser of its own (as pontoon.cli wires it)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="nz-pontoon")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--json", action="store_true")


def command(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="pontoon")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Callable[[argparse.Namespace], int]] = add_commands(sub, _common)
    args = parser.parse_args(argv)
    return commands[args.command](args)


def test_command_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "certify.html"
    argv = ["certify", "--shuffles", "300", "--seed", "5", "--set", "decks=2", "--json"]
    assert command(*argv, "--workers", "1", "--format", "html", "--output", str(out)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is True and doc["shuffles"] == 300 and doc["seed"] == 5
    assert doc["cards"] == 96 and doc["statistical_tests"] == 8
    assert abs(doc["family_false_failure"] - (1 - 0.99**8)) < 1e-12
    for t in doc["tests"]:
        assert {"name", "statistic", "p_value", "passed"} <= t.keys()
    page = out.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == 2


def test_command_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert command("certify", "--shuffles", "200", "--seed", "2", "--set", "decks=1") == 0
    shown = capsys.readouterr().out
    assert "consecutive-shoes" in shown and "PASSED" in shown and "1 - 0.99^8" in shown


def test_a_failed_certification_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = certify_run.certify

    def biased(*args: Any, **kwargs: Any) -> certify_run.Run:
        return real(*args, **kwargs, generator=StickyBottom)

    monkeypatch.setattr(certify_run, "certify", biased)
    assert command("certify", "--shuffles", "200", "--seed", "1", "--set", "decks=1") == 3
    assert EXIT_FAILED == 3
    assert "FAILED: position-rank" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rules", "no-such-rules"], "unknown rule set"),
        (["--shuffles", "10"], "at least 100"),
        (["--format", "html"], "--format html needs --output"),
        (["--set", "decks=9"], "between 1 and 8"),
    ],
)
def test_command_bad_input(argv: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        command("certify", "--shuffles", "100", "--seed", "1", *argv)


def test_text_report_lists_a_failure() -> None:
    run = certify(RULES, 300, seed=3, workers=1, generator=StickyBottom)
    shown = text(document(run, battery(run.tally, RULES)))
    assert "FAIL" in shown and "FAILED:" in shown
