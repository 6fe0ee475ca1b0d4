"""The vector environment's default path: its steps compiled for one table's rule switches and
shape (``PontoonVectorEnv(specialise=True)``, what users, the bench and the examples run) play
what the generic steps play — observations, masks, rewards, refusals, the end of each round —
for the same seeds and actions, across rule sets and box counts (a chart played through them
is the simulator's rounds: tests/test_env_engine.py, which ties the generic steps to the round
engine)."""

from __future__ import annotations

import numpy as np
import pytest

from pontoon.env import PontoonVectorEnv
from tests.test_env import compiled_env  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.usefixtures("compiled_env"), pytest.mark.slow]

# two rule sets, one and two boxes (each a compilation of its own: some 20 s each)
CASES = [
    ("nz-pontoon", {"boxes": 2}),
    ("classic-blackjack", {"bets": (500, 1000, 4000)}),
]


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_the_specialised_steps_play_the_generic_steps(
    preset: str, options: dict[str, object]
) -> None:
    n, seed = 4, 7
    fast = PontoonVectorEnv(n, preset, {"decks": 2}, specialise=True, **options)  # type: ignore[arg-type]
    slow = PontoonVectorEnv(n, preset, {"decks": 2}, specialise=False, **options)  # type: ignore[arg-type]
    fobs, _ = fast.reset(seed=seed)
    sobs, _ = slow.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rounds = 0
    for step in range(2000):
        for key, value in sobs.items():
            assert np.array_equal(fobs[key], value), (step, key)
        mask = sobs["action_mask"]
        acts = np.array(  # mostly legal, now and then an illegal one (refused by both)
            [
                int(rng.choice(np.flatnonzero(mask[i])))
                if rng.random() > 0.05
                else int(rng.integers(len(slow.action_names)))
                for i in range(n)
            ]
        )
        fobs, frew, fterm, _, finfo = fast.step(acts)
        sobs, srew, sterm, _, sinfo = slow.step(acts)
        assert np.array_equal(frew, srew) and np.array_equal(fterm, sterm), step
        assert np.array_equal(finfo["refused"], sinfo["refused"]), step
        rounds += int(sterm.sum())
    assert rounds > 400
