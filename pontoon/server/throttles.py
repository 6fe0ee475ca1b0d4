"""Throttles every process on the store shares, with growing delays (OWASP Authentication
Cheat Sheet, "Account Lockout": a delay that grows, never a lockout an attacker can hold).

:class:`SharedThrottle` counts failures in the store (:mod:`pontoon.store.failures`), so a
guesser spreading attempts over N processes (``pontoon serve --processes N``), or waiting for
a restart or a failover, gets no more than one process allows. After ``limit`` failures of a
key within a day, the key waits ``window`` seconds after its last failure; each failure
after that doubles the wait (at most a day). A key's count is read from the store at most
once a ``refresh`` (a second): a failure here counts at once, another process's within it.

>>> wait(limit=3, window=60.0, failures=2), wait(3, 60.0, 3), wait(3, 60.0, 5)
(0.0, 60.0, 240.0)
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from pontoon.store import failures
from pontoon.store.db import Store

DAY = 86400.0  # failures older than this are forgotten
KEYS = 10_000  # keys whose counts are cached at once (the least recently used dropped first)


def wait(limit: int, window: float, failures: int) -> float:
    """How long a key with ``failures`` in the last day waits after its last one."""
    if failures < limit:
        return 0.0
    return float(min(window * 2 ** min(failures - limit, 32), DAY))


class SharedThrottle:
    """Failures of a key (an address, an account, the two) counted by every process on
    ``store``; ``kind`` keeps throttles of different things apart (``login``, ``address``)."""

    def __init__(
        self,
        store: Store,
        kind: str,
        limit: int,
        window: float,
        refresh: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.kind = kind
        self.limit = limit
        self.window = window
        self.refresh = refresh
        self.clock = clock
        self.seen: OrderedDict[str, tuple[float, int, float]] = OrderedDict()  # (read, n, last)
        self.lock = threading.Lock()  # (the login threads and the event loop share it)
        self.refused = 0  # requests refused while their key waited (the metrics')

    def _count(self, key: str) -> tuple[int, float]:
        now = self.clock()
        with self.lock:
            read = self.seen.get(key)
        if read is not None and now - read[0] < self.refresh:
            return read[1], read[2]
        with self.store.read() as conn:
            n, last = failures.count(conn, key, now - DAY)
        self._keep(key, now, n, last)
        return n, last

    def _keep(self, key: str, at: float, n: int, last: float) -> None:
        with self.lock:
            self.seen[key] = (at, n, last)
            self.seen.move_to_end(key)
            while len(self.seen) > KEYS:
                self.seen.popitem(last=False)

    def blocked(self, key: str) -> bool:
        n, last = self._count(failures.digest(self.kind, key))
        if self.clock() - last < wait(self.limit, self.window, n):
            self.refused += 1
            return True
        return False

    def fail(self, key: str) -> bool:
        """Count a failure of ``key``; True when it is the one that begins its waits."""
        d, now = failures.digest(self.kind, key), self.clock()
        with self.store.write() as conn:
            failures.add(conn, d, now)
            n, last = failures.count(conn, d, now - DAY)
        self._keep(d, now, n, last)
        return n == self.limit


def forget_old(store: Store, clock: Callable[[], float] = time.time) -> int:
    """Delete the failures older than a day (every kind's); how many."""
    with store.write() as conn:
        return failures.prune(conn, clock() - DAY)


__all__ = ["DAY", "SharedThrottle", "forget_old", "wait"]
