"""``pontoon certify``: shuffle the shoe many times as a table does and test the shuffles.

Exit status: 0 when every test passes at 99 % (and the cutting card check holds), 3 when the
certification fails (as ``pontoon verify`` for a broken store), 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from pontoon.argtypes import outfile, seed, whole
from pontoon.errors import InputError
from pontoon.rules import load_rules, parse_set_options


def add_commands(
    sub: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser(
        "certify", help="shuffle certification: statistical tests of the shoe (exit 3: failed)"
    )
    p.add_argument("--shuffles", type=whole, default=100_000, help="shuffles to test (100 or more)")
    p.add_argument(
        "--seed", type=seed, help="a reproducible numpy shuffle (default: the tables' secure one)"
    )
    p.add_argument("--workers", type=whole, help="local processes (default: all cores)")
    p.add_argument("--format", choices=("text", "html"), default="text", help="--output's form")
    p.add_argument(
        "--output", type=outfile, metavar="PATH", help="write the report here (html needs it)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    common(p)
    return {"certify": cmd_certify}


def cmd_certify(args: argparse.Namespace) -> int:
    from pontoon.output import write_text

    try:
        from .report import EXIT_FAILED, document, html_report, text
        from .run import certify
        from .tests import battery
    except ImportError as exc:  # scipy, threadpoolctl: the analysis extra
        raise InputError(f"certify needs {exc.name}: pip install 'pontoon[analysis]'") from None

    rules = load_rules(args.rules, parse_set_options(args.set))
    if args.format == "html" and not args.output:
        raise InputError("--format html needs --output PATH")
    show = sys.stderr.isatty() and not args.no_progress
    run = certify(rules, args.shuffles, seed=args.seed, workers=args.workers, progress=show)
    doc = document(run, battery(run.tally, rules))
    if args.output:
        report = html_report(doc, run.tally) if args.format == "html" else text(doc)
        write_text(args.output, report)
    if args.json:
        print(json.dumps(doc))
    else:
        sys.stdout.write(text(doc))
    return 0 if doc["passed"] else EXIT_FAILED
