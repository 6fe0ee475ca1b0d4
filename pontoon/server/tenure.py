"""One server process among several on one store: the tables it holds by lease.

At start the process takes the lease of every configured table nobody holds; then, every third
of the lease's length, it renews its leases, drops each table whose lease another process took
(its sockets are closed with 4503: the page connects again, and finds the table's new owner),
and takes each table whose owner let its lease lapse (died, stalled, cut off), resuming its
round from the store exactly as a restart does. :mod:`pontoon.store.leases` says why a process
that lost a lease can never write to the table again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field

from pontoon.store.db import Store
from pontoon.store.leases import Holder, Lease, beat, holders, leave, release, renew, take

log = logging.getLogger("pontoon.server")

CLOSE_MOVED = 4503  # a socket closed because its table is served by another process now


def _name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class Leasing:
    """Tables shared by several processes: the address the others reach this one at, the
    lease's length, and this process's name (unique: a restarted process is a new owner)."""

    address: str
    seconds: float = 3.0
    owner: str = field(default_factory=_name)
    processes: int = 1  # how many share the tables: each takes its part while others may


class Tenure:
    """The tables this process holds by lease, one of several processes on one store: taken,
    renewed, given back and taken over, a pass every third of the lease. ``open(name, fence)``
    serves a table taken (its writes carry ``fence``); ``drop(name)`` stops serving one lost;
    ``idle(name)``: the table is between rounds. Each process beats in the store while it runs, and
    takes its part of the tables (1/N of them, rounded up, N the processes alive, or ``processes``
    if more), and more only of a table left unheld for a whole pass: a table whose owner died goes
    to one with room first. A process holding more than its part (one joined, or came back) gives
    back the tables over it that are between rounds, at each pass."""

    def __init__(
        self,
        store: Store,
        leasing: Leasing,
        names: list[str],
        open: Callable[[str, int], None],
        drop: Callable[[str], None],
        idle: Callable[[str], bool],
    ) -> None:
        self.store = store
        self.leasing = leasing
        self.names = names
        self._open = open
        self._drop = drop
        self._idle = idle
        self.held: dict[str, Lease] = {}
        self.taken = 0  # leases this process took (the metrics' takeovers: fence above 1)
        self.took_over = 0
        self.part = -(-len(names) // max(1, leasing.processes))
        self._unheld: set[str] = set()  # the tables no process held at the last pass
        self._holders: tuple[float, dict[str, Holder]] = (0.0, {})  # (when read, holders)
        self._closing = asyncio.Event()  # the server stops: no pass after the one under way

    def start(self) -> None:
        """Take and open the tables nobody holds, up to this process's part."""
        me = self.leasing
        beat(self.store, me.owner, me.address, me.seconds)
        for name in self.names:
            if len(self.held) < self.part:
                self._took(name, self._take(name))

    def _take(self, name: str) -> Lease | None:
        me = self.leasing
        return take(self.store, name, me.owner, me.address, me.seconds)

    def _took(self, name: str, lease: Lease | None) -> None:
        if lease is not None:
            self.taken += 1
            self.took_over += lease.fence > 1
            self.held[name] = lease
            log.info("table %s taken (fence %d)", name, lease.fence)
            self._open(name, lease.fence)

    async def tend(self) -> None:
        """Renew, drop what was lost, take what lapsed."""
        fences = {n: lease.fence for n, lease in self.held.items()}
        kept = await asyncio.to_thread(
            renew, self.store, self.leasing.owner, fences, self.leasing.seconds
        )
        for name in list(self.held):
            if name not in kept:
                log.warning("table %s: its lease was lost; another process serves it", name)
                del self.held[name]
                self._drop(name)
        self.held.update(kept)
        me = self.leasing
        alive = await asyncio.to_thread(beat, self.store, me.owner, me.address, me.seconds)
        # (never more than 1/``processes``: the others started with this one may not have
        # beaten yet; a table one of them left unheld is still taken after a whole pass)
        self.part = -(-len(self.names) // max(1, alive, me.processes))
        found = await asyncio.to_thread(holders, self.store)
        self._holders = (time.monotonic(), found)
        unheld = [n for n in self.names if n not in found and n not in self.held]
        for name in unheld:
            if len(self.held) < self.part or name in self._unheld:
                # (off the event loop: a write may wait on the store's lock — SQLite's, held
                # by a process stopped inside a write, until it wakes)
                self._took(name, await asyncio.to_thread(self._take, name))
        self._unheld = {n for n in unheld if n not in self.held}
        if len(self.held) > self.part:
            await self._give_back(len(self.held) - self.part)

    async def _give_back(self, over: int) -> None:
        """Let go of up to ``over`` tables between rounds, for processes with less than their
        part (a table in a round is kept: it goes at a later pass)."""
        for name in [n for n in sorted(self.held) if self._idle(n)][:over]:
            await asyncio.to_thread(release, self.store, self.leasing.owner, name)
            del self.held[name]
            log.info("table %s given back: another process has room for it", name)
            self._drop(name)

    async def address_of(self, table: str) -> str | None:
        """The address of the process holding ``table``'s lease, if another: ``None`` for a
        table this process holds, else as last read from the store (every third of the lease
        at most), read again when that named nobody, or this process (which has given the
        table back since)."""
        if table in self.held:
            return None
        read, found = self._holders
        holder = found.get(table)
        stale = time.monotonic() - read > self.leasing.seconds / 3
        if stale or holder is None or holder.owner == self.leasing.owner:
            found = await asyncio.to_thread(holders, self.store)
            self._holders = (time.monotonic(), found)
            holder = found.get(table)
        if holder is None or holder.owner == self.leasing.owner:
            return None
        return holder.address

    async def elsewhere(self) -> dict[str, str]:
        """The address of each table another process holds, read from the store now (the
        store away: as last read, logged)."""
        try:
            found = await asyncio.to_thread(holders, self.store)
            self._holders = (time.monotonic(), found)
        except Exception as exc:  # not CancelledError
            log.warning("the tables' holders could not be read (the last known used): %s", exc)
            found = self._holders[1]
        return {n: h.address for n, h in found.items() if h.owner != self.leasing.owner}

    async def run(self) -> None:
        """Tend the leases until :meth:`close`; a failing pass (the store away) is logged and
        the next one tries again (the leases lapse meanwhile: the tables' writes are refused
        from the moment another process takes them). A pass under way when the server stops
        is finished, not cancelled: its writes run on threads that a cancel would not stop —
        a lease taken after :meth:`stop` let go of them would be held by nobody alive."""
        while not self._closing.is_set():
            with suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.leasing.seconds / 3)
            if self._closing.is_set():
                return
            try:
                await self.tend()
            except Exception:
                log.exception("tending the leases failed; tried again later")

    def close(self) -> None:
        """:meth:`run` ends after the pass under way, if any."""
        self._closing.set()

    def stop(self) -> None:
        """The server stops: its tables may be taken at once."""
        release(self.store, self.leasing.owner)
        leave(self.store, self.leasing.owner)
        self.held.clear()
