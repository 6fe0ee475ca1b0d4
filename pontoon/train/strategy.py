"""The strategy drill: hands dealt from a real shoe through the round engine, every decision the
drill's mode asks graded against the exact best play (:mod:`pontoon.train.grade`).

The round engine deals, says what is legal and settles; the drill asks the learner at each
decision of the mode (``all``, ``hard``, ``soft``, ``pairs``, ``surrender``, ``rescue``,
``weak``) and plays the others by the optimal chart, so every round is a whole, legal round
of the rule set. Decisions on split hands are played by the chart and not graded (the hand
calculator values a hand as dealt). In the ``weak`` mode a cell the schedule says is due
(:mod:`pontoon.train.schedule`) gets a hand composed for it: its two cards and the dealer's
first card are laid out, and every later card comes from the shoe.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pontoon.cards import Card, deck
from pontoon.errors import InputError
from pontoon.hand import hard_total, is_pair, is_soft, total
from pontoon.layout import Hand, Move
from pontoon.money import signed
from pontoon.round import Round
from pontoon.rules import RuleSet
from pontoon.shoe import Shoe
from pontoon.train import KEYS, MODES, RESCUE
from pontoon.train.grade import Grade, Grader
from pontoon.train.schedule import Schedule
from pontoon.vocab import Action, TurnKind

LEARNER: Final = "learner"
ROUNDS_PER_DECISION: Final = 2_000  # rounds dealt at most per decision asked (a rare mode)


class Composed:
    """A card source that lays out ``first`` (a hand composed for a cell: the player's first
    card, the dealer's, the player's second) and deals every other card from ``shoe``; the
    composed cards never go into the shoe's discards."""

    def __init__(self, first: Sequence[Card], shoe: Shoe) -> None:
        self.first = list(first)
        self.position = 0
        self.shoe = shoe
        self.own: list[Card] = []  # the composed cards dealt

    @property
    def listener(self) -> Any:
        return self.shoe.listener

    @listener.setter
    def listener(self, value: Any) -> None:
        self.shoe.listener = value

    def start_round(self) -> None:
        self.shoe.start_round()

    def shuffle(self, rule: str) -> None:
        self.shoe.shuffle(rule)

    def draw(self) -> Card:
        if self.position < len(self.first):
            card = self.first[self.position]
            self.position += 1
            self.own.append(card)
            return card
        return self.shoe.draw()

    def discard(self, cards: Sequence[Card]) -> None:
        rest = list(cards)
        for c in list(self.own):  # each composed card is left out once
            if c in rest:
                rest.remove(c)
                self.own.remove(c)
        self.shoe.discard(rest)

    def checkpoint(self) -> object:
        return (self.position, list(self.own), self.shoe.checkpoint())

    def rollback(self, mark: Any) -> None:
        self.position, own, shoe_mark = mark
        self.own = list(own)
        self.shoe.rollback(shoe_mark)


def compose(cell: str, kind: str, rng: np.random.Generator) -> list[Card] | None:
    """Cards for a cell (``H15:T``, ``S17:6``, ``P8:A``) in deal order (the player's first,
    the dealer's first, the player's second), suits at random; None for a cell no two cards
    make (a rescue's, a hard 4 or 20 that only a pair makes).

    >>> [c.value for c in compose("S17:T", "spanish", np.random.default_rng(1))]
    [6, 10, 1]
    """
    row, col = cell.split(":")
    up = 1 if col == "A" else 10 if col == "T" else int(col)
    kind_of, rest = row[0], row[1:]
    if kind_of == "P":
        value = 1 if rest == "A" else 10 if rest == "T" else int(rest)
        pair = (value, value)
    elif kind_of == "S":
        pair = (1, int(rest) - 11)
    elif kind_of == "H":
        t = int(rest)
        options = [(a, t - a) for a in range(2, 10) if a < t - a <= 10]
        if not options:
            return None
        pair = options[int(rng.integers(len(options)))]
    else:
        return None
    cards = deck(kind)

    def one(value: int) -> Card:
        of = [c for c in cards if c.value == value]
        return of[int(rng.integers(len(of)))]

    a, b = (pair[0], pair[1]) if rng.integers(2) else (pair[1], pair[0])
    return [one(a), one(up), one(b)]


@dataclass(frozen=True)
class Question:
    """What the learner is asked: the hand, the dealer's first card, the plays the round
    offers (the engine's words) and the prompt's text."""

    cards: tuple[Card, ...]
    up: Card
    legal: tuple[str, ...]
    doubled: bool
    prompt: str


@dataclass
class Decision:
    """A decision asked: the cards, the dealer's first card and its grade."""

    cards: list[Card]
    up: Card
    grade: Grade

    def to_json(self) -> dict[str, Any]:
        return {
            "hand": " ".join(c.code for c in self.cards),
            "dealer": self.up.code,
            **self.grade.to_json(),
        }


@dataclass
class Drill:
    """One strategy drill: ``ask(question)`` returns the learner's play (one of its legal
    plays; None: the end), ``say(text)`` shows a line."""

    rules: RuleSet
    mode: str
    seed: int | None
    ask: Callable[[Question], str | None]
    say: Callable[[str], None]
    wager: int = 500
    schedule: Schedule = field(default_factory=Schedule)
    decisions: list[Decision] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"unknown --mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.mode == "surrender" and self.rules.surrender == "none":
            raise InputError("--mode surrender: these rules offer no surrender (9.3)")
        if self.mode == "rescue" and not self.rules.double_rescue:
            raise InputError("--mode rescue: these rules offer no rescue (12)")
        rng = np.random.default_rng(self.seed)
        self.rng = rng
        self.shoe = Shoe(self.rules, rng)
        self.grader = Grader(self.rules, self.wager)

    # ------------------------------------------------------------------ the drill
    def run(self, decisions: int) -> None:
        """Deal rounds until ``decisions`` have been asked or the learner stops, asking by
        ``ask``."""
        steps = self.steps(decisions)
        try:
            question = next(steps)
            while True:
                question = steps.send(self.ask(question))
        except StopIteration:
            return

    def steps(self, decisions: int) -> Generator[Question, str | None, None]:
        """The drill as a generator: it yields each question and is sent the learner's play
        (None: the learner stops); it ends when ``decisions`` have been asked."""
        dealt = 0
        while len(self.decisions) < decisions:
            if dealt > ROUNDS_PER_DECISION * decisions:
                raise InputError(f"--mode {self.mode}: no decision of that kind came up")
            dealt += 1
            stopped = yield from self.play_round(decisions)
            if stopped:
                return

    def play_round(self, decisions: int) -> Generator[Question, str | None, bool]:
        """One round, yielding its questions; True when the learner stops."""
        from pontoon.sim.reference import chart_move

        cell = self.schedule.due() if self.mode == "weak" else None
        first = compose(cell, self.rules.deck, self.rng) if cell is not None else None
        rnd = Round(self.rules, Composed(first, self.shoe) if first else self.shoe)
        rnd.place_wager(1, LEARNER, self.wager)
        rnd.deal()
        rescues = self.grader.chart.rescues()
        shown = False
        while not rnd.over:
            turn = rnd.to_act()
            if turn is None or turn.kind is not TurnKind.DECIDE:
                rnd.apply_defaults()
                continue
            cur = rnd.current()
            assert cur is not None
            box, hand = cur
            chart = chart_move(rnd, self.grader.chart, rescues)
            legal = [m.action.value for m in rnd.legal_moves(LEARNER)]
            if len(self.decisions) >= decisions or not self.asked(hand, legal):
                rnd.apply(chart)
                continue
            up = rnd.dealer[0]
            if not shown:
                self.say(f"Dealer shows {up.code}.")
                shown = True
            question = Question(
                tuple(hand.cards), up, tuple(legal), hand.doubled, self.prompt(hand, legal)
            )
            answer = yield question
            if answer is None:
                return True
            if answer not in legal:
                raise InputError(f"{answer!r} is not a play here: {', '.join(legal)}")
            grade = self.grader.grade(
                hand.cards, up, answer, legal, chart.action.value, hand.doubled
            )
            self.decisions.append(Decision(list(hand.cards), up, grade))
            self.schedule.answer(grade.cell, grade.correct)
            self.schedule.tick()
            self.say(self.verdict(grade))
            rnd.apply(Move(Action(answer), box.number))
        if shown:
            hands = "; ".join(
                f"{' '.join(c.code for c in h.cards)} ({total(h.cards)})"
                for h in rnd.boxes[1].hands
            )
            dealer = " ".join(c.code for c in rnd.dealer)
            self.say(
                f"You {hands}, dealer {dealer} ({total(rnd.dealer)}): "
                f"the round nets {signed(rnd.net(LEARNER))}."
            )
        return False

    def asked(self, hand: Hand, legal: list[str]) -> bool:
        """Whether the drill's mode asks this decision (split hands never)."""
        if hand.from_split:
            return False
        cards = hand.cards
        pair = len(cards) == 2 and is_pair(cards[0], cards[1], self.rules.split_by)
        if self.mode in ("all", "weak"):
            return True
        if self.mode == "rescue":
            return hand.doubled and RESCUE in legal
        if hand.doubled:
            return False
        if self.mode == "pairs":
            return pair and "split" in legal
        if self.mode == "surrender":
            return "surrender" in legal
        soft = is_soft(cards)
        return not pair and (soft if self.mode == "soft" else not soft)

    def prompt(self, hand: Hand, legal: list[str]) -> str:
        cards = " ".join(c.code for c in hand.cards)
        t = total(hand.cards)
        what = f"soft {t}" if is_soft(hand.cards) else f"{hard_total(hand.cards)}"
        keys = ", ".join(f"{k} {a}" for k, a in KEYS.items() if a in legal)
        doubled = " (doubled)" if hand.doubled else ""
        return f"Your hand {cards} ({what}){doubled}: {keys} > "

    def verdict(self, g: Grade) -> str:
        chart = "" if g.chart == g.best else f" (the chart plays {g.chart})"
        if g.correct:
            return f"  {g.answer}: right{chart}."
        return (
            f"  {g.answer}: wrong. The best play is {g.best}{chart}: {g.answer} costs "
            f"${g.cost * 100:.2f} per $100 wagered "
            f"(EV {g.values[g.best]:+.4f} against {g.values[g.answer]:+.4f})."
        )

    # ------------------------------------------------------------------ the summary
    def summary(self) -> dict[str, Any]:
        n = len(self.decisions)
        right = sum(d.grade.correct for d in self.decisions)
        lost = sum(d.grade.cost for d in self.decisions)
        worst = sorted(self.decisions, key=lambda d: -d.grade.cost)[:5]
        return {
            "rules": self.rules.name,
            "mode": self.mode,
            "seed": self.seed,
            "decisions": [d.to_json() for d in self.decisions],
            "accuracy": right / n if n else None,
            "ev_lost_per_100": 100 * lost / n if n else None,
            "costliest": [d.to_json() for d in worst if not d.grade.correct],
            "weak_cells": dict(self.schedule.levels),
        }

    def summary_lines(self) -> Iterator[str]:
        s = self.summary()
        n = len(self.decisions)
        if not n:
            yield "No decisions."
            return
        yield (
            f"{n} decisions, {s['accuracy']:.0%} right; EV lost {s['ev_lost_per_100']:.2f} "
            f"wagers per 100 decisions."
        )
        for d in s["costliest"][:3]:
            yield (
                f"  {d['hand']} against {d['dealer']}: {d['answer']} for {d['best']}, "
                f"${d['cost'] * 100:.2f} per $100"
            )


__all__ = ["Composed", "Drill", "compose"]
