"""The environment's compiled steps against the round engine, move by move: the same shoes
(the env's shuffles replayed by a real :class:`pontoon.shoe.Shoe` through
:class:`pontoon.sim.rng.KernelShuffler`: burn card, cutting card, 8.7/8.8 and 16.7 reshuffles
included), the same moves chosen at random among the legal ones; at every decision the env's
action mask is the round's legal moves, each round's reward is the round's net, and the
round the env's record replays is the round played (its whole event log). Then a chart
played through the env against the compiled simulator's rounds on the same shoes."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils import seeding

from pontoon.analysis.chart import Chart
from pontoon.env import PontoonEnv, PontoonVectorEnv
from pontoon.env.chart_policy import ChartPolicy
from pontoon.env.single import table_key
from pontoon.events import Event
from pontoon.round import Move, Round
from pontoon.shoe import Shoe
from pontoon.sim.job import Job, run_chunk
from pontoon.sim.rng import KernelShuffler
from pontoon.vocab import Action, TurnKind
from tests.test_env import compiled_env  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("compiled_env")

PLAYER = "player"
HAND_MOVES = ("hit", "stand", "double", "split", "surrender", "rescue")

# (preset, knobs, env options, rounds): every knob the steps read, and several boxes
CASES = [
    ("nz-pontoon", {}, {}, 500),
    ("nz-pontoon", {"decks": 1, "penetration": 1.0}, {"boxes": 3}, 150),  # 16.7
    ("nz-pontoon", {"dealer_peeks": True, "hit_split_aces": True, "resplit_aces": True}, {}, 300),
    ("nz-pontoon", {"double_rescue": True, "surrender": "late"}, {"boxes": 2}, 250),  # 12, 9.3
    ("nz-pontoon", {"player_21_wins": False, "burn_card": False}, {"doubles": ("1", "1/2")}, 250),
    (
        "nz-pontoon",
        {"split_by": "value", "dealer_natural_takes": "all"},
        {"bets": (500, 2500)},
        250,
    ),
    ("classic-blackjack", {}, {"boxes": 2}, 300),  # the peek and insurance (8.5, 10)
    ("spanish-21", {"double_on": "any-number"}, {}, 250),
    ("nz-blackjack", {}, {"boxes": 2}, 250),
]


def _move(env: PontoonEnv, a: int, box: int, stake: int) -> Move:
    act = env.table.actions[a]
    action = Action(act.name)
    if action in (Action.INSURE, Action.NO_INSURANCE):
        return Move(action, box + 1, player=PLAYER)
    amount = None
    if act.fraction is not None and act.fraction != 1:
        amount = stake * act.fraction.numerator // act.fraction.denominator
    return Move(action, box + 1, amount=amount)


def _uncommitted(events: list[Event]) -> tuple[Event, ...]:
    """The round's events as the env records them: the real shoe commits to each shoe at its
    shuffle and reveals the one that ends (docs/operators/fairness.md); the env's record, like a
    scripted shoe's, has neither."""
    return tuple(
        e._replace(detail=None) if e.kind == "shuffle" else e
        for e in events
        if e.kind != "disclose"
    )


def _round_legal(rnd: Round) -> set[str]:
    turn = rnd.to_act()
    if turn is None or turn.kind is not TurnKind.DECIDE:
        return set()
    return {m.action.value for m in rnd.legal_moves(PLAYER) if m.action.value in HAND_MOVES}


@pytest.mark.parametrize(("preset", "knobs", "options", "rounds"), CASES)
def test_env_plays_the_round_engines_rounds(
    preset: str, knobs: dict[str, object], options: dict[str, object], rounds: int
) -> None:
    env = PontoonEnv(preset, knobs, **options)  # type: ignore[arg-type]
    seed = 11
    obs, _ = env.reset(seed=seed)
    shoe = Shoe(env.table.rules, KernelShuffler(table_key(seeding.np_random(seed)[0])))
    rng = np.random.default_rng(seed)
    names = env.action_names
    for _ in range(rounds):
        rnd = Round(env.table.rules, shoe)
        stake = 0
        while True:
            legal = np.flatnonzero(obs["action_mask"])
            a = int(rng.choice(legal))
            if obs["phase"] == 0:  # 8.2: the wagers, then the deal
                stake = env.table.actions[a].amount or 0
                for b in range(1, env.table.boxes + 1):
                    rnd.place_wager(b, PLAYER, stake)
                rnd.deal()
            else:
                if obs["phase"] == 2:
                    mine = {names[k] for k in legal if names[k] != "double" or k == 2}
                    assert mine == _round_legal(rnd), (mine, _round_legal(rnd))
                rnd.apply(_move(env, a, obs["box"], stake))
            obs, reward, terminated, _, info = env.step(a)
            if terminated:
                break
            assert not rnd.over
        assert rnd.over
        assert info["net"] == rnd.net(PLAYER)
        assert reward == rnd.net(PLAYER) / env.table.wager
        assert info["events"].events == _uncommitted(rnd.events)  # the record replays it
        obs, _ = env.reset()


@pytest.mark.parametrize(
    ("preset", "boxes", "specialise"),
    [
        ("nz-pontoon", 1, False),
        ("classic-blackjack", 1, False),
        # the default path, its steps compiled for the table (tests/test_env_specialised.py)
        pytest.param("nz-pontoon", 2, True, marks=pytest.mark.slow),
    ],
)
def test_a_chart_through_the_env_is_the_simulators_rounds(
    preset: str, boxes: int, specialise: bool
) -> None:
    """The optimal-chart path: the env's vector tables play a chart as the compiled simulator
    does (kernel.decisions), round by round, on the simulator's own shoes."""
    chart = Chart.read(f"tests/data/sim/{preset}.csv")
    env = PontoonVectorEnv(1, preset, boxes=boxes, specialise=specialise)
    policy = ChartPolicy(env.table, chart)
    seed = 5
    obs, _ = env.reset(seed=seed)
    got: list[float] = []
    while len(got) < 3000:
        obs, reward, term, _, info = env.step(policy(obs))
        assert not info["refused"].any()
        if term[0]:
            got.append(reward[0])
    job = Job.build(env.table.rules, chart, boxes=boxes, wager=env.table.wager, others=False)
    _, nets = run_chunk(job, table_key(seeding.np_random(seed)[0]), len(got), trace=True)
    assert np.array_equal(np.array(got) * env.table.wager, nets.sum(axis=1))
