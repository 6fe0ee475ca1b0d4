"""Card counting: tag values per rank, a bet ramp by true count, Wonging out.

A counting system is a TOML file (or the built-in ``hi-lo``)::

    tags = { A = -1, 2 = 1, 3 = 1, 4 = 1, 5 = 1, 6 = 1, 7 = 0, 8 = 0, 9 = 0, T = -1 }
    ramp = { -1 = 0, 0 = 1, 1 = 1, 2 = 2, 3 = 4, 4 = 8 }

``tags`` gives each rank's tag (``T`` for every ten-value card, or ``T J Q K`` one by one).
The running count adds the tag of every card seen (all cards of each round, not the burnt
card) and starts at 0 after each shuffle; the true count is the running count per deck left
in the shoe, rounded down (``floor``) and held to -10..+10. ``ramp`` maps a true count to the
wager in units of ``--wager``; a true count below the lowest key takes the lowest key's
units, above the highest the highest's. Units 0 means Wonging out: the round is dealt (to
the same boxes, playing the same chart) but the player sits it out.

>>> c = Counting.builtin("hi-lo")
>>> int(c.tags[0]), int(c.tags[4]), int(c.ramp[10 + 3])
(-1, 1, 4)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from pontoon.cards import RANKS
from pontoon.errors import InputError

IntArray = np.ndarray[Any, np.dtype[np.int64]]
TC_MIN: Final = -10
TC_MAX: Final = 10

HI_LO: Final = {
    "name": "hi-lo",
    "tags": {"A": -1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 0, "8": 0, "9": 0, "T": -1},
    "ramp": {"-1": 0, "0": 1, "1": 1, "2": 2, "3": 4, "4": 8},
}


@dataclass(frozen=True)
class Counting:
    name: str
    tags: IntArray  # by card code (pontoon.sim.compiled.card_code)
    ramp: IntArray  # units by true count + 10
    table: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def builtin(cls, name: str) -> Counting:
        if name != "hi-lo":
            raise InputError(f"unknown counting system {name!r}: hi-lo or a TOML file")
        return cls.from_dict(HI_LO, name)

    @classmethod
    def read(cls, source: str, tags_only: bool = False) -> Counting:
        """The built-in ``hi-lo`` or a TOML file; ``tags_only``: a file may leave out the
        ``ramp`` (a counting drill bets nothing: one unit at every count)."""
        if source == "hi-lo":
            return cls.builtin(source)
        path = Path(source)
        if not path.is_file():
            raise InputError(f"no counting system {source!r}: hi-lo or a TOML file")
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{source}: not a TOML counting file ({exc})") from None
        if tags_only and isinstance(data, dict):
            data.setdefault("ramp", {"0": 1})
        return cls.from_dict(data, path.stem)

    @classmethod
    def from_dict(cls, data: dict[str, Any], name: str) -> Counting:
        raw_tags = data.get("tags")
        raw_ramp = data.get("ramp")
        if not isinstance(raw_tags, dict) or not isinstance(raw_ramp, dict) or not raw_ramp:
            raise InputError(f"{name}: a counting system needs 'tags' and 'ramp' tables")
        by_rank: dict[int, int] = {}
        for key, value in raw_tags.items():
            k = str(key).strip().upper()
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{name}: tag of {key!r} must be a whole number")
            if k == "T":
                for r in (10, 11, 12, 13):
                    by_rank.setdefault(r, value)
            elif k == "10":
                by_rank[10] = value
            elif len(k) == 1 and k in RANKS:
                by_rank[RANKS.index(k) + 1] = value
            else:
                raise InputError(f"{name}: unknown rank {key!r} in tags")
        tags = np.zeros(52, np.int64)
        for code in range(52):
            tags[code] = by_rank.get(code % 13 + 1, 0)
        points: dict[int, int] = {}
        for key, value in raw_ramp.items():
            try:
                tc = int(str(key))
            except ValueError:
                raise InputError(f"{name}: ramp keys are true counts, not {key!r}") from None
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(f"{name}: ramp units must be whole numbers >= 0")
            points[max(TC_MIN, min(TC_MAX, tc))] = value
        ramp = np.zeros(TC_MAX - TC_MIN + 1, np.int64)
        keys = sorted(points)
        for tc in range(TC_MIN, TC_MAX + 1):
            below = [k for k in keys if k <= tc]
            ramp[tc - TC_MIN] = points[below[-1]] if below else points[keys[0]]
        if not ramp.any():
            raise InputError(f"{name}: the ramp never bets")
        return cls(name, tags, ramp, {"tags": dict(raw_tags), "ramp": dict(raw_ramp)})
