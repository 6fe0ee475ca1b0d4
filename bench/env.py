"""Steps per second of the learning environment, on one core, beside gymnasium's
``Blackjack-v1`` measured in the same run.

The single env is ``gymnasium.make("pontoon/Pontoon-v0")`` (nz-pontoon, every rule: the real
shoe, pontoons, bonuses, doubles, splits, surrender, insurance) and ``Blackjack-v1`` is
``gymnasium.make("Blackjack-v1")`` (infinite deck, hit or stick): the same wrappers, the same
agent (hit below 17, else stand; the wager and no insurance where the env asks). Steps are
``env.step`` calls, resets included in the time; they alternate, ours then gymnasium's,
RUNS times, best of each. The vector env steps 1,024 tables together (with the steps
specialised to nz-pontoon's table, ``PontoonVectorEnv``'s default); its figure is
table-steps per second of ``step`` itself (the agent's numpy outside the clock; with it
too in ``vector_steps_per_second_with_agent``).

Prints a line per measurement, then one JSON object as the last line, also appended to
bench/results/env.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/env.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import gymnasium as gym
import numpy as np

import pontoon.env
from pontoon.env.vector import PontoonVectorEnv

RUNS = 3
TABLES = 1024  # tables per vector step: their states stay in cache


def ours(env: Any, steps: int, names: list[str]) -> float:
    """Steps per second of the single env under the agent."""
    bet, hit, stand, no_ins = (names.index(a) for a in ("bet", "hit", "stand", "no-insurance"))
    obs, _ = env.reset(seed=1)
    start = time.perf_counter()
    for _ in range(steps):
        phase = obs["phase"]
        if phase == 0:
            a = bet
        elif phase == 1:
            a = no_ins
        else:
            mask = obs["action_mask"]
            a = hit if (obs["total"] < 17 and mask[hit]) or not mask[stand] else stand
        obs, _, terminated, _, _ = env.step(a)
        if terminated:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - start)


def blackjack(env: Any, steps: int) -> float:
    obs, _ = env.reset(seed=1)
    start = time.perf_counter()
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(1 if obs[0] < 17 else 0)
        if terminated or truncated:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - start)


def vector(seconds: float, copy: bool = True) -> tuple[float, float]:
    """Table-steps per second of the vector env's step, and with the agent's numpy;
    ``copy=False``: observations handed out as views of the env's own arrays (Gymnasium's
    ``copy`` of a vector env), valid until the next step."""
    env = PontoonVectorEnv(TABLES, "nz-pontoon", copy=copy)
    names = env.action_names
    bet, hit, stand, no_ins = (names.index(a) for a in ("bet", "hit", "stand", "no-insurance"))
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step(np.full(TABLES, bet))  # compile or load the cached steps
    in_step = 0.0
    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        mask = obs["action_mask"]
        play = np.where(
            (obs["total"] < 17) & (mask[:, hit] == 1) | (mask[:, stand] == 0), hit, stand
        )
        acts = np.where(obs["phase"] == 0, bet, np.where(obs["phase"] == 1, no_ins, play))
        t = time.perf_counter()
        obs, _, _, _, info = env.step(acts)
        in_step += time.perf_counter() - t
        calls += 1
        if info["refused"].any():  # every step counted is a move of the game
            raise AssertionError("the agent's action was refused")
    return calls * TABLES / in_step, calls * TABLES / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run")
    args = parser.parse_args()
    steps = 30_000 if args.quick else 200_000
    load = os.getloadavg()[0]
    env = gym.make(pontoon.env.ENV_ID)
    names = env.unwrapped.action_names  # type: ignore[attr-defined]
    bj = gym.make("Blackjack-v1")
    ours(env, 2000, names)  # compile or load the cached steps
    best_ours = best_bj = 0.0
    for run in range(RUNS):
        mine, theirs = ours(env, steps, names), blackjack(bj, steps)
        best_ours, best_bj = max(best_ours, mine), max(best_bj, theirs)
        print(f"run {run + 1}: Pontoon-v0 {mine:,.0f} steps/s, Blackjack-v1 {theirs:,.0f} steps/s")
    vec, vec_agent = vector(3.0 if args.quick else 10.0)
    print(f"vector env, {TABLES} tables: {vec:,.0f} steps/s ({vec_agent:,.0f} with the agent)")
    views, views_agent = vector(3.0 if args.quick else 10.0, copy=False)
    print(f"the same, copy=False: {views:,.0f} steps/s ({views_agent:,.0f} with the agent)")
    print(f"ours/Blackjack-v1: {best_ours / best_bj:.2f}")
    out = {
        "bench": "env",
        "steps_per_second": round(best_ours),
        "gymnasium_blackjack_steps_per_second": round(best_bj),
        "vector_steps_per_second": round(vec),
        "ratio_to_gymnasium": round(best_ours / best_bj, 2),
        "vector_tables": TABLES,
        "vector_steps_per_second_with_agent": round(vec_agent),
        "vector_steps_per_second_no_copy": round(views),
        "vector_steps_per_second_no_copy_with_agent": round(views_agent),
        "gymnasium": gym.__version__,
        "load_average_at_start": load,
        "cores": 1,
    }
    from record import emit  # bench/record.py, beside this file

    emit(out)


if __name__ == "__main__":
    main()
