"""N tables stepped together in compiled code, as a :class:`gymnasium.vector.VectorEnv`
(docs/researchers/env.md). Table ``i`` seeded ``seed + i`` plays exactly what
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
from typing import Any, Final

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
from pontoon.env.special import specialisation, steps_for
from pontoon.rules import RuleSet

ObsType = dict[str, Any]
Arr = np.ndarray[Any, Any]
FINAL_ROWS: Final = (0, 12, 13)  # phase, up, remaining: what run.observe_over writes


class PontoonVectorEnv(VectorEnv[ObsType, Arr, Arr]):
    """``num_envs`` tables of one player each (the arguments as for ``PontoonEnv``).
    ``copy``: return copies of the observation arrays (else views the next step changes).
    ``specialise``: step with the steps compiled for this table's rule switches and shape
    (:mod:`pontoon.env.special`: faster, compiled once per machine for each kind of table),
    else with the steps that read them at run time (those the single env takes)."""

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
        specialise: bool = True,
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
        self._run: Any = steps_for(specialisation(pp)) if specialise else run
        self._w = np.zeros((n, int(pp[L.E_L])), np.int64)
        self._ob: Arr
        self._co: Arr
        self._mk: Arr
        self._rw: Arr
        self._term: Arr
        self._ref: Arr
        self._ob, self._co, self._mk, self._rw, self._term, self._ref = self._arrays()
        self._views = self._batch(self._ob, self._co, self._mk)  # copy=False: always these
        # the final observation: the kernel writes its phase, dealer's card, cards left
        # (rows FINAL_ROWS) and counts; its other rows and its mask are 0 at the end of
        # every round, and are given as one read-only array of zeros each
        self._fob = np.zeros((L.NOBS, n), np.int64)
        self._fco = np.zeros((n, L.NVAL), np.int64)
        zero_row, zero_mask = np.zeros(n, np.int64), np.zeros((n, na), np.int8)
        zero_row.flags.writeable = zero_mask.flags.writeable = False
        self._final_zeros: ObsType = {
            k: zero_row for r, k in enumerate(L.OBS_KEYS) if r not in FINAL_ROWS
        }
        self._final_zeros["action_mask"] = zero_mask
        self._trunc = np.zeros(n, np.bool_)

    def _arrays(self) -> tuple[Arr, Arr, Arr, Arr, Arr, Arr]:
        """New arrays for a step to write (each entry is written): the observation rows and
        counts in one block, the mask, rewards, terminations and refusals."""
        n = self.num_envs
        block = np.empty(n * (L.NOBS + L.NVAL), np.int64)
        flags = np.empty((2, n), np.bool_)
        return (
            block[: L.NOBS * n].reshape(L.NOBS, n),
            block[L.NOBS * n :].reshape(n, L.NVAL),
            np.empty((n, len(self.table.actions)), np.int8),
            np.empty(n),
            flags[0],
            flags[1],
        )

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
        if self.copy:
            self._ob, self._co, self._mk, self._rw, self._term, self._ref = self._arrays()
        self._run.reset_many(self._w, self._pp, keys, self._ob, self._co, self._mk)
        obs = self._batch(self._ob, self._co, self._mk)
        return obs, {"action_mask": obs["action_mask"]}

    def step(self, actions: Arr) -> tuple[ObsType, Arr, Arr, Arr, dict[str, Any]]:
        acts = np.asarray(actions, np.int64)
        if self.copy:  # new arrays, each entry of which the step writes: none is copied
            self._ob, self._co, self._mk, self._rw, self._term, self._ref = self._arrays()
        ended = self._run.step_many(
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
        )
        obs = dict(self._views) if not self.copy else self._batch(self._ob, self._co, self._mk)
        info: dict[str, Any] = {"action_mask": obs["action_mask"], "refused": self._ref}
        if ended:
            info["final_obs"] = self._final_obs()
            info["_final_obs"] = self._term
        return obs, self._rw, self._term, self._trunc, info

    def _final_obs(self) -> ObsType:
        """The last observation of each table whose round ended, copied unless
        ``copy=False``."""
        fob, fco = self._fob, self._fco
        out = dict(self._final_zeros)
        for r in FINAL_ROWS:
            out[L.OBS_KEYS[r]] = fob[r].copy() if self.copy else fob[r]
        out["counts"] = fco.copy() if self.copy else fco
        return out

    @staticmethod
    def _batch(ob: Arr, co: Arr, mk: Arr) -> ObsType:
        out: ObsType = dict(zip(L.OBS_KEYS, list(ob), strict=True))
        out["counts"] = co
        out["action_mask"] = mk
        return out

    def nets(self) -> Arr:
        """Each table's net of the round in play so far, cents."""
        return self._w[:, L.NET].copy()


__all__ = ["PontoonVectorEnv"]
