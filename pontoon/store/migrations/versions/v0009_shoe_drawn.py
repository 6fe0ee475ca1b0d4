"""A shoe's ``drawn``: the cards drawn since its sealed ``state``. A write in which the shoe
only had cards drawn from it writes their count and its ``seq``, not the whole shoe sealed
again (some 1.5 KB a write, a sixth of the database's log); the shoe at ``seq`` is ``state``
with ``drawn`` cards drawn (:func:`pontoon.store.shoestate.advance`). Rows written before
have 0: their ``state`` is the shoe itself.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("shoe_states") as batch:
        batch.add_column(sa.Column("drawn", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("shoe_states") as batch:
        batch.drop_column("drawn")
