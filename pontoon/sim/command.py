"""The ``pontoon simulate`` command (wired into :mod:`pontoon.cli`)."""

from __future__ import annotations

import argparse
import json
import sys

from pontoon.argtypes import outfile, seed, whole
from pontoon.errors import InputError
from pontoon.rules import RuleSet


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=whole, default=1_000_000, help="rounds to deal")
    p.add_argument("--seed", type=seed, help="seed (default: a fresh one, shown in the output)")
    p.add_argument("--workers", type=whole, help="local processes (default: all cores)")
    p.add_argument("--scheduler", help="address of a Dask distributed scheduler")
    p.add_argument("--strategy", default="basic", help="basic (optimal chart) or a chart CSV")
    p.add_argument("--boxes", type=whole, default=1, help="boxes, one player each (1-7)")
    p.add_argument("--wager", type=whole, default=500, help="wager per box in cents")
    p.add_argument("--hands-per-session", type=whole, default=0, help="session length in rounds")
    p.add_argument("--bankroll", type=whole, default=0, help="a session's bankroll in cents")
    p.add_argument("--count", help="counting system: hi-lo or a TOML file (tags, ramp)")
    p.add_argument(
        "--indices",
        metavar="CSV",
        help="play an index chart (count indices --format csv) by the true count of the deal",
    )
    p.add_argument("--plot", type=outfile, help="write a histogram PNG here")
    p.add_argument(
        "--no-others",
        action="store_true",
        help="do not count 11.2's payment to the players of the other boxes",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--kernel",
        choices=("auto", "generic", "specialised"),
        default="auto",
        help="compiled code: one for every rule set, or one compiled for these rules (faster, "
        "about 20 s to compile once); auto: specialised from 50 million rounds",
    )


def simulate_command(rules: RuleSet, args: argparse.Namespace) -> int:
    try:
        from pontoon.sim.job import Job, Kernel
    except ImportError:  # numba missing
        raise InputError("simulate needs numba: pip install 'pontoon[sim]'") from None
    from pontoon.analysis.chart import Chart
    from pontoon.sim.counting import Counting
    from pontoon.sim.results import document, plot, text
    from pontoon.sim.runner import simulate

    if not rules.table_min <= args.wager <= rules.table_max:
        raise InputError(
            f"--wager must be between the table minimum {rules.table_min} and maximum "
            f"{rules.table_max} (15.6, 15.2), not {args.wager}"
        )
    if args.bankroll and not args.hands_per_session:
        raise InputError("--bankroll needs --hands-per-session")
    if args.rounds < 1:
        raise InputError(f"--rounds must be at least 1, not {args.rounds}")
    from pontoon.cluster import check_scheduler

    check_scheduler(args.scheduler)
    counting = Counting.read(args.count) if args.count else None
    indices = []
    depths: tuple[float, ...] = ()
    insure: int | list[int | None] | None = None
    if args.indices:  # read before the chart is worked out: bad input fails at once
        from pontoon.count.indices import (
            index_charts,
            index_depths,
            insurance_from,
            read_indices,
        )

        if counting is None:
            raise InputError("--indices needs --count: the true count decides the plays")
        indices = read_indices(args.indices)
        depths = index_depths(indices)
        insure = insurance_from(indices)  # 10: insured from the index's true count
    if args.strategy == "basic":
        from pontoon.analysis.report import analyze

        report = analyze(rules, "basic", wager=args.wager)
        assert report.chart is not None
        chart, name = report.chart, "basic"
    elif args.strategy == "composition":
        raise InputError("simulate plays a chart: --strategy basic or a chart CSV file")
    else:
        chart = Chart.read(args.strategy)
        name = chart.name
    charts = index_charts(chart, indices) if indices else []
    job = Job.build(
        rules,
        chart,
        boxes=args.boxes,
        wager=args.wager,
        others=not args.no_others,
        hands_per_session=args.hands_per_session,
        bankroll=args.bankroll,
        counting=counting,
        indices=charts,
        index_depths=depths,
        kernel=Kernel(args.kernel),
        insure_from=insure,
    )
    seed = args.seed
    if seed is None:
        import secrets

        seed = secrets.randbits(63)  # (a negative --seed: refused by its type)
    show = None if not args.no_progress else False
    run = simulate(
        job, args.rounds, seed, workers=args.workers, scheduler=args.scheduler, progress=show
    )
    doc = document(run, name)
    if args.indices:
        doc["indices"] = args.indices
    if args.plot:
        plot(doc, args.plot)
    if args.json:
        print(json.dumps(doc))
    else:
        sys.stdout.write(text(doc))
    return 0
