"""A table's debits from an operator's wallet.

With an operator's wallet no lock is held across a call to the operator (:func:`paying`): a
message whose write needs a player's money from it is applied under the lock only to measure
the debit, taken back (:class:`Needs`), and the lock let go while the debit is written
``pending`` and sent; the lock is then taken again, the message applied anew and recorded
with the debit (:func:`match_debits`: marked done in that write). A debit no write records
(refused, unanswered, the table moved on) is rolled back by the wallet's outbox.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from pontoon.store.db import Batch

from .errors import Refused

R = TypeVar("R")

Paid = list[tuple[str, str, int]]
"""Debits the operator acknowledged for a write not yet made: (key, player, amount) each."""


class RemoteWallet(Protocol):
    """An operator's wallet as a table uses it (:class:`pontoon.server.operator.OperatorWallet`)."""

    owner: str  # this process, as the calls it sends are marked in the store

    async def debit(self, table: str, wants: list[tuple[str, int]]) -> Paid:
        """Debit each ``(player, amount)`` before the write (no lock held while it waits)."""

    def settled(self, paid: Paid) -> None:
        """The write of these debits is over (recorded or not: then rolled back)."""

    def serve(self, table: str) -> None:
        """This process serves ``table`` now (its calls are this process's to end)."""

    def let_go(self, table: str) -> None:
        """This process no longer serves ``table``."""


class Needs(Exception):
    """A write needs money from the operator's wallet that no debit has paid for yet:
    ``wants``, (player, amount) each. Raised by :meth:`Table.commit` before anything is
    written; the caller rewinds what it applied, and :meth:`Table.paying` asks the wallet
    with the table's lock let go. A signal, as :class:`StopIteration` is, not an error:
    never a :class:`~pontoon.errors.PontoonError`, so that no handler of errors takes it."""

    def __init__(self, wants: list[tuple[str, int]]) -> None:
        super().__init__(f"the operator's wallet is asked for {wants}")
        self.wants = wants


PASSES = 3  # a message applied again after each debit its write then wants (the table moved on)


class Paying(Protocol):
    """The table as its payments read it (:class:`pontoon.server.table.Table`)."""

    name: str
    lock: asyncio.Lock
    remote: RemoteWallet | None
    asking: int  # messages waiting for the operator's wallet (the lock let go)


def match_debits(batch: Batch, paid: Paid, remote: RemoteWallet | None) -> None:
    """With an operator's wallet: the batch's wallet deposits matched to the debits
    ``paid`` for them (their keys, by seq, go with the write and are marked done in it);
    :class:`Needs` when they are not exactly what was paid (none paid yet, or the table
    moved on while the operator answered)."""
    if remote is None:
        return
    wants = [
        (batch.prev_seq + 1 + i, str(e.player), int(e.amount or 0))
        for i, (e, _) in enumerate(batch.events)
        if e.kind == "deposit"
    ]
    if [(p, a) for _, p, a in wants] != [(p, a) for _, p, a in paid]:
        raise Needs([(p, a) for _, p, a in wants])
    batch.remote = {seq: key for (seq, _, _), (key, _, _) in zip(wants, paid, strict=True)}
    batch.remote_owner = remote.owner  # (its credits are this process's to send)


async def paying(table: Paying, step: Callable[[Paid], Awaitable[R]]) -> R:
    """``step(paid)`` under the table's lock. When its write needs the operator's money
    (:class:`Needs`: ``step`` rewound what it applied), the lock is let go while the
    wallet is asked (:class:`~pontoon.store.db.WalletError` when it refuses or does not
    answer: at most ``OperatorConfig.longest``), then ``step`` runs again with the debits.
    No lock is held across a call to the operator; a debit no write recorded is rolled
    back by the wallet's outbox. :class:`Refused` (``stale``) after :data:`PASSES`."""
    paid: Paid = []
    asked = False
    try:
        for _ in range(PASSES):
            try:
                async with table.lock:
                    return await step(paid)
            except Needs as need:
                assert table.remote is not None
                table.remote.settled(paid)  # (not recorded: rolled back)
                paid = []
                if not asked:  # the table is not idle: it stays with this process
                    asked = True
                    table.asking += 1
                paid = await table.remote.debit(table.name, need.wants)
        raise Refused(
            "the table moved on while the operator's wallet answered: look again",
            code="stale",
        )
    finally:
        if asked:
            table.asking -= 1
        if table.remote is not None:
            table.remote.settled(paid)


__all__ = ["PASSES", "Needs", "Paid", "Paying", "RemoteWallet", "match_debits", "paying"]
