"""The exact distribution's variance against the simulator's: for the four
presets (their optimal charts) and a chart file, one box and two boxes, each round from a
fresh shoe (penetration 0.01), 10^8 rounds by default. Prints, per case, the exact variance,
the simulated one, its standard error sqrt((mu4 - var^2) / n) (mu4 from the exact
distribution) and z; then one JSON object as the last line, also appended to
bench/results/variance.jsonl (bench/record.py; its fields: docs/reference/files.md).

Two boxes: the variance of their total, which the exact side takes as two boxes independent
given the dealer's first card and outcome, with 11.2's payment to the other box counted as
the simulator counts it; the difference is the covariance that model leaves out (each box's
cards come out of the other's shoe), printed as "model covariance - simulated".

Run: .venv/bin/python bench/variance.py [--quick] [--rounds N]   (--quick: 10^6 rounds)
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any

from pontoon.analysis.chart import Chart
from pontoon.analysis.distribution import round_distribution
from pontoon.analysis.report import analyze
from pontoon.rules import RuleSet, load_rules
from pontoon.sim import kernel as K
from pontoon.sim.job import Job
from pontoon.sim.runner import simulate

CHART = Path(__file__).parent.parent / "tests/data/reference/basic-8d-h17-ndas-d10-spl2-ls.csv"
CASES: list[tuple[str, str, dict[str, object]]] = [
    ("classic-blackjack", "basic", {}),
    ("nz-blackjack", "basic", {}),
    ("nz-pontoon", "basic", {}),
    ("spanish-21", "basic", {}),
    (
        "classic-blackjack",
        str(CHART),
        {
            "decks": 8,
            "dealer_hits_soft_17": True,
            "double_after_split": False,
            "double_on": "10-11",
            "split_max_hands": 2,
            "surrender": "late",
        },
    ),
]


def simulated(rules: RuleSet, chart: Chart, boxes: int, rounds: int, seed: int) -> float:
    """The sample variance of a round's net over ``boxes`` boxes, in wagers²."""
    job = Job.build(rules.replace(penetration=0.01), chart, boxes=boxes, wager=500, others=True)
    acc = simulate(job, rounds, seed, progress=False).result.acc
    n = acc[K.A_PLAYED]
    s = acc[K.A_NET] / 500
    return float((acc[K.A_SQ] - s * s / n) / (n - 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10^6 rounds")
    parser.add_argument("--rounds", type=int, default=100_000_000)
    args = parser.parse_args()
    rounds = 1_000_000 if args.quick else args.rounds
    rows: list[dict[str, Any]] = []
    for seed, (preset, strategy, knobs) in enumerate(CASES, start=1):
        rules = load_rules(preset, knobs)
        rep = analyze(rules, strategy if strategy == "basic" else Chart.read(strategy))
        assert rep.chart is not None
        d = round_distribution(rep)
        w = d.wager
        for boxes in (1, 2):
            exact = d.boxes(boxes, others=True)
            var = exact.central(2) / w**2
            mu4 = exact.central(4) / w**4
            se = math.sqrt((mu4 - var * var) / rounds)
            sim = simulated(rules, rep.chart, boxes, rounds, seed * 10 + boxes)
            z = (sim - var) / se
            name = preset if strategy == "basic" else f"{preset} + {Path(strategy).name}"
            print(
                f"{name}, {boxes} box(es): exact {var:.5f}, "
                f"simulated {sim:.5f} ± {se:.5f}, z {z:+.2f}"
            )
            if boxes == 2:
                bias, bias_se = (var - sim) / 2, se / 2
                print(f"  model covariance - simulated: {bias:+.5f} ± {bias_se:.5f}")
            rows.append(
                {"case": name, "boxes": boxes, "exact": var, "simulated": sim, "se": se, "z": z}
            )
    worst = max(abs(r["z"]) for r in rows)
    from record import emit  # bench/record.py, beside this file

    emit(
        {
            "bench": "variance",
            "rounds": rounds,
            "max_abs_z": round(worst, 2),
            "cases": rows,
            "cores": os.cpu_count(),
        }
    )


if __name__ == "__main__":
    main()
