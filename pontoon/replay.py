"""Rebuild a round from its event log (8.6, 16.5).

The log holds the rule set, the wagers, every card in the order it left the shoe (with the
shoe's shuffles, commitments, revealed shoes and burnt cards) and every decision. Replaying
feeds those to a new :class:`~pontoon.round.Round` (:meth:`~pontoon.round.Round.from_events`);
because the round is deterministic given its cards, the rebuilt round has the same state and
the same log.
Which events are cards leaving the shoe is :func:`~pontoon.round.cards_left`'s to say, for the
replay and for the check of a revealed shoe (:mod:`pontoon.store.commitments`) alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from pontoon.events import Event
from pontoon.round import Round, cards_left, move_of
from pontoon.shoe import CardSource


def replay(events: Sequence[Event], source: CardSource | None = None) -> Round:
    """A new round that has made exactly the moves of ``events``: dealt from the cards the
    log records, or from ``source`` (a shoe in the state it was in when the round began)."""
    return Round.from_events(events, source)


__all__ = ["cards_left", "move_of", "replay"]
