"""Small builders for rule tests: a round from written cards, wagers and moves."""

from __future__ import annotations

from collections.abc import Sequence

from pontoon.cards import parse_cards
from pontoon.round import Move, Round
from pontoon.rules import load_rules
from pontoon.shoe import ScriptedCards

Wagers = Sequence[tuple[int, str, int]]


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
