"""What the pit boss set at a table: open or closed, and its limits (the staff roles').

Each setting is a row of the staff actions' record (who, in which role, at which table, after
which event): ``open``, ``close`` or ``limits MIN MAX`` (cents). A table's settings are its
latest such rows, read back when the server starts, so they outlive a restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from pontoon.store import chain
from pontoon.store.db import Store
from pontoon.store.house import recorded
from pontoon.store.schema import staff_actions, tables


@dataclass(frozen=True)
class Settings:
    closed: bool = False
    limits: tuple[int, int] | None = None  # (table_min, table_max); None: the rule set's


def record(store: Store, account: str, role: str, table: str, action: str) -> None:
    """One setting, after the table's last event, in the house's record."""
    with recorded(store) as rec:
        seq = rec.conn.execute(select(tables.c.head_seq).where(tables.c.id == table)).scalar()
        row = {"account": account, "role": role, "table_id": table, "seq": int(seq or 0)}
        rec.insert(staff_actions, row | {"action": action, "at": chain.now()}, account)


def settings(store: Store, table: str) -> Settings:
    """The table's latest settings."""
    s = staff_actions.c
    newest = select(s.action).where(s.table_id == table).order_by(s.id.desc()).limit(1)
    with store.read() as conn:
        state = conn.execute(newest.where(s.action.in_(("open", "close")))).scalar()
        limits = conn.execute(newest.where(s.action.like("limits %"))).scalar()
    if limits is None:
        return Settings(state == "close")
    _, low, high = str(limits).split()
    return Settings(state == "close", (int(low), int(high)))


__all__ = ["Settings", "record", "settings"]
