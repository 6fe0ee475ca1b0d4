"""The store's tables (SQLAlchemy Core). The migrations in ``migrations/versions`` create them;
a test checks that a migrated database and this metadata agree.

``tables``        one row per table (a hash chain): its head (last seq and hash)
``rounds``        one row per round: table, number, status (open, over, void), times, house net
``round_players`` each player of a round and their net (derived from the events)
``events``        every event of every table, in order; ``hash`` chains them (see chain.py)
``ledger``        one entry per money event: from one account to another, an amount
``shoe_states``   each table's shoe (its future order), kept out of everything players see
``sessions``      the table server's player sessions: a token's SHA-256 digest, table, player,
                  the id of the last message applied for it
``drill_decisions`` each decision a learner made in a drill (``pontoon train``): the session,
                  the rule set, the cell, the play made, the exact best, the chart's, its cost
``accounts``      one row per person: name, role (player or staff), the password's argon2id
                  hash (never the password), the built-in wallet's balance
``account_sessions`` a logged-in person: the cookie token's SHA-256 digest, expiry
``wallet_entries`` every movement of a built-in wallet: its idempotency key, the account, the
                  kind (deposit and withdrawal by a cashier with a reference; debit and
                  credit by a table, with the event that caused it), amount, balance after
``operator_calls`` every call to an operator's wallet (operator mode): its idempotency key, the
                  kind (debit, credit, rollback), account, amount, the event it pays for, and
                  its state (pending until acknowledged, done, declined; a debit whose wager was not
                  recorded: rollback, until the operator acknowledges it, then rolled-back; one
                  the operator refused or never confirmed: disputed), the process that owns it
``auth_failures`` each failed login or registration, by what it counts against (an address,
                  an account, the two): every process's throttles read it
``launches``      each launch token an operator sent (its ``jti``): used once
``play_limits``   every limit a player set on their own play (deposits and losses per day
                  and week, a reality check, a time-out, self-exclusion), when it takes effect
``signatures``    each signed set of heads (a group commit's): body, key id, Ed25519 signature;
                  ``tables.signed`` names the one that covers the table's head now
``store_meta``    the store's id, which every signed body names
``staff_actions`` what a staff member did at a table (a procedure, a deal): who, which role,
                  the table's last event it wrote
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

HEAD = "0011"
"""The newest schema revision; a test checks it against the migration scripts."""

metadata = MetaData()

# SQLite makes only an INTEGER PRIMARY KEY an auto-increment row id.
BigId = BigInteger().with_variant(Integer, "sqlite")

tables = Table(
    "tables",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("created_at", String(32), nullable=False),
    Column("head_seq", BigInteger, nullable=False),
    Column("head_hash", String(64), nullable=False),
    # the lease of a table served by several processes (pontoon.store.leases)
    Column("owner", String(200), nullable=True),
    Column("address", String(200), nullable=True),
    Column("fence", BigInteger, nullable=False, server_default="0"),
    Column("lease_until", BigInteger, nullable=True),
    # the table's shoe (0009): the seq of the last write that wrote it, and the cards drawn
    # since it was last written whole in shoe_states (pontoon.store.shoestate.advance); a
    # null shoe_seq: shoe_states.seq (a shoe written before 0009)
    Column("shoe_seq", BigInteger, nullable=True),
    Column("shoe_drawn", Integer, nullable=False, server_default="0"),
    # the signature that covers the table's head and shoe now (0010; pontoon.store.heads)
    Column("signed", String(32), nullable=True),
)

signatures = Table(  # each signed set of heads: a group commit's, or rekey's (0010)
    "signatures",
    metadata,
    Column("id", String(32), primary_key=True),  # the first 32 hex digits of its SHA-256
    Column("at", String(32), nullable=False),
    Column("key", String(16), nullable=False),  # the signing key's id (pontoon.store.signing)
    Column("body", Text, nullable=False),  # canonical JSON: the store, the time, the heads
    Column("signature", String(100), nullable=False),  # Ed25519, base64
)

store_meta = Table(  # the store's own facts: its id ("id"), named by every signed body (0010)
    "store_meta",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(200), nullable=False),
)

rounds = Table(
    "rounds",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("table_id", String(64), ForeignKey("tables.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("status", String(8), nullable=False),
    Column("rules", String(64), nullable=False),
    Column("started_at", String(32), nullable=False),
    Column("ended_at", String(32), nullable=True),
    Column("first_seq", BigInteger, nullable=False),
    Column("last_seq", BigInteger, nullable=False),
    Column("house", BigInteger, nullable=False),
    UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),
    CheckConstraint("status IN ('open', 'over', 'void')", name="ck_rounds_status"),
    Index("ix_rounds_started_at", "started_at"),
)

round_players = Table(
    "round_players",
    metadata,
    Column("round_id", BigInteger, ForeignKey("rounds.id"), primary_key=True),
    Column("player", String(200), primary_key=True),
    Column("net", BigInteger, nullable=False),
    Index("ix_round_players_player", "player"),
)

events = Table(
    "events",
    metadata,
    Column("table_id", String(64), ForeignKey("tables.id"), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("round_id", BigInteger, ForeignKey("rounds.id"), nullable=True),
    Column("at", String(32), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("box", Integer, nullable=True),
    Column("hand", Integer, nullable=True),
    Column("player", String(200), nullable=True),
    Column("card", String(4), nullable=True),
    Column("amount", BigInteger, nullable=True),
    Column("detail", Text, nullable=True),
    Column("odds", String(16), nullable=True),
    Column("rule", String(64), nullable=True),
    Column("by", String(32), nullable=True),
    Column("follow", String(8), nullable=True),  # 15.3(d): "both", "0" or "1" (0005)
    Column("hash", String(64), nullable=False),
    Column("fence", BigInteger, nullable=True),  # the lease's token it was written under (0008)
    Index("ix_events_round_id", "round_id"),
)

lease_members = Table(  # the processes sharing the tables, alive until ``until`` (ms)
    "lease_members",
    metadata,
    Column("owner", String(200), primary_key=True),
    Column("address", String(200), nullable=False),
    Column("until", BigInteger, nullable=False),
)

lease_log = Table(  # who took each fencing token of a table (pontoon.store.leases)
    "lease_log",
    metadata,
    Column("table_id", String(64), ForeignKey("tables.id"), primary_key=True),
    Column("fence", BigInteger, primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("address", String(200), nullable=False),
    Column("taken_at", String(32), nullable=False),
)

ledger = Table(
    "ledger",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("table_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("round_id", BigInteger, ForeignKey("rounds.id"), nullable=True),
    Column("at", String(32), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("player", String(200), nullable=True),
    Column("from_account", String(210), nullable=False),
    Column("to_account", String(210), nullable=False),
    Column("amount", BigInteger, nullable=False),
    UniqueConstraint("table_id", "seq", name="uq_ledger_table_seq"),
    ForeignKeyConstraint(
        ["table_id", "seq"], ["events.table_id", "events.seq"], name="fk_ledger_event"
    ),
    CheckConstraint("amount > 0", name="ck_ledger_amount"),
    Index("ix_ledger_round_id", "round_id"),
)

shoe_states = Table(
    "shoe_states",
    metadata,
    Column("table_id", String(64), ForeignKey("tables.id"), primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("state", Text, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256 hex: never the token itself
    Column("table_id", String(64), ForeignKey("tables.id"), nullable=False),
    Column("player", String(200), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("last_id", String(64), nullable=True),  # the last message applied (its "id")
    UniqueConstraint("table_id", "player", name="uq_sessions_table_player"),
)

drill_decisions = Table(
    "drill_decisions",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("learner", String(200), nullable=False),
    Column("drill", String(16), nullable=False),  # strategy
    Column("session", String(32), nullable=False),  # when the drill began (UTC)
    Column("rules", String(64), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("hand", String(64), nullable=False),
    Column("dealer", String(4), nullable=False),
    Column("cell", String(16), nullable=False),
    Column("answer", String(16), nullable=False),
    Column("best", String(16), nullable=False),
    Column("chart", String(16), nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("cost", Float, nullable=False),  # expected value lost per unit wagered (not money)
    Index("ix_drill_decisions_learner", "learner", "drill", "rules"),
)

accounts = Table(
    "accounts",
    metadata,
    Column("name", String(24), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("password_hash", String(200), nullable=False),  # argon2id, encoded with its salt
    Column("balance", BigInteger, nullable=False),  # the built-in wallet, in cents
    Column("created_at", String(32), nullable=False),
    Column("disabled_at", String(32), nullable=True),  # a disabled account opens nothing
    Column("revoked_at", String(32), nullable=True),  # its every session ended then
    CheckConstraint("balance >= 0", name="ck_accounts_balance"),
    CheckConstraint(
        "role IN ('player', 'dealer', 'supervisor', 'pitboss', 'cashier')",
        name="ck_accounts_role",
    ),
    Index("ix_accounts_revoked_at", "revoked_at"),
)

account_sessions = Table(
    "account_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256 hex of the cookie's token
    Column("account", String(24), ForeignKey("accounts.name"), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("expires_at", String(32), nullable=False),
    Index("ix_account_sessions_account", "account"),
)

wallet_entries = Table(
    "wallet_entries",
    metadata,
    Column("key", String(100), primary_key=True),  # the idempotency key: one movement once
    Column("account", String(24), ForeignKey("accounts.name"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("balance", BigInteger, nullable=False),  # the account's balance after it
    Column("at", String(32), nullable=False),
    Column("table_id", String(64), nullable=True),  # debit, credit: the event that caused it
    Column("seq", BigInteger, nullable=True),
    Column("reference", String(100), nullable=True),  # deposit, withdrawal: the cashier's
    Column("by", String(24), nullable=True),  # the staff member who made it
    CheckConstraint("amount > 0", name="ck_wallet_entries_amount"),
    CheckConstraint(
        "kind IN ('deposit', 'withdrawal', 'debit', 'credit', 'rollback')",
        name="ck_wallet_entries_kind",
    ),
    Index("ix_wallet_entries_account", "account"),
)

staff_actions = Table(
    "staff_actions",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("account", String(24), ForeignKey("accounts.name"), nullable=False),
    Column("role", String(16), nullable=False),
    Column("table_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),  # the last event the action wrote
    Column("action", String(200), nullable=False),
    Column("at", String(32), nullable=False),
    Index("ix_staff_actions_account", "account"),
)

play_limits = Table(
    "play_limits",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("account", String(24), ForeignKey("accounts.name"), nullable=False),
    Column("kind", String(24), nullable=False),
    Column("value", BigInteger, nullable=True),  # cents, minutes; None: no limit
    Column("effective_at", String(32), nullable=False),  # a raise waits a day to take effect
    Column("at", String(32), nullable=False),
    Index("ix_play_limits_account", "account"),
)

operator_calls = Table(
    "operator_calls",
    metadata,
    Column("key", String(100), primary_key=True),  # the idempotency key the operator sees
    Column("account", String(24), ForeignKey("accounts.name"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("table_id", String(64), nullable=False),
    Column("seq", BigInteger, nullable=True),  # the event, once it is recorded
    Column("status", String(16), nullable=False),
    Column("at", String(32), nullable=False),
    Column("done_at", String(32), nullable=True),
    Column("owner", String(64), nullable=True),  # the process that made it (its outbox's)
    Column("tries", Integer, nullable=False, server_default="0"),
    Column("next_at", String(32), nullable=True),  # not tried again before
    Column("error", String(200), nullable=True),  # the operator's last answer, when not ok
    CheckConstraint("amount > 0", name="ck_operator_calls_amount"),
    CheckConstraint(
        "status IN ('pending', 'done', 'declined', 'rollback', 'rolled-back', 'disputed')",
        name="ck_operator_calls_status",
    ),
    Index("ix_operator_calls_status", "status"),
)

auth_failures = Table(
    "auth_failures",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("key", String(200), nullable=False),  # what failed: an address, an account, a pair
    Column("at", Float, nullable=False),  # seconds since the epoch
    Index("ix_auth_failures_key_at", "key", "at"),
)

launches = Table(
    "launches",
    metadata,
    Column("jti", String(100), primary_key=True),
    Column("account", String(24), nullable=False),
    Column("at", String(32), nullable=False),
)
