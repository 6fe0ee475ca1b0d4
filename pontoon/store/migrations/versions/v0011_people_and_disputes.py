"""People and disputes: an account may be disabled (``accounts.disabled_at``) and have every
session ended at once (``accounts.revoked_at``: every process watches it); failed logins and
registrations are counted where every process sees them (``auth_failures``); a call to an
operator's wallet names the process that owns it (``owner``), counts its tries, waits for the
next (``next_at``) and keeps the operator's last answer (``error``); a rollback the operator
refused or never confirmed is an open dispute (status ``disputed``).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

BigId = sa.BigInteger().with_variant(sa.Integer, "sqlite")
OLD = "status IN ('pending', 'done', 'declined', 'rollback', 'rolled-back')"
NEW = "status IN ('pending', 'done', 'declined', 'rollback', 'rolled-back', 'disputed')"


def upgrade() -> None:
    with op.batch_alter_table("accounts") as batch:
        batch.add_column(sa.Column("disabled_at", sa.String(32), nullable=True))
        batch.add_column(sa.Column("revoked_at", sa.String(32), nullable=True))
        batch.create_index("ix_accounts_revoked_at", ["revoked_at"])
    with op.batch_alter_table("operator_calls") as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("tries", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("next_at", sa.String(32), nullable=True))
        batch.add_column(sa.Column("error", sa.String(200), nullable=True))
        batch.drop_constraint("ck_operator_calls_status", type_="check")
        batch.create_check_constraint("ck_operator_calls_status", NEW)
    op.create_table(
        "auth_failures",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_auth_failures_key_at", "auth_failures", ["key", "at"])


def downgrade() -> None:
    op.drop_index("ix_auth_failures_key_at", table_name="auth_failures")
    op.drop_table("auth_failures")
    with op.batch_alter_table("operator_calls") as batch:
        batch.drop_constraint("ck_operator_calls_status", type_="check")
        batch.create_check_constraint("ck_operator_calls_status", OLD)
        for name in ("error", "next_at", "tries", "owner"):
            batch.drop_column(name)
    with op.batch_alter_table("accounts") as batch:
        batch.drop_index("ix_accounts_revoked_at")
        batch.drop_column("revoked_at")
        batch.drop_column("disabled_at")
