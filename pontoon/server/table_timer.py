"""One table's timer and its interrupted-round policy (:class:`TableTimer`).

One timer per table: the deal timer (after the first wager the dealer calls no more bets),
the turn timer (16.6 and the defaults), and the interrupted-round policy (knob
``interrupted``): a dealt round in which nothing has been recorded for
``interrupted_minutes`` — its player gone, or the table back from a failure too late — is
voided or completed by the optimal chart (:meth:`TableTimer.interrupt`,
docs/operators/deploying.md). The timer acts only on the version it was set for; what it does
is committed by the table (:meth:`pontoon.server.table.Table.expire`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from pontoon.analysis.chart import Chart
from pontoon.irregularities import Irregularity
from pontoon.layout import Turn
from pontoon.round import Round
from pontoon.rules import RuleSet
from pontoon.store.recorder import RoundLog
from pontoon.vocab import Action, Phase, Role, TurnKind
from pontoon.vocab import Procedure as Kind

from .clients import Client
from .table_config import TableConfig
from .table_state import TableView

# why the interrupted-round policy applies: the procedure recorded for it
ABANDONED, FAILURE = "abandoned", "failure"
_PROCEDURE_OF = {ABANDONED: Kind.ABANDONED, FAILURE: Kind.FAILURE}


def optimal_chart(rules: RuleSet) -> Chart:
    """The optimal basic strategy chart of ``rules``, as the strategy hint reads it
    (:func:`pontoon.analysis.report.analyze`): seconds to a minute of work."""
    from pontoon.analysis.report import analyze

    report = analyze(rules, "basic")
    assert report.chart is not None
    return report.chart


class Timed(Protocol):
    """The table as its timer reads it (:class:`pontoon.server.table.Table`)."""

    config: TableConfig
    rules: RuleSet
    round: Round | None
    roundlog: RoundLog | None
    version: int
    clients: set[Client]
    notes: list[str]
    view: TableView

    async def expire(self, version: int) -> None:
        """The timer ran out, set for ``version``."""


class TableTimer:
    """``table``'s timer, and what its interrupted-round policy knows: when (``config.clock``)
    the round in play last had an event recorded (``since``), and whether it came back from the
    store later than ``interrupted_minutes`` after it (``late``: a failure)."""

    def __init__(self, table: Timed) -> None:
        self.table = table
        self.deadline: float | None = None  # time.monotonic() when the wait ends
        self._handle: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()  # the timer's runs under way
        self.since: float | None = None
        self.late = False
        self._chart: Chart | None = None  # the chart ``complete`` plays, once worked out

    # ------------------------------------------------------------------ the timer
    def arm(self) -> None:
        """Set the timer for the table as it is now: the deal timer while bets are taken, the
        turn timer while a decision is awaited (or sooner, when the interrupted-round policy
        comes first); none when nothing is awaited."""
        config = self.table.config
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        waiting = self.table.view.shared()[0]["awaiting"]
        if waiting is None:
            self.deadline = None
            return
        seconds = config.deal_seconds if waiting["kind"] == "betting" else config.turn_seconds
        due = self.interrupted_at()
        if due is not None:  # the interrupted-round policy, should it come first
            seconds = max(0.0, min(seconds, due - config.clock()))
        self.deadline = time.monotonic() + seconds
        version = self.table.version
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(seconds, self._fire, version)

    def _fire(self, version: int) -> None:
        task = asyncio.get_running_loop().create_task(self.table.expire(version))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def keep(self) -> None:
        """A change that is nobody's decision moved the version on: the running timer keeps
        its deadline, set for the new version."""
        if self._handle is not None and self.deadline is not None:
            self._handle.cancel()
            delay = max(0.0, self.deadline - time.monotonic())
            loop = asyncio.get_running_loop()
            self._handle = loop.call_later(delay, self._fire, self.table.version)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()

    # ------------------------------------------------------------------ the policy
    def moved_on(self) -> None:
        """The round in play had an event recorded now."""
        self.since, self.late = self.table.config.clock(), False

    def resumed(self, last_at: float | None) -> None:
        """The table was taken back from the store, its round in play's last event recorded
        at ``last_at`` (None: no round resumed); ``late`` when the policy is due already."""
        self.since, self.late = last_at, False
        if last_at is not None:
            due = self.interrupted_at()
            self.late = due is not None and self.table.config.clock() >= due  # policy: at once

    async def ready_chart(self) -> None:
        """Work out the chart the policy ``complete`` is about to play, if it is not yet: a
        cold chart takes seconds, on a thread, the table's lock not held."""
        rules = self.table.rules
        if self._chart is None and rules.interrupted == "complete" and self.interruption():
            self._chart = await asyncio.to_thread(self.table.config.chart or optimal_chart, rules)

    def timeout(self) -> None:
        """The timer ran out (the table's lock held). A round the interrupted-round policy
        is due for is voided or completed (:meth:`interrupt`). Else the dealer calls no more
        bets, undecided players behind take the default (15.3), and an absent seated player is
        dealt to 12 (16.6) — unless, under the policy ``void`` or ``complete``, the seated
        player has no socket connected: the round then waits for them until the policy is
        due."""
        rnd = self.table.round
        if rnd is None or rnd.over:
            return
        turn = rnd.to_act()
        if turn is None:
            return
        reason = self.interruption()
        if reason is not None:
            self.interrupt(reason)
        elif turn.kind is TurnKind.BETTING:
            rnd.deal()
        elif self.abandoned(turn):
            return  # gone, not slow: the policy decides, at interrupted_minutes
        elif turn.kind is TurnKind.DECIDE:
            rnd.apply_irregularity(Irregularity(Kind.ABSENT, by=Role.SUPERVISOR))
        else:  # insurance, players behind, 15.5 choices
            rnd.apply_defaults()

    def interrupted_at(self) -> float | None:
        """When (``config.clock``) the interrupted-round policy applies to the round in play:
        ``interrupted_minutes`` after its last recorded event; None under ``resume``, or with
        no dealt round in play."""
        rnd = self.table.round
        if self.table.rules.interrupted == "resume" or rnd is None or self.since is None:
            return None
        if rnd.phase is Phase.BETTING or rnd.over:
            return None
        return self.since + 60.0 * self.table.rules.interrupted_minutes

    def interruption(self) -> str | None:
        """Why the policy applies now (``failure``: the table came back from the store later
        than ``interrupted_minutes`` after the round's last event; ``abandoned``: a decision
        was awaited that long), or None when it does not (yet)."""
        due = self.interrupted_at()
        if due is None or self.table.config.clock() < due:
            return None
        return FAILURE if self.late else ABANDONED

    def abandoned(self, turn: Turn) -> bool:
        """Under the policy ``void`` or ``complete``: the round awaits the decision of seated
        players (8.3, 15.5) of whom none has a socket connected."""
        if self.table.rules.interrupted == "resume":
            return False
        if turn.kind is not TurnKind.DECIDE and turn.kind is not TurnKind.CHOOSE:
            return False
        connected = {c.session.name for c in self.table.clients if c.session.role == "player"}
        return not connected & set(turn.players)

    def chart(self) -> Chart:
        """The optimal chart of the table's rules (``config.chart``, else
        :func:`optimal_chart`), worked out once."""
        if self._chart is None:
            self._chart = (self.table.config.chart or optimal_chart)(self.table.rules)
        return self._chart

    def interrupt(self, reason: str) -> None:
        """Apply the interrupted-round policy to the round in play, recorded with ``reason``
        (an ``interrupted-abandoned`` or ``interrupted-failure`` procedure by the ``policy``):
        ``void`` voids the whole round, every wager returned (16.5); ``complete`` declines
        every insurance still open and plays the round out as the simulator plays a chart
        (:func:`pontoon.sim.reference.play_out`: the optimal chart for every seated player,
        players behind and 15.5 choices their defaults), each move recorded ``by: policy``;
        the dealer then completes the round and it settles as any other."""
        from pontoon.sim.reference import play_out

        rnd = self.table.round
        assert rnd is not None
        chart = self.chart() if self.table.rules.interrupted == "complete" else None
        if rnd.decided_by != Role.POLICY:  # (a completion cut short goes on as it began)
            rnd.apply_irregularity(Irregularity(_PROCEDURE_OF[reason], by=Role.POLICY))
        if chart is not None:
            while not rnd.over:
                no = [m for m in rnd.legal_moves() if m.action is Action.NO_INSURANCE]
                if not no:
                    break
                rnd.apply(no[0])  # 10: insurance declined
            if not rnd.over:
                play_out(rnd, chart)
        number = self.table.roundlog.number if self.table.roundlog is not None else 0
        done = "void (16.5)" if chart is None else "completed by the optimal chart"
        self.table.notes.append(f"round {number} was interrupted ({reason}): {done}")


__all__ = ["ABANDONED", "FAILURE", "TableTimer", "Timed", "optimal_chart"]
