"""Rounds per second through the full engine: one box, a simple basic strategy, event log on.

Prints a line per shoe size, then one JSON object as the last line (INTERFACES.md, Benchmarks).
Run: .venv/bin/python bench/engine.py [--quick] [--rules NAME]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import Shoe, seeded


def choose(rnd: Round) -> Move:
    """A simple total-dependent play: double 10-11 against 2-9, split aces and eights,
    hit to 17 against 7 or more, stand on 12-16 against 2-6 (when the rules allow)."""
    cur = rnd.current()
    assert cur is not None
    box, hand = cur
    up = rnd.dealer[0].value
    up = 11 if up == 1 else up
    t = hand.total
    n = box.number
    wish = ["hit"]
    if (
        len(hand.cards) == 2
        and hand.cards[0].rank == hand.cards[1].rank
        and hand.cards[0].rank in (1, 8)
    ):
        wish = ["split", "hit"]
    elif t in (10, 11) and up <= 9:
        wish = ["double", "hit"]
    elif t >= 17 or (t >= 12 and up <= 6):
        wish = ["stand"]
    for action in (*wish, "stand", "hit"):
        move = Move(action, n)
        if rnd.can(move):
            return move
    return rnd.legal_moves()[0]


def run(rules: RuleSet, rounds: int, seed: int = 1) -> tuple[float, int]:
    shoe = Shoe(rules, seeded(seed))
    events = 0
    start = time.perf_counter()
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        rnd.place_wager(1, "p", rules.table_min)
        rnd.deal()
        while not rnd.over:
            if rnd.follow_ups is not None or rnd.phase == "insurance":
                rnd.apply_defaults()
            else:
                rnd.apply(choose(rnd))
        events += len(rnd.events)
    return time.perf_counter() - start, events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rules", default="nz-pontoon")
    args = parser.parse_args()
    rounds = 20_000 if args.quick else 200_000
    run(load_rules(args.rules), 2_000)  # warm up
    per_decks = {}
    for decks in (1, 6, 8):
        rules = load_rules(args.rules, {"decks": decks})
        seconds, events = run(rules, rounds)
        per_decks[decks] = round(rounds / seconds)
        print(
            f"{args.rules}, {decks} deck(s): {rounds / seconds:,.0f} rounds/s, "
            f"{events / rounds:.1f} events per round"
        )
    print(
        json.dumps(
            {
                "bench": "engine",
                "rounds_per_second": per_decks[6],
                "rounds_per_second_by_decks": per_decks,
                "rules": args.rules,
                "cores": 1,
                "python": platform.python_version(),
                "machine": platform.machine(),
            }
        )
    )


if __name__ == "__main__":
    main()
