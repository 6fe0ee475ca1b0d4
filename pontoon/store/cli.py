"""The store's commands: ``replay``, ``rounds``, ``verify``, ``export``, ``rekey``, and ``--db``
for ``play`` (with ``--shoe-key-file``) and ``round``. Exit codes: 0 success, 2 bad input, 3
``verify`` found the store broken, 1 anything else."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pontoon.argtypes import table as argtable
from pontoon.argtypes import whole

if TYPE_CHECKING:
    from pontoon.round import Round
    from pontoon.store.secret import ShoeKeys

DEFAULT_URL = "sqlite:///pontoon.db"
BROKEN = 3


def db_option(p: argparse.ArgumentParser, default: str | None = None, table: str = "") -> None:
    """``--db URL`` (and ``--table NAME`` where recording happens)."""
    p.add_argument(
        "--db",
        default=default,
        metavar="URL",
        help="store URL: sqlite:///FILE or postgresql://user:pass@host/db"
        + (f" (default {default})" if default else " (record every event there)"),
    )
    if table:
        p.add_argument(
            "--table",
            type=argtable,
            default=table,
            help=f"table name in the store (default {table})",
        )


def shoe_key_option(p: argparse.ArgumentParser) -> None:
    """``--shoe-key-file PATH``: the keys that seal the stored shoe."""
    p.add_argument(
        "--shoe-key-file",
        metavar="PATH",
        help="the keys that seal the stored shoe, one a line, the first sealing (mode 0600; "
        "default $PONTOON_SHOE_KEY, else ~/.config/pontoon/shoe.key, made if missing)",
    )


def shoe_keys(args: argparse.Namespace) -> ShoeKeys | None:
    """The keys of ``--shoe-key-file`` (checked now), else None: the store loads
    ``$PONTOON_SHOE_KEY`` or the default file when it first needs them."""
    path = getattr(args, "shoe_key_file", None)
    if path is None:
        return None
    from pontoon.store.secret import load_keys

    return load_keys(path)


def add_commands(
    sub: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the store's subcommands to ``sub``; returns their handlers by name."""
    p = sub.add_parser("replay", help="reconstruct a recorded round card by card (8.6, 16.5)")
    db_option(p, DEFAULT_URL)
    p.add_argument("--round", type=whole, required=True, metavar="ID", help="the round's id")
    common(p)

    p = sub.add_parser("rounds", help="list recorded rounds")
    db_option(p, DEFAULT_URL)
    p.add_argument("--table", help="only this table")
    p.add_argument("--player", help="only rounds this player played")
    p.add_argument("--since", metavar="DATE", help="started on or after (YYYY-MM-DD[THH:MM])")
    p.add_argument("--until", metavar="DATE", help="started on or before (YYYY-MM-DD[THH:MM])")
    p.add_argument(
        "--outcome", help="win, lose or push (for --player, else any player), over, void, open"
    )
    p.add_argument("--limit", type=whole, default=50, help="at most this many (default 50; 0 all)")
    common(p)

    p = sub.add_parser("verify", help="check the store's hash chains and ledger (exit 3: broken)")
    db_option(p, DEFAULT_URL)
    common(p)

    p = sub.add_parser("export", help="rounds, events and ledger as JSON Lines or Parquet")
    db_option(p, DEFAULT_URL)
    p.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the files")
    p.add_argument("--table", help="only this table")
    common(p)

    p = sub.add_parser("rekey", help="seal every table's stored shoe again under the first key")
    db_option(p, DEFAULT_URL)
    shoe_key_option(p)
    common(p)
    return {
        "replay": cmd_replay,
        "rounds": cmd_rounds,
        "verify": cmd_verify,
        "export": cmd_export,
        "rekey": cmd_rekey,
    }


def _open(args: argparse.Namespace) -> Any:
    from pontoon.store.db import Store

    return Store(args.db, must_exist=True)


def cmd_replay(args: argparse.Namespace) -> int:
    from pontoon.store.show import replay_document, replay_text

    with _open(args) as store:
        doc = replay_document(store, args.round)
    print(json.dumps(doc, indent=2) if args.json else replay_text(doc))
    return 0


def cmd_rounds(args: argparse.Namespace) -> int:
    from pontoon.store.show import list_rounds, rounds_text

    with _open(args) as store:
        items = list_rounds(
            store,
            table=args.table,
            player=args.player,
            since=args.since,
            until=args.until,
            outcome=args.outcome,
            limit=args.limit or None,
        )
    print(json.dumps({"rounds": items}, indent=2) if args.json else rounds_text(items))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from pontoon.store.verify import verify

    with _open(args) as store:
        report = verify(store)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    elif report.ok:
        print(
            f"intact: {report.tables} table(s), {report.events} events, {report.rounds} rounds, "
            f"{report.entries} ledger entries"
        )
        for table, (seq, h) in sorted(report.heads.items()):
            print(f"  head of {table!r}: event {seq}, hash {h}")
    else:
        print(f"BROKEN: {report.problems[0]}")
        for more in report.problems[1:6]:
            print(f"  then: {more}")
        if len(report.problems) > 6:
            print(f"  and {len(report.problems) - 6} more")
    return 0 if report.ok else BROKEN


def cmd_export(args: argparse.Namespace) -> int:
    from pontoon.store.export import export

    with _open(args) as store:
        counts = export(store, args.format, args.output, args.table)
    if args.json:
        print(json.dumps({"format": args.format, "output": args.output, "rows": counts}))
    else:
        for name, n in counts.items():
            print(f"{Path(args.output) / name}.{args.format}: {n} rows")
    return 0


def cmd_rekey(args: argparse.Namespace) -> int:
    from pontoon.store.db import Store
    from pontoon.store.secret import load_keys

    keys = load_keys(args.shoe_key_file)
    with Store(args.db, keys, must_exist=True) as store:
        n = store.rekey()
    if args.json:
        print(json.dumps({"rekeyed": n}))
    else:
        print(f"{n} shoe state(s) sealed under the first key: the other keys can go")
    return 0


def record_round(args: argparse.Namespace, rnd: Round) -> dict[str, Any]:
    """``pontoon round FILE --db``: the scripted round, with its players' buy-ins and
    cash-outs, in one transaction (before anything is printed). An unfinished round left on
    the table by a killed process is voided first (16.5)."""
    from pontoon.store.db import Store
    from pontoon.store.recorder import TableLog

    with Store(args.db) as store:
        log = TableLog(store, args.table, top_up=True)
        voided = []
        while (open_round := log.open_round()) is not None:
            log.void(open_round, "interrupted; cannot be reconstructed")
            for player in sorted(open_round.players):
                log.withdraw(player)  # a scripted round's players leave with their wagers
            voided.append(open_round.id)
        roundlog = log.start(rnd)
        roundlog.commit(cash_out=True)
        out: dict[str, Any] = {"table": args.table, "round": roundlog.id}
        if voided:
            out["voided"] = voided
        return out
