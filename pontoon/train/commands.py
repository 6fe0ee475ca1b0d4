"""``pontoon train strategy``: the command's options and its conversation with the learner.

Answers are read one per line: typed at a terminal, or piped from a script (then each answer
is echoed after its prompt, so the transcript reads like a session). A key (``h``, ``s``,
``d``, ``p``, ``r``, ``x``) or the play's word; ``q`` or the end of the input ends the drill
with its summary. ``--json`` prints one document at the end instead of the conversation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from pontoon.argtypes import outfile, seed, whole
from pontoon.errors import InputError
from pontoon.rules import RuleSet
from pontoon.store.cli import DEFAULT_URL
from pontoon.train import KEYS, MODES

if TYPE_CHECKING:
    from pontoon.store.db import Store
    from pontoon.train.strategy import Question

QUIT = ("q", "quit", "exit")


def add_options(
    p: argparse.ArgumentParser, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    sub = p.add_subparsers(dest="drill", required=True, parser_class=type(p))
    s = sub.add_parser("strategy", help="hands from a shoe, each decision graded exactly")
    common(s)
    s.add_argument(
        "--decisions",
        "--hands",
        dest="hands",
        type=whole,
        default=20,
        help="decisions to ask, not hands: a hand may ask several (default 20)",
    )
    s.add_argument("--seed", type=seed, help="seed the shoe (default: a fresh shuffle)")
    s.add_argument("--mode", default="all", help=f"which decisions: {', '.join(MODES)}")
    s.add_argument("--wager", type=whole, default=500, help="wager in cents (11.2's bands)")
    records(s)
    c = sub.add_parser("count", help="keep the running and true count of real rounds' cards")
    common(c)
    c.add_argument("--count", default="hi-lo", help="hi-lo or a TOML counting file (tags)")
    c.add_argument("--pace", default="1", help="cards shown at once: 1, 2 or round")
    c.add_argument("--hands", type=whole, default=20, help="running counts to give (default 20)")
    c.add_argument("--true-every", type=whole, default=3, help="the true count every K (default 3)")
    c.add_argument("--seed", type=seed, help="seed the shoe (default: a fresh shuffle)")
    records(c)
    r = sub.add_parser("dealer", help="name each wager's settlement and the procedure (16)")
    common(r)
    r.add_argument("--scenarios", help="scenario files (a folder or one file) to drill on")
    r.add_argument("--hands", type=whole, default=20, help="questions to answer (default 20)")
    r.add_argument("--seed", type=seed, help="seed the shoe of dealt rounds")
    records(r)
    g = sub.add_parser("progress", help="a learner's sessions: accuracy and EV lost (PNG)")
    common(g)
    records(g)
    g.add_argument(
        "--drill", dest="which", default="strategy", help="strategy (default), count or dealer"
    )
    g.add_argument("--output", type=outfile, help="write the plot here (PNG)")


def records(p: argparse.ArgumentParser) -> None:
    p.add_argument("--learner", help="keep the decisions under this name (the round store)")
    p.add_argument("--db", metavar="URL", help=f"store URL (default {DEFAULT_URL} with --learner)")


def _store(args: argparse.Namespace, must_exist: bool = False) -> Store:
    """The learner's store (``must_exist``: reading it, none is made)."""
    from pontoon.store.db import Store

    return Store(args.db or DEFAULT_URL, must_exist=must_exist)


def _keep(args: argparse.Namespace, drill: str, rules: str, mode: str, docs: list[Any]) -> None:
    """A counting or dealer drill's answers into the learner's record (with --learner)."""
    if not args.learner:
        return
    from pontoon.train.records import answer_rows, session_stamp

    with _store(args) as store:
        store.record_decisions(answer_rows(args.learner, drill, session_stamp(), rules, mode, docs))


def train_command(rules: RuleSet, args: argparse.Namespace) -> int:
    if args.drill == "progress":
        return progress_command(rules, args)
    if args.drill == "count":
        return count_command(rules, args)
    if args.drill == "dealer":
        return dealer_command(rules, args)
    return strategy_command(rules, args)


def _reader(
    stdin: TextIO | None, quiet: bool
) -> tuple[Callable[[str], str | None], Callable[[str], None]]:
    """The drill's ear and voice: ``read(prompt)`` shows the prompt and reads one answer
    (echoed when piped; None at the end of the input or on q), ``say`` shows a line
    (``quiet``: neither shows anything, for --json)."""
    source = stdin if stdin is not None else sys.stdin
    echo = not source.isatty()

    def say(text: str) -> None:
        if not quiet:
            print(text, flush=True)

    def read(prompt: str) -> str | None:
        if not quiet:
            print(prompt, end="", flush=True)
        line = source.readline()
        if not line:
            say("")
            return None
        word = line.strip()
        if echo:
            say(word)
        return None if word.lower() in QUIT else word

    return read, say


def dealer_command(rules: RuleSet, args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    from pontoon.train.dealer import DealerDrill, dealt_rounds, scenario_rounds

    if args.hands < 1:
        raise InputError(f"--hands must be at least 1, not {args.hands}")
    ask, say = _reader(stdin, args.json)
    rounds = dealt_rounds(rules, args.seed)
    if args.scenarios:
        rounds = iter(scenario_rounds(args.scenarios))
    drill = DealerDrill(rounds, ask, say)
    say("Dealer drill: what each wager nets in dollars (+15, -10, 0; the odds first: 3:2 +15).")
    drill.run(args.hands)
    s = drill.summary()
    _keep(args, "dealer", "scenarios" if args.scenarios else rules.name, "", s["decisions"])
    if args.json:
        print(json.dumps(s))
    elif s["accuracy"] is not None:
        say(f"{len(s['decisions'])} answers, {s['accuracy']:.0%} right.")
    return 0


def count_command(rules: RuleSet, args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    from pontoon.sim.counting import Counting
    from pontoon.train.count import CountDrill

    if args.hands < 1:
        raise InputError(f"--hands must be at least 1, not {args.hands}")
    read, say = _reader(stdin, args.json)

    def ask(prompt: str) -> int | None:
        while True:
            word = read(prompt)
            if word is None:
                return None
            try:
                return int(word)
            except ValueError:
                say(f"  {word!r} is not a whole number: give the count (e.g. -2, 0, +3), or q.")

    drill = CountDrill(
        rules,
        Counting.read(args.count, tags_only=True),
        args.pace,
        args.seed,
        ask,
        say,
        true_every=args.true_every,
    )
    say(
        f"Counting drill, {rules.name}, {drill.counting.name}, {args.pace} at a time: give the "
        f"running count after each showing, and the true count when asked."
    )
    drill.run(args.hands)
    s = drill.summary()
    _keep(args, "count", rules.name, f"{drill.counting.name} {args.pace}", s["decisions"])
    if args.json:
        print(json.dumps(s))
    elif s["accuracy"] is not None:
        say(f"{len(s['decisions'])} counts, {s['accuracy']:.0%} right.")
    return 0


def progress_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.train.records import COST, DRILLS, plot_progress, progress

    if not args.learner:
        raise InputError("train progress needs --learner NAME")
    if args.which not in DRILLS:
        raise InputError(f"unknown --drill {args.which!r}: choose one of {', '.join(DRILLS)}")
    label = rules.name if args.which == "strategy" else None  # (a count is any rule set's)
    with _store(args, must_exist=True) as store:
        rows = store.learner_decisions(args.learner, args.which, label)
    if not rows:
        under = f" under {label}" if label else ""
        raise InputError(f"no {args.which} drill of {args.learner!r}{under} in the store")
    sessions = progress(rows)
    if args.output:
        plot_progress(rows, args.learner, args.output, args.which)
    if args.json:
        doc = {"learner": args.learner, "drill": args.which, "rules": label, "sessions": sessions}
        print(json.dumps(doc))
        return 0
    print(f"{args.learner}, {args.which} drill{f', {label}' if label else ''}:")
    for i, s in enumerate(sessions, start=1):
        print(
            f"  {i:>3}. {s['session']}  {s['decisions']:>4} decisions  {s['accuracy']:>4.0%} right"
            f"  {COST[args.which]}: {s['ev_lost_per_100']:.2f}"
        )
    if args.output:
        print(f"Plot written to {args.output}.")
    return 0


def strategy_command(rules: RuleSet, args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    if args.hands < 1:
        raise InputError(f"--hands must be at least 1, not {args.hands}")
    if not rules.table_min <= args.wager <= rules.table_max:
        raise InputError(
            f"--wager must be {rules.table_min} to {rules.table_max} cents (15.2, 15.6)"
        )
    read, say = _reader(stdin, args.json)

    def ask(q: Question) -> str | None:
        legal = q.legal
        while True:
            answer = read(q.prompt)
            if answer is None:
                return None
            word = answer.lower()
            play = KEYS.get(word, word)
            if play in legal:
                return play
            keys = ", ".join(f"{k} {a}" for k, a in KEYS.items() if a in legal)
            say(f"  {word!r} is not a play here: choose {keys}, or q to stop.")

    from pontoon.train.strategy import Drill

    drill = Drill(rules, args.mode, args.seed, ask, say, wager=args.wager)
    store = _store(args) if args.learner else None
    if store is not None:
        from pontoon.train.records import schedule_of

        past = store.learner_decisions(args.learner, "strategy", rules.name)
        drill.schedule = schedule_of(past)
        weak = len(drill.schedule.levels)
        say(f"{args.learner}: {len(past)} decisions before, {weak} weak cells.")
    seed = f"seed {args.seed}" if args.seed is not None else "a fresh shuffle"
    say(f"Strategy drill, {rules.name} ({seed}), mode {args.mode}: {args.hands} decisions.")
    say("Working out the optimal chart...")
    drill.grader.chart  # noqa: B018 (worked out before the first hand, not during it)
    try:
        drill.run(args.hands)
    finally:
        if store is not None:
            from pontoon.train.records import rows_of, session_stamp

            rows = rows_of(args.learner, session_stamp(), rules.name, args.mode, drill.decisions)
            store.record_decisions(rows)
            store.close()
    if args.json:
        print(json.dumps(drill.summary()))
    else:
        for line in drill.summary_lines():
            say(line)
    return 0


__all__ = [
    "add_options",
    "count_command",
    "dealer_command",
    "progress_command",
    "strategy_command",
    "train_command",
]
