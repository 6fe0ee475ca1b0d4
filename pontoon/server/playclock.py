"""Each player's play clock in accounts mode: the reality check (every N minutes the time
played and the net, acknowledged before the next wager) and the session-time limit (N minutes
after a login's first wager, no more wagers until the player logs in again).

The clock is the store's (:func:`pontoon.store.play_limits.play_clock`: the login's first
wager as it was recorded, and the reality checks acknowledged since). A process reads it once
for a player — at the login, or before the player's first wager here, with no table's lock
held — and keeps it; a restart, a failover or another process reads the same start and the same
last acknowledgement. Before refusing a wager the clock is read again (another process may
have seen an acknowledgement or a new login). A login's first wager starts the clock here at
once, in memory: nothing is written for it (the wager's own record is the clock's), so no
wager waits on the store for the clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from pontoon.store.accounts import Accounts
from pontoon.store.play_limits import Limit
from pontoon.store.session import recorded_at

from .errors import Refused


@dataclass(slots=True)
class Clock:
    start: float | None  # the login's first wager (seconds since the epoch; None: none yet)
    since: str | None  # the same, as the store keeps it (UTC ISO)
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

    def read(self, name: str) -> Clock:
        """``name``'s clock and limits as the store has them (a thread's work), or a first
        wager taken here that the store has not yet recorded."""
        limits = self.accounts.limits(name)["limits"]
        start, acked = self.accounts.play_clock(name)
        here = self.known.get(name)
        start = start or (here.since if here is not None else None)
        c = Clock(
            None if start is None else recorded_at(start),
            start,
            None if acked is None else recorded_at(acked),
            limits.get(str(Limit.REALITY)),
            limits.get(str(Limit.SESSION)),
        )
        self.known[name] = c
        return c

    async def ready(self, name: str) -> None:
        """``name``'s clock read (off the event loop, no lock held) unless known here."""
        if name not in self.known:
            await asyncio.to_thread(self.read, name)

    def check(self, name: str) -> None:
        """Before a wager: :class:`Refused` when the session's time is up (code ``session``)
        or the reality check is due (code ``reality``, with the time played and the net)."""
        c = self.known.get(name) or self.read(name)
        if c.start is None:  # the login's first wager: the clock starts now
            c.start = self.clock()
            c.since = datetime.fromtimestamp(c.start, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        elif self._over(c) or self._due(c):
            c = self.read(name)  # (read again: the store may know better)
        now = self.clock()
        assert c.start is not None and c.since is not None
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
        if c.session is None or c.start is None:
            return False
        return self.clock() - c.start >= c.session * 60

    def _due(self, c: Clock) -> bool:
        since = c.start if c.acked is None else c.acked
        if c.reality is None or since is None:
            return False
        return self.clock() - since >= c.reality * 60

    def acknowledge(self, name: str) -> None:
        """The player has seen the reality check: recorded, the next due in N minutes (a
        thread's work: it writes)."""
        c = self.known.get(name) or self.read(name)
        start = self.clock() if c.start is None else c.start
        self.accounts.acknowledge(name, int((self.clock() - start) // 60))
        c.acked = self.clock()

    def forget(self, name: str) -> None:
        """Read ``name``'s clock and limits again at the next wager (a new login, a limit
        changed, the sessions ended)."""
        self.known.pop(name, None)


__all__ = ["Clock", "PlayClocks"]
