"""The first schema: tables, rounds, round_players, events, ledger, shoe_states.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

BigId = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("head_seq", sa.BigInteger, nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(64), sa.ForeignKey("tables.id"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("rules", sa.String(64), nullable=False),
        sa.Column("started_at", sa.String(32), nullable=False),
        sa.Column("ended_at", sa.String(32), nullable=True),
        sa.Column("first_seq", sa.BigInteger, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False),
        sa.Column("house", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),
        sa.CheckConstraint("status IN ('open', 'over', 'void')", name="ck_rounds_status"),
    )
    op.create_index("ix_rounds_started_at", "rounds", ["started_at"])
    op.create_table(
        "round_players",
        sa.Column("round_id", sa.BigInteger, sa.ForeignKey("rounds.id"), primary_key=True),
        sa.Column("player", sa.String(200), primary_key=True),
        sa.Column("net", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_round_players_player", "round_players", ["player"])
    op.create_table(
        "events",
        sa.Column("table_id", sa.String(64), sa.ForeignKey("tables.id"), primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("round_id", sa.BigInteger, sa.ForeignKey("rounds.id"), nullable=True),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("box", sa.Integer, nullable=True),
        sa.Column("hand", sa.Integer, nullable=True),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("card", sa.String(4), nullable=True),
        sa.Column("amount", sa.BigInteger, nullable=True),
        sa.Column("detail", sa.Text, nullable=True),
        sa.Column("odds", sa.String(16), nullable=True),
        sa.Column("rule", sa.String(64), nullable=True),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_events_round_id", "events", ["round_id"])
    op.create_table(
        "ledger",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("round_id", sa.BigInteger, sa.ForeignKey("rounds.id"), nullable=True),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("from_account", sa.String(210), nullable=False),
        sa.Column("to_account", sa.String(210), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("table_id", "seq", name="uq_ledger_table_seq"),
        sa.ForeignKeyConstraint(
            ["table_id", "seq"], ["events.table_id", "events.seq"], name="fk_ledger_event"
        ),
        sa.CheckConstraint("amount > 0", name="ck_ledger_amount"),
    )
    op.create_index("ix_ledger_round_id", "ledger", ["round_id"])
    op.create_table(
        "shoe_states",
        sa.Column("table_id", sa.String(64), sa.ForeignKey("tables.id"), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for name in ("shoe_states", "ledger", "events", "round_players", "rounds", "tables"):
        op.drop_table(name)
