"""One exception family, worded for people.

Every error the engine raises on purpose is a :class:`PontoonError`. The command line turns
:class:`InputError` (bad file, unknown card, unknown knob, illegal action) into exit code 2
and one readable line.
"""

from __future__ import annotations


class PontoonError(Exception):
    """Base of every error raised on purpose by this package."""


class InputError(PontoonError):
    """The input is wrong: a file, a card, a knob, a wager or an action."""


class IllegalAction(InputError):
    """An action the rules forbid. The state it was tried on is unchanged.

    >>> str(IllegalAction("hit", 1, "14.1(a)", "no draw on 21"))
    "illegal action 'hit' for box 1: rule 14.1(a) no draw on 21"
    """

    def __init__(self, action: str, box: int | None, rule: str, reason: str) -> None:
        self.action = str(action)  # a vocab.Action is its word
        self.box = box
        self.rule = rule
        self.reason = reason
        where = f" for box {box}" if box is not None else ""
        super().__init__(f"illegal action {self.action!r}{where}: rule {rule} {reason}")
