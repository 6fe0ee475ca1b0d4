"""Who is at a table: a :class:`Session` (a player's, or a member of staff's, at one table,
opened by a token or a login) and a :class:`Client` (one of its sockets, as a table sees it).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from .limits import Bucket


@dataclass
class Session:
    """A session at one table: its token (a player's, or the supervisor's shared one), the
    name and role it acts as, and what it has been answered (``seen``: by message id)."""

    token: str
    name: str
    role: str  # "player" or "supervisor"
    table: str
    seen: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    digest: str = ""  # the token's SHA-256, as the store keeps it (players only)
    closed: bool = False  # the player left (or the session expired): the token opens nothing
    address: str | None = None  # where it was made from (a session made before a restart: None)
    rate: Bucket | None = None  # its ``state`` requests (the limits)


class Client(Protocol):
    """A connected client. Nothing here waits for the network: each call only queues what is
    to be sent, and the client's own writer sends it (so the table's lock is never held
    while a socket is slow)."""

    session: Session

    def post_state(self, text: str) -> None:
        """Queue a state; a newer one replaces a state not sent yet."""

    def post(self, message: dict[str, Any]) -> None:
        """Queue a direct message (sent in order)."""

    def close(self, code: int, message: dict[str, Any] | None = None) -> None:
        """Queue ``message`` if any, then the closing of the socket with ``code``."""


__all__ = ["Client", "Session"]
