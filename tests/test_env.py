"""The Gymnasium environment and the PettingZoo table: their checkers, the same seed giving
the same episode, refused actions that change nothing (each naming its rule), the real shoe
(8.1, 8.7, 8.8), the wager and bet sizing (8.2), insurance (10) and the players behind
(15.3)."""

from __future__ import annotations

import fcntl
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import pontoon.env
from pontoon.env import PontoonEnv
from pontoon.env import layout as L
from pontoon.env.table import ACTIONS, PontoonTable
from pontoon.errors import IllegalAction
from pontoon.hand import is_pontoon
from pontoon.round import Move
from pontoon.vocab import Action, EventKind, TurnKind


@pytest.fixture(scope="session")
def compiled_env() -> Iterator[None]:
    """The env's compiled steps, compiled by one test process at a time: the first compiles
    and caches them (numba, ``cache=True``), the others then load the cache instead of
    compiling them again at the same time."""
    lock = Path(tempfile.gettempdir()) / "pontoon-env-compile.lock"
    with lock.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        env = PontoonEnv("classic-blackjack")
        env.reset(seed=0)
        env.step(env.action_names.index("bet"))
        vec = pontoon.env.PontoonVectorEnv(1, "classic-blackjack", specialise=False)
        vec.reset(seed=0)
        vec.step(np.array([vec.action_names.index("bet")]))
        fcntl.flock(f, fcntl.LOCK_UN)
    yield


pytestmark = pytest.mark.usefixtures("compiled_env")


def _play(env: PontoonEnv, seed: int, steps: int) -> list[tuple[object, ...]]:
    """Random legal play from ``seed``: every step's action, reward, observation, events."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out: list[tuple[object, ...]] = []
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, _, info = env.step(a)
        shown = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in obs.items()}
        out.append((a, reward, sorted(shown.items()), info["events"].events))
        if terminated:
            obs, _ = env.reset()
    return out


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_gymnasiums_checker_passes(mode: str) -> None:
    env = gym.make("pontoon/Pontoon-v0", rules="nz-pontoon", render_mode=mode).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the checker fails the test
        check_env(env, skip_render_check=False)
    env.reset(seed=1)
    env.step(env.action_names.index("bet"))
    frame = env.render()
    if mode == "rgb_array":
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 3  # cards drawn on the felt
    else:
        assert isinstance(frame, str) and "dealer:" in frame and "legal:" in frame


def test_registered_with_rules_and_set() -> None:
    env = gym.make(pontoon.env.ENV_ID, rules="classic-blackjack", set=["decks=2"])
    assert env.unwrapped.table.rules.decks == 2  # type: ignore[attr-defined]
    assert env.unwrapped.table.rules.name == "classic-blackjack"  # type: ignore[attr-defined]


def test_the_same_seed_gives_the_same_episode() -> None:
    a = _play(PontoonEnv("nz-pontoon", boxes=2), 42, 300)
    b = _play(PontoonEnv("nz-pontoon", boxes=2), 42, 300)
    assert a == b
    assert a != _play(PontoonEnv("nz-pontoon", boxes=2), 43, 300)


def test_a_refused_action_changes_nothing() -> None:
    """Every illegal action, tried at every step of random play, leaves the round as it was:
    the same observation and record, and play goes on exactly as in a twin env never sent it."""
    env, twin = PontoonEnv("classic-blackjack"), PontoonEnv("classic-blackjack")
    obs, _ = env.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(3)
    refused = 0
    for _ in range(300):
        before = env.record()
        for a in np.flatnonzero(obs["action_mask"] == 0):
            o2, reward, terminated, _, info = env.step(int(a))
            assert (reward, terminated) == (0.0, False)
            assert info["refused"]["rule"] and info["refused"]["reason"]
            assert all(np.array_equal(o2[k], obs[k]) for k in obs)
            assert env.record().events == before.events
            refused += 1
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, _, _ = env.step(a)
        o_twin, r_twin, t_twin, _, _ = twin.step(a)
        assert (reward, terminated) == (r_twin, t_twin)
        assert all(np.array_equal(obs[k], o_twin[k]) for k in obs)
        if terminated:
            obs, _ = env.reset()
            twin.reset()
    assert refused > 1000


def test_14_1_d_stand_on_11_is_refused_with_its_rule() -> None:
    env = PontoonEnv("nz-pontoon", illegal="raise")
    for seed in range(200):
        obs, _ = env.reset(seed=seed)
        obs, *_ = env.step(env.action_names.index("bet"))
        if obs["phase"] == 2 and obs["total"] <= 11:
            break
    assert obs["action_mask"][env.action_names.index("stand")] == 0
    with pytest.raises(IllegalAction, match=r"14\.1\(d\)"):
        env.step(env.action_names.index("stand"))
    soft = PontoonEnv("nz-pontoon")
    soft.reset(seed=seed)
    soft.step(soft.action_names.index("bet"))
    info = soft.step(soft.action_names.index("stand"))[4]
    assert info["refused"]["rule"] == "14.1(d)"


def test_8_1_8_7_8_8_the_real_shoe_burns_and_reshuffles() -> None:
    env = PontoonEnv("nz-pontoon", {"decks": 1, "penetration": 0.5})
    kinds: list[tuple[str, str | None]] = []
    for _, _, _, events in _play(env, 9, 400):
        kinds += [(e.kind, e.rule) for e in events if e.kind in (EventKind.SHUFFLE, EventKind.BURN)]
    assert (EventKind.BURN, "8.1") in kinds
    assert {rule for kind, rule in kinds if kind == EventKind.SHUFFLE} >= {"7", "8.7"}


def test_8_1_the_counts_are_the_cards_seen() -> None:
    """Between rounds every card dealt since the shuffle has been seen but the burn card
    (8.1): the counts, the cards left and the burn card make the whole pack."""
    env = PontoonEnv("nz-pontoon", boxes=3)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(2000):
        if obs["phase"] == 0:
            assert obs["counts"].sum() + obs["remaining"] + 1 == 6 * 48
            checked += 1
        obs, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if terminated:
            obs, _ = env.reset()
    assert checked > 300


def test_8_2_bet_sizing_and_reward_in_units_of_the_wager() -> None:
    env = PontoonEnv("nz-pontoon", bets=(500, 2000, 5000), wager=500)
    assert env.action_names[-3:] == ["bet", "bet", "bet"]
    obs, _ = env.reset(seed=1)
    assert obs["action_mask"].tolist()[-3:] == [1, 1, 1] and obs["action_mask"][:8].sum() == 0
    obs, *_ = env.step(len(env.action_names) - 1)  # 5000 cents
    while obs["phase"] != 3:
        obs, reward, _, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert info["events"].round.boxes[1].original["player"] == 5000
    assert reward == info["net"] / 500 and isinstance(reward, float)
    with pytest.raises(IllegalAction, match=r"15\.6 each wager must be at least the minimum"):
        PontoonEnv("nz-pontoon", bets=(100,))  # checked as the round checks a wager


def test_10_insurance_only_against_an_ace() -> None:
    env = PontoonEnv("classic-blackjack")
    ins = env.action_names.index("insure")
    seen = set()
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        obs, *_ = env.step(env.action_names.index("bet"))
        seen.add((obs["up"], bool(obs["action_mask"][ins])))
    assert (1, True) in seen
    assert all(offered == (up == 1) for up, offered in seen if up)


@pytest.mark.filterwarnings("ignore:Observation")  # a dict with the mask: PettingZoo's own form
def test_pettingzoo_api_test_passes() -> None:
    api_test(PontoonTable(boxes=2, behind=(2, 1)), num_cycles=200, verbose_progress=False)


def test_15_3_players_behind_choose_to_follow() -> None:
    """The seated player decides; when the seated player doubles or splits, each player
    behind is the agent selected and chooses to follow or decline (15.3(c), (d)); a player
    behind selected while the seated player decides may only insure (15.3(f))."""
    table = PontoonTable("nz-pontoon", boxes=1, behind=(2,))
    rng = np.random.default_rng(0)
    followed = 0
    for r in range(300):
        table.reset(seed=r)
        while table.agents:
            agent = table.agent_selection
            obs, _, term, trunc, _ = table.last()
            if term or trunc:
                table.step(None)
                continue
            turn = table.round.to_act() if table.round is not None else None
            legal = np.flatnonzero(obs["action_mask"])
            if turn is not None and turn.kind is TurnKind.FOLLOW:
                assert agent.startswith("behind_")
                assert ACTIONS.index("decline") in legal
                followed += 1
            if agent.startswith("behind_") and turn is not None and turn.kind is TurnKind.DECIDE:
                # 15.3(a): a player behind never decides for the box; selected while the
                # seated player decides, it may only insure or not (15.3(f), 10)
                assert set(legal) <= {ACTIONS.index("insure"), ACTIONS.index("no-insurance")}
            table.step(int(rng.choice(legal)))
            if table.round is not None and table.round.over:  # each agent's net, in units
                assert all(
                    table.rewards[a] == table.round.net(a) / table.wager for a in table.agents
                )
    assert followed > 10


def test_15_3_f_10_16_11_players_behind_insure_without_a_hole_card() -> None:
    """15.3(f): each player on a box has the right to make an insurance wager (10), a player
    behind as well as the seated player; without a hole card insurance stays open until the
    dealer's second card (16.11). When the round lets a player behind insure (the dealer's
    first card an ace, the player's wager still in play), that player is selected before
    the seated player's first decision, with only ``insure`` and ``no-insurance`` legal
    (never the box's decisions, 15.3(a)); an insurance taken is that player's own wager,
    paid 2:1 on a dealer pontoon and lost otherwise, and counted in its reward."""
    table = PontoonTable("nz-pontoon", boxes=1, behind=(2,))
    insure, no_insurance = ACTIONS.index("insure"), ACTIONS.index("no-insurance")
    behind = ("behind_1", "behind_2")
    rng = np.random.default_rng(5)
    insured = 0
    for r in range(300):
        table.reset(seed=r)
        open_to: list[str] | None = None  # whom the round lets insure, read after the deal
        asked: list[str] = []
        while table.agents:
            agent = table.agent_selection
            rnd = table.round
            assert rnd is not None
            if open_to is None and not table.waiting:  # the deal is done
                offer = {a: Move(Action.INSURE, 1, player=a) for a in behind}
                open_to = [a for a in behind if offer[a] in rnd.legal_moves(a)]
            obs, _, term, trunc, _ = table.last()
            if term or trunc:
                table.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            turn = rnd.to_act()
            if agent in behind and turn is not None and turn.kind is TurnKind.DECIDE:
                assert legal == [insure, no_insurance], legal  # 15.3(a), (f)
                assert len(rnd.dealer) == 1 and rnd.dealer[0].is_ace  # 10, 16.11
                assert not any(h.acted for h in rnd.boxes[1].hands)  # before any decision
                asked.append(agent)
                table.step(insure if agent == "behind_1" else no_insurance)
            else:
                table.step(int(rng.choice(legal)))
            if rnd.over and table.agents and asked:  # each agent's net, insurance included
                assert all(table.rewards[a] == rnd.net(a) / table.wager for a in table.agents)
        rnd = table.round
        assert rnd is not None and open_to is not None
        assert asked == open_to  # every player behind the round lets insure, and only those
        if "behind_1" not in asked:
            continue
        insured += 1
        box = rnd.boxes[1]
        assert "behind_2" in box.declined_insurance and "behind_2" not in box.insurance
        taken = box.insurance["behind_1"]
        assert taken.amount == table.wager // 2 and taken.settled  # 10: half the wager
        assert taken.net == (2 * taken.amount if is_pontoon(rnd.dealer) else -taken.amount)
    assert insured > 5


def test_8_2_bet_sizing_at_the_table() -> None:
    """Each agent chooses its wager among the table's bets (one ``bet`` action each); the
    reward is its net over the unit; a bet the table refuses fails at construction."""
    table = PontoonTable("nz-pontoon", boxes=2, behind=(1, 0), bets=(500, 2500))
    assert table.actions[-2:] == ("bet", "bet") and table.wager == 500
    first = len(ACTIONS) - 1
    rng = np.random.default_rng(1)
    for r in range(20):
        table.reset(seed=r)
        chosen: dict[str, int] = {}
        while table.agents:
            agent = table.agent_selection
            obs, _, term, trunc, _ = table.last()
            if term or trunc:
                table.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            a = int(rng.choice(legal))
            if table.waiting:
                assert legal.tolist() == [first, first + 1]
                chosen[agent] = (500, 2500)[a - first]
            table.step(a)
            rnd = table.round
            if rnd is not None and rnd.over:
                for x, amount in chosen.items():
                    assert rnd.boxes[table.box_of[x]].original[x] == amount
                    assert table.rewards[x] == rnd.net(x) / 500
    with pytest.raises(IllegalAction, match=r"15\.6"):
        PontoonTable("nz-pontoon", bets=(100,))


def test_16_7_every_card_on_the_layout_voids_the_round() -> None:
    """A card is due with every card on the layout, none in the shoe or the discard rack:
    the round engine refuses the step (16.7), leaving the round only to be voided (16.5).
    The env voids it: every wager returned, the round over, a reward of 0, the record
    voided by a supervisor. (The state is laid out by hand: play almost never gets there.)"""
    env = PontoonEnv("nz-pontoon", {"decks": 1}, boxes=2)
    hit = env.action_names.index("hit")
    for seed in range(50):
        obs, _ = env.reset(seed=seed)
        obs, *_ = env.step(env.action_names.index("bet"))
        if obs["phase"] == 2 and obs["box"] == 0 and obs["action_mask"][hit]:
            break
    w, pp = env._w[0], env.table.params  # the compiled state, laid out by hand
    deck = pp[pp[L.E_OTMPL] : pp[L.E_OTMPL] + pp[L.E_NTMPL]]
    assert len(deck) == 48
    hands = ((0, deck[:22]), (int(pp[L.E_MAXH]), deck[22:24]))  # box 1's hand, box 2's
    for s, cards in hands:
        w[pp[L.E_OHC] + s * L.MAXC : pp[L.E_OHC] + s * L.MAXC + len(cards)] = cards
        w[L.NT + s * L.NHF + L.HN] = len(cards)
    w[pp[L.E_ODC] : pp[L.E_ODC] + 24] = deck[24:]
    w[L.DN] = 24
    w[L.POS] = w[L.NCARDS]  # the shoe run out, and no card is in the discard rack
    obs, reward, terminated, _, info = env.step(hit)
    assert terminated and reward == 0.0 and info["net"] == 0 and obs["phase"] == 3
    rnd = info["events"].round
    assert rnd.over and rnd.net("player") == 0
    assert any(e.rule == "16.5" for e in rnd.events)
