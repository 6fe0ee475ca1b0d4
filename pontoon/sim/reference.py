"""The kernel's rounds played by the round engine itself: the reference the kernel is
tested against (``tests/test_sim_equivalence.py``).

:func:`engine_nets` deals from a real :class:`pontoon.shoe.Shoe` whose shuffles are the
kernel's (:class:`pontoon.sim.rng.KernelShuffler`), seats one player per box with the job's
wager, and plays the chart through :class:`pontoon.round.Round` exactly as the kernel reads
it: the pair's row (when the two cards may be split), then the total's row, each cell a
preference order of which the first legal action is taken; a doubled hand open after its card
is rescued where the chart's rescue table says (:meth:`Chart.rescues`, 12), else it stands;
insurance (10) is taken, the most each box may, when the job insures at a true count of 0
(the reference does not count), else declined.
"""

from __future__ import annotations

import numpy as np

from pontoon.analysis.chart import CODES, Chart, pair_row, total_row
from pontoon.hand import is_pair, is_soft, total
from pontoon.round import Move, Round
from pontoon.shoe import Shoe
from pontoon.sim.compiled import ACTION_NAMES, IntArray, preferences
from pontoon.sim.job import Job
from pontoon.sim.rng import KernelShuffler
from pontoon.vocab import Action, TurnKind

_PREFS = preferences()


def wishes(code: str) -> list[str]:
    """The actions a chart cell asks for, best first (the kernel's preferences)."""
    return [ACTION_NAMES[a] for a in _PREFS[CODES.index(code)] if a >= 0]


def chart_move(rnd: Round, chart: Chart, rescues: np.ndarray | None = None) -> Move:
    """The chart's move for the hand in turn: the first legal action the cells ask for
    (``rescues``: the chart's rescue table, computed once by the caller if given)."""
    cur = rnd.current()
    assert cur is not None
    box, hand = cur
    up = rnd.dealer[0].value
    wish: list[str] = []
    if hand.doubled:  # 12: a doubled hand still open after its card: rescue or stand
        table = chart.rescues() if rescues is None else rescues
        if table[int(is_soft(hand.cards)), total(hand.cards), up - 1]:
            wish.append("rescue")
    else:
        if len(hand.cards) == 2 and is_pair(hand.cards[0], hand.cards[1], rnd.rules.split_by):
            wish += wishes(chart.code(pair_row(hand.cards[0].value), up))
        wish += wishes(chart.code(total_row(total(hand.cards), is_soft(hand.cards)), up))
    for action in (*wish, "hit", "stand"):
        move = Move(Action(action), box.number)
        if rnd.can(move):
            return move
    raise AssertionError("no legal move")


def play_out(
    rnd: Round, chart: Chart, rescues: np.ndarray | None = None, insure: bool = False
) -> None:
    """Finish a dealt round by ``chart`` (:func:`chart_move`), the round's defaults for
    everything else (players behind as 15.3 says; insurance declined unless ``insure``: then
    each box takes the most it may, before any other move)."""
    table = chart.rescues() if rescues is None else rescues
    if insure:
        for move in rnd.legal_moves():
            if move.action is Action.INSURE and not rnd.over and rnd.can(move):
                rnd.apply(move)
    while not rnd.over:
        turn = rnd.to_act()
        if turn is not None and turn.kind is not TurnKind.DECIDE:  # insurance, players behind
            rnd.apply_defaults()
        else:
            rnd.apply(chart_move(rnd, chart, table))


def engine_nets(job: Job, chart: Chart, key: int, rounds: int) -> IntArray:
    """(rounds, boxes): each box's player's net in cents, round by round."""
    shoe = Shoe(job.rules, KernelShuffler(key))
    players = [f"p{b}" for b in range(1, job.boxes + 1)]
    out = np.zeros((rounds, job.boxes), np.int64)
    rescues = chart.rescues()
    for r in range(rounds):
        rnd = Round(job.rules, shoe)
        for b, p in enumerate(players, start=1):
            rnd.place_wager(b, p, job.wager)
        rnd.deal()
        play_out(rnd, chart, rescues, insure=bool(job.insure_at[0] <= 0))
        out[r] = [rnd.net(p) for p in players]
    return out
