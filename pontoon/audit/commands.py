"""``pontoon recall`` (a player's last rounds, or any round for a supervisor) and ``pontoon
report`` (each table's win against theory). Exit codes: 0 success, 2 bad input; ``report``
exits 0 whether or not a table is flagged (the flags are its findings, not an error)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from pontoon.argtypes import outfile, whole
from pontoon.errors import InputError
from pontoon.money import dollars, signed
from pontoon.store.cli import DEFAULT_URL, db_option


def add_commands(
    sub: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("recall", help="game recall: a player's last rounds, step by step")
    db_option(p, DEFAULT_URL)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--player", help="the player whose last rounds are recalled")
    who.add_argument("--round", type=whole, metavar="ID", help="any one round (a supervisor's)")
    p.add_argument("--last", type=whole, default=10, help="how many rounds (default 10)")
    common(p)

    p = sub.add_parser(
        "report",
        help="each table's win against theory, by day or shift; the open disputes with an "
        "operator's wallet",
    )
    db_option(p, DEFAULT_URL)
    p.add_argument("--table", help="only this table")
    p.add_argument("--from", dest="since", metavar="DATE", help="rounds started on or after")
    p.add_argument("--to", dest="until", metavar="DATE", help="rounds started on or before")
    p.add_argument("--period", choices=("day", "shift"), default="day", help="default day")
    p.add_argument(
        "--plot", type=outfile, metavar="PNG", help="write the win against theory as a PNG"
    )
    common(p)
    return {"recall": cmd_recall, "report": cmd_report}


def _open(args: argparse.Namespace) -> Any:
    from pontoon.store.db import Store

    return Store(args.db, must_exist=True)


def cmd_recall(args: argparse.Namespace) -> int:
    from pontoon.audit.recall import MARK, recall, recall_text, recalled

    with _open(args) as store:
        if args.round is not None:
            if not 0 < args.round < 2**63:
                raise InputError(f"no round {args.round} in the store")
            doc = {"recall": True, "mark": MARK, "rounds": [recalled(store, args.round)]}
        else:
            doc = recall(store, args.player, args.last)
    print(json.dumps(doc, indent=2) if args.json else recall_text(doc))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pontoon.audit.report import table_report

    with _open(args) as store:
        doc = table_report(
            store,
            table=args.table,
            since=args.since,
            until=args.until,
            period=args.period,
            series=bool(args.plot),
        )
    if args.plot:
        from pontoon.audit.plots import write_png

        write_png(doc, args.plot)
        for t in doc["tables"]:
            t.pop("series")
    print(json.dumps(doc, indent=2) if args.json else report_text(doc))
    return 0


_HEAD = (
    f"{'':<22}{'rounds':>7} {'wagered':>13} {'win':>12} {'hold':>7} {'theory':>12} "
    f"{'95 % band':>27} {'z':>7}"
)


def _line(label: str, f: dict[str, Any]) -> str:
    hold = "" if f["hold"] is None else f"{f['hold'] * 100:.2f}%"
    lo, hi = f["band95"]
    band = f"{signed(lo)} to {signed(hi)}" if f["rounds"] else ""
    flag = "  FLAGGED" if f["flagged"] else ""
    return (
        f"{label[:22]:<22}{f['rounds']:>7} {dollars(f['wagered']):>13} {signed(f['win']):>12} "
        f"{hold:>7} {signed(f['theoretical_win']):>12} {band:>27} {f['z']:>7}{flag}"
    )


def report_text(doc: dict[str, Any]) -> str:
    """The report as a table: each table, its periods, its players; then the open disputes
    with an operator's wallet, if any."""
    from pontoon.audit.disputes import disputes_text

    disputes = disputes_text(doc.get("disputes", []))
    if not doc["tables"]:
        return "\n".join(["No finished rounds.", *(["", *disputes] if disputes else [])])
    lines = [
        "Table report: the house's win against theory (the exact edge of the optimal chart "
        "times the initial wagers);",
        "the band: 95 % of wins fall in it (a normal approximation). Money in dollars.",
    ]
    for t in doc["theory"]:
        lines.append(
            f"  {t['rules']}: edge {t['edge'] * 100:.4f} %, variance {t['variance']:.4f}, "
            f"covariance {t['covariance']:.4f} ± {t['covariance_se']:.4f} per box (simulated); "
            f"variance: {t['precision']}"
        )
    for t in doc["tables"]:
        lines += ["", f"Table {t['table']} ({', '.join(t['rules'])})", _HEAD]
        lines.append(_line("all", t))
        lines += [_line(p["period"], p) for p in t["periods"]]
        lines.append("players:")
        lines += [_line(p["player"], p) for p in t["players"]]
        if t["void_rounds"]:
            lines.append(f"void rounds (16.5, no money moved): {t['void_rounds']}")
    if disputes:
        lines += ["", *disputes]
    return "\n".join(lines)


__all__ = ["add_commands", "report_text"]
