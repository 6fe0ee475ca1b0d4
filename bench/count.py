"""Time advantage play as a user runs it, on all local cores: `pontoon count indices` for
nz-pontoon (the full index chart: 21 expected shoes analysed exactly; target <= 10 minutes on
two cores, exact for the linear model it rests on), for hi-lo and for the balanced count of
examples/ (its chart compared with the example file written from it), and by simulation
(`--index-rounds` rounds, the median standard error of its indices printed); `count eor` and
`count judge`; then the simulator's rounds per second counting (hi-lo, its ramp) against
plain play, alternately, the same seed and rounds (target: counting costs <= 25 %).

Prints a line per run, then one JSON object as the last line, also appended to
bench/results/count.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/count.py [--rounds N] [--pairs K] [--index-rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PONTOON = str(Path(sys.executable).with_name("pontoon"))
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BALANCED = str(EXAMPLES / "spanish-balanced.toml")


def run(args: list[str]) -> tuple[float, dict[str, object]]:
    """Seconds of wall time and the JSON document of ``pontoon ARGS --json``."""
    start = time.perf_counter()
    out = subprocess.run(
        [PONTOON, *args, "--json", "--no-progress"], check=True, capture_output=True, text=True
    ).stdout
    return time.perf_counter() - start, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20_000_000, help="rounds per simulation")
    parser.add_argument("--pairs", type=int, default=3, help="alternate runs of each")
    parser.add_argument(
        "--index-rounds", type=int, default=20_000_000, help="rounds of the simulated indices"
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    doc: dict[str, object] = {"bench": "count", "rules": "nz-pontoon", "cores": cores}
    for what in ("indices", "eor", "judge"):
        seconds, out = run(["count", what])
        print(f"pontoon count {what}: {seconds:.1f} s on {cores} cores")
        doc[f"{what}_seconds"] = round(seconds, 2)
        if what == "indices":
            doc["indices"] = len(out["indices"])  # type: ignore[arg-type]
    start = time.perf_counter()
    csv = subprocess.run(
        [PONTOON, "count", "indices", "--count", BALANCED, "--format", "csv", "--no-progress"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    seconds = time.perf_counter() - start
    current = csv == (EXAMPLES / "nz-pontoon-balanced-indices.csv").read_text("utf-8")
    print(
        f"pontoon count indices, the balanced count: {seconds:.1f} s; the example file "
        f"{'is' if current else 'is NOT'} what it writes"
    )
    doc |= {"balanced_indices_seconds": round(seconds, 2), "balanced_example_current": current}
    sim = ["count", "indices", "--count", BALANCED, "--rounds", str(args.index_rounds)]
    seconds, out = run([*sim, "--seed", "1"])
    found = out["indices"]
    assert isinstance(found, list)
    se = statistics.median(i["stderr"] for i in found) if found else float("nan")
    print(
        f"pontoon count indices --rounds {args.index_rounds:,} (balanced count): {seconds:.1f} s, "
        f"{len(found)} indices, median standard error {se:.2f} of a true count"
    )
    doc |= {
        "simulated_indices_seconds": round(seconds, 2),
        "simulated_indices_rounds": args.index_rounds,
        "simulated_indices": len(found),
        "simulated_indices_median_stderr": round(se, 3),
    }
    speeds: dict[str, list[float]] = {"plain": [], "counting": []}
    sim = ["simulate", "--rounds", str(args.rounds), "--seed", "1"]
    for _ in range(args.pairs):
        for kind, extra in (("plain", []), ("counting", ["--count", "hi-lo"])):
            _, out = run([*sim, *extra])
            speeds[kind].append(float(out["rounds_per_second"]))  # type: ignore[arg-type]
    plain, counting = (statistics.median(speeds[k]) for k in ("plain", "counting"))
    print(
        f"simulate: plain {plain / 1e6:.2f} M rounds/s, counting {counting / 1e6:.2f} M "
        f"(median of {args.pairs} alternated runs of {args.rounds:,}): cost "
        f"{(1 - counting / plain) * 100:.1f} %"
    )
    doc |= {
        "plain_rounds_per_second": round(plain),
        "counting_rounds_per_second": round(counting),
        "counting_cost": round(1 - counting / plain, 4),
    }
    from record import emit  # bench/record.py, beside this file

    emit(doc)


if __name__ == "__main__":
    main()
