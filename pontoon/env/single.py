"""``pontoon/Pontoon-v0``: one player on one or more boxes of a real table, every action of
the game, as a Gymnasium environment (docs/researchers/env.md).

>>> env = PontoonEnv("nz-pontoon", bets=(500, 2500))
>>> env.action_names[:4], env.action_names[-2:], env.observation_space["up"]
(['hit', 'stand', 'double', 'split'], ['bet', 'bet'], Discrete(11))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pontoon.env import layout as L
from pontoon.env import run
from pontoon.env.record import RoundRecord
from pontoon.env.render import ansi, rgb
from pontoon.env.spaces import observation_space
from pontoon.env.spec import BET_WORD, TableSpec, rules_of
from pontoon.errors import IllegalAction
from pontoon.legality import Facts, Refusal, refusal
from pontoon.rules import RuleSet
from pontoon.vocab import Action

KEYS: Final = L.OBS_KEYS
ObsType = dict[str, Any]


def table_key(rng: np.random.Generator) -> int:
    """A shoe's key (the simulator's stream key) drawn from the env's generator."""
    return int(rng.integers(0, 2**63 - 1, dtype=np.int64))


class PontoonEnv(gym.Env[ObsType, int]):
    """One player on ``boxes`` boxes under ``rules`` (a preset, a TOML file or a RuleSet)
    changed by ``set`` (knob values). Each round starts with the wager: one ``bet`` action,
    or one per amount of ``bets`` (cents). ``doubles``: the parts of the wager a double may
    add (1 first). The reward is the round's net over ``wager`` (default the first bet).
    ``illegal``: ``"refuse"`` (reward 0, nothing changes, ``info["refused"]`` names the
    rule) or ``"raise"`` (:class:`~pontoon.errors.IllegalAction`)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        rules: str | RuleSet = "nz-pontoon",
        set: Mapping[str, Any] | Sequence[str] | None = None,
        *,
        boxes: int = 1,
        wager: int | None = None,
        bets: Sequence[int] | None = None,
        doubles: Sequence[Fraction | str | float] = (Fraction(1),),
        illegal: str = "refuse",
        render_mode: str | None = None,
    ) -> None:
        if illegal not in ("refuse", "raise"):
            raise ValueError(f"illegal must be 'refuse' or 'raise', not {illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.table = TableSpec.build(
            rules_of(rules, set), boxes=boxes, wager=wager, bets=bets, doubles=doubles
        )
        self.illegal = illegal
        self.render_mode = render_mode
        self.action_names = [a.name for a in self.table.actions]
        self.action_space = spaces.Discrete(len(self.table.actions))  # type: ignore[assignment]
        self.observation_space = observation_space(self.table)
        pp = self.table.params
        self._pp = pp
        self._w = np.zeros((1, int(pp[L.E_L])), np.int64)
        self._ob = np.zeros((L.NOBS, 1), np.int64)
        self._co = np.zeros((1, L.NVAL), np.int64)
        self._mk = np.zeros((1, len(self.table.actions)), np.int8)
        self._olog = int(pp[L.E_OLOG])
        self._unit = int(pp[L.E_UNIT])
        self._moves: list[tuple[int, int]] = []
        self._stake = 0
        self._obs: ObsType = {}
        self._started = False

    # ------------------------------------------------------------------ Gymnasium
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """The next round's betting; a new shoe when ``seed`` is given, on the first reset,
        or with ``options={"shuffle": True}`` (else the shoe goes on from the last round)."""
        super().reset(seed=seed)
        if seed is not None or not self._started or (options or {}).get("shuffle"):
            run.reset_table(self._w, 0, self._pp, table_key(self.np_random))
            run.observe(self._w, 0, self._pp, self._ob, self._co, self._mk, 0)
            self._started = True
        else:
            run.next_round(self._w, self._pp, 0, self._ob, self._co, self._mk)
        self._moves = []
        self._stake = 0
        obs = self._observe()
        return obs, {"action_mask": obs["action_mask"], "events": self.record()}

    def step(self, action: int) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        a = int(action)
        before = self._obs
        if run.step_one(self._w, self._pp, 0, a, self._ob, self._co, self._mk):
            why = self.refusal(a, before)
            if self.illegal == "raise":
                name = self.action_names[a] if 0 <= a < len(self.action_names) else str(a)
                raise IllegalAction(name, before.get("box", 0) + 1, why.rule, why.reason)
            obs = self._observe()  # the same state, in new arrays
            info = {"action_mask": obs["action_mask"], "events": self.record()}
            info["refused"] = {"action": a, "rule": why.rule, "reason": why.reason}
            return obs, 0.0, False, False, info
        if before["phase"] == L.BET:
            self._stake = int(self._w[0, L.STAKE])
        else:
            self._moves.append((a, before["box"]))
        obs = self._observe()
        done: dict[str, Any] = {"action_mask": obs["action_mask"], "events": self.record()}
        if obs["phase"] == L.OVER:
            net = int(self._w[0, L.NET])
            done["net"] = net
            return obs, net / self._unit, True, False, done
        return obs, 0.0, False, False, done

    def render(self) -> str | np.ndarray[Any, np.dtype[np.uint8]] | None:
        if self.render_mode == "ansi":
            return ansi(self.record(), self._obs, self.action_names)
        if self.render_mode == "rgb_array":
            return rgb(self.record())
        return None

    # ------------------------------------------------------------------ reading
    def _observe(self) -> ObsType:
        obs: ObsType = dict(zip(KEYS, self._ob[:, 0].tolist(), strict=True))
        obs["counts"] = self._co[0].copy()
        obs["action_mask"] = self._mk[0].copy()
        self._obs = obs
        return obs

    def record(self) -> RoundRecord:
        """The round so far, for the round engine to replay (``info["events"]``)."""
        n = int(self._w[0, L.LOGN])
        log = self._w[0, self._olog : self._olog + n].tolist()
        return RoundRecord(self.table, log, self._stake, self._moves, bool(self._w[0, L.VOID]))

    def refusal(self, a: int, obs: ObsType) -> Refusal:
        """Why action ``a`` is not legal in the state ``obs`` shows: the rule that forbids
        it (:func:`pontoon.legality.refusal` for a hand's decision)."""
        if not 0 <= a < len(self.action_names):
            return Refusal("8.3", f"no action {a}: 0 to {len(self.action_names) - 1}")
        act = self.table.actions[a]
        phase = obs["phase"]
        if phase == L.OVER:
            return Refusal("8.6", "the round is over: reset for the next")
        if act.name == BET_WORD:
            return Refusal("8.2", "no more bets: the cards are dealt")
        if phase == L.BET:
            return Refusal("8.2", "the wager comes first")
        action = Action(act.name)
        if phase == L.INS:
            return Refusal("10", "insurance against the dealer's ace is decided first")
        if action is Action.INSURE or action is Action.NO_INSURANCE:
            return Refusal("10", "insurance is offered only against a dealer ace, before play")
        facts = Facts(
            obs["cards"],
            obs["total"],
            obs["pair"] > 0,
            bool(obs["from_split"]),
            bool(obs["split_aces"]),
            bool(obs["doubled"]),
            obs["hands"],
            bool(obs["acted"]),
            obs["up"],
        )
        why = refusal(action, facts, self.table.rules)
        if why is not None:
            return why
        return Refusal("12", f"a double of {act.fraction} of the wager is less than one unit")


__all__ = ["PontoonEnv", "table_key"]
