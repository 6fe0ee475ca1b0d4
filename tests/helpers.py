"""Small builders for rule tests: a round from written cards, wagers and moves; and
:func:`wait_until`, the suite's one way to wait for something another thread or process does."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from pontoon.cards import parse_cards
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import ScriptedCards

Wagers = Sequence[tuple[int, str, int]]
T = TypeVar("T")


def start(
    cards: str, wagers: Wagers = ((1, "ana", 1000),), preset: str = "nz-pontoon", **knobs: object
) -> Round:
    """A dealt round: ``cards`` in the order they leave the shoe, ``wagers`` as
    (box, player, amount)."""
    rnd = Round(load_rules(preset, knobs), ScriptedCards(parse_cards(cards)))
    for box, player, amount in wagers:
        rnd.place_wager(box, player, amount)
    rnd.deal()
    return rnd


def play(
    cards: str,
    moves: Sequence[Move | str] = (),
    wagers: Wagers = ((1, "ana", 1000),),
    preset: str = "nz-pontoon",
    **knobs: object,
) -> Round:
    """A round played through ``moves``; a move written ``"hit"`` is the seated player's on
    the box in turn."""
    rnd = start(cards, wagers, preset, **knobs)
    for m in moves:
        if isinstance(m, str):
            cur = rnd.current()
            assert cur is not None, f"no box is in turn for {m!r}"
            m = Move(m, cur[0].number)
        rnd.apply(m)
    return rnd


def codes(cards: Sequence[object]) -> list[str]:
    return [str(c) for c in cards]


def wait_until(
    predicate: Callable[[], T], timeout: float = 10.0, what: str = "", every: float = 0.02
) -> T:
    """Asks ``predicate`` until it answers something true, which is returned; past
    ``timeout`` seconds, fails saying ``what`` was awaited and what the last answer was. A
    wait on an event, not on a clock: it ends as soon as the event is seen, so a quiet host
    is not made to wait and a loaded one is given the whole timeout."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() >= deadline:
            name = what or getattr(predicate, "__name__", repr(predicate))
            raise AssertionError(f"not within {timeout:g} s: {name} (last: {got!r})")
        time.sleep(every)  # (the poll's interval, not an event)
