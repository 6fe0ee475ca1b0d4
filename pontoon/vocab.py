"""The game's words: actions, phases, hand states, outcomes, event kinds and procedures.

Each vocabulary is a :class:`~enum.StrEnum` whose values are the words the event log, the
store, scenario files and the server protocol use, so a member *is* its word: it compares
equal to it, hashes like it and is written as it (``json.dumps`` gives the same bytes).

>>> Action("no-insurance") is Action.NO_INSURANCE, Action.HIT == "hit"
(True, True)
>>> import json; json.dumps({"detail": Outcome.PUSH})
'{"detail": "push"}'
>>> Action("fold")
Traceback (most recent call last):
...
ValueError: 'fold' is not a valid Action
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, cast


class Action(StrEnum):
    """A decision of a player (8.3, 9.3, 10, 12, 13, 14, 15.3, 15.5, 16.4)."""

    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"
    RESCUE = "rescue"  # 12: a doubled hand surrendered for its original wager
    REFUSE = "refuse"  # 16.4: a hand refuses an exposed card
    DECLINE = "decline"  # 15.3(e): a player behind does not follow
    INSURE = "insure"
    NO_INSURANCE = "no-insurance"
    VOID = "void"  # 15.5: a seated player's choice after the dealer's omitted first card
    COMPLETE = "complete"


ACTION_OF: Final[dict[str, Action]] = {a.value: a for a in Action}  # word -> action


def action_of(word: str) -> Action:
    """The action a word names (``"no-insurance"`` -> :attr:`Action.NO_INSURANCE`). A word
    that names none is passed on as it is, for the round to refuse naming rule 8.3.

    >>> action_of("hit") is Action.HIT, action_of("fold")
    (True, 'fold')
    """
    return ACTION_OF.get(word, cast(Action, word))


# The groups of actions, in the order legal moves list them.
SEATED_ACTIONS: Final = (
    Action.HIT,
    Action.STAND,
    Action.DOUBLE,
    Action.SPLIT,
    Action.SURRENDER,
    Action.RESCUE,
    Action.REFUSE,
)
HAND_ACTIONS: Final = SEATED_ACTIONS[:6]  # what legality.refusal judges from a hand's facts
FOLLOW_ACTIONS: Final = (Action.DOUBLE, Action.SPLIT, Action.DECLINE)
INSURANCE_ACTIONS: Final = (Action.INSURE, Action.NO_INSURANCE)
CHOICE_ACTIONS: Final = (Action.VOID, Action.COMPLETE)
AMOUNT_ACTIONS: Final = (Action.DOUBLE, Action.INSURE)  # the moves that may name an amount


class Follow(StrEnum):
    """15.3(d): how a player behind follows a split (besides the hand numbers 0 and 1)."""

    BOTH = "both"


class Phase(StrEnum):
    BETTING = "betting"
    INSURANCE = "insurance"  # peek game only: insurance before the dealer peeks
    PLAYING = "playing"
    OVER = "over"


class HandState(StrEnum):
    OPEN = "open"  # awaiting decisions
    STOOD = "stood"  # waiting for the dealer's total
    NATURAL = "natural"  # a pontoon not paid at once (blackjack): waits for the dealer's
    SUPER = "super"  # 11.2: a Super Bonus, paid at the end of the round
    SETTLED = "settled"  # paid, busted, surrendered or void: nothing depends on the dealer
    SURRENDERED = "surrendered"  # 9.4: waits for the dealer's second card


class Outcome(StrEnum):
    WIN = "win"
    LOSE = "lose"
    BUST = "bust"  # the event's word; the wager's outcome is then "lose"
    PUSH = "push"  # a stand-off
    SURRENDER = "surrender"
    VOID = "void"


class Ending(StrEnum):
    """Why a hand (or a box, at the peek) ends as it does, in the exact analysis's count of
    a round (:mod:`pontoon.analysis.endings`)."""

    PONTOON = "pontoon"  # 9.1: a two-card 21 of the first two cards
    TWENTY_ONE = "twenty_one"  # 9.2: 21 of two (after a split), three or four cards, even money
    FIVE_CARD_21 = "five_card_21"  # 11.1
    SIX_CARD_21 = "six_card_21"
    SEVEN_CARD_21 = "seven_card_21"
    MIXED_678 = "678_mixed"
    SUITED_678 = "678_suited"
    SPADES_678 = "678_spades"
    MIXED_777 = "777_mixed"
    SUITED_777 = "777_suited"
    SPADES_777 = "777_spades"
    SUPER_BONUS = "super_bonus"  # 11.2
    WIN = "win"  # stood on a higher total than the dealer's
    DEALER_BUST = "dealer_bust"  # stood, and the dealer busted
    PUSH = "push"
    LOSS = "loss"  # stood on a lower total
    DEALER_PONTOON = "dealer_pontoon"  # 13.7 (or the peek): the dealer's pontoon takes it
    BUST = "bust"
    SURRENDER = "surrender"  # 9.3
    RESCUE = "rescue"  # 12


PAID_BY_CARDS: Final = frozenset(
    {
        Ending.PONTOON,
        Ending.TWENTY_ONE,
        Ending.FIVE_CARD_21,
        Ending.SIX_CARD_21,
        Ending.SEVEN_CARD_21,
        Ending.MIXED_678,
        Ending.SUITED_678,
        Ending.SPADES_678,
        Ending.MIXED_777,
        Ending.SUITED_777,
        Ending.SPADES_777,
        Ending.SUPER_BONUS,
    }
)  # endings that pay by the cards, whatever the dealer holds (in a game where 21 wins)
BY_CARDS_21: Final = {5: Ending.FIVE_CARD_21, 6: Ending.SIX_CARD_21}
BY_SUITS_21: Final = {
    ("678", "mixed"): Ending.MIXED_678,
    ("678", "suited"): Ending.SUITED_678,
    ("678", "spades"): Ending.SPADES_678,
    ("777", "mixed"): Ending.MIXED_777,
    ("777", "suited"): Ending.SUITED_777,
    ("777", "spades"): Ending.SPADES_777,
}


class EventKind(StrEnum):
    """The kinds of :class:`~pontoon.events.Event` (its docstring says what each holds)."""

    RULES = "rules"
    SHUFFLE = "shuffle"
    BURN = "burn"
    WAGER = "wager"
    DEAL = "deal"
    HOLE = "hole"
    REVEAL = "reveal"
    ACTION = "action"
    STAKE = "stake"
    RETURN = "return"
    COLLECT = "collect"
    PAY = "pay"
    OUTCOME = "outcome"
    DISCARD = "discard"
    IRREGULARITY = "irregularity"
    REPLACE = "replace"
    END = "end"
    DISCLOSE = "disclose"  # a shoe revealed as it ends: order and salt (docs/operators/fairness.md)
    # the store's own entries, outside any round
    DEPOSIT = "deposit"
    WITHDRAW = "withdraw"
    VOID = "void"


class DealerStep(StrEnum):
    """``action`` events the dealer writes, not decisions."""

    NO_MORE_BETS = "no-more-bets"  # 8.2
    PEEK = "peek"  # 8.5


class Procedure(StrEnum):
    """The procedures of Pontoon section 16 and Blackjack 1996 15.5-15.11
    (:mod:`pontoon.irregularities`)."""

    FACE_UP_IN_SHOE = "face-up-in-shoe"
    DRAWN_UNEXPOSED = "drawn-unexposed"
    EXPOSED_TO_DEALER = "exposed-to-dealer"
    EXPOSED_CARD = "exposed-card"
    RECONSTRUCT = "reconstruct"
    VOID = "void"
    ABSENT = "absent"
    SHOE_EXHAUSTED = "shoe-exhausted"
    DAMAGED = "damaged"
    MISSED_RESHUFFLE = "missed-reshuffle"
    MISSING_CUTTING_CARD = "missing-cutting-card"
    MISSED_INSURANCE = "missed-insurance"
    MISSED_SURRENDER = "missed-surrender"
    DEALER_FIRST_CARD_OMITTED = "dealer-first-card-omitted"
    # written by the deal itself (15.5), never applied
    OMITTED_IN_DEAL = "dealer-card-omitted-in-deal"
    # the interrupted-round policy (knob ``interrupted``, assumed): why it applied
    ABANDONED = "interrupted-abandoned"  # a decision awaited longer than interrupted_minutes
    FAILURE = "interrupted-failure"  # the table came back from a failure too late


class TurnKind(StrEnum):
    """What the round waits for (:meth:`pontoon.round.Round.to_act`)."""

    BETTING = "betting"  # wagers, then the dealer's "No more bets" (8.2)
    INSURANCE = "insurance"  # peek game: insurance before the dealer peeks (10)
    CHOOSE = "choose"  # 15.5: seated players choose to void or complete
    FOLLOW = "follow"  # 15.3(c), (d): players behind follow a double or a split
    DECIDE = "decide"  # the seated player of the box in turn (8.3)


class Role(StrEnum):
    """Who applies a procedure (and who made a move, when not its player)."""

    DEALER = "dealer"
    SUPERVISOR = "supervisor"
    POLICY = "policy"  # the table's interrupted-round policy (knob ``interrupted``)


SEVENS: Final = "super-sevens"  # the Super Sevens side wager (Blackjack 1996): its rule too

__all__ = [
    "ACTION_OF",
    "AMOUNT_ACTIONS",
    "CHOICE_ACTIONS",
    "FOLLOW_ACTIONS",
    "HAND_ACTIONS",
    "INSURANCE_ACTIONS",
    "SEATED_ACTIONS",
    "SEVENS",
    "Action",
    "DealerStep",
    "EventKind",
    "Follow",
    "HandState",
    "Outcome",
    "Phase",
    "Procedure",
    "Role",
    "TurnKind",
    "action_of",
]
