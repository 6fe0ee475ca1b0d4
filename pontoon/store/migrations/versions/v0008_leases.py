"""A table's lease: the server process that owns it (``owner``, reachable at ``address``) until
``lease_until`` (milliseconds since the epoch), and the fencing token ``fence``, raised by each
new owner and checked by every write of a leased table (:mod:`pontoon.store.leases`). Each
event keeps the token it was written under, and ``lease_log`` who took each token: so
``pontoon verify`` shows that no table was written by two owners at once. ``lease_members``:
the processes alive, each beating while it runs (the tables are shared among them).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("owner", sa.String(200), nullable=True))
        batch.add_column(sa.Column("address", sa.String(200), nullable=True))
        batch.add_column(sa.Column("fence", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("lease_until", sa.BigInteger, nullable=True))
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("fence", sa.BigInteger, nullable=True))
    op.create_table(
        "lease_members",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("address", sa.String(200), nullable=False),
        sa.Column("until", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "lease_log",
        sa.Column("table_id", sa.String(64), sa.ForeignKey("tables.id"), primary_key=True),
        sa.Column("fence", sa.BigInteger, primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("address", sa.String(200), nullable=False),
        sa.Column("taken_at", sa.String(32), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lease_log")
    op.drop_table("lease_members")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("fence")
    with op.batch_alter_table("tables") as batch:
        for column in ("lease_until", "fence", "address", "owner"):
            batch.drop_column(column)
