"""A round of the environment as the round engine plays it: the cards it dealt and the
moves it made, replayed through :class:`pontoon.round.Round` on demand, so that ``info``
carries the round's own events (and the terminal table reads the round, not the env).

>>> from pontoon.env.spec import TableSpec
>>> from pontoon.rules import load_rules
>>> spec = TableSpec.build(load_rules("classic-blackjack"))
>>> rec = RoundRecord(spec, (-1, -110, 9, 35, 12, 48), 1000, ())
>>> [e.kind.value for e in rec.events][3:5], rec.round.to_act().kind.value  # 8.1, 8.3
(['shuffle', 'burn'], 'decide')
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import overload

from pontoon.cards import ALL_CARDS, Card
from pontoon.env import layout as L
from pontoon.env.spec import BET_WORD, TableSpec
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.round import Move, Round
from pontoon.shoe import ScriptedCards, ShoeNote
from pontoon.vocab import Action, Procedure, Role

PLAYER = "player"


def shoe_items(log: Sequence[int]) -> list[Card | ShoeNote]:
    """The env's log of a round (card codes and notes) as a scripted shoe's items."""
    out: list[Card | ShoeNote] = []
    for x in log:
        if x >= 0:
            out.append(ALL_CARDS[x])
        elif x <= L.LOG_BURN:
            out.append(("burn", "8.1", ALL_CARDS[L.LOG_BURN - x], None))
        else:
            out.append(("shuffle", L.SHUFFLE_RULES[-1 - x], None, None))
    return out


class RoundRecord(Sequence[Event]):
    """The events of the round so far (a sequence, built when first read): ``log`` the
    env's log, ``stake`` each box's wager (0 before the bet), ``moves`` each move as
    (action number, box index) after the bet; ``void``: the last move found no card, every
    card being on the layout (16.7), and the round was voided (16.5)."""

    def __init__(
        self,
        spec: TableSpec,
        log: Sequence[int],
        stake: int,
        moves: Sequence[tuple[int, int]],
        void: bool = False,
    ) -> None:
        self.spec = spec
        self.log = tuple(log)
        self.stake = stake
        self.moves = tuple(moves)
        self.void = void

    def move(self, action: int, box: int) -> Move:
        """The round engine's move for an env action on box index ``box``."""
        a = self.spec.actions[action]
        if a.name == BET_WORD:
            raise ValueError("a bet is a wager, not a move")
        act = Action(a.name)
        if act is Action.INSURE or act is Action.NO_INSURANCE:
            return Move(act, box + 1, player=PLAYER)
        amount = None
        if act is Action.DOUBLE and a.fraction is not None and a.fraction != 1:
            amount = self.stake * a.fraction.numerator // a.fraction.denominator
        return Move(act, box + 1, amount=amount)

    @functools.cached_property
    def round(self) -> Round:
        """The round, replayed by the round engine from the same cards and moves."""
        rnd = Round(self.spec.rules, ScriptedCards(shoe_items(self.log)))
        if self.stake:
            for b in range(1, self.spec.boxes + 1):
                rnd.place_wager(b, PLAYER, self.stake)
            rnd.deal()
            for action, box in self.moves[:-1] if self.void else self.moves:
                rnd.apply(self.move(action, box))
            if self.void:  # the round engine refuses the last move (16.7): a supervisor voids
                rnd.apply_irregularity(Irregularity(Procedure.VOID, by=Role.SUPERVISOR))
        return rnd

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self.round.events)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        return self.events[index]

    def __len__(self) -> int:
        return len(self.round.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __eq__(self, other: object) -> bool:
        """The same round: the same rules, cards, wager and moves (so the same events)."""
        if not isinstance(other, RoundRecord):
            return NotImplemented
        mine = (self.spec.rules, self.spec.boxes, self.log, self.stake, self.moves, self.void)
        theirs = (other.spec.rules, other.spec.boxes, other.log, other.stake, other.moves)
        return mine == (*theirs, other.void)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RoundRecord({len(self.log)} cards and notes, {len(self.moves)} moves)"


__all__ = ["PLAYER", "RoundRecord", "shoe_items"]
