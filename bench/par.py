"""Time the whole nz-pontoon PAR sheet as a user runs it: `pontoon par --json` (the basic chart,
its distribution, every figure, and the rule-effect table: each one-knob variation analysed
afresh on all local cores), as one process with its workers; target <= 60 s on two cores.
Then the same without the rule effects.

Prints a line per run, then one JSON object as the last line, also appended to
bench/results/par.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/par.py [--quick]   (--quick: the sheet without rule effects only)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PONTOON = str(Path(sys.executable).with_name("pontoon"))


def run(args: list[str]) -> tuple[float, dict[str, object]]:
    """Seconds of wall time and the JSON document of ``pontoon par --json`` with ``args``."""
    start = time.perf_counter()
    out = subprocess.run(
        [PONTOON, "par", "--json", "--no-progress", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return time.perf_counter() - start, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="no rule effects")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    alone, doc = run(["--no-effects"])
    print(f"nz-pontoon PAR sheet without rule effects: {alone:.1f} s")
    whole = None
    effects = 0
    if not args.quick:
        whole, doc = run([])
        effects = len(doc["rule_effects"])  # type: ignore[arg-type]
        print(f"nz-pontoon PAR sheet with {effects} rule effects on {cores} cores: {whole:.1f} s")
    result = {
        "bench": "par",
        "rules": "nz-pontoon",
        "seconds": None if whole is None else round(whole, 2),
        "seconds_without_effects": round(alone, 2),
        "rule_effects": effects,
        "cores": cores,
        "load": round(os.getloadavg()[0], 2),
    }
    from record import emit  # bench/record.py, beside this file

    emit(result)


if __name__ == "__main__":
    main()
