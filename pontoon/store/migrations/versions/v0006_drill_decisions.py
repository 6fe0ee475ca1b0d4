"""The learners' records of ``pontoon train``: one row per decision graded.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None

BigId = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "drill_decisions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("learner", sa.String(200), nullable=False),
        sa.Column("drill", sa.String(16), nullable=False),
        sa.Column("session", sa.String(32), nullable=False),
        sa.Column("rules", sa.String(64), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("hand", sa.String(64), nullable=False),
        sa.Column("dealer", sa.String(4), nullable=False),
        sa.Column("cell", sa.String(16), nullable=False),
        sa.Column("answer", sa.String(16), nullable=False),
        sa.Column("best", sa.String(16), nullable=False),
        sa.Column("chart", sa.String(16), nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
        sa.Column("cost", sa.Float, nullable=False),
    )
    op.create_index("ix_drill_decisions_learner", "drill_decisions", ["learner", "drill", "rules"])


def downgrade() -> None:
    op.drop_index("ix_drill_decisions_learner", "drill_decisions")
    op.drop_table("drill_decisions")
