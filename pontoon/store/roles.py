"""The vocabulary of accounts: who a person is, and how a wallet's money moves. Light to
import (the command line's parser reads it)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Who an account is: a player, or one of the house's staff (issue 18's roles)."""

    PLAYER = "player"
    DEALER = "dealer"  # paces the table: calls no more bets (8.2)
    SUPERVISOR = "supervisor"  # applies the section 16 procedures
    PITBOSS = "pitboss"  # opens and closes tables, sets limits, reads the reports
    CASHIER = "cashier"  # records deposits and withdrawals


STAFF = frozenset(Role) - {Role.PLAYER}


class Movement(StrEnum):
    """The kinds of movement of a wallet."""

    DEPOSIT = "deposit"  # a cashier's, with a reference
    WITHDRAWAL = "withdrawal"
    DEBIT = "debit"  # a table's: a wager
    CREDIT = "credit"  # a table's: a win or a stake returned
    ROLLBACK = "rollback"  # a debit taken back


IN = frozenset({Movement.DEPOSIT, Movement.CREDIT, Movement.ROLLBACK})

__all__ = ["IN", "STAFF", "Movement", "Role"]
