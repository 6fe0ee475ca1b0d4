"""Which cells a learner should see again, and when: a Leitner schedule over decisions.

Every cell a learner has missed is in the schedule at a level: a miss puts it at level 0, due
again after the next decision; each correct answer moves it up a level and doubles the wait
(1, 2, 4, 8, 16 decisions); a cell answered correctly at level :data:`LEARNED` leaves the
schedule. In the weak-cells drill the next hand is composed for the most overdue cell, when
one is due, and dealt from the shoe otherwise.

>>> s = Schedule()
>>> s.answer("H16:T", correct=False); s.due()
>>> s.tick(); s.due()
'H16:T'
>>> s.answer("H16:T", correct=True); s.tick(); s.due() is None, s.levels["H16:T"]
(True, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

LEARNED: Final = 5  # a cell answered right at this level has been learned


@dataclass
class Schedule:
    """Levels and due times (in decisions) of a learner's weak cells."""

    levels: dict[str, int] = field(default_factory=dict)
    due_at: dict[str, int] = field(default_factory=dict)
    now: int = 0

    def answer(self, cell: str, correct: bool) -> None:
        """Record an answer for ``cell`` at the current decision."""
        if not correct:
            self.levels[cell] = 0
            self.due_at[cell] = self.now + 1
            return
        if cell not in self.levels:
            return  # never missed: not a weak cell
        level = self.levels[cell] + 1
        if level > LEARNED:
            del self.levels[cell], self.due_at[cell]
            return
        self.levels[cell] = level
        self.due_at[cell] = self.now + 2**level

    def tick(self) -> None:
        """One decision has passed."""
        self.now += 1

    def due(self) -> str | None:
        """The most overdue cell (the lowest level first among equals), or None."""
        ready = [c for c, t in self.due_at.items() if t <= self.now]
        if not ready:
            return None
        return min(ready, key=lambda c: (self.due_at[c], self.levels[c], c))

    def to_json(self) -> dict[str, object]:
        return {"levels": dict(self.levels), "due_at": dict(self.due_at), "now": self.now}

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> Schedule:
        levels = doc.get("levels", {})
        due_at = doc.get("due_at", {})
        now = doc.get("now", 0)
        if not (isinstance(levels, dict) and isinstance(due_at, dict) and isinstance(now, int)):
            raise ValueError("a schedule is {levels: {cell: n}, due_at: {cell: n}, now: n}")
        return cls(
            {str(k): int(v) for k, v in levels.items()},
            {str(k): int(v) for k, v in due_at.items()},
            now,
        )


__all__ = ["LEARNED", "Schedule"]
