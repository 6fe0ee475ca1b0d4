"""What lies on the layout during a round: boxes, their hands and the wagers on them, the
decisions players make (:class:`Move`) and what the round waits for (:class:`Turn`).

These are the round's data; :class:`pontoon.round.Round` owns and changes them, and every
front end reads them through the round's query API.

>>> Move(Action.SPLIT, 2, player="ben", follow=1)
Move(action=<Action.SPLIT: 'split'>, box=2, hand=None, player='ben', amount=None, follow=1)
>>> str(Move(Action.DOUBLE, 1, amount=500))
'double box 1 500'
>>> Turn(TurnKind.DECIDE, ("ana",), box=1, hand=0).to_dict()
{'kind': 'decide', 'box': 1, 'hand': 0, 'players': ['ana']}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple

from pontoon.cards import Card
from pontoon.hand import total
from pontoon.vocab import Action, HandState, Outcome, TurnKind

FollowChoice = str | int  # 15.3(d): "both", or the hand (0 or 1) the wager follows


@dataclass(frozen=True, slots=True)
class Move:
    """A decision. ``player`` None means the seated player of ``box``; ``hand`` None means
    the hand in play; ``follow`` is a player behind's choice after a split: ``"both"``, 0 or
    1 (the first or second hand the split made)."""

    action: Action
    box: int
    hand: int | None = None
    player: str | None = None
    amount: int | None = None
    follow: FollowChoice | None = None

    def __str__(self) -> str:
        who = f" {self.player}" if self.player else ""
        extra = f" {self.amount}" if self.amount is not None else ""
        extra += f" follow {self.follow}" if self.follow is not None else ""
        return f"{self.action}{who} box {self.box}{extra}"


@dataclass(slots=True)
class Wager:
    """One player's money on one hand: ``stake`` plus ``double``."""

    player: str
    stake: int
    double: int = 0
    settled: bool = False
    outcome: Outcome | None = None
    odds: Fraction | None = None
    net: int = 0

    @property
    def amount(self) -> int:
        return self.stake + self.double


@dataclass(slots=True)
class Hand:
    cards: list[Card]
    wagers: list[Wager]
    from_split: bool = False
    split_aces: bool = False
    doubled: bool = False
    acted: bool = False
    state: HandState = HandState.OPEN
    discarded: bool = False
    refused: bool = False  # 16.4: refused an exposed card, no more cards this round

    @property
    def total(self) -> int:
        return total(self.cards)

    def wager_of(self, player: str) -> Wager | None:
        for w in self.wagers:
            if w.player == player:
                return w
        return None


@dataclass(slots=True)
class Box:
    number: int
    players: list[str]  # the seated player first (15.3(a))
    original: dict[str, int]  # each player's original wager
    hands: list[Hand] = field(default_factory=list)
    insurance: dict[str, Wager] = field(default_factory=dict)
    declined_insurance: set[str] = field(default_factory=set)
    sevens: dict[str, Wager] = field(default_factory=dict)  # Super Sevens side wagers
    first_cards: list[Card] = field(default_factory=list)  # the first three cards of the box
    surrender_offered_late: bool = False  # 16.12: a missed surrender offer still honoured

    @property
    def seated(self) -> str:
        return self.players[0]


@dataclass(slots=True)
class FollowUps:
    """15.3(c)/(d): after the seated player doubles or splits, the players behind choose."""

    kind: Action  # double or split
    hand: int
    waiting: list[str]


class Turn(NamedTuple):
    """Who must act now and on what: ``players`` (in the order they are asked) on ``box`` and
    ``hand``; ``follow`` is the seated player's double or split a player behind may follow;
    ``boxes`` the boxes whose seated players choose (15.5)."""

    kind: TurnKind
    players: tuple[str, ...]
    box: int | None = None
    hand: int | None = None
    follow: Action | None = None
    boxes: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The turn as the server's ``awaiting`` document (docs/operators/protocol.md)."""
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.kind is TurnKind.CHOOSE:
            out["boxes"] = list(self.boxes)
        if self.box is not None:
            out["box"] = self.box
            out["hand"] = self.hand
        if self.follow is not None:
            out["follow"] = self.follow.value
        out["players"] = list(self.players)
        return out


__all__ = ["Box", "FollowChoice", "FollowUps", "Hand", "Move", "Turn", "Wager"]
