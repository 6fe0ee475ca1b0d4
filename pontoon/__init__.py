"""Pontoon as the New Zealand Gazette rules it: a rule-exact engine.

>>> from pontoon import Round, Move, Shoe, load_rules
>>> rules = load_rules("nz-pontoon")
>>> rnd = Round(rules, Shoe(rules, seeded(1)))
>>> rnd.place_wager(1, "ana", 1000)
>>> rnd.deal()
>>> rnd.phase in ("playing", "over")
True
"""

from pontoon.cards import Card, parse_cards
from pontoon.errors import IllegalAction, InputError, PontoonError
from pontoon.events import Event
from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import ScriptedCards, Shoe, seeded

__version__ = "0.1.0"
__all__ = [
    "Card",
    "Event",
    "IllegalAction",
    "InputError",
    "Move",
    "PontoonError",
    "Round",
    "RuleSet",
    "ScriptedCards",
    "Shoe",
    "load_rules",
    "parse_cards",
    "seeded",
]
