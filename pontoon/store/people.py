"""The commands for the people of the house, each made by a member of staff who
authenticates there (``--by NAME`` and that account's password; OWASP ASVS 4.0 V2.1, V3.3):

- ``pontoon staff add NAME --role ROLE [--by PITBOSS]``: a staff account. The first pit boss
  of a store is made by whoever holds the store (no ``--by``); once an enabled pit boss
  exists, only a pit boss adds staff.
- ``pontoon staff disable|enable NAME --by PITBOSS``; ``pontoon staff role NAME ROLE --by
  PITBOSS``; ``pontoon staff reset NAME --by PITBOSS`` (a new password): each recorded in the
  house's chained record under the pit boss's name, and each ends every session of ``NAME``.
- ``pontoon staff password NAME``: an account changes its own password (the old one first).
- ``pontoon cashier deposit|withdrawal NAME AMOUNT --reference REF --by CASHIER``: a
  movement of a player's built-in wallet, by a cashier who authenticates.

Passwords are never arguments (``ps`` would show them): the ``--by`` account's from
``--by-password-file``, a new one from ``--password-file`` (each file's first line), else
from standard input when it is not a terminal (the ``--by`` account's line first, then the
new one), else asked without echo (a new one twice)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pontoon.argtypes import whole
from pontoon.errors import InputError

from .cli import DEFAULT_URL, db_option
from .roles import STAFF, Movement, Role

if TYPE_CHECKING:
    from .accounts import Account, Accounts

STAFF_ROLES = sorted(str(r) for r in STAFF)


def add_commands(
    sub: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("staff", help="staff accounts: add, disable, enable, role, reset, password")
    verbs = p.add_subparsers(dest="verb", required=True)
    made = {
        "add": verbs.add_parser("add", help="make a staff account"),
        "disable": verbs.add_parser("disable", help="an account opens nothing (sessions end)"),
        "enable": verbs.add_parser("enable", help="a disabled account opens again"),
        "role": verbs.add_parser("role", help="a member of staff's new role (sessions end)"),
        "reset": verbs.add_parser("reset", help="a new password, set by a pit boss"),
        "password": verbs.add_parser("password", help="change one's own password"),
    }
    for verb, q in made.items():
        q.add_argument("name")
        if verb == "role":
            q.add_argument("role", choices=STAFF_ROLES)
        if verb == "add":
            q.add_argument("--role", required=True, choices=STAFF_ROLES)
        if verb in ("add", "reset", "password"):
            q.add_argument("--password-file", metavar="PATH", help="its first line: the new one")
            q.add_argument("--password-strength", choices=("default", "minimum"), default="default")
        if verb != "password":
            required = verb != "add"
            q.add_argument("--by", required=required, metavar="PITBOSS", help="who does it")
        q.add_argument("--by-password-file", metavar="PATH", help="its first line: --by's")
        db_option(q, DEFAULT_URL)
        common(q)

    p = sub.add_parser("cashier", help="a deposit into or withdrawal from a player's wallet")
    p.add_argument("kind", choices=[str(Movement.DEPOSIT), str(Movement.WITHDRAWAL)])
    p.add_argument("name", help="the player's account")
    p.add_argument("amount", type=whole, help="cents")
    p.add_argument("--reference", required=True, help="the receipt's: made once, however often")
    p.add_argument("--by", required=True, metavar="CASHIER", help="the cashier's account")
    p.add_argument("--by-password-file", metavar="PATH", help="its first line: the password")
    db_option(p, DEFAULT_URL)
    common(p)
    return {"staff": cmd_staff, "cashier": cmd_cashier}


def read_password(path: str | None, prompt: str = "password: ", twice: bool = True) -> str:
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.readline().rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the password from {path}: {exc}") from None
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass(prompt)
    if twice and getpass.getpass("again: ") != first:
        raise InputError("the two passwords differ")
    return first


def authenticate(people: Accounts, name: str, role: Role, path: str | None) -> Account:
    """The account ``name`` of ``role``, proven by its password (``path``, stdin or asked):
    :class:`InputError` otherwise, the same for a wrong password as for a wrong name."""
    password = read_password(path, f"{name}'s password: ", twice=False)
    found = people.check(name, password)
    if found is None or found.role is not role or found.disabled:
        raise InputError(f"not authenticated: {name!r} with that password is not a {role}")
    return found


def _pitbosses(people: Accounts) -> bool:
    from sqlalchemy import select

    from .schema import accounts

    a = accounts.c
    with people.store.read() as conn:
        found = conn.execute(
            select(a.name).where(a.role == str(Role.PITBOSS), a.disabled_at.is_(None)).limit(1)
        ).first()
    return found is not None


def cmd_staff(args: argparse.Namespace) -> int:
    from .accounts import AccountError, Accounts, hasher
    from .db import Store

    strength = getattr(args, "password_strength", "default")
    with Store(args.db, must_exist=args.verb != "add") as store:
        people = Accounts(store, hasher(strength))
        by = getattr(args, "by", None)
        if args.verb == "password":  # the account itself, with its old password
            me = people.check(args.name, read_password(args.by_password_file, twice=False))
            if me is None or me.disabled:
                raise InputError(f"not authenticated: {args.name!r} with that password")
            by = me.name
        elif by is not None:
            by = authenticate(people, by, Role.PITBOSS, args.by_password_file).name
        elif _pitbosses(people):
            raise InputError("a pit boss adds staff: give --by PITBOSS (and its password)")
        if args.verb == "add":
            account = people.create(args.name, read_password(args.password_file), Role(args.role))
            doc: dict[str, Any] = {"name": account.name, "role": str(account.role)}
            text = f"{account.name}: {account.role}"
        else:
            assert by is not None
            if people.get(args.name) is None:
                raise AccountError(f"no account {args.name!r}")
            if args.verb == "disable":
                people.disable(args.name, by)
            elif args.verb == "enable":
                people.enable(args.name, by)
            elif args.verb == "role":
                people.set_role(args.name, Role(args.role), by)
            else:  # reset, password
                people.set_password(args.name, read_password(args.password_file), by)
            doc = {"name": args.name, "done": args.verb, "by": by}
            text = f"{args.name}: {args.verb} (by {by}); every session of {args.name} ended"
    print(json.dumps(doc) if args.json else text)
    return 0


def cmd_cashier(args: argparse.Namespace) -> int:
    from .accounts import Accounts
    from .db import Store

    with Store(args.db, must_exist=True) as store:
        people = Accounts(store)
        cashier = authenticate(people, args.by, Role.CASHIER, args.by_password_file)
        kind = Movement(args.kind)
        after = people.cashier(args.name, kind, args.amount, args.reference, cashier.name)
    doc = {"account": args.name, "kind": str(kind), "balance": after}
    print(json.dumps(doc) if args.json else f"{args.name}: {kind} {args.amount}, balance {after}")
    return 0
