"""An event's ``follow``: a player behind's choice after a split (15.3(d)), "both", 0 or 1,
as a field of its own. Events written before keep it in ``detail`` ("split/1"), where their
hashes were taken; they are read as they are (:func:`pontoon.round.move_of` reads both).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("follow", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_column("follow")
