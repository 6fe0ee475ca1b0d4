"""The ``pontoon analyze``, ``strategy`` and ``par`` commands (wired into :mod:`pontoon.cli`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from pontoon.argtypes import finite, outfile, seed, whole
from pontoon.errors import InputError
from pontoon.rules import RuleSet

if TYPE_CHECKING:
    from pontoon.analysis.chart import Chart
    from pontoon.analysis.composition import Removal


def add_options(p: argparse.ArgumentParser, *, command: str) -> None:
    """The options of ``analyze`` or ``strategy`` (besides --rules, --set and --json)."""
    p.add_argument("--wager", type=whole, default=500, help="wager in cents (Super Bonus: 11.2)")
    p.add_argument("--infinite", action="store_true", help="an infinite shoe")
    if command == "analyze":
        p.add_argument(
            "--strategy",
            help="basic (optimal chart; the default), composition, or a chart CSV file; the "
            "hand calculator follows composition unless told",
        )
        p.add_argument(
            "--post-split",
            choices=("cdz", "cdp1", "cdp"),
            default="cdz",
            help="how --strategy composition plays split hands: cdz (CDZ-, as the unsplit "
            "hand; default), cdp1 (best for the first split), cdp (best for the pair cards out)",
        )
        p.add_argument(
            "--removed",
            metavar="CARDS",
            help="cards out of the shoe before the round, e.g. 5S,5H,KD (a rank alone: its "
            "suit not known)",
        )
        p.add_argument("--hand", help="the hand calculator: the player's cards, e.g. 7S,8D")
        p.add_argument("--dealer", help="the dealer's first card, e.g. K or KD")
    elif command == "par":
        p.add_argument(
            "--strategy", default="basic", help="basic (default), composition, or a chart CSV file"
        )
        p.add_argument("--post-split", choices=("cdz", "cdp1", "cdp"), default="cdz")
        p.add_argument("--format", choices=("html", "pdf"), default="html")
        p.add_argument(
            "--output", type=outfile, help="write here (required for pdf; default stdout)"
        )
        p.add_argument("--no-effects", action="store_true", help="leave out the rule effects")
        p.add_argument("--workers", type=whole, help="local processes for the rule effects")
        p.add_argument("--scheduler", help="address of a Dask scheduler for the rule effects")
        p.add_argument("--rounds-per-hour", type=whole, default=60, help="operator: rounds an hour")
        p.add_argument("--boxes", type=whole, default=7, help="operator: boxes in play (1-7)")
        p.add_argument("--hours", type=finite, default=8.0, help="operator: hours in a shift")
        p.add_argument(
            "--rounds",
            type=whole,
            default=10_000_000,
            help="rounds simulated for two boxes' covariance (a chart only; 0: none)",
        )
        p.add_argument("--seed", type=seed, default=1, help="seed of that simulation")
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
    else:
        p.add_argument("--format", choices=("text", "csv", "png"), default="text")
        p.add_argument(
            "--output", type=outfile, help="write here (required for png; default stdout)"
        )


def analyze_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.analysis.chart import Chart
    from pontoon.analysis.render import hand_text, report_text
    from pontoon.analysis.report import analyze, hand_values, method_text, parse_removed

    post_split = args.post_split
    removed = parse_removed(args.removed) if args.removed else []
    if args.hand or args.dealer:
        if not (args.hand and args.dealer):
            raise InputError("the hand calculator needs both --hand and --dealer")
        follow = _strategy(args.strategy or "composition")
        rep = hand_values(
            rules,
            args.hand,
            args.dealer,
            wager=args.wager,
            infinite=args.infinite,
            strategy=follow,
            post_split=post_split,
            removed=removed,
        )
        if args.json:
            name = follow.name if isinstance(follow, Chart) else follow
            method = method_text(_Shoe(rules, args, removed), name, post_split)  # type: ignore[arg-type]
            print(json.dumps(rep.to_json(rules, method)))
        else:
            sys.stdout.write(hand_text(rep))
        return 0
    strategy = _strategy(args.strategy or "basic")
    report = analyze(
        rules,
        strategy,
        wager=args.wager,
        infinite=args.infinite,
        post_split=post_split,
        removed=removed,
        one_shot=True,
    )
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        sys.stdout.write(report_text(report))
    return 0


def par_command(rules: RuleSet, args: argparse.Namespace) -> int:
    import os

    from pontoon.analysis.effects import RuleEffects
    from pontoon.analysis.par import Operator, par_sheet
    from pontoon.analysis.par_render import to_html, write_pdf
    from pontoon.analysis.report import analyze

    if args.format == "pdf" and not args.output and not args.json:
        raise InputError("--format pdf needs --output FILE")
    if not rules.table_min <= args.wager <= rules.table_max:
        raise InputError(
            f"--wager must be between the table minimum {rules.table_min} and maximum "
            f"{rules.table_max} (15.6, 15.2), not {args.wager}"
        )
    operator = Operator(args.rounds_per_hour, args.boxes, args.wager, args.hours)
    operator.check()
    workers = args.workers if args.workers is not None else os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    if args.rounds < 0:
        raise InputError(f"--rounds must be 0 or more, not {args.rounds}")
    if not args.no_effects:
        from pontoon.cluster import check_scheduler

        check_scheduler(args.scheduler)
    strategy = _strategy(args.strategy)
    report = analyze(
        rules,
        strategy,
        wager=args.wager,
        infinite=args.infinite,
        post_split=args.post_split,
        one_shot=True,
        forward=True,
    )
    variations = RuleEffects(
        rules,
        strategy,
        args.wager,
        report.post_split,
        workers=workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and sys.stderr.isatty(),
        enabled=not args.no_effects,
    )
    with variations:  # the variations run on the workers meanwhile
        simulated = None
        if args.rounds and report.chart is not None:
            from pontoon.analysis.covariance import simulated_covariance

            busy = bool(variations.tasks) and workers > 1
            simulated = simulated_covariance(
                rules, report.chart, args.wager, args.rounds, args.seed, 1 if busy else workers
            )
        sheet = par_sheet(report, operator, [], simulated)
        sheet.effects = variations.effects(report.ev)
    doc = sheet.to_json()
    if args.json:
        print(json.dumps(doc))
        return 0
    if args.format == "pdf":
        write_pdf(doc, args.output)
        return 0
    text = to_html(doc)
    if not args.output:
        sys.stdout.write(text)
        return 0
    from pontoon.output import write_text

    write_text(args.output, text)
    return 0


def _strategy(name: str) -> str | Chart:
    from pontoon.analysis.chart import Chart

    return name if name in ("basic", "composition") else Chart.read(name)


class _Shoe:
    """What :func:`method_text` reads of a game, without building one."""

    def __init__(self, rules: RuleSet, args: argparse.Namespace, removed: list[Removal]) -> None:
        self.rules = rules
        self.infinite = args.infinite
        self.wager = args.wager
        self.removed = removed
        from pontoon.analysis.composition import ShoeModel

        self.shoe = ShoeModel.of(rules, args.infinite, removed)


def strategy_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.analysis.render import chart_png, chart_text
    from pontoon.analysis.report import analyze

    if args.format == "png" and not args.output:
        raise InputError("--format png needs --output FILE")
    report = analyze(rules, "basic", wager=args.wager, infinite=args.infinite)
    chart = report.chart
    assert chart is not None
    if args.format == "png":
        chart_png(chart, rules, report.ev, args.output)
        return 0
    text = chart.to_csv() if args.format == "csv" else chart_text(chart, rules, report.ev)
    if args.json:
        text = json.dumps({"rules": rules.to_dict(), "ev": report.ev, "chart": chart.to_csv()})
        text += "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise InputError(f"cannot write {args.output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0
