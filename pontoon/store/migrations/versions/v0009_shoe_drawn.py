"""A table's shoe between its whole writes: ``tables.shoe_seq``, the seq of the last write that
wrote the shoe, and ``tables.shoe_drawn``, the cards drawn since it was last written whole in
``shoe_states``. A write in which the shoe only had cards drawn from it sets these two in the
table's row, which the write updates anyway, instead of sealing the shoe and storing its 1.5 KB
again; the shoe at ``shoe_seq`` is ``shoe_states.state`` with ``shoe_drawn`` cards drawn
(:func:`pontoon.store.shoestate.advance`). A table whose ``shoe_seq`` is null (its shoe
written before) has its shoe at ``shoe_states.seq``, whole.

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
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("shoe_seq", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("shoe_drawn", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("shoe_drawn")
        batch.drop_column("shoe_seq")
