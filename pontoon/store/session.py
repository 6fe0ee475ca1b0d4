"""``pontoon play --db``: the terminal table's link to the store; and :func:`recover`, how every
table (the terminal's and the server's) comes back after a restart.

On start, the table's shoe comes back from the store (same cards, same order) and an
unfinished round left by a killed process is either **resumed** exactly where its last commit
left it (its events replayed onto the restored shoe) or, when it cannot be reconstructed (other
rules, other players, no shoe state that matches, cards not yet dealt), **voided** with its
wagers returned (16.5). Never both, never neither: the round's row says ``over`` or ``void``.
A resumed round comes back with the time of its last recorded event (:attr:`Recovery.last_at`),
from which the table server's interrupted-round policy (knob ``interrupted``) counts.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pontoon.cards import Card
from pontoon.errors import PontoonError
from pontoon.replay import replay
from pontoon.round import Round
from pontoon.rules import RuleSet, rules_json
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import Store
from pontoon.store.recorder import OpenRound, RoundLog, TableLog
from pontoon.store.secret import ShoeKeys
from pontoon.store.shoestate import matches, restore


@dataclass(slots=True)
class Recovery:
    """What a table takes back from the store: its shoe, the unfinished round resumed (or
    None), the numbers of the rounds voided, and (for ``pontoon play``) the player's money off
    the table. ``last_at``: when the resumed round's last event was recorded (seconds since
    the epoch, as :func:`time.time` counts them), or None."""

    shoe: Shoe
    resumed: RoundLog | None = None
    last_at: float | None = None
    voided: list[int] = field(default_factory=list)
    bankroll: int = 0
    notes: list[str] = field(default_factory=list)


def resumable(
    log: TableLog, rules: RuleSet, open_round: OpenRound, players: set[str] | None = None
) -> Round | None:
    """The unfinished round rebuilt from its log, when it can go on exactly where it stopped:
    the same rules, only ``players`` (when given) in it, dealt, and the shoe stored with its
    last event; else None (the round is then void under 16.5)."""
    evts = open_round.events
    if not evts or evts[0].kind != "rules" or evts[0].detail is None:
        return None
    if json.loads(evts[0].detail) != json.loads(rules_json(rules)):
        return None
    if players is not None and open_round.players - players:
        return None
    if not any(e.kind == "action" and e.detail == "no-more-bets" for e in evts):
        return None
    state = log.shoe_state
    if state is None or state[0] != open_round.last_seq:
        return None
    try:
        rnd = replay(evts)
    except PontoonError:
        return None
    return rnd if rnd.events == evts and not rnd.over else None


def recover(
    log: TableLog,
    rules: RuleSet,
    make_shoe: Callable[[str | None], Shoe],
    players: set[str] | None = None,
) -> Recovery:
    """The one recovery path of every table (``pontoon play --db`` and the server): the shoe
    comes back from the store (``make_shoe(state)``, ``state`` None when there is none for
    these rules), and an unfinished round is resumed where its last commit left it or, when it
    cannot be, voided with its wagers returned (16.5) — never both, never neither."""
    state = log.shoe_state
    shoe = make_shoe(state[1] if state is not None and matches(rules, state[1]) else None)
    out = Recovery(shoe)
    open_round = log.open_round()
    rnd = resumable(log, rules, open_round, players) if open_round is not None else None
    if open_round is not None and rnd is not None:
        rnd.continue_with(shoe)
        out.resumed = RoundLog(
            log, rnd, open_round.id, open_round.number, len(rnd.events), open_round.players
        )
        stored = log.store.round_events(open_round.id)
        out.last_at = recorded_at(str(stored[-1]["at"])) if stored else None
    while open_round is not None and rnd is None:
        log.void(open_round, "interrupted; cannot be reconstructed")
        out.voided.append(open_round.number)
        open_round = log.open_round()
    if out.resumed is None and shoe.shuffles:
        tidy(shoe)
    return out


def recorded_at(at: str) -> float:
    """A stored event's time (:func:`pontoon.store.chain.now`, UTC) in seconds since the epoch.

    >>> recorded_at("1970-01-01T00:10:00.500000Z")
    600.5
    """
    return datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def tidy(shoe: Shoe) -> None:
    """Cards neither in the shoe nor in the rack lay on a void round's layout: they go to the
    discard rack (16.5), so that the pack is whole again."""
    missing = Counter(c.code for c in shoe.full_pack)
    missing.subtract(c.code for c in shoe.remaining)
    missing.subtract(c.code for c in shoe.discards)
    for code, n in sorted(missing.items()):
        shoe.discards.extend([Card.parse(code)] * max(n, 0))


class TerminalRecorder:
    """Records one player's session at ``table``."""

    def __init__(
        self,
        url: str,
        table: str,
        rules: RuleSet,
        player: str,
        shoe_keys: ShoeKeys | None = None,
        **store: Any,  # record_keys, anchors: as Store takes them
    ) -> None:
        self.store = Store(url, shoe_keys, **store)
        self.log = TableLog(self.store, table)
        self.rules = rules
        self.player = player

    def close(self) -> None:
        self.store.close()

    def recover(self, bankroll: int, seed: int | None) -> Recovery:
        """The shoe, the player's money and any unfinished round, taken back from the store."""
        rules = self.rules
        out = recover(
            self.log,
            rules,
            lambda state: (
                Shoe(rules, seeded(seed)) if state is None else restore(rules, state, seed)
            ),
            {self.player},
        )
        if out.resumed is not None:
            out.notes.append(
                f"Round {out.resumed.number} was interrupted: it is reconstructed from the "
                "store and goes on where it stopped (rule 16.5)."
            )
        for number in out.voided:
            out.notes.append(
                f"Round {number} was interrupted and cannot be reconstructed: it is "
                "void and its wagers still on the layout are returned (rule 16.5)."
            )
        balance = self.log.balance(self.player)
        if out.resumed is not None:
            out.bankroll = balance - out.resumed.round.net(self.player)
        elif balance > 0:
            out.bankroll = balance
            out.notes.append("Your money from the interrupted session is back on the table.")
        else:
            out.bankroll = bankroll
            self.log.deposit(self.player, bankroll)
        return out

    def start(self, rnd: Round) -> RoundLog:
        return self.log.start(rnd)

    @property
    def next_number(self) -> int:
        return self.log.last_number + 1

    def end(self) -> None:
        """The session is over: the player's money leaves the table (a withdrawal)."""
        if not self.log.open_ids:
            self.log.withdraw(self.player)
