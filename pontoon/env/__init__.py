"""The learning environment (docs/researchers/env.md): ``import pontoon.env`` registers
``pontoon/Pontoon-v0`` with Gymnasium (keyword arguments ``rules=`` and ``set=``, as
``--rules`` and ``--set``), and offers the PettingZoo table of seated players and players
betting behind (:class:`~pontoon.env.table.PontoonTable`) and the vector environment
(:class:`~pontoon.env.vector.PontoonVectorEnv`).

>>> import gymnasium as gym
>>> env = gym.make("pontoon/Pontoon-v0", rules="classic-blackjack", set={"decks": 2})
>>> env.unwrapped.table.rules.decks
2
"""

from __future__ import annotations

from typing import Final

import gymnasium as gym

from pontoon.env.single import PontoonEnv
from pontoon.env.spec import TableSpec
from pontoon.env.vector import PontoonVectorEnv

ENV_ID: Final = "pontoon/Pontoon-v0"

if ENV_ID not in gym.registry:
    gym.register(
        id=ENV_ID,
        entry_point="pontoon.env.single:PontoonEnv",
        vector_entry_point="pontoon.env.vector:PontoonVectorEnv",
    )


def __getattr__(name: str) -> object:
    if name == "PontoonTable":  # PettingZoo is imported only when the table is asked for
        from pontoon.env.table import PontoonTable

        return PontoonTable
    raise AttributeError(name)


__all__ = ["ENV_ID", "PontoonEnv", "PontoonTable", "PontoonVectorEnv", "TableSpec"]
