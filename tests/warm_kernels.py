"""Compile the compiled code the tests share into numba's cache before the tests run.

``make test`` runs this beside ruff and mypy, which keep one core busy and leave the other
idle: the env's run-time steps and the simulator's generic kernel are then in the cache
when pytest starts, instead of being compiled on the workers' time (twice over,
for what each worker reaches). It only warms a cache: the tests do not depend on it, and a
failure here fails nothing.
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
    _sim()


def _sim() -> None:
    """The simulator's generic kernel, which every short simulation in the tests runs."""
    from pontoon.analysis.chart import Chart
    from pontoon.rules import load_rules
    from pontoon.sim.job import Job, Kernel, run_chunk

    job = Job.build(load_rules("nz-pontoon"), Chart.initial(), kernel=Kernel.GENERIC)
    run_chunk(job, 1, 10)


if __name__ == "__main__":
    main()
