"""The vector environment: table ``i`` seeded ``seed + i`` plays what the single env seeded
``seed + i`` plays for the same actions (observations, masks, rewards, the end of each
round, refusals), through rounds, reshuffles and the same-step autoreset."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import pontoon.env
from pontoon.env import PontoonEnv, PontoonVectorEnv
from tests.test_env import compiled_env  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("compiled_env")


@pytest.mark.parametrize(
    ("preset", "options"),
    [("nz-pontoon", {"boxes": 2}), ("classic-blackjack", {"bets": (500, 1000, 4000)})],
)
def test_the_vector_env_is_the_single_env(preset: str, options: dict[str, object]) -> None:
    n, seed = 5, 100
    vec = PontoonVectorEnv(n, preset, {"decks": 2}, specialise=False, **options)  # type: ignore[arg-type]
    singles = [PontoonEnv(preset, {"decks": 2}, **options) for _ in range(n)]  # type: ignore[arg-type]
    vobs, _ = vec.reset(seed=seed)
    sobs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    rng = np.random.default_rng(seed)
    rounds = 0
    for step in range(1500):
        for i in range(n):
            for key, value in sobs[i].items():
                assert np.array_equal(vobs[key][i], value), (step, i, key)
        # mostly legal actions, now and then an illegal one (refused by both)
        acts = np.array(
            [
                int(rng.choice(np.flatnonzero(o["action_mask"])))
                if rng.random() > 0.05
                else int(rng.integers(len(vec.action_names)))
                for o in sobs
            ]
        )
        vobs, vrew, vterm, _, vinfo = vec.step(acts)
        for i, env in enumerate(singles):
            o, r, t, _, info = env.step(int(acts[i]))
            assert vinfo["refused"][i] == ("refused" in info)
            assert (vrew[i], vterm[i]) == (r, t), (step, i)
            if t:
                rounds += 1
                assert vinfo["final_obs"]["phase"][i] == o["phase"] == 3
                o, _ = env.reset()
            sobs[i] = o
    assert rounds > 500


def test_the_vector_env_is_registered_and_batched() -> None:
    env = gym.make_vec(
        pontoon.env.ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", specialise=False
    )
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space
    assert env.action_space.shape == (3,)
    obs, rewards, *_ = env.step(np.full(3, 8))  # the wagers
    assert obs in env.observation_space and rewards.dtype == np.float64


def test_the_final_observation_is_the_single_envs_last() -> None:
    """``info["final_obs"]`` of a table whose round ended is, key by key, the single env's
    observation at the end of the same round (8.6: the round over, nothing legal)."""
    n, seed = 4, 7
    vec = PontoonVectorEnv(n, "nz-pontoon", {"decks": 1}, boxes=2, specialise=False)
    singles = [PontoonEnv("nz-pontoon", {"decks": 1}, boxes=2) for _ in range(n)]
    vec.reset(seed=seed)
    sobs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(600):
        acts = np.array([int(rng.choice(np.flatnonzero(o["action_mask"]))) for o in sobs])
        _, _, term, _, info = vec.step(acts)
        for i, env in enumerate(singles):
            o, _, t, _, _ = env.step(int(acts[i]))
            assert t == term[i]
            if t:
                ended += 1
                for key, value in o.items():
                    assert np.array_equal(info["final_obs"][key][i], value), key
                o, _ = env.reset()
            sobs[i] = o
    assert ended > 100
