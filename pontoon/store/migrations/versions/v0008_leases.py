"""A table's lease: the server process that owns it (``owner``, reachable at ``address``) until
``lease_until`` (milliseconds since the epoch), and the fencing token ``fence``, raised by each
new owner and checked by every write of a leased table (:mod:`pontoon.store.leases`).

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


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        for column in ("lease_until", "fence", "address", "owner"):
            batch.drop_column(column)
