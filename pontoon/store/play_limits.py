"""The limits a player sets on their own play, kept and enforced in the store.

- **Deposit limits** per day and per week (rolling 24 hours and 7 days): a cashier's deposit
  past one is refused.
- **Loss limits** per day and per week: a wager that, lost, would take the player's net loss
  over the window (debits less credits) past one is refused, in the transaction that would
  debit it.
- **Reality check** every N minutes: the server stops taking the player's wagers until the
  player has seen the time played and the net, and said so (recorded).
- **Session time**: N minutes after a login's first wager, no more wagers until the player
  logs in again. The clock of both is the store's (:func:`play_clock`): a restart or another
  process goes on counting where the last left off.
- **Time-out** (1 to 42 days) and **self-exclusion** (180 days or more): no login, no wager,
  no deposit until it ends; every logged-in session is closed at once; it cannot be
  shortened.

A lower limit takes effect at once; a higher one (or none) after a day's cooling-off, so a
decision made on a losing streak cannot undo itself at once. Every change is a row of
``play_limits``: the record of what was set and when.

>>> Limit("loss-day").window
86400
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, bindparam, func, literal_column, select

from pontoon.errors import InputError
from pontoon.store import chain
from pontoon.store.revocation import revoke
from pontoon.store.schema import (
    account_sessions,
    accounts,
    operator_calls,
    play_limits,
    wallet_entries,
)

if TYPE_CHECKING:
    from pontoon.store.house import Recording

DAY = 86400
COOLING = DAY  # seconds before a higher limit, or none, takes effect


class Limit(StrEnum):
    DEPOSIT_DAY = "deposit-day"
    DEPOSIT_WEEK = "deposit-week"
    LOSS_DAY = "loss-day"
    LOSS_WEEK = "loss-week"
    REALITY = "reality-minutes"
    SESSION = "session-minutes"  # the longest a login's play may last: then no wager

    @property
    def window(self) -> int:
        """The rolling window of a money limit, in seconds."""
        return DAY if self.value.endswith("-day") else 7 * DAY


class Pause(StrEnum):
    TIME_OUT = "time-out"  # 1 to 42 days
    SELF_EXCLUSION = "self-exclusion"  # 180 days or more

    @property
    def days(self) -> tuple[int, int]:
        return (1, 42) if self is Pause.TIME_OUT else (180, 3650)


REALITY_ACK = "reality-ack"  # a reality check seen and acknowledged (value: minutes played)
# the play clock's rows, records of play and not limits: the acknowledgements, and a login's
# first wager as stores of version 0.9.0 wrote it (the wager itself is the record now)
CLOCK = (REALITY_ACK, "play-start")
# the rows a wager is checked against (:func:`check_wager`): an account with none of them
# (every other row of its: a deposit limit, the clock) has its wagers written unchecked
WAGER_KINDS = (Limit.LOSS_DAY.value, Limit.LOSS_WEEK.value, *(p.value for p in Pause))


class LimitError(InputError):
    """A movement past a limit the player set, or during a pause (the text says which)."""


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ago(seconds: float) -> str:
    return _iso(datetime.now(UTC) - timedelta(seconds=seconds))


def current(conn: Any, account: str) -> dict[str, int | None]:
    """The limits in effect now (kind -> value; a kind never set is absent)."""
    now = chain.now()
    out: dict[str, int | None] = {}
    c = play_limits.c
    rows = conn.execute(
        select(c.kind, c.value)
        .where(c.account == account, c.effective_at <= now, c.kind.not_in(CLOCK))
        .order_by(c.id)
    )
    for kind, value in rows:
        out[str(kind)] = None if value is None else int(value)
    return out


def pending(conn: Any, account: str) -> list[dict[str, Any]]:
    """The raises still cooling off: ``{kind, value, effective_at}``."""
    c = play_limits.c
    rows = conn.execute(
        select(c.kind, c.value, c.effective_at)
        .where(c.account == account, c.effective_at > chain.now())
        .order_by(c.id)
    )
    return [{"kind": str(k), "value": v, "effective_at": str(e)} for k, v, e in rows]


def paused_until(conn: Any, account: str) -> str | None:
    """The end of a time-out or self-exclusion in force (UTC, ISO 8601), else None."""
    limits = current(conn, account)
    ends = [limits.get(str(p)) for p in Pause]
    latest = max((e for e in ends if e is not None), default=None)
    if latest is None:
        return None
    until = _iso(datetime.fromtimestamp(latest, UTC))
    return until if until > chain.now() else None


def set_limit(rec: Recording, account: str, kind: Limit, value: int | None) -> str:
    """Set ``account``'s ``kind`` limit (None: none); when it takes effect (at once for a
    lower limit, after :data:`COOLING` for a higher one or none)."""
    if value is not None and not 1 <= value <= 10**12:
        raise LimitError(f"a {kind} limit is 1 to 10**12, not {value}")
    now = chain.now()
    have = current(rec.conn, account).get(str(kind))
    lower = value is not None and (have is None or value < have)
    effective = now if lower else _iso(datetime.now(UTC) + timedelta(seconds=COOLING))
    row = {"account": account, "kind": str(kind), "value": value}
    rec.insert(play_limits, row | {"effective_at": effective, "at": now})
    return effective


def pause(rec: Recording, account: str, kind: Pause, days: int) -> str:
    """A time-out or self-exclusion of ``days`` from now (never shortening one in force):
    every logged-in session of the account is closed. Its end (UTC)."""
    least, most = kind.days
    if not least <= days <= most:
        raise LimitError(f"a {kind} is {least} to {most} days, not {days}")
    end = int((datetime.now(UTC) + timedelta(days=days)).timestamp())
    now = chain.now()
    row = {"account": account, "kind": str(kind), "value": end, "effective_at": now, "at": now}
    rec.insert(play_limits, row)
    revoke(rec.conn, account)
    until = paused_until(rec.conn, account)
    assert until is not None
    return until


def play_clock(conn: Any, account: str) -> tuple[str | None, str | None]:
    """When ``account``'s play began in its current login — its first wager since its newest
    login, as the wager itself was recorded (a debit of the built-in wallet, or a call to the
    operator's that was not declined); None: none yet — and when it last acknowledged a
    reality check since (None: not yet); UTC ISO times. Nothing is written for the clock: the
    wagers are its record."""
    login = _login(conn, account)
    w, o = wallet_entries.c, operator_calls.c
    firsts = [
        conn.execute(
            select(func.min(w.at)).where(
                w.account == account, w.kind == "debit", w.table_id.is_not(None), w.at >= login
            )
        ).scalar(),
        conn.execute(
            select(func.min(o.at)).where(
                o.account == account,
                o.kind == "debit",
                o.at >= login,
                o.status.not_in(("declined",)),
            )
        ).scalar(),
    ]
    start = min((str(f) for f in firsts if f is not None), default=None)
    if start is None:
        return None, None
    c = play_limits.c
    acked = conn.execute(
        select(func.max(c.effective_at)).where(
            c.account == account, c.kind == REALITY_ACK, c.effective_at >= start
        )
    ).scalar()
    return start, None if acked is None else str(acked)


def _login(conn: Any, account: str) -> str:
    """When ``account``'s newest login was opened (now, when it has none)."""
    s = account_sessions.c
    found = conn.execute(select(func.max(s.created_at)).where(s.account == account)).scalar()
    return str(found or chain.now())


def record_reality(rec: Recording, account: str, minutes: int) -> None:
    now = chain.now()
    row = {"account": account, "kind": REALITY_ACK, "value": minutes, "effective_at": now}
    rec.insert(play_limits, row | {"at": now})


def wager_limits(account: Any) -> Select[Any]:
    """The rows a wager of ``account`` (a bind parameter) is checked against; one is enough
    to need the check. The kinds are literals, so that the account is the statement's one
    parameter (the store's writer runs it compiled: :mod:`pontoon.store.statements`)."""
    return select(play_limits.c.id).where(
        play_limits.c.account == account,
        play_limits.c.kind.in_([literal_column(f"'{k}'") for k in WAGER_KINDS]),
    )


_LIMITED = wager_limits(bindparam("account"))  # built once: its compiled form is reused


def limited(conn: Any, account: str) -> bool:
    """Whether ``account`` has set anything a wager is checked against (a loss limit, a
    time-out, a self-exclusion, in force or cooling off): most have not, and then a wager
    needs neither :func:`hold` nor :func:`check_wager`."""
    return conn.execute(_LIMITED, {"account": account}).first() is not None


def hold(conn: Any, account: str) -> None:
    """Lock ``account``'s row until the transaction ends (``SELECT … FOR UPDATE`` on
    PostgreSQL; SQLite has one writer at a time): a limit checked after it cannot be passed
    by another process's wager checked at the same moment."""
    if conn.dialect.name == "sqlite":
        return  # (a write transaction begins IMMEDIATE: it holds the whole store already)
    conn.execute(select(accounts.c.name).where(accounts.c.name == account).with_for_update())


def net_since(conn: Any, account: str, since: str) -> int:
    """What the tables paid ``account`` less what they took, since ``since`` (UTC ISO): the
    built-in wallet's movements and the operator's calls (a debit counts from when it is
    written, before the operator answers, until it is declined or rolled back; a credit
    from when it is written)."""
    w = wallet_entries.c
    rows = conn.execute(
        select(w.kind, func.sum(w.amount))
        .where(w.account == account, w.at >= since, w.table_id.is_not(None))
        .group_by(w.kind)
    )
    sums = {str(k): int(v) for k, v in rows}
    o = operator_calls.c
    remote = conn.execute(
        select(o.kind, func.sum(o.amount))
        .where(
            o.account == account,
            o.at >= since,
            o.status.not_in(("declined", "rolled-back")),
        )
        .group_by(o.kind)
    )
    for kind, amount in remote:
        sums[str(kind)] = sums.get(str(kind), 0) + int(amount)
    return sums.get("credit", 0) + sums.get("rollback", 0) - sums.get("debit", 0)


def check_deposit(conn: Any, account: str, amount: int) -> None:
    """:class:`LimitError` when a deposit of ``amount`` would pass a deposit limit, or the
    account is paused."""
    _check_paused(conn, account, "deposit")
    limits = current(conn, account)
    w = wallet_entries.c
    for kind in (Limit.DEPOSIT_DAY, Limit.DEPOSIT_WEEK):
        limit = limits.get(str(kind))
        if limit is None:
            continue
        done = conn.execute(
            select(func.coalesce(func.sum(w.amount), 0)).where(
                w.account == account, w.kind == "deposit", w.at >= _ago(kind.window)
            )
        ).scalar()
        if int(done) + amount > limit:
            raise LimitError(
                f"{account}'s {kind} limit is {limit}: {int(done)} deposited in the window, "
                f"so not {amount} more"
            )


def check_wager(conn: Any, account: str, amount: int) -> None:
    """:class:`LimitError` when a debit of ``amount`` (a wager) would, lost, take the net
    loss over a loss limit, or the account is paused."""
    limits = current(conn, account)
    if not limits:
        return
    _check_paused(conn, account, "wager")
    for kind in (Limit.LOSS_DAY, Limit.LOSS_WEEK):
        limit = limits.get(str(kind))
        if limit is None:
            continue
        lost = -net_since(conn, account, _ago(kind.window))
        if lost + amount > limit:
            raise LimitError(
                f"{account}'s {kind} limit is {limit}: {max(lost, 0)} lost in the window, "
                f"so no wager of {amount}"
            )


def _check_paused(conn: Any, account: str, what: str) -> None:
    until = paused_until(conn, account)
    if until is not None:
        raise LimitError(f"{account} has paused play until {until[:16]} UTC: no {what}")


__all__ = [
    "REALITY_ACK",
    "WAGER_KINDS",
    "Limit",
    "LimitError",
    "Pause",
    "check_deposit",
    "check_wager",
    "current",
    "hold",
    "limited",
    "net_since",
    "pause",
    "paused_until",
    "pending",
    "play_clock",
    "record_reality",
    "set_limit",
]
