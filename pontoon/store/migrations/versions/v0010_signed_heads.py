"""The record signed: ``signatures`` holds each signed set of heads (the body, the signing
key's id and its Ed25519 signature; :mod:`pontoon.store.heads`), ``tables.signed`` the one
that covers the table's head now, and ``store_meta`` the store's own id, which every signed
body names (a head signed for another store is not this one's).

Tables recorded before this revision have no signed head: ``pontoon rekey`` signs them once
(and seals their shoes bound to the table), after which an unsigned head is refused.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "signatures",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("key", sa.String(16), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("signature", sa.String(100), nullable=False),
    )
    meta = op.create_table(
        "store_meta",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )
    op.bulk_insert(meta, [{"name": "id", "value": uuid.uuid4().hex}])
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("signed", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("signed")
    op.drop_table("store_meta")
    op.drop_table("signatures")
