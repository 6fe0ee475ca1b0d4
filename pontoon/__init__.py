"""Pontoon as the New Zealand Gazette rules it: a rule-exact engine.

>>> from pontoon import Round, Move, Shoe, load_rules, seeded
>>> rules = load_rules("nz-pontoon")
>>> rnd = Round(rules, Shoe(rules, seeded(1)))
>>> rnd.place_wager(1, "ana", 1000)
>>> rnd.deal()
>>> rnd.phase in ("playing", "over")
True
"""

from importlib import import_module
from typing import Any

_HOME = {  # each name's module, imported on first use: `pontoon analyze` needs no round engine
    "Card": "pontoon.cards",
    "parse_cards": "pontoon.cards",
    "IllegalAction": "pontoon.errors",
    "InputError": "pontoon.errors",
    "PontoonError": "pontoon.errors",
    "Event": "pontoon.events",
    "Move": "pontoon.round",
    "Round": "pontoon.round",
    "RuleSet": "pontoon.rules",
    "load_rules": "pontoon.rules",
    "ScriptedCards": "pontoon.shoe",
    "Shoe": "pontoon.shoe",
    "seeded": "pontoon.shoe",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module 'pontoon' has no attribute {name!r}")


__version__ = "0.9.0"
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
