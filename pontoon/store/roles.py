"""The vocabulary of accounts: who a person is, and how a wallet's money moves. Light to
import (the command line's parser reads it)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Who an account is: a player, or one of the house's staff."""

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

# names nobody may take, at a table or as an account: they would pass for the house's people,
# a role, the interrupted-round policy, or the page's words
RESERVED = frozenset(
    {"admin", "cashier", "casino", "croupier", "dealer", "house", "inspector", "manager"}
    | {"moderator", "operator", "pit", "pitboss", "player", "policy", "pontoon", "server"}
    | {"staff", "supervisor", "system", "table", "watcher"}
)
_LOOK = str.maketrans({"0": "o", "1": "l", "i": "l", "-": "_"})


def look(name: str) -> str:
    """What a name looks like on the table, to tell names apart: case, ``-`` or ``_``, and
    ``0``/``O``, ``1``/``l``/``I`` do not count.

    >>> look("Ana-1") == look("ana_l") == look("ANA_I")
    True
    """
    return name.casefold().translate(_LOOK)


def passes_for_the_house(name: str) -> bool:
    """Whether ``name`` would pass for one of :data:`RESERVED` (``Dealer``, ``super-visor``,
    ``house_2``, ``p1ayer``): its letters, in any case, without ``-``, ``_`` and digits.

    >>> passes_for_the_house("Super-visor"), passes_for_the_house("ana")
    (True, False)
    """
    letters = "".join(c for c in name.casefold() if c.isalpha())
    return letters in RESERVED or look(letters) in _RESERVED_LOOKS


_RESERVED_LOOKS = frozenset(look(r) for r in RESERVED)

__all__ = ["IN", "RESERVED", "STAFF", "Movement", "Role", "look", "passes_for_the_house"]
