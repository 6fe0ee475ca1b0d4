"""Rounds per second through the full engine: one box, a simple basic strategy, event log on.

Prints a line per shoe size, then one JSON object as the last line, also appended to
bench/results/engine.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/engine.py [--quick] [--rules NAME] [--gymnasium]

``--gymnasium`` (needs the ``bench`` extra: ``pip install 'pontoon[bench]'``; without it the
option says so in one line and exits 2) also plays gymnasium's ``Blackjack-v1`` — infinite
deck, hit or stand only, ``gymnasium.make`` with no rendering — for as many episodes as the
engine plays rounds, hitting below 17, and prints its episodes/s and the ratio ours/gymnasium
(ours: the rule set at 6 decks). The two are measured alternately, ours then gymnasium, three
times each on the same seeds, and each figure is the best of its three (the fastest run is the
one other work on the machine slowed least; alternating spreads drift over both). The JSON
gains ``gymnasium_episodes_per_second`` and ``ratio_to_gymnasium`` (wall-clock), and
``ratio_to_gymnasium_cpu`` (this process's CPU time: less sensitive to a loaded machine). The
work is not the same: a round of ours is dealt from a real shoe, settled under every rule and
logged event by event; an episode of gymnasium's is a few draws and a comparison.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.vocab import Action, TurnKind

if TYPE_CHECKING:
    from pontoon.layout import Box, Hand

RUNS = 3  # alternating runs of each side for --gymnasium


def play_round(rnd: Round) -> None:
    """Play a dealt round to its end: the round's defaults where it asks for follow-ups or
    insurance, else :func:`choose` for the box and hand in turn (:meth:`Round.to_act`)."""
    while (turn := rnd.to_act()) is not None:
        if turn.kind is TurnKind.DECIDE and turn.box is not None and turn.hand is not None:
            box = rnd.boxes[turn.box]
            rnd.apply(choose(rnd, box, box.hands[turn.hand]))
        else:
            rnd.apply_defaults()


def choose(rnd: Round, box: Box, hand: Hand) -> Move:
    """A simple total-dependent play: double 10-11 against 2-9, split aces and eights,
    hit to 17 against 7 or more, stand on 12-16 against 2-6 (when the rules allow)."""
    up = rnd.dealer[0].value
    up = 11 if up == 1 else up
    t = hand.total
    n = box.number
    wish = [Action.HIT]
    if (
        len(hand.cards) == 2
        and hand.cards[0].rank == hand.cards[1].rank
        and hand.cards[0].rank in (1, 8)
    ):
        wish = [Action.SPLIT, Action.HIT]
    elif t in (10, 11) and up <= 9:
        wish = [Action.DOUBLE, Action.HIT]
    elif t >= 17 or (t >= 12 and up <= 6):
        wish = [Action.STAND]
    for action in (*wish, Action.STAND, Action.HIT):
        move = Move(action, n)
        if rnd.can(move):
            return move
    return rnd.legal_moves()[0]


def run(rules: RuleSet, rounds: int, seed: int = 1) -> tuple[float, int]:
    seconds, _, events = timed(rules, rounds, seed)
    return seconds, events


def timed(rules: RuleSet, rounds: int, seed: int = 1) -> tuple[float, float, int]:
    """``rounds`` rounds: wall-clock seconds, CPU seconds, events logged."""
    shoe = Shoe(rules, seeded(seed))
    events = 0
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        rnd.place_wager(1, "p", rules.table_min)
        rnd.deal()
        play_round(rnd)
        events += len(rnd.events)
    return time.perf_counter() - start, time.process_time() - cpu, events


def gym_timed(env: Any, episodes: int, seed: int = 1) -> tuple[float, float]:
    """``episodes`` episodes of Blackjack-v1, hitting below 17: wall-clock and CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(1 if obs[0] < 17 else 0)
            done = terminated or truncated
        obs, _ = env.reset()
    return time.perf_counter() - start, time.process_time() - cpu


def compare_gymnasium(gymnasium: Any, rules: RuleSet, episodes: int) -> dict[str, Any]:
    """Ours (``rules``) and Blackjack-v1 alternately, RUNS times each; the best of each."""
    env = gymnasium.make("Blackjack-v1", render_mode=None)
    gym_timed(env, 2_000)  # warm up (and past the environment checker's first calls)
    ours: list[tuple[float, float]] = []
    gym: list[tuple[float, float]] = []
    for _ in range(RUNS):
        ours.append(timed(rules, episodes)[:2])
        gym.append(gym_timed(env, episodes))
    env.close()
    wall, cpu = min(s for s, _ in ours), min(c for _, c in ours)
    gym_wall, gym_cpu = min(s for s, _ in gym), min(c for _, c in gym)
    return {
        "version": gymnasium.__version__,
        "ours": episodes / wall,
        "gymnasium": episodes / gym_wall,
        "ratio": gym_wall / wall,
        "ratio_cpu": gym_cpu / cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rules", default="nz-pontoon")
    parser.add_argument(
        "--gymnasium", action="store_true", help="also gymnasium's Blackjack-v1, alternately"
    )
    args = parser.parse_args()
    gymnasium: Any = None
    if args.gymnasium:
        try:
            import gymnasium
        except ImportError:
            print(
                "bench/engine.py: --gymnasium needs gymnasium: pip install 'pontoon[bench]'",
                file=sys.stderr,
            )
            sys.exit(2)
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
    doc: dict[str, Any] = {
        "bench": "engine",
        "rounds_per_second": per_decks[6],
        "rounds_per_second_by_decks": per_decks,
        "rules": args.rules,
        "cores": 1,
    }
    if gymnasium is not None:
        g = compare_gymnasium(gymnasium, load_rules(args.rules, {"decks": 6}), rounds)
        print(
            f"gymnasium {g['version']} Blackjack-v1 (infinite deck, hit below 17): "
            f"{g['gymnasium']:,.0f} episodes/s; {args.rules}, 6 decks: {g['ours']:,.0f} "
            f"rounds/s; ours/gymnasium {g['ratio']:.3f} (CPU time {g['ratio_cpu']:.3f}); "
            f"best of {RUNS} alternating runs of {rounds:,} each"
        )
        doc["gymnasium_episodes_per_second"] = round(g["gymnasium"])
        doc["ratio_to_gymnasium"] = round(g["ratio"], 4)
        doc["ratio_to_gymnasium_cpu"] = round(g["ratio_cpu"], 4)
    from record import emit  # bench/record.py, beside this file

    emit(doc)


if __name__ == "__main__":
    main()
