"""The commands for the people of the house: ``pontoon staff add NAME --role ROLE`` (a staff
account) and ``pontoon cashier deposit|withdraw NAME AMOUNT --reference REF --by CASHIER``
(a movement of a player's built-in wallet). The password is read from ``--password-file``
(its first line), else from standard input when it is not a terminal, else asked twice
without echo; it is never an argument (``ps`` would show it)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable
from typing import Any

from pontoon.argtypes import whole
from pontoon.errors import InputError

from .cli import DEFAULT_URL, db_option


def add_commands(
    sub: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    from .roles import STAFF, Movement

    p = sub.add_parser("staff", help="staff accounts: dealer, supervisor, pit boss, cashier")
    verbs = p.add_subparsers(dest="verb", required=True)
    q = verbs.add_parser("add", help="make a staff account (its password from a file or stdin)")
    q.add_argument("name")
    q.add_argument("--role", required=True, choices=sorted(str(r) for r in STAFF))
    q.add_argument("--password-file", metavar="PATH", help="its first line is the password")
    q.add_argument("--password-strength", choices=("default", "minimum"), default="default")
    db_option(q, DEFAULT_URL)
    common(q)

    p = sub.add_parser("cashier", help="a deposit into or withdrawal from a player's wallet")
    p.add_argument("kind", choices=[str(Movement.DEPOSIT), str(Movement.WITHDRAWAL)])
    p.add_argument("name", help="the player's account")
    p.add_argument("amount", type=whole, help="cents")
    p.add_argument("--reference", required=True, help="the receipt's: made once, however often")
    p.add_argument("--by", required=True, metavar="CASHIER", help="the cashier's account")
    db_option(p, DEFAULT_URL)
    common(p)
    return {"staff": cmd_staff, "cashier": cmd_cashier}


def read_password(path: str | None) -> str:
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.readline().rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the password from {path}: {exc}") from None
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise InputError("the two passwords differ")
    return first


def cmd_staff(args: argparse.Namespace) -> int:
    from .accounts import Accounts, Role, hasher
    from .db import Store

    password = read_password(args.password_file)
    with Store(args.db) as store:
        account = Accounts(store, hasher(args.password_strength)).create(
            args.name, password, Role(args.role)
        )
    doc = {"name": account.name, "role": str(account.role)}
    print(json.dumps(doc) if args.json else f"{account.name}: {account.role}")
    return 0


def cmd_cashier(args: argparse.Namespace) -> int:
    from .accounts import AccountError, Accounts, Movement, Role
    from .db import Store

    with Store(args.db, must_exist=True) as store:
        people = Accounts(store)
        cashier = people.get(args.by)
        if cashier is None or cashier.role is not Role.CASHIER:
            raise AccountError(f"{args.by!r} is not a cashier's account")
        kind = Movement(args.kind)
        after = people.cashier(args.name, kind, args.amount, args.reference, args.by)
    doc = {"account": args.name, "kind": str(kind), "balance": after}
    print(json.dumps(doc) if args.json else f"{args.name}: {kind} {args.amount}, balance {after}")
    return 0
