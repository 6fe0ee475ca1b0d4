"""A table of several players as a PettingZoo AEC environment (docs/researchers/env.md):
seated players
and players betting behind them (15.1-15.3), each an agent, playing the round engine itself
(:class:`pontoon.round.Round`) through its query API: whoever :meth:`~Round.to_act` names
acts; the seated player decides for the box, and those behind choose whether to follow a
double or a split (15.3(c), (d)) and, each for itself, whether to insure (15.3(f)).

>>> table = PontoonTable(boxes=1, behind=(1,))
>>> table.reset(seed=3)
>>> table.agent_selection, ACTIONS[int(table.observe("seated_1")["action_mask"].argmax())]
('seated_1', 'bet')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

from pontoon.env.spec import BET_WORD, rules_of
from pontoon.hand import is_pair, is_soft, total
from pontoon.layout import Turn
from pontoon.round import Move, Round
from pontoon.rules import RuleSet
from pontoon.shoe import ScriptedCards, Shoe, seeded
from pontoon.vocab import Action, Follow, TurnKind

# the agents' actions: the moves of the game, a player behind's choices, the wager (one
# ``bet`` for each amount a table with bet sizing offers: ``PontoonTable.actions``)
ACTIONS: Final = (
    "hit",
    "stand",
    "double",
    "split",  # a player behind: follow the split with both hands (15.3(d))
    "surrender",
    "rescue",
    "insure",
    "no-insurance",
    "decline",  # 15.3(c), (d): a player behind does not follow
    "follow-first",  # 15.3(d): the wager stays with the first hand of the split
    "follow-second",  # ... or goes with the second
    BET_WORD,
)
BET: Final = len(ACTIONS) - 1
INSURE: Final = ACTIONS.index("insure")
FOLLOW_ID: Final = {Follow.BOTH: 3, 0: 9, 1: 10}
NOBS: Final = 24  # observation vector: see observe()
TURNS: Final = {TurnKind.BETTING: 0, TurnKind.INSURANCE: 1, TurnKind.FOLLOW: 2, TurnKind.DECIDE: 3}


def action_id(move: Move) -> int:
    if move.action is Action.SPLIT and move.follow is not None:
        return FOLLOW_ID[move.follow]
    return ACTIONS.index(move.action.value)


class PontoonTable(AECEnv):  # type: ignore[misc]
    """``boxes`` seated players (agents ``seated_1`` ...) and ``behind[b]`` players behind
    box ``b + 1`` (agents ``behind_1`` ..., numbered in box order), each wagering ``wager``
    cents a round, or with ``bets`` (cents) choosing each round one of those wagers (8.2: a
    ``bet`` action each, checked at construction as the round checks a wager, 15.1-15.6).
    An episode is one round; the shoe goes on from round to round until a reset with a seed.
    The reward is each agent's net over ``wager`` (default the first bet)."""

    metadata = {  # noqa: RUF012
        "name": "pontoon_table_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: str | RuleSet = "nz-pontoon",
        set: Mapping[str, Any] | Sequence[str] | None = None,
        *,
        boxes: int = 2,
        behind: Sequence[int] = (1, 0),
        wager: int | None = None,
        bets: Sequence[int] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = rules_of(rules, set)
        default = bets[0] if bets else max(self.rules.table_min, 100)
        self.wager = wager if wager is not None else default
        self.bets = tuple(int(b) for b in bets) if bets else (self.wager,)
        for amount in self.bets:  # 15.1-15.6: refused here as the round would refuse it
            Round(self.rules, ScriptedCards([])).place_wager(1, "player", amount)
        self.actions = (*ACTIONS, *(BET_WORD,) * (len(self.bets) - 1))
        self.render_mode = render_mode
        behind = tuple(behind) + (0,) * (boxes - len(behind))
        self.box_of: dict[str, int] = {f"seated_{b}": b for b in range(1, boxes + 1)}
        for b in range(1, boxes + 1):
            for _ in range(behind[b - 1]):
                self.box_of[f"behind_{len(self.box_of) - boxes + 1}"] = b
        self.possible_agents = list(self.box_of)
        n = len(self.actions)
        ncards = 52 * self.rules.decks
        obs = spaces.Box(0, ncards, (NOBS,), np.int64)
        space = spaces.Dict({"observation": obs, "action_mask": spaces.MultiBinary(n)})
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.shoe: Shoe | None = None
        self.round: Round | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the round
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """The next round's betting (a new shoe with ``seed`` or on the first reset)."""
        if seed is not None or self.shoe is None:
            self.shoe = Shoe(self.rules, seeded(seed))
        self.round = Round(self.rules, self.shoe)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.waiting = list(self.agents)  # the wagers still to be placed
        self.agent_selection = self.waiting[0]
        self._refresh()

    def legal(self, agent: str) -> list[int]:
        rnd = self.round
        if rnd is None or rnd.over or agent not in self.agents or self.terminations[agent]:
            return []
        if self.waiting:
            return list(range(BET, len(self.actions))) if agent == self.waiting[0] else []
        return sorted({action_id(m) for m in rnd.legal_moves(agent) if m.action in _MOVES})

    def observe(self, agent: str) -> dict[str, Any]:
        """[phase, box, seated, wager (units), follow (1 double, 2 split), total, soft,
        cards, pair value, hands on the box, hand in play, dealer's first card, cards
        left, round over, then the cards of each value on the layout]."""
        rnd = self.round
        v = np.zeros(NOBS, np.int64)
        mask = np.zeros(len(self.actions), np.int8)
        if rnd is None:
            return {"observation": v, "action_mask": mask}
        box_n = self.box_of[agent]
        turn = rnd.to_act()
        v[0] = 0 if self.waiting or turn is None else TURNS.get(turn.kind, 0)
        if turn is not None and not self.waiting and agent in self._insuring_behind(turn):
            v[0] = TURNS[TurnKind.INSURANCE]  # asked to insure (15.3(f))
        v[1] = box_n
        v[2] = agent == f"seated_{box_n}"
        box = rnd.boxes.get(box_n)
        v[3] = box.original.get(agent, 0) // self.wager if box is not None else 0
        if turn is not None and turn.follow is not None:
            v[4] = 1 if turn.follow is Action.DOUBLE else 2
        if box is not None and box.hands:
            index = turn.hand if turn is not None and turn.box == box_n and turn.hand else 0
            cards = box.hands[min(index, len(box.hands) - 1)].cards
            v[5], v[6], v[7] = total(cards), is_soft(cards), len(cards)
            pair = len(cards) == 2 and is_pair(cards[0], cards[1], self.rules.split_by)
            v[8] = cards[0].value if pair else 0
            v[9], v[10] = len(box.hands), index
        v[11] = rnd.dealer[0].value if rnd.dealer else 0
        v[12] = len(self.shoe.remaining) if self.shoe is not None else 0
        v[13] = rnd.over
        for c in rnd.cards_on_layout():
            v[13 + c.value] += 1
        for a in self.legal(agent):
            mask[a] = 1
        return {"observation": v, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        rnd = self.round
        assert rnd is not None
        self._cumulative_rewards[agent] = 0.0
        a = int(action) if action is not None else -1
        if a not in self.legal(agent):  # refused: nothing changes (the rule in infos)
            self.infos[agent] = {"refused": self._why(agent, a)}
            return
        self.infos[agent] = {}
        if self.waiting:
            rnd.place_wager(self.box_of[agent], agent, self.bets[a - BET])
            self.waiting.pop(0)
            if not self.waiting:
                rnd.deal()
        else:
            move = next(m for m in rnd.legal_moves(agent) if action_id(m) == a)
            events = rnd.apply(move)
            self.infos[agent] = {"events": events}
        if rnd.over:
            for x in self.agents:
                self.rewards[x] = rnd.net(x) / self.wager
                self.terminations[x] = True
                self.infos[x] = {**self.infos[x], "net": rnd.net(x), "round": rnd.events}
        self._refresh()
        self._accumulate_rewards()

    def _why(self, agent: str, a: int) -> str:
        if not 0 <= a < len(self.actions):
            return f"no action {a}"
        return f"{self.actions[a]} is not legal now for {agent} (legal: {self.legal(agent)})"

    def _refresh(self) -> None:
        """Select the agent the round waits for (or, after the round, each in turn)."""
        rnd = self.round
        assert rnd is not None
        if self.waiting:
            self.agent_selection = self.waiting[0]
            return
        turn = rnd.to_act()
        if turn is not None and not rnd.over:
            who = self._insuring_behind(turn) or [p for p in turn.players if self.legal(p)]
            if who:
                self.agent_selection = who[0]
                return
        live = [a for a in self.agents if self.terminations[a]]
        if live:
            self.agent_selection = live[0]

    def _insuring_behind(self, turn: Turn) -> list[str]:
        """The players behind whom the round lets insure while the seated player decides:
        without a hole card it takes insurance from every player with a wager in play
        (15.3(f), 10) until the dealer's second card (16.11) but waits only for the seated
        player's decisions (``to_act()``), so the table asks each of them first, with only
        ``insure`` and ``no-insurance`` legal (15.3(a): never the box's decisions)."""
        if turn.kind is not TurnKind.DECIDE:
            return []
        return [
            a for a in self.agents if a != f"seated_{self.box_of[a]}" and INSURE in self.legal(a)
        ]

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.round is None:
            return None
        rnd = self.round
        lines = [f"dealer: {' '.join(c.code for c in rnd.dealer)}"]
        for box in rnd.order:
            for i, hand in enumerate(box.hands):
                who = ", ".join(f"{w.player} {w.amount}" for w in hand.wagers)
                lines.append(
                    f"box {box.number} hand {i + 1}: {' '.join(c.code for c in hand.cards)} ({who})"
                )
        return "\n".join(lines) + "\n"

    def close(self) -> None:
        pass


_MOVES: Final = frozenset(Action(a) for a in ACTIONS[:9])

__all__ = ["ACTIONS", "PontoonTable"]
