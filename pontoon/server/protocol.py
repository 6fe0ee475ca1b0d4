"""The messages a client may send, validated with pydantic: unknown fields, wrong types and
oversized messages are refused with a readable error (and change nothing)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from pontoon.store.roles import passes_for_the_house

from .errors import BadMessage

MAX_MESSAGE = 4096  # bytes: larger messages are refused unread
ID = Annotated[str, Field(min_length=1, max_length=64)]
Box = Annotated[int, Field(ge=1, le=7)]
Amount = Annotated[int, Field(ge=1, le=10**12)]


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: ID | None = None  # idempotency key: a message sent twice with one id applies once


class Bet(_Msg):
    type: Literal["bet"]
    box: Box
    amount: Amount


class Deal(_Msg):
    type: Literal["deal"]


class Act(_Msg):
    """A decision. ``v`` is the table's version the client saw: a stale click is refused."""

    type: Literal["act"]
    action: Annotated[str, Field(min_length=1, max_length=16)]
    box: Box
    hand: Annotated[int, Field(ge=0, le=3)] | None = None
    amount: Amount | None = None
    follow: Literal["both", 0, 1] | None = None
    v: Annotated[int, Field(ge=0)] | None = None


class Procedure(_Msg):
    """A section 16 procedure (supervisor only)."""

    type: Literal["irregularity"]
    kind: Annotated[str, Field(min_length=1, max_length=32)]
    box: Box | None = None
    hand: Annotated[int, Field(ge=0, le=3)] | None = None
    player: Annotated[str, Field(min_length=1, max_length=24)] | None = None
    card: Annotated[str, Field(min_length=2, max_length=3)] | None = None
    v: Annotated[int, Field(ge=0)] | None = None


class Leave(_Msg):
    """The player leaves the table: cashed out, the session closed (not during a wager)."""

    type: Literal["leave"]


class Reality(_Msg):
    """The player has seen the reality check (time played, net): wagers go on."""

    type: Literal["reality"]


class Refresh(_Msg):
    type: Literal["state", "ping"]


Message = Bet | Deal | Act | Procedure | Leave | Reality | Refresh
_ADAPTER: TypeAdapter[Message] = TypeAdapter(Annotated[Message, Field(discriminator="type")])


def encode(data: Any) -> str:
    r"""``data`` as compact JSON text, as the server sends it (orjson: several times quicker
    than the standard library's encoder on a state; a text orjson cannot encode — a lone
    surrogate a client sent, say — by the standard library, escaped).

    >>> encode({"type": "ok", "ref": "m1", "names": ["Ana", "Zoë"]})
    '{"type":"ok","ref":"m1","names":["Ana","Zoë"]}'
    >>> encode({"detail": chr(0xD800)})
    '{"detail":"\\ud800"}'
    """
    try:
        return orjson.dumps(data).decode()
    except TypeError:
        return json.dumps(data, separators=(",", ":"))


def size(text: str | bytes) -> int:
    """The size of a message in bytes (a text frame is sent as UTF-8)."""
    if isinstance(text, bytes) or len(text) * 4 <= MAX_MESSAGE:
        return len(text)  # (a short text's bytes are not counted: it fits anyway)
    return len(text.encode("utf-8", "surrogatepass"))


def parse(text: str | bytes) -> Message:
    """The message ``text`` holds; :class:`~pontoon.server.errors.BadMessage` when it is not
    one."""
    if size(text) > MAX_MESSAGE:
        raise BadMessage(f"message too large: at most {MAX_MESSAGE} bytes")
    try:
        data: Any = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise BadMessage("not JSON") from None
    except RecursionError:  # some thousand nested [ or {
        raise BadMessage("not JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise BadMessage("a message is a JSON object with a 'type'")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:3]:
            where = ".".join(str(x) for x in err["loc"]) or "message"
            parts.append(f"{where}: {err['msg']}")
        raise BadMessage("invalid message: " + "; ".join(parts)) from None


class JoinRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_\-]+$")]

    @field_validator("name")
    @classmethod
    def _not_a_role(cls, name: str) -> str:
        """A name may not pass for a role of the house (``Dealer``, ``super-visor``,
        ``house_2``): its letters, in any case, without ``-``, ``_`` and digits."""
        if passes_for_the_house(name):
            raise ValueError("a name may not pass for one of the house's people")
        return name


class LeaveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: Annotated[str, Field(min_length=1, max_length=64)]
