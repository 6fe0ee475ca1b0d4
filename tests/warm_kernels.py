"""Compile the learning environment's kernels into numba's cache before the tests run.

``make test`` runs this beside ruff and mypy, which keep one core busy and leave the other
idle: the env's kernels (about 30 s to compile cold) are then in the cache when pytest starts,
instead of being compiled twice over, once by each worker that reaches an env test. It only
warms a cache: the tests do not depend on it, and a failure here fails nothing.
"""

from __future__ import annotations

import numpy as np

from pontoon.env import PontoonEnv, PontoonVectorEnv


def main() -> None:
    env = PontoonEnv("nz-pontoon", boxes=2)
    _, info = env.reset(seed=1)
    for _ in range(200):  # every kind of step: bets, decisions, the dealer, settlement
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _reward, done, _cut, info = env.step(action)
        if done:
            _, info = env.reset()
    vec = PontoonVectorEnv(4, "nz-pontoon", specialise=False)  # what the tests step with
    vec.reset(seed=1)
    for _ in range(50):
        vec.step(np.zeros(4, np.int64))


if __name__ == "__main__":
    main()
