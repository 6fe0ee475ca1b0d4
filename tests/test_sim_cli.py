"""``pontoon simulate``: the JSON document, reproducibility with any number of workers,
agreement with the exact analysis, sessions, counting, the plot, and refusals (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pontoon.analysis.report import Report
from pontoon.cli import main
from pontoon.rules import RuleSet, load_rules
from pontoon.sim.job import CHUNK_ROUNDS
from pontoon.sim.results import TIMING_KEYS

CHART = "tests/data/sim/classic-blackjack.csv"


@pytest.fixture
def analyze_once(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Report]:
    """``analyze``, each call's report kept for an identical call: the exact analysis is
    deterministic, so the test's expected value and the chart ``simulate --strategy basic``
    works out for the same rules (the command calls ``analyze`` itself, patched here) come
    from one analysis instead of two identical ones."""
    import pontoon.analysis.report as report

    real, done = report.analyze, {}

    def once(rules: RuleSet, strategy: str = "basic", **kw: Any) -> Report:
        key = (rules, strategy, tuple(sorted(kw.items())))
        if key not in done:
            done[key] = real(rules, strategy, **kw)
        return done[key]

    monkeypatch.setattr(report, "analyze", once)
    return once


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object], str]:
    code = main(["simulate", "--no-progress", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in args else {}), err


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = run(
        [
            "--rules",
            "nz-pontoon",
            "--strategy",
            "tests/data/sim/nz-pontoon.csv",
            "--rounds",
            "200000",
            "--seed",
            "3",
            "--workers",
            "1",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    assert {"rules", "rounds", "ev", "stderr", "rounds_per_second", "ci95"} <= set(doc)
    assert doc["rounds"] == 200000 and doc["rules"]["name"] == "nz-pontoon"  # type: ignore[index]
    dist = doc["net_distribution"]
    assert isinstance(dist, dict) and abs(sum(dist.values()) - 1) < 1e-9
    assert dist["-1"] > 0.3 and dist["1.5"] > 0.03  # losses; pontoons at 3:2
    bonuses = doc["bonuses"]
    assert isinstance(bonuses, dict)
    assert bonuses["five_card_21"]["count"] > 0 and bonuses["pontoon"]["per_box_round"] > 0.03


def test_same_seed_same_answer_with_one_or_two_workers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["--rules", "classic-blackjack", "--strategy", CHART, "--seed", "11", "--json"]
    base += ["--rounds", "2500000", "--boxes", "2", "--hands-per-session", "50"]
    base += ["--bankroll", "10000", "--count", "hi-lo"]
    docs = []
    for workers in ("1", "2"):
        code, doc, _ = run([*base, "--workers", workers], capsys)
        assert code == 0 and doc["chunks"] == 3
        docs.append({k: v for k, v in doc.items() if k not in TIMING_KEYS})
    assert docs[0] == docs[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "knobs"),
    [("classic-blackjack", ["--set", "decks=2"]), ("nz-pontoon", ["--set", "decks=2"])],
)
def test_agrees_with_the_exact_analysis(
    preset: str,
    knobs: list[str],
    capsys: pytest.CaptureFixture[str],
    analyze_once: Callable[..., Report],
) -> None:
    """Each round from a fresh shoe (the cutting card comes out in the first round), as the
    analysis assumes; within 4 standard errors."""
    rules = load_rules(preset, {"decks": 2, "penetration": 0.01})
    exact = analyze_once(rules, "basic", wager=500).ev  # the command's call: its chart
    code, doc, _ = run(
        [
            "--rules",
            preset,
            *knobs,
            "--set",
            "penetration=0.01",
            "--rounds",
            "3000000",
            "--seed",
            "5",
            "--workers",
            "2",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    ev, se = doc["ev"], doc["stderr"]
    assert isinstance(ev, float) and isinstance(se, float)
    assert abs(ev - exact) < 4 * se, (ev, exact, se)
    events = doc["events"]
    assert isinstance(events, dict) and events["shuffle"]["count"] == 3000000


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "knobs", "rounds"),
    [("nz-pontoon", ["--set", "double_rescue=true"], 30_000_000), ("spanish-21", [], 10_000_000)],
)
def test_the_rescue_rows_follow_the_analysis(
    preset: str,
    knobs: list[str],
    rounds: int,
    capsys: pytest.CaptureFixture[str],
    analyze_once: Callable[..., Report],
) -> None:
    """12 (double_rescue): the optimal chart's rescue rows (X6-X20) are the analysis's rescues,
    so the simulation agrees with ``pontoon analyze`` within 4 standard errors (each round
    from a fresh shoe). nz-pontoon: 30,000,000 rounds give a standard error of about 0.021 pp;
    the 0.11 pp the simulation lost without the rows would be more than 5 of them."""
    sets = dict(k.split("=") for k in knobs[1::2])
    # the command's rules and call (the analysis reads no penetration: it is off the top)
    rules = load_rules(preset, {**sets, "penetration": "0.01"})
    exact = analyze_once(rules, "basic", wager=500).ev
    args = ["--rules", preset, *knobs, "--set", "penetration=0.01", "--rounds", str(rounds)]
    code, doc, err = run([*args, "--seed", "12", "--workers", "2", "--json"], capsys)
    assert code == 0 and "note" not in err
    ev, se = doc["ev"], doc["stderr"]
    assert isinstance(ev, float) and isinstance(se, float)
    assert abs(ev - exact) < 4 * se, (ev, exact, se)
    events = doc["events"]
    assert isinstance(events, dict) and events["rescue"]["count"] > rounds // 100


def test_sessions_counting_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    count = tmp_path / "count.toml"
    count.write_text(
        "tags = { A = -1, 2 = 1, 3 = 1, 4 = 1, 5 = 1, 6 = 1, T = -1 }\n"
        "ramp = { -1 = 0, 1 = 1, 3 = 4 }\n"
    )
    png = tmp_path / "h.png"
    code, doc, _ = run(
        [
            "--rules",
            "classic-blackjack",
            "--strategy",
            CHART,
            "--rounds",
            "300000",
            "--seed",
            "2",
            "--workers",
            "1",
            "--hands-per-session",
            "100",
            "--bankroll",
            "5000",
            "--count",
            str(count),
            "--plot",
            str(png),
            "--json",
        ],
        capsys,
    )
    assert code == 0 and png.stat().st_size > 1000
    s = doc["sessions"]
    assert isinstance(s, dict) and s["sessions"] > 1000 and 0 < s["risk_of_ruin"] < 1
    c = doc["counting"]
    assert isinstance(c, dict) and c["ev_by_true_count"]["-2"]["units"] == 0
    assert doc["rounds_played"] < doc["rounds"]  # type: ignore[operator]


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(
        [
            "--strategy",
            "tests/data/sim/nz-pontoon.csv",
            "--rounds",
            "1000",
            "--seed",
            "1",
            "--workers",
            "1",
        ],
        capsys,
    )
    assert code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--rounds", "0"],
        ["--workers", "0"],
        ["--boxes", "8"],
        ["--wager", "1"],
        ["--strategy", "composition"],
        ["--strategy", "no-such.csv"],
        ["--count", "no-such-system"],
        ["--bankroll", "1000"],
        ["--hands-per-session", "10", "--bankroll", "100"],
        ["--set", "decks=0"],
        ["--rounds", "many"],
    ],
)
def test_bad_input_exit_2_one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["simulate", "--strategy", CHART, "--no-progress", "--rules", "classic-blackjack", *args]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("pontoon: ") and err.count("\n") == 1, err


@pytest.mark.integration
def test_a_dask_cluster_gives_the_same_answer(capsys: pytest.CaptureFixture[str]) -> None:
    distributed = pytest.importorskip("distributed")
    base = ["--rules", "nz-pontoon", "--strategy", "tests/data/sim/nz-pontoon.csv"]
    # 9 chunks, the last one short: on one thread the first task holds two (runner.guided)
    base += ["--rounds", str(8 * CHUNK_ROUNDS + 1000), "--seed", "4", "--json"]
    _, local, _ = run([*base, "--workers", "1"], capsys)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        code, remote, _ = run([*base, "--scheduler", cluster.scheduler_address], capsys)
    assert code == 0 and remote["scheduler"] == cluster.scheduler_address
    strip = {k: v for k, v in local.items() if k not in TIMING_KEYS}
    assert strip == {k: v for k, v in remote.items() if k not in TIMING_KEYS}


@pytest.mark.slow  # (a kernel compiled for its switches: a job that insures is never generic)
def test_10_simulate_indices_plays_the_insurance_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate --indices``: an index chart's insurance row is played (insure from its true
    count); the same chart without it, on the same seed, gives another result."""
    rows = "cell,dealer,below,above,index\nH16,T,H,S,0\n"
    (tmp_path / "plain.csv").write_text(rows, "utf-8")
    (tmp_path / "insure.csv").write_text(rows + "insurance,A,no,insure,1\n", "utf-8")
    evs = []
    for name in ("plain", "insure"):
        args = ["simulate", "--rules", "classic-blackjack", "--count", "hi-lo", "--seed", "3"]
        args += ["--indices", str(tmp_path / f"{name}.csv"), "--rounds", "200000", "--json"]
        assert main([*args, "--workers", "1", "--no-progress"]) == 0
        evs.append(json.loads(capsys.readouterr().out)["ev"])
    assert evs[0] != evs[1]
