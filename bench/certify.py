"""Seconds of ``pontoon certify`` for 10^5 shuffles of the six-deck nz-pontoon shoe with the
secure generator the tables use (``secrets.SystemRandom``) on every core: the shuffling, the
tests and the document, as the command does them (without printing). Also the cost of one
secure shuffle on one core, and of a seeded (numpy) run for comparison.

Prints the machine, its load average, a line per measurement, then one JSON object as the
last line: ``{"bench": "certify", "shuffles": n, "seconds": s, ...}``, also appended to
bench/results/certify.jsonl (bench/record.py).
Run: .venv/bin/python bench/certify.py [--shuffles N] [--workers K]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import secrets
import time

from pontoon.certify.report import document
from pontoon.certify.run import certify
from pontoon.certify.tests import battery
from pontoon.rules import load_rules
from pontoon.shoe import Shoe


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def one_shuffle(shuffles: int = 2000) -> float:
    """Microseconds of one secure ``Shoe.shuffle()`` of 288 cards on one core."""
    shoe = Shoe(load_rules("nz-pontoon"), secrets.SystemRandom())
    start = time.perf_counter()
    for _ in range(shuffles):
        shoe.shuffle()
    return (time.perf_counter() - start) / shuffles * 1e6


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (the worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(
    shuffles: int, seed: int | None, workers: int | None
) -> tuple[float, float, dict[str, object]]:
    """Wall-clock and CPU seconds of one certification, and its document."""
    rules = load_rules("nz-pontoon")
    start, cpu = time.perf_counter(), cpu_seconds()
    run = certify(rules, shuffles, seed=seed, workers=workers)
    doc = document(run, battery(run.tally, rules))
    return time.perf_counter() - start, cpu_seconds() - cpu, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shuffles", type=int, default=100_000)
    parser.add_argument("--workers", type=int, help="default: all cores")
    args = parser.parse_args()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    us = one_shuffle()
    print(f"one secure shuffle of 288 cards, one core: {us:.0f} us")
    seconds, cpu, doc = timed(args.shuffles, None, args.workers)
    print(
        f"certify, secure: {args.shuffles:,} shuffles in {seconds:.1f} s on {doc['workers']} "
        f"processes ({args.shuffles / seconds:,.0f} shuffles/s, {cpu:.1f} CPU s), "
        f"passed {doc['passed']}"
    )
    seeded, seeded_cpu, sdoc = timed(args.shuffles, 1, args.workers)
    print(
        f"certify, seeded (numpy): {seeded:.1f} s ({seeded_cpu:.1f} CPU s), passed {sdoc['passed']}"
    )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    result = {
        "bench": "certify",
        "shuffles": args.shuffles,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "workers": doc["workers"],
        "seeded_seconds": round(seeded, 2),
        "secure_shuffle_us": round(us, 1),
        "cores": os.cpu_count(),
    }
    from record import emit  # bench/record.py, beside this file

    emit(result)


if __name__ == "__main__":
    main()
