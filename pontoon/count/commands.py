"""``pontoon count eor|judge`` (wired into :mod:`pontoon.cli`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from pontoon.errors import InputError
from pontoon.rules import RuleSet


def add_options(
    p: argparse.ArgumentParser, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """The ``count`` command and its subcommands."""
    sub = p.add_subparsers(dest="count_command", required=True, parser_class=type(p))
    for name, text in (
        ("eor", "effects of removal: the EV's change when one card of a rank leaves the shoe"),
        ("judge", "a count's betting correlation, playing efficiency, insurance correlation"),
    ):
        q = sub.add_parser(name, help=text)
        common(q)
        q.add_argument(
            "--strategy",
            choices=("basic", "composition"),
            default="basic",
            help="basic: the full shoe's chart fixed (default); composition: re-optimised",
        )
        q.add_argument("--wager", type=int, default=500, help="wager in cents (Super Bonus: 11.2)")
        q.add_argument("--workers", type=int, help="local processes (default: all cores)")
        q.add_argument("--scheduler", help="address of a Dask distributed scheduler")
        q.add_argument("--no-progress", action="store_true", help="no progress bar")
        if name == "judge":
            q.add_argument("--count", default="hi-lo", help="hi-lo or a TOML file (tags)")


def count_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.count.eor import KEYS, effects_of_removal

    workers = args.workers if args.workers is not None else os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    if args.wager < 1:
        raise InputError(f"--wager must be a positive number of cents, not {args.wager}")
    tags = _tags(args.count) if args.count_command == "judge" else None
    effects = effects_of_removal(
        rules,
        args.strategy,
        wager=args.wager,
        workers=workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    doc: dict[str, Any] = effects.to_json()
    if tags is not None:
        from pontoon.count.judge import judge

        doc = {"count": args.count, "tags": tags} | judge(effects, tags) | {"eor": effects.eor}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"{rules.name}: {doc.get('played') or effects.to_json()['played']}")
    print(f"full shoe EV {effects.ev * 100:+.4f} %")
    print("effect of removing one card (percentage points):")
    print("  " + "  ".join(f"{k:>7}" for k in KEYS))
    print("  " + "  ".join(f"{effects.eor[k] * 100:+7.4f}" for k in KEYS))
    if tags is None:
        print(f"sum over the shoe's cards {effects.sum * 100:+.2e} (0 for a fixed strategy)")
        return 0
    print(f"count {args.count}: " + " ".join(f"{k}={tags[k]:+g}" for k in KEYS))
    for key in ("betting_correlation", "playing_efficiency", "insurance_correlation"):
        print(f"  {key.replace('_', ' '):<22} {doc[key]:.3f}")
    for level, best in doc["best_counts"].items():
        shown = " ".join(f"{k}={v:+d}" for k, v in best["tags"].items())
        rho = best["betting_correlation"]
        print(f"  best level-{level} count: {shown} (betting correlation {rho:.3f})")
    return 0


def _tags(source: str) -> dict[str, float]:
    """A count's tags by key (A, 2-9, T) from hi-lo or a TOML file of ``tags`` (a ``ramp`` is
    not needed here): :mod:`pontoon.sim.counting` reads and checks them."""
    import tomllib
    from pathlib import Path

    from pontoon.count.eor import KEYS
    from pontoon.sim.counting import Counting

    if source == "hi-lo":
        counting = Counting.builtin(source)
    else:
        path = Path(source)
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{source}: not a TOML counting file ({exc})") from None
        counting = Counting.from_dict({"ramp": {"0": 1}} | data, path.stem)
    by_rank = [int(counting.tags[r]) for r in range(13)]  # the first suit's codes: ranks
    if len(set(by_rank[9:])) > 1:
        raise InputError(f"{source}: the ten-value ranks have different tags; judge needs one")
    return {key: float(by_rank[k]) for k, key in enumerate(KEYS)}
