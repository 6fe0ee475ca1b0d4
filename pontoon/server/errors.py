"""The errors the server answers a client with, each a :class:`~pontoon.errors.PontoonError`
with a ``code`` that names its kind.

The domain (the hub, a table, the door, the trainer) raises them and knows nothing of HTTP;
only the edge turns them into answers: :func:`pontoon.server.app.create_app` registers the
exception handlers that give a :class:`RequestError` its HTTP status (:data:`HTTP_STATUS`,
the body ``{"detail": text}``, ``Retry-After`` when it says when to come back) and a
:class:`Refused` its error reply (400); the socket's route sends a refusal as an error reply
and closes the socket with its close code (:func:`error_reply`).
"""

from __future__ import annotations

from typing import Any

from pontoon.errors import PontoonError


class ServerError(PontoonError):
    """An error a client of the server is answered with; ``code`` names its kind."""

    code = "error"


class Refused(ServerError):
    """A message refused: nothing changed. ``rule`` names the rule when one applies;
    ``code`` the kind of refusal (``illegal``, ``auth``, ``role``, ``funds``, ``stale``, …);
    ``facts``: what a page needs to show the refusal (added to the error message)."""

    def __init__(
        self,
        text: str,
        rule: str | None = None,
        code: str = "illegal",
        facts: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(text)
        self.rule = rule
        self.code = code
        self.facts = facts or {}


class BadMessage(ServerError):
    """A message that is not valid (not JSON, too large, an unknown type or field); the text
    says why."""

    code = "invalid"


class RequestError(ServerError):
    """An HTTP request the server does not do; its class says why (its status, at the edge:
    :data:`HTTP_STATUS`). ``retry_after``: the seconds after which it may be asked again."""

    def __init__(self, text: str, *, retry_after: int | None = None) -> None:
        super().__init__(text)
        self.retry_after = retry_after


class BadRequest(RequestError):
    """The request cannot be answered as asked (a report's bad period, say)."""

    code = "bad"


class Unauthenticated(RequestError):
    """Who asks is not known: no login, a wrong password, an unknown or expired token."""

    code = "auth"


class Forbidden(RequestError):
    """Who asks is known, and may not do this."""

    code = "forbidden"


class NotFound(RequestError):
    """No such table, round, drill or account."""

    code = "missing"


class Conflict(RequestError):
    """The request does not fit the state it met (a name taken, a round in play)."""

    code = "conflict"


class Invalid(RequestError):
    """The request's content is refused by a check (a weak password, a missing field)."""

    code = "invalid"


class Throttled(RequestError):
    """Asked too often: try again later."""

    code = "throttled"


class TryLater(RequestError):
    """The server cannot do it now (a table between processes, the trainer busy, the
    operator's wallet silent): try again in a moment."""

    code = "later"


HTTP_STATUS: dict[type[RequestError], int] = {
    BadRequest: 400,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    Invalid: 422,
    Throttled: 429,
    TryLater: 503,
}
"""The HTTP status of each kind of :class:`RequestError`."""


def status_of(exc: RequestError) -> int:
    """The HTTP status ``exc`` is answered with (its class's, or its nearest base's)."""
    for kind in type(exc).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind]
    return 400


def error_reply(exc: ServerError, ref: Any = None) -> dict[str, Any]:
    """The error message a client is sent for ``exc`` (on its socket, or as the body of a
    refused request): the text, the reference of the message refused, the code, and for a
    refusal the rule and its facts."""
    out: dict[str, Any] = {"type": "error", "error": str(exc), "ref": ref, "code": exc.code}
    if isinstance(exc, Refused):
        if exc.rule:
            out["rule"] = exc.rule
        out |= exc.facts
    return out


__all__ = [
    "HTTP_STATUS",
    "BadMessage",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "Refused",
    "RequestError",
    "ServerError",
    "Throttled",
    "TryLater",
    "Unauthenticated",
    "error_reply",
    "status_of",
]
