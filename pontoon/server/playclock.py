"""Each player's play clock in accounts mode: the reality check (every N minutes the time
played and the net, acknowledged before the next wager) and the session-time limit (N minutes
after a login's first wager, no more wagers until the player logs in again).

The clock is the store's (:func:`pontoon.store.play_limits.play_clock`): a process reads it
at a player's first wager and keeps it; a restart, a failover or another process reads the
same start and the same last acknowledgement. Before refusing a wager the clock is read again
(another process may have seen an acknowledgement or a new login).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pontoon.store.accounts import Accounts
from pontoon.store.play_limits import Limit
from pontoon.store.session import recorded_at

from .errors import Refused


@dataclass(slots=True)
class Clock:
    start: float  # the login's first wager (seconds since the epoch)
    since: str  # the same, as the store keeps it (UTC ISO)
    acked: float | None  # the last reality check acknowledged since
    reality: int | None  # minutes
    session: int | None  # minutes


class PlayClocks:
    """The play clocks of the players of one process (``clock``: the wall clock, which every
    process on the store shares)."""

    def __init__(self, accounts: Accounts, clock: Callable[[], float] = time.time) -> None:
        self.accounts = accounts
        self.clock = clock
        self.known: dict[str, Clock] = {}

    def _load(self, name: str) -> Clock:
        limits = self.accounts.limits(name)["limits"]
        start, acked = self.accounts.play_clock(name)
        c = Clock(
            recorded_at(start),
            start,
            None if acked is None else recorded_at(acked),
            limits.get(str(Limit.REALITY)),
            limits.get(str(Limit.SESSION)),
        )
        self.known[name] = c
        return c

    def check(self, name: str) -> None:
        """Before a wager: :class:`Refused` when the session's time is up (code ``session``)
        or the reality check is due (code ``reality``, with the time played and the net)."""
        c = self.known.get(name) or self._load(name)
        if self._over(c) or self._due(c):
            c = self._load(name)  # (read again: the store may know better)
        now = self.clock()
        played = int((now - c.start) // 60)
        if self._over(c):
            raise Refused(
                f"session time limit: you have played {played} minutes since you logged in "
                f"(your limit is {c.session}): log in again to play on",
                code="session",
                facts={"session": {"minutes": played, "limit": c.session}},
            )
        if self._due(c):
            net = self.accounts.reality(name, c.since)
            sign = "+" if net >= 0 else "-"
            raise Refused(
                f"reality check: you have played {played} minutes, net "
                f"{sign}{abs(net) / 100:.2f}; acknowledge it to go on",
                code="reality",
                facts={"reality": {"minutes": played, "net": net, "every": c.reality}},
            )

    def _over(self, c: Clock) -> bool:
        return c.session is not None and self.clock() - c.start >= c.session * 60

    def _due(self, c: Clock) -> bool:
        since = c.start if c.acked is None else c.acked
        return c.reality is not None and self.clock() - since >= c.reality * 60

    def acknowledge(self, name: str) -> None:
        """The player has seen the reality check: recorded, the next due in N minutes."""
        c = self.known.get(name) or self._load(name)
        self.accounts.acknowledge(name, int((self.clock() - c.start) // 60))
        c.acked = self.clock()

    def forget(self, name: str) -> None:
        """Read ``name``'s clock and limits again at the next wager (a new login, a limit
        changed, the sessions ended)."""
        self.known.pop(name, None)


__all__ = ["Clock", "PlayClocks"]
