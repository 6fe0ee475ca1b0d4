"""Rebuild a round from its event log (8.6, 16.5).

The log holds the rule set, the wagers, every card in the order it left the shoe (with the
shoe's shuffles and burnt cards) and every decision. Replaying feeds those to a new
:class:`~pontoon.round.Round`; because the round is deterministic given its cards, the
rebuilt round has the same state and the same log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pontoon.cards import Card
from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.irregularities import DRAWING, Irregularity
from pontoon.round import OMITTED_IN_DEAL, SEVENS, Move, Round
from pontoon.rules import rules_from_dict
from pontoon.shoe import CardSource, ScriptedCards, ShoeNote

# Action events that the round writes by itself and are not decisions.
_AUTOMATIC = ("no-more-bets", "peek")


def move_of(event: Event) -> Move | None:
    """The decision an ``action`` event records, or None for the dealer's own steps."""
    if event.kind != "action" or event.detail in _AUTOMATIC or event.box is None:
        return None
    assert event.detail is not None
    action, _, follow = event.detail.partition("/")
    return Move(
        action,
        event.box,
        player=event.player,
        amount=event.amount,
        follow=(int(follow) if follow.isdigit() else follow) if follow else None,
    )


def replay(events: Sequence[Event], source: CardSource | None = None) -> Round:
    """A new round that has made exactly the moves of ``events``: dealt from the cards the
    log records, or from ``source`` (a shoe in the state it was in when the round began)."""
    if not events or events[0].kind != "rules" or events[0].detail is None:
        raise InputError("a round's log starts with its rule set")
    rules = rules_from_dict(json.loads(events[0].detail))
    items: list[Card | ShoeNote] = []
    for e in events:
        drawn = e.kind in ("deal", "hole") and e.rule not in _EXPOSED
        drawn = drawn or (e.kind == "irregularity" and e.detail in DRAWING)
        if drawn and e.card is not None:
            items.append(Card.parse(e.card))
        elif e.kind in ("shuffle", "burn"):
            items.append((e.kind, e.rule or "", Card.parse(e.card) if e.card else None))
    rnd = Round(rules, source if source is not None else ScriptedCards(items))
    omitted = any(e.kind == "irregularity" and e.detail == OMITTED_IN_DEAL for e in events)
    dealt = False
    for e in events[1:]:
        if e.kind == "wager":
            assert e.box is not None and e.player is not None and e.amount is not None
            if e.detail == SEVENS:
                rnd.place_side_wager(e.box, e.player, e.amount)
            else:
                rnd.place_wager(e.box, e.player, e.amount)
        elif e.kind == "action" and e.detail == "no-more-bets" and not dealt:
            rnd.deal(omit_dealer_card=omitted)
            dealt = True
        elif e.kind == "irregularity" and e.detail != OMITTED_IN_DEAL:
            assert e.detail is not None
            card = e.card if e.detail == "damaged" else None
            op = Irregularity(e.detail, e.by or "dealer", e.box, e.hand, e.player, card)
            rnd.apply_irregularity(op)
        elif (move := move_of(e)) is not None:
            rnd.apply(move)
    return rnd


_EXPOSED = ("16.4", "15.7")  # deals of an exposed card: drawn when it was exposed
