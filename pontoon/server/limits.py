"""What one client may ask of the server: failed authentications per address (counted by
:mod:`pontoon.server.throttles`), sessions per address and per table, sockets per session,
states asked for per session, and the time a connection has to send its request's head.

>>> now = [0.0]
>>> bucket = Bucket(rate=2.0, burst=3, clock=lambda: now[0])
>>> [bucket.take() for _ in range(4)]  # a burst of 3, then one more in half a second
[0.0, 0.0, 0.0, 0.5]
>>> now[0] = 0.5  # half a second later it is there (2 a second)
>>> bucket.take(), bucket.take()
(0.0, 0.5)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio


@dataclass(frozen=True)
class Limits:
    """The server's limits; ``create_app(limits=...)`` and ``pontoon serve``'s options."""

    joins_per_address: int = 8  # open sessions made from one address at one table
    players_per_table: int = 35  # open sessions at one table (its state grows with them)
    sockets_per_session: int = 4  # a fifth socket of a session closes its oldest (4409)
    states_per_second: float = 2.0  # answers to ``state`` requests, per session
    state_burst: int = 10
    header_seconds: float = 10.0  # a request's head not complete by then: connection closed
    failures: int = 10  # failed authentications per address within ``failure_window``
    failure_window: float = 60.0
    login_failures: int = 5  # failed logins of one account within ``login_window``
    login_window: float = 900.0
    registrations: int = 5  # accounts registered from one address within ``registration_window``
    registration_window: float = 3600.0
    sockets_per_account: int = 8  # all its sessions', at every table: past it the oldest goes


class Bucket:
    """A token bucket: ``burst`` at once, then ``rate`` a second. :meth:`take` takes one
    and returns 0.0, or takes none and returns the seconds until one is there."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.tokens = float(burst)
        self.at = clock()

    def take(self) -> float:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return (1.0 - self.tokens) / self.rate
        self.tokens -= 1.0
        return 0.0


def head_timeout(base: type[asyncio.Protocol], seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol ``base`` (its ``http=`` setting takes a class), with a limit
    uvicorn lacks: a connection that has not sent a whole request head within ``seconds`` —
    of its opening, or of its first byte after the previous answer — is closed. Without it a
    client trickling a header a byte at a time holds a connection open for ever (uvicorn's
    keep-alive timer stops at the first byte). A connection upgraded to a WebSocket has
    another protocol, and the timer leaves it alone."""
    import asyncio  # (here: the command line reads this module's limits, not the server)

    class Guarded(base):  # type: ignore[misc,valid-type]
        _head: asyncio.TimerHandle | None = None  # the timer of the head awaited
        _after: Any = None  # the request before it (uvicorn's cycle), None for the first

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            cycle = getattr(self, "cycle", None)
            if cycle is not None and cycle.response_complete and self._after is not cycle:
                self._arm()  # the first byte of the next request on this connection
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._after = getattr(self, "cycle", None)
            self._head = asyncio.get_running_loop().call_later(seconds, self._late)

        def _disarm(self) -> None:
            if self._head is not None:
                self._head.cancel()
                self._head = None

        def _late(self) -> None:
            self._head = None
            transport = getattr(self, "transport", None)
            if transport is None or transport.is_closing() or transport.get_protocol() is not self:
                return  # gone, or a WebSocket now
            if getattr(self, "cycle", None) is self._after:  # no head parsed since
                transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"HeadTimeout{base.__name__}"
    return Guarded
