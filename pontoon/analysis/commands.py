"""The ``pontoon analyze`` and ``pontoon strategy`` commands (wired into :mod:`pontoon.cli`)."""

from __future__ import annotations

import argparse
import json
import sys

from pontoon.errors import InputError
from pontoon.rules import RuleSet


def add_options(p: argparse.ArgumentParser, *, command: str) -> None:
    """The options of ``analyze`` or ``strategy`` (besides --rules, --set and --json)."""
    p.add_argument("--wager", type=int, default=500, help="wager in cents (Super Bonus: 11.2)")
    p.add_argument("--infinite", action="store_true", help="an infinite shoe")
    if command == "analyze":
        p.add_argument(
            "--strategy",
            default="basic",
            help="basic (optimal chart, default), composition, or a chart CSV file",
        )
        p.add_argument("--hand", help="the hand calculator: the player's cards, e.g. 7S,8D")
        p.add_argument("--dealer", help="the dealer's first card, e.g. K or KD")
    else:
        p.add_argument("--format", choices=("text", "csv", "png"), default="text")
        p.add_argument("--output", help="write here (required for png; default stdout)")


def analyze_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.analysis.chart import Chart
    from pontoon.analysis.render import hand_text, report_text
    from pontoon.analysis.report import analyze, hand_values, method_text

    if args.hand or args.dealer:
        if not (args.hand and args.dealer):
            raise InputError("the hand calculator needs both --hand and --dealer")
        rep = hand_values(rules, args.hand, args.dealer, wager=args.wager, infinite=args.infinite)
        if args.json:
            method = method_text(_Shoe(rules, args), "composition")  # type: ignore[arg-type]
            print(json.dumps(rep.to_json(rules, method)))
        else:
            sys.stdout.write(hand_text(rep))
        return 0
    strategy = args.strategy
    if strategy not in ("basic", "composition"):
        strategy = Chart.read(strategy)
    report = analyze(rules, strategy, wager=args.wager, infinite=args.infinite)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        sys.stdout.write(report_text(report))
    return 0


class _Shoe:
    """What :func:`method_text` reads of a game, without building one."""

    def __init__(self, rules: RuleSet, args: argparse.Namespace) -> None:
        self.rules = rules
        self.infinite = args.infinite
        self.wager = args.wager


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
