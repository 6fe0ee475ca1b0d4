"""Accounts (players and staff, a password's argon2id hash), their logged-in sessions, and
the built-in wallet: each account's balance and every movement of it, keyed for idempotency;
the calls to an operator's wallet and its launch tokens; the limits players set on their own
play; what each staff member did at a table.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

ROLES = "role IN ('player', 'dealer', 'supervisor', 'pitboss', 'cashier')"
BigId = sa.BigInteger().with_variant(sa.Integer, "sqlite")
STATUS = "status IN ('pending', 'done', 'declined', 'rollback', 'rolled-back')"
KINDS = "kind IN ('deposit', 'withdrawal', 'debit', 'credit', 'rollback')"


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("name", sa.String(24), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("balance", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.CheckConstraint("balance >= 0", name="ck_accounts_balance"),
        sa.CheckConstraint(ROLES, name="ck_accounts_role"),
    )
    op.create_table(
        "account_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("account", sa.String(24), sa.ForeignKey("accounts.name"), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("expires_at", sa.String(32), nullable=False),
    )
    op.create_index("ix_account_sessions_account", "account_sessions", ["account"])
    op.create_table(
        "wallet_entries",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("account", sa.String(24), sa.ForeignKey("accounts.name"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("balance", sa.BigInteger, nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=True),
        sa.Column("seq", sa.BigInteger, nullable=True),
        sa.Column("reference", sa.String(100), nullable=True),
        sa.Column("by", sa.String(24), nullable=True),
        sa.CheckConstraint("amount > 0", name="ck_wallet_entries_amount"),
        sa.CheckConstraint(KINDS, name="ck_wallet_entries_kind"),
    )
    op.create_index("ix_wallet_entries_account", "wallet_entries", ["account"])
    op.create_table(
        "operator_calls",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("account", sa.String(24), sa.ForeignKey("accounts.name"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("done_at", sa.String(32), nullable=True),
        sa.CheckConstraint("amount > 0", name="ck_operator_calls_amount"),
        sa.CheckConstraint(STATUS, name="ck_operator_calls_status"),
    )
    op.create_index("ix_operator_calls_status", "operator_calls", ["status"])
    op.create_table(
        "launches",
        sa.Column("jti", sa.String(100), primary_key=True),
        sa.Column("account", sa.String(24), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
    )
    op.create_table(
        "play_limits",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account", sa.String(24), sa.ForeignKey("accounts.name"), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("value", sa.BigInteger, nullable=True),
        sa.Column("effective_at", sa.String(32), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
    )
    op.create_index("ix_play_limits_account", "play_limits", ["account"])
    op.create_table(
        "staff_actions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account", sa.String(24), sa.ForeignKey("accounts.name"), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("action", sa.String(200), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
    )
    op.create_index("ix_staff_actions_account", "staff_actions", ["account"])


def downgrade() -> None:
    op.drop_index("ix_staff_actions_account", "staff_actions")
    op.drop_table("staff_actions")
    op.drop_index("ix_play_limits_account", "play_limits")
    op.drop_table("play_limits")
    op.drop_table("launches")
    op.drop_index("ix_operator_calls_status", "operator_calls")
    op.drop_table("operator_calls")
    op.drop_index("ix_wallet_entries_account", "wallet_entries")
    op.drop_table("wallet_entries")
    op.drop_index("ix_account_sessions_account", "account_sessions")
    op.drop_table("account_sessions")
    op.drop_table("accounts")
