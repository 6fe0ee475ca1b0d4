"""The hash chain and the ledger, as pure functions of the events.

Each stored event carries ``hash = sha256(previous hash + "\\n" + content)`` where the content
is the canonical JSON of ``[table, seq, round, at, event]``; the first event of a table
follows :data:`GENESIS`. Changing, removing, inserting or reordering any stored event (or its
time, position or round) changes every hash after it.

>>> h1 = link(GENESIS, "t", 1, None, "2025-01-01T00:00:00.000000Z", Event("deposit",
...     player="ana", amount=1000))
>>> len(h1), h1 == link(GENESIS, "t", 1, None, "2025-01-01T00:00:00.000000Z",
...     Event("deposit", player="ana", amount=1001))
(64, False)

Money events become ledger entries, from one account to another:

>>> entry(Event("stake", box=1, player="ana", amount=500))
('wager', 'player:ana', 'layout', 500)
>>> entry(Event("pay", box=1, player="ana", amount=750))
('payment', 'house', 'player:ana', 750)
>>> entry(Event("deal", box=1, card="AS")) is None
True
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from pontoon.events import Event

GENESIS = "0" * 64
"""The 'previous hash' of a table's first event."""

HOUSE = "house"
LAYOUT = "layout"  # money on the table's layout: wagers not yet settled
CASHIER = "cashier"  # the world outside the table: deposits come from it, withdrawals go to it
WALLET = "wallet"  # the detail of a deposit (a debit) or withdrawal (a credit) of a player's wallet

# event kind -> (ledger kind, from, to); "P" stands for the event's player's account
_MONEY: dict[str, tuple[str, str, str]] = {
    "stake": ("wager", "P", LAYOUT),
    "return": ("refund", LAYOUT, "P"),
    "collect": ("loss", LAYOUT, HOUSE),
    "pay": ("payment", HOUSE, "P"),
    "deposit": ("deposit", CASHIER, "P"),
    "withdraw": ("withdrawal", "P", CASHIER),
}
MONEY_KINDS = frozenset(_MONEY)


def account(player: str) -> str:
    return f"player:{player}"


def entry(event: Event) -> tuple[str, str, str, int] | None:
    """The ledger entry ``(kind, from, to, amount)`` a money event makes, or None."""
    spec = _MONEY.get(event.kind)
    if spec is None:
        return None
    if event.player is None or event.amount is None:
        raise ValueError(f"a {event.kind} event needs a player and an amount")
    kind, src, dst = spec
    p = account(event.player)
    return kind, p if src == "P" else src, p if dst == "P" else dst, event.amount


def content(table: str, seq: int, round_id: int | None, at: str, event: Event) -> str:
    return json.dumps(
        [table, seq, round_id, at, event.to_dict()], separators=(",", ":"), ensure_ascii=False
    )


def link(prev: str, table: str, seq: int, round_id: int | None, at: str, event: Event) -> str:
    """The hash of one event, chained to the previous event's hash."""
    data = prev + "\n" + content(table, seq, round_id, at, event)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def now() -> str:
    """The time as stored: UTC, microseconds, ISO 8601 (sorts as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
