"""The ``pontoon`` command. Bad input: exit 2 and one readable line on stderr."""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
from collections.abc import Sequence
from typing import Any

from pontoon.argtypes import seed, whole
from pontoon.errors import InputError, PontoonError
from pontoon.rules import PRESETS, RuleSet, knob_info, load_rules, parse_set_options
from pontoon.store import cli as store_cli


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's usage errors: exit 2, one line
        raise InputError(f"{self.prog.removeprefix('pontoon').strip() or 'usage'}: {message}")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="nz-pontoon", help="preset name or TOML rule file")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="change a knob")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pontoon", description="Pontoon as the New Zealand Gazette rules it.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("rules", help="list the presets or print one rule set")
    p.add_argument("name", nargs="?", help="preset name or rule file")
    _common(p)

    p = sub.add_parser("round", help="play one scripted round (scenario file)")
    p.add_argument("file")
    store_cli.db_option(p, table="scenario")
    store_cli.key_options(p)
    _common(p)

    p = sub.add_parser("play", help="a table in the terminal")
    _common(p)
    p.add_argument("--boxes", type=whole, default=1, help="boxes you play (default 1)")
    p.add_argument("--wager", type=whole, help="default wager per box in cents (table minimum)")
    p.add_argument("--bankroll", type=whole, default=100_000, help="your money in cents")
    p.add_argument("--seed", type=seed, help="seed the shuffle (default: a secure shuffle)")
    p.add_argument("--rounds", type=whole, help="stop after this many rounds")
    store_cli.db_option(p, table="terminal")
    store_cli.key_options(p)
    COMMANDS.update(store_cli.add_commands(sub, _common))
    from pontoon.store.people import add_commands as people_commands

    COMMANDS.update(people_commands(sub, _common))
    p = sub.add_parser("player", help="a player's account, opened at the cage")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    q = verbs.add_parser("add", help="open a player's account (a cashier or pit boss does it)")
    q.add_argument("name")
    q.add_argument("--by", required=True, metavar="CASHIER", help="the cashier (or pit boss)")
    q.add_argument("--by-password-file", metavar="PATH", help="its first line: --by's")
    q.add_argument("--password-file", metavar="PATH", help="its first line: the player's")
    q.add_argument("--password-strength", choices=("default", "minimum"), default="default")
    store_cli.db_option(q, store_cli.DEFAULT_URL)
    _common(q)
    from pontoon.audit.commands import add_commands as audit_commands

    COMMANDS.update(audit_commands(sub, _common))
    from pontoon.certify.commands import add_commands as certify_commands

    COMMANDS.update(certify_commands(sub, _common))
    from pontoon.analysis.commands import add_options as analysis_options

    p = sub.add_parser("analyze", help="exact expected return of a strategy, or of one hand")
    _common(p)
    analysis_options(p, command="analyze")
    p = sub.add_parser("strategy", help="the optimal basic strategy chart (text, csv, png)")
    _common(p)
    analysis_options(p, command="strategy")
    p = sub.add_parser("par", help="the PAR sheet: the game's mathematics (html, pdf, json)")
    _common(p)
    analysis_options(p, command="par")
    from pontoon.sim.command import add_options as sim_options

    p = sub.add_parser("simulate", help="Monte Carlo rounds on the compiled kernel")
    _common(p)
    sim_options(p)
    from pontoon.count.commands import add_options as count_options

    p = sub.add_parser("count", help="advantage play: effects of removal, a count judged")
    count_options(p, _common)
    from pontoon.train.commands import add_options as train_options

    p = sub.add_parser("train", help="drills graded against the exact analysis")
    train_options(p, _common)
    from pontoon.server.options import add_options as serve_options

    p = sub.add_parser("serve", help="the multi-player table server and its web page")
    _common(p)
    serve_options(p)
    return parser


def _rules(args: argparse.Namespace, source: str | None = None) -> RuleSet:
    return load_rules(source or args.rules, parse_set_options(args.set))


def cmd_rules(args: argparse.Namespace) -> int:
    if args.name is None and not args.set and args.rules == "nz-pontoon" and not args.json:
        print("Presets (pontoon rules NAME prints one):")
        for name in PRESETS:
            print(f"  {name}{'  (default)' if name == 'nz-pontoon' else ''}")
        return 0
    rules = _rules(args, args.name)
    values = rules.to_dict()
    if args.json:
        print(json.dumps(values))
        return 0
    print(f"Rule set {rules.name}")
    info = knob_info()
    width = max(len(knob) for knob, _, _ in info)
    shown = {k: json.dumps(v) if isinstance(v, bool) else str(v) for k, v in values.items()}
    wide = max(10, *(len(shown[knob]) for knob, _, _ in info))
    for knob, rule, doc in info:
        print(f"  {knob:<{width}} {shown[knob]:<{wide}} rule {rule:<16} {doc}")
    return 0


def cmd_round(args: argparse.Namespace) -> int:
    from pontoon.scenario import load_scenario, play_scenario, result_document

    rnd = play_scenario(load_scenario(args.file), args.rules, parse_set_options(args.set))
    doc = result_document(rnd)
    if args.db is not None:  # recorded in one transaction before anything is printed
        doc["recorded"] = store_cli.record_round(args, rnd)
    print(json.dumps(doc, indent=2))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from pontoon.terminal import play

    result: int = play(_rules(args), args)
    return result


def cmd_train(args: argparse.Namespace) -> int:
    from pontoon.train.commands import train_command

    return train_command(_rules(args), args)


def cmd_analyze(args: argparse.Namespace) -> int:
    from pontoon.analysis.commands import analyze_command

    return analyze_command(_rules(args), args)


def cmd_strategy(args: argparse.Namespace) -> int:
    from pontoon.analysis.commands import strategy_command

    return strategy_command(_rules(args), args)


def cmd_par(args: argparse.Namespace) -> int:
    from pontoon.analysis.commands import par_command

    return par_command(_rules(args), args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from pontoon.sim.command import simulate_command

    return simulate_command(_rules(args), args)


def cmd_count(args: argparse.Namespace) -> int:
    from pontoon.count.commands import count_command

    return count_command(_rules(args), args)


def cmd_player(args: argparse.Namespace) -> int:
    """``pontoon player add NAME --by CASHIER``: a player's account (a wallet at 0, a
    password), opened by a cashier or pit boss who authenticates, as a player's own
    registration at the page opens one. The passwords as ``pontoon staff`` reads them: from
    the files, else standard input's lines (``--by``'s first), else asked without echo."""
    from pontoon.store.accounts import Accounts, hasher
    from pontoon.store.db import Store
    from pontoon.store.people import read_password
    from pontoon.store.roles import Role

    with Store(args.db, must_exist=True) as store:
        people = Accounts(store, hasher(args.password_strength))
        proof = read_password(args.by_password_file, f"{args.by}'s password: ", twice=False)
        by = people.check(args.by, proof)
        if by is None or by.disabled or by.role not in (Role.CASHIER, Role.PITBOSS):
            raise InputError(
                f"not authenticated: {args.by!r} with that password is not a cashier or pit boss"
            )
        password = read_password(args.password_file, f"{args.name}'s password: ")
        account = people.create(args.name, password, Role.PLAYER)
    doc = {"name": account.name, "role": str(account.role), "balance": 0, "by": by.name}
    print(json.dumps(doc) if args.json else f"{account.name}: player, balance 0 (by {by.name})")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from pontoon.server.serve import serve

    return serve(args)


COMMANDS = {
    "rules": cmd_rules,
    "round": cmd_round,
    "play": cmd_play,
    "analyze": cmd_analyze,
    "strategy": cmd_strategy,
    "par": cmd_par,
    "simulate": cmd_simulate,
    "count": cmd_count,
    "train": cmd_train,
    "player": cmd_player,
    "serve": cmd_serve,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status. A reader that goes away before the output
    ends (``pontoon rules nz-pontoon | head -1``) ends any command quietly, with status 1."""
    try:
        try:
            status = _run(argv)
        except SystemExit:  # argparse's --help; rich's own broken-pipe exit (pontoon play)
            _flush_stdout()
            raise
        # Flushed here, inside the try: what is still buffered would otherwise be written by
        # the interpreter's last flush, whose failure nothing here could catch.
        _flush_stdout()
        return status
    except BrokenPipeError:
        if not _stdout_gone():
            raise  # some other pipe (a worker's, a socket's): a real error, shown as such
        # https://docs.python.org/3/library/signal.html#note-on-sigpipe: point stdout at
        # devnull so that the interpreter's final flush of the unwritten rest cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        # Status 1, as in those docs. rich, which writes pontoon play's output, ends a broken
        # pipe itself with the same dup2 and SystemExit(1) (it passes through the flush above),
        # so every command ends alike; a shell's pipefail still sees a failure, and 1 is this
        # command's "anything else". Not 141: that is the shell's 128 + SIGPIPE for a process
        # the signal killed, and this one was not killed — Python ignores SIGPIPE, and the
        # docs advise against restoring it (death mid-write would skip every `finally`).
        return 1


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"pontoon: {exc}", file=sys.stderr)
        return 2
    except PontoonError as exc:
        print(f"pontoon: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _stdout_gone() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (poll says POLLERR or POLLHUP
    for its write end): only then is a BrokenPipeError the reader's leaving."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a descriptor: no pipe of its own
        return False
    if not hasattr(select, "poll"):  # Windows: take it as stdout's, as the docs do
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


if __name__ == "__main__":
    sys.exit(main())
