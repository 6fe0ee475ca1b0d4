"""N tables stepped together in compiled code, as a :class:`gymnasium.vector.VectorEnv`
(docs/env.md). Table ``i`` seeded ``seed + i`` plays exactly what
:class:`pontoon.env.single.PontoonEnv` seeded ``seed + i`` plays for the same actions; a
round that ends starts the next round's betting in the same step (``AutoresetMode.SAME_STEP``,
the last observation in ``info["final_obs"]``).

>>> env = PontoonVectorEnv(4, "classic-blackjack")
>>> env.action_space, env.observation_space["action_mask"].shape
(MultiDiscrete([9 9 9 9]), (4, 9))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from pontoon.env import layout as L
from pontoon.env import run
from pontoon.env.single import table_key
from pontoon.env.spaces import observation_space
from pontoon.env.spec import TableSpec, rules_of
from pontoon.rules import RuleSet

ObsType = dict[str, Any]
Arr = np.ndarray[Any, Any]


class PontoonVectorEnv(VectorEnv[ObsType, Arr, Arr]):
    """``num_envs`` tables of one player each (the arguments as for ``PontoonEnv``).
    ``copy``: return copies of the observation arrays (else views the next step changes)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int,
        rules: str | RuleSet = "nz-pontoon",
        set: Mapping[str, Any] | Sequence[str] | None = None,
        *,
        boxes: int = 1,
        wager: int | None = None,
        bets: Sequence[int] | None = None,
        doubles: Sequence[Fraction | str | float] = (Fraction(1),),
        copy: bool = True,
    ) -> None:
        self.table = TableSpec.build(
            rules_of(rules, set), boxes=boxes, wager=wager, bets=bets, doubles=doubles, log=False
        )
        n = self.num_envs = num_envs
        na = len(self.table.actions)
        self.action_names = [a.name for a in self.table.actions]
        self.single_observation_space = observation_space(self.table)
        self.single_action_space = spaces.Discrete(na)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.copy = copy
        pp = self._pp = self.table.params
        self._w = np.zeros((n, int(pp[L.E_L])), np.int64)
        self._ob: Arr
        self._co: Arr
        self._mk: Arr
        self._ob, self._fob = (np.zeros((L.NOBS, n), np.int64) for _ in range(2))
        self._co, self._fco = (np.zeros((n, L.NVAL), np.int64) for _ in range(2))
        self._mk, self._fmk = (np.zeros((n, na), np.int8) for _ in range(2))
        self._rw: Arr = np.zeros(n)
        self._term: Arr = np.zeros(n, np.bool_)
        self._ref: Arr = np.zeros(n, np.bool_)
        self._trunc = np.zeros(n, np.bool_)

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """New shoes: table ``i`` keyed as a single env reset with ``seed + i`` (or
        ``seed[i]``); fresh entropy without a seed."""
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(n)]
        else:
            seeds = list(seed)
        keys = np.array([table_key(seeding.np_random(s)[0]) for s in seeds], np.int64)
        run.reset_many(self._w, self._pp, keys, self._ob, self._co, self._mk)
        obs = self._obs(self._ob, self._co, self._mk)
        return obs, {"action_mask": obs["action_mask"]}

    def step(self, actions: Arr) -> tuple[ObsType, Arr, Arr, Arr, dict[str, Any]]:
        acts = np.asarray(actions, np.int64)
        if self.copy:  # new arrays, each entry of which the step writes: none is copied
            self._ob, self._co, self._mk, self._rw, self._term, self._ref = (
                np.empty_like(x)
                for x in (self._ob, self._co, self._mk, self._rw, self._term, self._ref)
            )
        run.step_many(
            self._w,
            self._pp,
            acts,
            self._ob,
            self._co,
            self._mk,
            self._rw,
            self._term,
            self._ref,
            self._fob,
            self._fco,
            self._fmk,
        )
        obs = self._batch(self._ob, self._co, self._mk)
        info: dict[str, Any] = {"action_mask": obs["action_mask"], "refused": self._ref}
        if self._term.any():
            info["final_obs"] = self._obs(self._fob, self._fco, self._fmk)
            info["_final_obs"] = self._term
        return obs, self._rw, self._term, self._trunc, info

    def _obs(self, ob: Arr, co: Arr, mk: Arr) -> ObsType:
        """The observation in these arrays, copied unless ``copy=False``."""
        if self.copy:
            ob, co, mk = ob.copy(), co.copy(), mk.copy()
        return self._batch(ob, co, mk)

    @staticmethod
    def _batch(ob: Arr, co: Arr, mk: Arr) -> ObsType:
        out: ObsType = dict(zip(L.OBS_KEYS, ob, strict=True))
        out["counts"] = co
        out["action_mask"] = mk
        return out

    def nets(self) -> Arr:
        """Each table's net of the round in play so far, cents."""
        return self._w[:, L.NET].copy()


__all__ = ["PontoonVectorEnv"]
