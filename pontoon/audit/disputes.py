"""The open disputes with an operator's wallet: each call the operator refused or
never confirmed — a rollback of a debit whose wager was not recorded, a credit it declined —
still tried again by the server's outbox (:mod:`pontoon.server.operator`) until the operator
acknowledges it. The pit boss reads them (``GET /api/pit/disputes``) and ``pontoon report``
lists them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from pontoon.money import dollars
from pontoon.store.db import Store
from pontoon.store.schema import operator_calls


def open_disputes(store: Store, table: str | None = None) -> list[dict[str, Any]]:
    """Every open dispute (of ``table`` only, when given), oldest first: its key, the call
    (``rollback`` of a debit, or ``credit``), player, amount (cents), table, tries, the
    operator's last answer (``error``), since (when the call was written, UTC) and when it is
    tried next."""
    c = operator_calls.c
    q = select(c.key, c.kind, c.account, c.amount, c.table_id, c.tries, c.error, c.at, c.next_at)
    q = q.where(c.status == "disputed").order_by(c.at, c.key)
    if table:
        q = q.where(c.table_id == table)
    with store.read() as conn:
        rows = conn.execute(q).all()
    return [
        {
            "key": r.key,
            "kind": "credit" if r.kind == "credit" else "rollback",
            "player": r.account,
            "amount": int(r.amount),
            "table": r.table_id,
            "tries": int(r.tries),
            "error": r.error,
            "since": r.at,
            "next_try": r.next_at,
        }
        for r in rows
    ]


def disputes_text(disputes: list[dict[str, Any]]) -> list[str]:
    """The report's lines for the open disputes (none: no lines)."""
    if not disputes:
        return []
    lines = [
        f"Open disputes with the operator's wallet ({len(disputes)}): each tried again "
        "until the operator acknowledges it",
    ]
    for d in disputes:
        lines.append(
            f"  {d['kind']} {d['key']}: {d['player']} {dollars(d['amount'])} at table "
            f"{d['table']}, since {d['since']}, {d['tries']} tries, next {d['next_try']}; "
            f"the operator: {d['error']}"
        )
    return lines


__all__ = ["disputes_text", "open_disputes"]
