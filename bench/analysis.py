"""Time the exact analysis of nz-pontoon: the optimal total-dependent chart (target <= 10 s,
<= 1 GB, one core) and the composition-dependent optimum (target <= 60 s), 6 decks; and the
house edge with 8 decks. Then classic-blackjack's composition-dependent optimum (6 decks, CDZ-,
split to 4), the figure Eric Farmer's C++ analyser computes in about 0.7 s; it runs first, in a
fresh process, so no shared dealer tables help it.

Prints a line per analysis, then one JSON object as the last line (INTERFACES.md, Benchmarks).
Run: .venv/bin/python bench/analysis.py [--quick]   (--quick: the infinite shoe, seconds only)
"""

from __future__ import annotations

import argparse
import json
import os
import resource

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: set before numpy loads

from pontoon.analysis import analyze
from pontoon.rules import load_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the infinite shoe only")
    args = parser.parse_args()
    rules = load_rules("nz-pontoon")
    inf = args.quick
    classic = analyze(load_rules("classic-blackjack"), "composition", infinite=inf)
    print(f"classic-blackjack composition: EV {classic.ev * 100:+.7f} % in {classic.seconds:.2f} s")
    basic = analyze(rules, "basic", infinite=inf)
    print(f"nz-pontoon basic: EV {basic.ev * 100:+.4f} % in {basic.seconds:.2f} s")
    comp = analyze(rules, "composition", infinite=inf)
    print(f"nz-pontoon composition: EV {comp.ev * 100:+.4f} % in {comp.seconds:.2f} s")
    eight = analyze(load_rules("nz-pontoon", {"decks": 8}), "basic", infinite=inf)
    print(f"nz-pontoon 8 decks basic: EV {eight.ev * 100:+.4f} % in {eight.seconds:.2f} s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "bench": "analysis",
                "seconds_basic": round(basic.seconds, 3),
                "seconds_composition": round(comp.seconds, 3),
                "peak_mb": round(peak_mb, 1),
                "nz_pontoon_ev": basic.ev,
                "nz_pontoon_composition_ev": comp.ev,
                "nz_pontoon_8_decks_ev": eight.ev,
                "seconds_classic_composition": round(classic.seconds, 3),
                "classic_composition_ev": classic.ev,
                "rules": "nz-pontoon",
                "infinite": inf,
                "cores": 1,
            }
        )
    )


if __name__ == "__main__":
    main()
