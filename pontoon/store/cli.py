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


def key_options(p: argparse.ArgumentParser) -> None:
    """``--shoe-key-file``, ``--record-key-file`` and ``--anchors``: a writer's secrets, and
    where its signed heads also go."""
    p.add_argument(
        "--shoe-key-file",
        metavar="PATH",
        help="the keys that seal the stored shoe, one a line, the first sealing (mode 0600; "
        "default $PONTOON_SHOE_KEY, else ~/.config/pontoon/shoe.key, made if missing)",
    )
    p.add_argument(
        "--record-key-file",
        metavar="PATH",
        help="the Ed25519 keys that sign the record, one a line, the first signing (mode 0600; "
        "default $PONTOON_RECORD_KEY, else ~/.config/pontoon/record.key, made if missing)",
    )
    p.add_argument(
        "--anchors",
        metavar="PATH",
        help="where the signed heads also go: a file of JSON lines, 'syslog', an http(s) URL "
        "that takes them by POST, or 'off' "
        "(default $PONTOON_ANCHORS, else ~/.local/state/pontoon/anchors.jsonl)",
    )


def store_keys(args: argparse.Namespace) -> dict[str, Any]:
    """The keys given (checked now) and the anchors' place, as :class:`Store` takes them;
    keys not given are loaded by the store from the environment or the default files when
    it first needs them."""
    from pontoon.store.secret import load_keys
    from pontoon.store.signing import load_record_keys

    shoe = getattr(args, "shoe_key_file", None)
    record = getattr(args, "record_key_file", None)
    return {
        "shoe_keys": None if shoe is None else load_keys(shoe),
        "record_keys": None if record is None else load_record_keys(record),
        "anchors": getattr(args, "anchors", None),
    }


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

    p = sub.add_parser(
        "verify", help="check the store's chains, signatures and ledger (exit 3: broken)"
    )
    db_option(p, DEFAULT_URL)
    p.add_argument(
        "--public-key",
        metavar="PATH",
        help="the record's public keys, one a line (default: those of $PONTOON_RECORD_KEY or "
        "~/.config/pontoon/record.key; pontoon public-key prints them)",
    )
    p.add_argument(
        "--anchors",
        metavar="PATH",
        help="the signed heads kept outside the store (JSON lines): fail when the store "
        "lacks what they anchor (restored to an earlier copy, or cut short)",
    )
    common(p)

    p = sub.add_parser("public-key", help="print the record's public keys, for auditors")
    p.add_argument(
        "--record-key-file",
        metavar="PATH",
        help="the record's private keys (default $PONTOON_RECORD_KEY, else "
        "~/.config/pontoon/record.key)",
    )
    common(p)

    p = sub.add_parser("export", help="rounds, events and ledger as JSON Lines or Parquet")
    db_option(p, DEFAULT_URL)
    p.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the files")
    p.add_argument("--table", help="only this table")
    common(p)

    p = sub.add_parser(
        "rekey", help="seal every shoe and sign every head again under the first keys"
    )
    db_option(p, DEFAULT_URL)
    key_options(p)
    p.add_argument(
        "--discard-shoe",
        action="append",
        default=[],
        metavar="TABLE",
        help="the last resort for a lost shoe key: this table's stored shoe is deleted (it "
        "starts a new one, its open round voided under 16.5); repeatable",
    )
    p.add_argument(
        "--public-key",
        metavar="PATH",
        help="more public keys to check the current heads with (a lost record key's)",
    )
    common(p)
    return {
        "replay": cmd_replay,
        "rounds": cmd_rounds,
        "verify": cmd_verify,
        "export": cmd_export,
        "rekey": cmd_rekey,
        "public-key": cmd_public_key,
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
    from pontoon.store.signing import load_public_keys
    from pontoon.store.verify import verify

    with _open(args) as store:  # (the store first: a file that is none is said before a key)
        public = load_public_keys(args.public_key)
        report = verify(store, public, args.anchors)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    elif report.ok:
        print(
            f"intact: {report.tables} table(s), {report.events} events, {report.rounds} rounds, "
            f"{report.entries} ledger entries"
        )
        for table, (seq, h) in sorted(report.heads.items()):
            print(f"  head of {table!r}: event {seq}, hash {h}")
        for note in report.notes:
            print(f"  note: {note}")
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
    from pontoon.store.signing import load_public_keys
    from pontoon.store.trust import rekey

    keys = store_keys(args)
    also = None if args.public_key is None else load_public_keys(args.public_key)
    with Store(args.db, **keys, must_exist=True) as store:
        shoes, heads = rekey(store, frozenset(args.discard_shoe), also)
    if args.json:
        print(json.dumps({"rekeyed": shoes, "signed": heads}))
    else:
        print(
            f"{shoes} shoe state(s) sealed under the first shoe key and {heads} table head(s) "
            "signed under the first record key: the other private keys can go (keep every "
            "public key: the record's older signatures are checked with them)"
        )
    return 0


def cmd_public_key(args: argparse.Namespace) -> int:
    from pontoon.store.signing import load_record_keys

    public = load_record_keys(args.record_key_file).public()
    if args.json:
        print(json.dumps({"public_keys": public.lines()}))
    else:
        print("\n".join(public.lines()))
    return 0


def record_round(args: argparse.Namespace, rnd: Round) -> dict[str, Any]:
    """``pontoon round FILE --db``: the scripted round, with its players' buy-ins and
    cash-outs, in one transaction (before anything is printed). An unfinished round left on
    the table by a killed process is voided first (16.5)."""
    from pontoon.store.db import Store
    from pontoon.store.recorder import TableLog

    with Store(args.db, **store_keys(args)) as store:
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
