"""The environment's observation space and the reading of its observation arrays.

>>> from pontoon.env.spec import TableSpec
>>> from pontoon.rules import load_rules
>>> space = observation_space(TableSpec.build(load_rules("nz-pontoon")))
>>> space["total"], space["action_mask"]
(Discrete(32), MultiBinary(9))
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces

from pontoon.env import layout as L
from pontoon.env.spec import TableSpec

MAX_TOTAL: Final = 32


def observation_space(spec: TableSpec) -> spaces.Dict:
    """One table's observation: the hand in question (its box and hand, totals, cards, pair,
    whether doubled, from a split, split aces, acted on), the dealer's first card, the cards
    left in the shoe, the cards of each value seen since the shuffle, and the action mask."""
    maxh = spec.rules.split_max_hands
    ncards = int(spec.params[L.E_NTMPL])
    sizes = {
        "phase": len(L.PHASE_NAMES),
        "box": spec.boxes,
        "hand": maxh,
        "hands": maxh + 1,
        "total": MAX_TOTAL,
        "soft": 2,
        "cards": L.MAXC + 1,
        "pair": 11,
        "doubled": 2,
        "from_split": 2,
        "split_aces": 2,
        "acted": 2,
        "up": 11,
        "remaining": ncards + 1,
    }
    assert tuple(sizes) == L.OBS_KEYS
    parts: dict[str, spaces.Space[Any]] = {k: spaces.Discrete(n) for k, n in sizes.items()}
    parts["counts"] = spaces.Box(0, ncards, (L.NVAL,), np.int64)
    parts["action_mask"] = spaces.MultiBinary(len(spec.actions))
    return spaces.Dict(parts)


__all__ = ["MAX_TOTAL", "observation_space"]
