"""The counting drill: the cards of real rounds shown a few at a time; the learner keeps the
running count and, now and then, gives the true count from the discard rack.

Rounds are dealt from a shoe of the rule set through the round engine (one box, played by a
plain chart); their cards are shown in the order they leave the shoe (the burnt card is not
seen; the dealer's hole card when it is turned), ``pace`` at a time (1, 2, or ``round``: a
round's at once). After each showing the learner gives the running count: right when it is
the tags' sum since the shuffle (a shuffle starts it at 0 again). Every ``true_every``
showings the learner also gives the true count, the running count per deck left in the shoe
rounded down, as the simulator counts (:mod:`pontoon.sim.counting`), the decks left read from
the discard rack: right when it is what some estimate within half a deck of the true number
gives (a player reads the rack to half a deck).

>>> true_counts(7, 2.2)
[2, 3, 4]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.cards import Card, deck
from pontoon.errors import InputError
from pontoon.round import Round
from pontoon.rules import RuleSet
from pontoon.shoe import Shoe
from pontoon.sim.counting import TC_MAX, TC_MIN, Counting
from pontoon.vocab import EventKind

PACES: Final = ("1", "2", "round")
SLACK: Final = 0.5  # decks: how far a reading of the discard rack may be off


def true_counts(running: int, decks_left: float) -> list[int]:
    """Every true count (floor of running / decks, held to -10..+10) that a reading of the
    decks left within :data:`SLACK` of ``decks_left`` (at least half a deck) gives."""
    lo, hi = max(decks_left - SLACK, 0.5), max(decks_left + SLACK, 0.5)
    out = {min(max(math.floor(running / d), TC_MIN), TC_MAX) for d in np.linspace(lo, hi, 201)}
    return sorted(out)


@dataclass(frozen=True)
class Showing:
    """Cards shown at once, and what the count is after them."""

    cards: tuple[Card, ...]
    running: int
    decks_left: float  # in the shoe after them (the discard rack's complement)
    shuffled: bool  # a shuffle came before them (the count starts again)


@dataclass
class CountAnswer:
    """One answer: the running count (and the true count when asked), and the grade."""

    cards: tuple[Card, ...]
    running: int
    answer: int
    true_answer: int | None = None
    true_right: list[int] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        ok = self.answer == self.running
        return ok and (self.true_answer is None or self.true_answer in self.true_right)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "running" if self.true_answer is None else "running and true",
            "cards": " ".join(c.code for c in self.cards),
            "answer": self.answer,
            "best": self.running,
            "correct": self.correct,
            "cost": 0.0 if self.answer == self.running else float(abs(self.answer - self.running)),
        }
        if self.true_answer is not None:
            out["true_count"] = {"answer": self.true_answer, "right": self.true_right}
        return out


@dataclass
class CountDrill:
    """``ask(prompt)`` returns the learner's whole number (None: the end); ``say`` shows."""

    rules: RuleSet
    counting: Counting
    pace: str
    seed: int | None
    ask: Callable[[str], int | None]
    say: Callable[[str], None]
    true_every: int = 3
    answers: list[CountAnswer] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.pace not in PACES:
            raise InputError(f"unknown --pace {self.pace!r}: choose one of {', '.join(PACES)}")
        if self.true_every < 1:
            raise InputError(f"--true-every must be at least 1, not {self.true_every}")
        self.shoe = Shoe(self.rules, np.random.default_rng(self.seed))
        self.deck_size = len(deck(self.rules.deck))
        self.chart = Chart.initial()

    def tag(self, card: Card) -> int:
        from pontoon.sim.compiled import card_code

        return int(self.counting.tags[card_code(card)])

    def showings(self) -> Any:
        """The showings of round after round, for ever."""
        from pontoon.sim.reference import play_out

        running = 0
        while True:
            rnd = Round(self.rules, self.shoe)
            rnd.place_wager(1, "counter", self.rules.table_min)
            rnd.deal()
            play_out(rnd, self.chart)
            seen: list[Card] = []
            hole: list[Card] = []
            shuffled = False
            for e in rnd.events:
                if e.kind is EventKind.SHUFFLE:
                    shuffled, running = True, 0
                elif e.kind is EventKind.HOLE and e.card:
                    hole.append(Card.parse(e.card))
                elif e.kind is EventKind.DEAL and e.card:
                    seen.append(Card.parse(e.card))
            seen += hole  # turned when the dealer plays
            in_shoe = len(self.shoe.remaining)
            size = len(seen) if self.pace == "round" else int(self.pace)
            for lo in range(0, len(seen), size):
                part = tuple(seen[lo : lo + size])
                running += sum(self.tag(c) for c in part)
                unseen = len(seen) - lo - len(part)  # (this round's, still in the shoe then)
                left = (in_shoe + unseen) / self.deck_size
                yield Showing(part, running, left, shuffled and lo == 0)

    def run(self, questions: int) -> None:
        for k, showing in enumerate(self.showings()):
            if len(self.answers) >= questions:
                return
            if showing.shuffled:
                self.say("Shuffle: the count starts again at 0.")
            cards = " ".join(c.code for c in showing.cards)
            answer = self.ask(f"{cards}   running count > ")
            if answer is None:
                return
            a = CountAnswer(showing.cards, showing.running, answer)
            if (k + 1) % self.true_every == 0:
                rack = self.rules.decks - showing.decks_left
                true = self.ask(f"  discard rack {rack:.1f} decks: true count > ")
                if true is None:
                    return
                a.true_answer = true
                a.true_right = true_counts(showing.running, showing.decks_left)
            self.answers.append(a)
            self.say(self.verdict(a))

    def verdict(self, a: CountAnswer) -> str:
        if a.correct:
            return "  right."
        parts = []
        if a.answer != a.running:
            parts.append(f"the running count is {a.running:+d}")
        if a.true_answer is not None and a.true_answer not in a.true_right:
            tc = ", ".join(f"{t:+d}" for t in a.true_right)
            parts.append(f"the true count is {tc}")
        return "  wrong: " + "; ".join(parts) + "."

    def summary(self) -> dict[str, Any]:
        n = len(self.answers)
        right = sum(a.correct for a in self.answers)
        return {
            "rules": self.rules.name,
            "count": self.counting.name,
            "pace": self.pace,
            "seed": self.seed,
            "decisions": [a.to_json() for a in self.answers],
            "accuracy": right / n if n else None,
        }


__all__ = ["PACES", "CountAnswer", "CountDrill", "Showing", "true_counts"]
