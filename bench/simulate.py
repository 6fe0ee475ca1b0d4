"""Rounds per second of the Monte Carlo kernel: one box, the optimal basic chart,
after compilation, on one core, the kernel compiled for the rule set (and nz-pontoon's on
the generic kernel too, which serves every rule set with one compilation); then the
speed-up of two local worker processes and (without ``--quick``) a Dask LocalCluster of two
workers against the same two local processes (128,000,000 rounds, best of two runs each).

Prints a line per measurement, then one JSON object as the last line with
``classic_rounds_per_second_per_core`` and ``nz_pontoon_rounds_per_second_per_core``, also
appended to bench/results/simulate.jsonl (bench/record.py; its fields:
docs/reference/files.md).
Run: .venv/bin/python bench/simulate.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

from pontoon.analysis import analyze
from pontoon.rules import load_rules
from pontoon.sim.job import Job, Kernel, run_chunk
from pontoon.sim.runner import simulate


def job_for(preset: str, kernel: Kernel = Kernel.SPECIALISED) -> Job:
    rules = load_rules(preset)
    chart = analyze(rules, "basic").chart
    assert chart is not None
    return Job.build(rules, chart, kernel=kernel)


def one_core(job: Job, rounds: int) -> tuple[float, float]:
    """The best of 5 runs in rounds per second of wall-clock time, and of this process's
    CPU time (less sensitive to other jobs on a shared machine)."""
    run_chunk(job, 1, 1000)  # compile or load the cached kernel
    best = best_cpu = 0.0
    for rep in range(5):
        start, cpu = time.perf_counter(), time.process_time()
        run_chunk(job, 100 + rep, rounds)
        best = max(best, rounds / (time.perf_counter() - start))
        best_cpu = max(best_cpu, rounds / (time.process_time() - cpu))
    return best, best_cpu


def dask_rate(job: Job, rounds: int, runs: int) -> float:
    """The best of ``runs`` runs on a Dask LocalCluster of two one-thread workers, in rounds
    per second."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:  # type: ignore[no-untyped-call]
        address = cluster.scheduler_address
        with Client(cluster) as client:  # type: ignore[no-untyped-call]
            client.run(run_chunk, job, 1, 1000)  # every worker loads the kernel, as above
        simulate(job, 2_000_000, 2, scheduler=address, progress=False)
        return max(
            simulate(job, rounds, 1, scheduler=address, progress=False).rounds_per_second
            for _ in range(runs)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run")
    args = parser.parse_args()
    per_core = 4_000_000 if args.quick else 20_000_000
    scaled = 8_000_000 if args.quick else 128_000_000

    out: dict[str, object] = {"bench": "simulate", "load_average_at_start": os.getloadavg()[0]}
    jobs = {}
    for preset, key in (
        ("classic-blackjack", "classic_rounds_per_second_per_core"),
        ("nz-pontoon", "nz_pontoon_rounds_per_second_per_core"),
    ):
        jobs[preset] = job = job_for(preset)
        rate, cpu_rate = one_core(job, per_core)
        out[key] = round(rate)
        out[key.replace("_per_second_per_core", "_per_cpu_second")] = round(cpu_rate)
        print(
            f"{preset}: {rate / 1e6:.2f} M rounds/s on one core (best of 5 x {per_core:,}; "
            f"{cpu_rate / 1e6:.2f} M per CPU second)"
        )
    rate, _ = one_core(job_for("nz-pontoon", Kernel.GENERIC), per_core)
    out["nz_pontoon_generic_rounds_per_second_per_core"] = round(rate)
    print(f"nz-pontoon on the generic kernel: {rate / 1e6:.2f} M rounds/s on one core")

    job = jobs["nz-pontoon"]
    runs = 1 if args.quick else 2  # the best of two: one run is moved by other jobs' seconds
    one = two = 0.0
    for _ in range(runs):  # alternately, so that a slow spell of the machine hits both
        one = max(one, simulate(job, scaled, 1, workers=1, progress=False).rounds_per_second)
        two = max(two, simulate(job, scaled, 1, workers=2, progress=False).rounds_per_second)
    out["one_worker_rounds_per_second"] = round(one)
    out["two_workers_rounds_per_second"] = round(two)
    out["two_worker_speedup"] = round(two / one, 3)
    print(
        f"nz-pontoon, {scaled:,} rounds (best of {runs}): 1 worker {one / 1e6:.2f} M/s, "
        f"2 workers {two / 1e6:.2f} M/s (x{out['two_worker_speedup']})"
    )
    if not args.quick:
        # started after the local runs: an idle cluster's housekeeping takes CPU time too
        dask = dask_rate(job, scaled, runs)
        out["dask_two_workers_rounds_per_second"] = round(dask)
        out["dask_vs_local"] = round(dask / two, 3)
        print(
            f"Dask LocalCluster, 2 workers (best of {runs}): {dask / 1e6:.2f} M/s "
            f"(x{out['dask_vs_local']} of local processes)"
        )
    out["load_average_at_end"] = os.getloadavg()[0]
    out["rounds_per_core_run"] = per_core
    out["cores"] = 1
    from record import emit  # bench/record.py, beside this file

    emit(out)


if __name__ == "__main__":
    main()
