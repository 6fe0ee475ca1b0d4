"""The dealer drill: a finished round laid out; the dealer names what each wager nets, and for
a round that went wrong, the procedure that applies; graded against the round engine.

The rounds are the scenario files' (``--scenarios DIR``: every rule the files exercise, the
bonuses by suit, 13.7 and 13.8's collections, a surrender void on a pontoon, the players
behind who followed a split, section 16's procedures) or rounds dealt from a shoe (three
boxes, the players playing a plain chart). Every wager is asked in layout order: each hand's
wagers (seated player first, then those behind), then the box's insurance and Super Sevens;
then what a player is paid besides (11.2: another box's Super Bonus pays each other box).
The answer is the wager's net in dollars (``+15``, ``-10``, ``0``), optionally after the
odds it is paid at (``3:2 +15``): right when the amount is the engine's settlement and the
odds, when given, the engine's. A round with an irregularity asks first which procedure
applies to what happened, by its rule number (``16.4``; a Blackjack round's book numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import numpy as np

from pontoon.errors import InputError
from pontoon.layout import Wager
from pontoon.money import dollars, parse_dollars, signed
from pontoon.round import Round
from pontoon.rules import RuleSet
from pontoon.settlement import odds_text
from pontoon.vocab import EventKind, Procedure

WHAT: Final = {  # what happened, as the dealer sees it (not the rule's number)
    Procedure.FACE_UP_IN_SHOE: "a card is found face up in the shoe",
    Procedure.DRAWN_UNEXPOSED: "a card was drawn in error, not exposed",
    Procedure.EXPOSED_TO_DEALER: "a card drawn in error was exposed to the dealer only",
    Procedure.EXPOSED_CARD: "a card drawn in error was exposed to the players",
    Procedure.RECONSTRUCT: "the cards of a box were dealt out of order and are put right",
    Procedure.VOID: "a hand or the round has to be declared void",
    Procedure.ABSENT: "a player is absent when the box's turn comes",
    Procedure.SHOE_EXHAUSTED: "the shoe runs out of cards during the round",
    Procedure.DAMAGED: "a damaged card is found",
    Procedure.MISSED_RESHUFFLE: "the cutting card came out but the shoe was not reshuffled",
    Procedure.MISSING_CUTTING_CARD: "the cutting card was missing from the shoe",
    Procedure.MISSED_INSURANCE: "a player missed the chance to insure",
    Procedure.MISSED_SURRENDER: "a player missed the chance to surrender",
    Procedure.DEALER_FIRST_CARD_OMITTED: "the dealer gave himself or herself no first card",
    Procedure.OMITTED_IN_DEAL: "the dealer's first card was left out of the deal",
}


@dataclass(frozen=True)
class Ask:
    """One question about a finished round: a wager's net (``cents``, ``odds``) or, with
    ``rule`` set, the procedure that applies (``text`` says what happened)."""

    text: str
    cents: int = 0
    odds: Fraction | None = None
    rule: str | None = None
    player: str | None = None


@dataclass
class DealerAnswer:
    ask: Ask
    answer: str
    correct: bool

    def to_json(self) -> dict[str, Any]:
        a = self.ask
        best = a.rule if a.rule is not None else signed(a.cents)
        out: dict[str, Any] = {
            "kind": "procedure" if a.rule is not None else "payout",
            "question": a.text,
            "answer": self.answer,
            "best": best,
            "correct": self.correct,
            "cost": 0.0 if self.correct or a.rule is not None else abs(a.cents) / 100,
        }
        if a.odds is not None:
            out["odds"] = odds_text(a.odds)
        return out


def asks_of(rnd: Round) -> list[Ask]:
    """The questions of a finished round, in layout order (the procedures first)."""
    out: list[Ask] = []
    for e in rnd.events:
        if e.kind is EventKind.IRREGULARITY and e.detail in WHAT and e.rule:
            out.append(Ask(f"Which procedure applies? {WHAT[Procedure(e.detail)]}.", rule=e.rule))

    def wager(w: Wager, where: str) -> Ask:
        text = f"{where}, {w.player}'s {dollars(w.amount)}: it nets?"
        return Ask(text, w.net, w.odds, player=w.player)

    for box in rnd.order:
        for i, hand in enumerate(box.hands):
            where = f"Box {box.number}" + (f" hand {i + 1}" if len(box.hands) > 1 else "")
            out += [wager(w, where) for w in hand.wagers]
        out += [wager(w, f"Box {box.number} insurance") for w in box.insurance.values()]
        out += [wager(w, f"Box {box.number} Super Sevens") for w in box.sevens.values()]
    asked: dict[str, int] = {}
    for a in out:
        if a.player:
            asked[a.player] = asked.get(a.player, 0) + a.cents
    for p in rnd.players:  # 11.2: another box's Super Bonus pays each other box
        extra = rnd.net(p) - asked.get(p, 0)
        if extra:
            out.append(Ask(f"{p}: paid besides the wagers (11.2)?", extra, player=p))
    return out


def grade_answer(ask: Ask, answer: str) -> bool:
    """Whether ``answer`` is right (the procedure's rule number; the net in dollars, after
    the odds if given). A malformed amount is :class:`InputError`."""
    words = answer.replace("$", "").split()
    if ask.rule is not None:
        return bool(words) and words[0].removeprefix("rule").strip() == ask.rule
    if not words:
        raise InputError("give the net in dollars (+15, -10, 0), after the odds if you like")
    odds_ok = True
    if len(words) == 2:
        odds_ok = ask.odds is not None and words[0] == odds_text(ask.odds)
    amount = words[-1]
    sign = -1 if amount.startswith("-") else 1
    cents = sign * parse_dollars(amount.lstrip("+-"))
    return odds_ok and cents == ask.cents


def layout_lines(rnd: Round) -> Iterator[str]:
    """The finished round as the dealer sees it on the table."""
    yield f"Rules {rnd.rules.name}. Dealer: {' '.join(c.code for c in rnd.dealer)}."
    for box in rnd.order:
        for i, hand in enumerate(box.hands):
            bets = ", ".join(f"{w.player} {dollars(w.amount)}" for w in hand.wagers)
            cards = " ".join(c.code for c in hand.cards)
            label = f"Box {box.number}" + (f" hand {i + 1}" if len(box.hands) > 1 else "")
            yield f"  {label}: {cards} ({hand.total}{', doubled' if hand.doubled else ''}) [{bets}]"
        for w in box.insurance.values():
            yield f"  Box {box.number} insurance: {w.player} {dollars(w.amount)}"
        for w in box.sevens.values():
            yield f"  Box {box.number} Super Sevens: {w.player} {dollars(w.amount)}"


def scenario_rounds(path: str) -> list[Round]:
    """The finished rounds of the scenario files at ``path`` (a file or a folder of them;
    a scenario that expects a refusal is left out: it has no round to settle)."""
    from pontoon.scenario import load_scenario, play_scenario

    p = Path(path)
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    out = []
    for f in files:
        data = load_scenario(f)
        if "error" in data.get("expect", {}):
            continue  # a refusal's scenario: no round to settle
        rnd = play_scenario(data)
        if rnd.over:
            out.append(rnd)
    if not out:
        raise InputError(f"no finished round in the scenarios at {path}")
    return out


def dealt_rounds(rules: RuleSet, seed: int | None) -> Iterator[Round]:
    """Rounds dealt from a shoe to three boxes, the players playing a plain chart."""
    from pontoon.analysis.chart import Chart
    from pontoon.shoe import Shoe
    from pontoon.sim.reference import play_out

    rng = np.random.default_rng(seed)
    shoe = Shoe(rules, rng)
    chart = Chart.initial()
    chips = [a for a in (500, 1000, 2000, 2500, 5000) if rules.table_min <= a <= rules.table_max]
    chips = chips or [rules.table_min]
    while True:
        rnd = Round(rules, shoe)
        for box in (1, 2, 3):
            rnd.place_wager(box, f"player{box}", int(rng.choice(chips)))
        rnd.deal()
        play_out(rnd, chart)
        yield rnd


@dataclass
class DealerDrill:
    """``ask(question)`` returns the dealer's answer (None: the end); ``say`` shows."""

    rounds: Iterator[Round]
    ask: Callable[[str], str | None]
    say: Callable[[str], None]
    answers: list[DealerAnswer] = field(default_factory=list)

    def run(self, questions: int) -> None:
        for rnd in self.rounds:
            self.say("")
            for line in layout_lines(rnd):
                self.say(line)
            for a in asks_of(rnd):
                if len(self.answers) >= questions:
                    return
                while True:
                    answer = self.ask(f"{a.text} > ")
                    if answer is None:
                        return
                    try:
                        right = grade_answer(a, answer)
                    except InputError as exc:
                        self.say(f"  {exc}")
                        continue
                    break
                self.answers.append(DealerAnswer(a, answer, right))
                self.say(self.verdict(a, right))

    def verdict(self, a: Ask, right: bool) -> str:
        if right:
            return "  right."
        if a.rule is not None:
            return f"  wrong: {a.rule} applies."
        odds = f" at {odds_text(a.odds)}" if a.odds is not None else ""
        return f"  wrong: it nets {signed(a.cents)}{odds}."

    def summary(self) -> dict[str, Any]:
        n = len(self.answers)
        return {
            "decisions": [a.to_json() for a in self.answers],
            "accuracy": sum(a.correct for a in self.answers) / n if n else None,
        }


__all__ = [
    "WHAT",
    "Ask",
    "DealerDrill",
    "asks_of",
    "dealt_rounds",
    "grade_answer",
    "scenario_rounds",
]
