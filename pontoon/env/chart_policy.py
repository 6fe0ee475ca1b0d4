"""A strategy chart as a policy of the vector environment: the simulator's own move tables
(:func:`pontoon.sim.kernel.decisions`, the first action of each cell that legality allows)
looked up for every table at once, so that the env plays a chart exactly as the compiled
simulator and :func:`pontoon.sim.reference.chart_move` do (insurance declined, as the simulator
declines it without an index chart's insurance row; the first bet).

>>> from pontoon.analysis.chart import Chart
>>> from pontoon.env.spec import TableSpec
>>> from pontoon.rules import load_rules
>>> policy = ChartPolicy(TableSpec.build(load_rules("classic-blackjack")), Chart.initial())
>>> policy.moves.shape, policy.bet                  # [ctx, soft, total, up - 1]; the wager
((64, 2, 22, 10), 8)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.env import layout as L
from pontoon.env.spec import TableSpec
from pontoon.sim import compiled as C
from pontoon.sim.kernel import NCTX, decisions

Arr = np.ndarray[Any, Any]


class ChartPolicy:
    """``policy(obs)``: each table's action under ``chart`` (batched observations)."""

    def __init__(self, spec: TableSpec, chart: Chart) -> None:
        if spec.rules.split_max_hands > NCTX // 16:
            raise ValueError("the simulator's move tables know at most 4 hands on a box")
        totals, pairs, rescues = C.compile_chart(chart)
        moves, pair_moves = decisions(spec.rules, totals, pairs)
        self.moves = np.asarray(moves, np.int64)  # kernel action numbers = env's 0-4
        self.pair_moves = np.asarray(pair_moves, np.int64)
        self.rescues = np.asarray(rescues, np.int64)
        self.bet = spec.first_bet

    def __call__(self, obs: dict[str, Arr]) -> Arr:
        phase = obs["phase"]
        two = obs["cards"] == 2
        ctx = (((two * 2 + obs["from_split"]) * 2 + obs["split_aces"]) * 2 + obs["acted"]) * 4
        ctx = ctx + np.maximum(obs["hands"], 1) - 1
        up = np.maximum(obs["up"], 1) - 1
        total = np.minimum(obs["total"], 21)
        soft = obs["soft"]
        pair = obs["pair"]
        play = self.moves[ctx, soft, total, up]
        play = np.where(pair > 0, self.pair_moves[ctx, np.maximum(pair, 1) - 1, up], play)
        rescue = self.rescues[soft & (total <= 21), total, up] == 1
        doubled = np.where(rescue, L.RESCUE, L.STAND)
        play = np.where(obs["doubled"] == 1, doubled, play)
        out = np.where(phase == L.BET, self.bet, np.where(phase == L.INS, L.NO_INSURANCE, play))
        return out.astype(np.int64)


__all__ = ["ChartPolicy"]
