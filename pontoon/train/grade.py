"""Grading one decision against the exact analysis of that very hand.

The figures are the hand calculator's (:func:`pontoon.analysis.report.hand_values`, what
``pontoon analyze --hand`` prints): each legal action's expected value per unit wagered, from
the full shoe, each followed by the composition-dependent best play. The best play is the
highest of them; a decision's cost is the best value less the value of the play made (0 when
it is the best). The optimal chart's play is given beside it (a learner of the chart sees
where the chart itself gives a little away). A doubled hand's rescue (12) is valued as the
walk values it: forfeiting the original wager against standing on both.

>>> from pontoon.cards import parse_cards
>>> from pontoon.rules import load_rules
>>> g = Grader(load_rules("nz-pontoon"))
>>> legal = ("hit", "stand", "double", "surrender")
>>> grade = g.grade(parse_cards("7S 8D"), parse_cards("KC")[0], "stand", legal, "hit")
>>> grade.best, grade.correct, round(grade.cost, 4)
('hit', False, 0.149)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.cards import Card
from pontoon.hand import is_soft, total
from pontoon.rules import RuleSet
from pontoon.train import RESCUE
from pontoon.vocab import Action

INSURE, NO_INSURANCE = Action.INSURE.value, Action.NO_INSURANCE.value
CACHED_MOST = 20_000  # hands' values a grader keeps (a few KB each at most)
PATTERN = (6, 7, 8)  # the values whose suits pay: a 6-7-8 or 7-7-7 (11.1, 11.2)


@dataclass(frozen=True)
class Grade:
    """One decision: the play made, the exact best, the chart's, and what the play cost (EV
    lost per unit wagered); ``values``: every legal play's expected value."""

    cell: str
    answer: str
    best: str
    chart: str
    cost: float
    values: dict[str, float]

    @property
    def correct(self) -> bool:
        return self.cost <= 1e-12

    def to_json(self) -> dict[str, object]:
        return {
            "cell": self.cell,
            "answer": self.answer,
            "best": self.best,
            "chart": self.chart,
            "correct": self.correct,
            "cost": self.cost,
            "values": self.values,
        }


def cell_of(cards: Sequence[Card], up: Card, split_by: str, doubled: bool = False) -> str:
    """The chart cell of a decision: its row (``H15``, ``S18``, ``P8``; ``X15`` for a doubled
    hand's rescue) and the dealer's first card (``H15:T``).

    >>> from pontoon.cards import parse_cards
    >>> king = parse_cards("KC")[0]
    >>> [cell_of(parse_cards(h), king, "value") for h in ("7S 8D", "AS 6D", "8S 8D")]
    ['H15:T', 'S17:T', 'P8:T']
    """
    from pontoon.analysis.chart import pair_row, total_row
    from pontoon.hand import is_pair

    col = "A" if up.value == 1 else "T" if up.value == 10 else str(up.value)
    if doubled:
        row = f"X{total(cards)}"
    elif len(cards) == 2 and is_pair(cards[0], cards[1], split_by):
        row = pair_row(cards[0].value)
    else:
        row = total_row(total(cards), is_soft(cards))
    return f"{row}:{col}"


@dataclass
class Grader:
    """Grades decisions under ``rules`` at ``wager`` cents (figures cached by hand)."""

    rules: RuleSet
    wager: int = 500
    _cache: dict[tuple[str, str, bool], dict[str, float]] = field(default_factory=dict)

    @cached_property
    def chart(self) -> Chart:
        """The optimal chart of the rule set (a preset's shipped, else worked out on first
        use: :mod:`pontoon.analysis.shipped`)."""
        from pontoon.analysis.basic import optimal_chart
        from pontoon.analysis.game import Game
        from pontoon.analysis.shipped import shipped_chart

        shipped = shipped_chart(self.rules, self.wager)
        return shipped if shipped is not None else optimal_chart(Game(self.rules, self.wager))

    def key(self, cards: Sequence[Card], up: Card, doubled: bool = False) -> tuple[str, str, bool]:
        """What a hand's values depend on, the key they are kept under: each card's value,
        whether two cards are a pair that may split (13: by rank, a jack and a king are not),
        and suits only where a 6-7-8 or 7-7-7 can still be made (11.1, 11.2: three cards at
        most, each a 6, 7 or 8) — then the suits of those ranks, the dealer's card's too (the
        shoe's suited cards are what is left of them), spades by name (they pay apart) and the
        other three in the order they first appear (any two hands alike but for those three
        suits' names have the same values).

        >>> from pontoon.cards import parse_cards
        >>> from pontoon.rules import load_rules
        >>> g = Grader(load_rules("nz-pontoon"))
        >>> def k(hand, up): return g.key(parse_cards(hand), parse_cards(up)[0])
        >>> k("7H 8D", "6C") == k("7D 8C", "6H"), k("7S 8S", "6S") == k("7H 8H", "6H")
        (True, False)
        >>> k("TH 6D", "7C") == k("KS 6S", "7H"), k("KH KD", "5C") == k("JH QD", "5C")
        (True, False)
        """
        from pontoon.hand import is_pair

        pair = len(cards) == 2 and is_pair(cards[0], cards[1], self.rules.split_by)
        if len(cards) > 3 or any(c.value not in PATTERN for c in cards):
            hand = " ".join(sorted(str(c.value) for c in cards))
            return (f"{hand}{' pair' if pair else ''}", str(up.value), doubled)
        names = {"S": "S"}

        def named(c: Card) -> str:
            if c.value not in PATTERN:
                return str(c.value)
            if c.suit not in names:
                names[c.suit] = "abc"[len(names) - 1]
            return f"{c.value}{names[c.suit]}"

        first = named(up)
        hand = " ".join(sorted(named(c) for c in sorted(cards, key=lambda c: (c.value, c.suit))))
        return (f"{hand}{' pair' if pair else ''}", first, doubled)

    def values(self, cards: Sequence[Card], up: Card, doubled: bool = False) -> dict[str, float]:
        """Every legal play's expected value per unit wagered (a doubled hand: stand or
        rescue, per initial wager), kept under :meth:`key`."""
        key = self.key(cards, up, doubled)
        if key not in self._cache:
            if len(self._cache) >= CACHED_MOST:  # (a grader shared by every drill: bounded)
                self._cache.clear()
            self._cache[key] = self._rescue(cards, up) if doubled else self._hand(cards, up)
        return self._cache[key]

    def _hand(self, cards: Sequence[Card], up: Card) -> dict[str, float]:
        from pontoon.analysis.report import hand_values

        rep = hand_values(self.rules, ",".join(c.code for c in cards), up.code, wager=self.wager)
        return dict(rep.values)

    def _rescue(self, cards: Sequence[Card], up: Card) -> dict[str, float]:
        """12: a doubled hand may forfeit its original wager instead of standing on both."""
        from pontoon.analysis.composition import comp_of
        from pontoon.analysis.game import Context, Game

        values = [c.value for c in cards]
        c = comp_of(values)
        game = Game(self.rules, self.wager, within=c)
        i = game.comps.index[c]
        rows = game.rows(Context())
        u = up.value - 1
        norm = 1.0 - rows.pn[i, u] if game.peek else 1.0
        stand = float(rows.table[i, u] @ game.coef2[i]) / norm
        return {"stand": stand, RESCUE: float(-rows.f[i, u]) / norm}

    def insurance(self, cards: Sequence[Card], up: Card) -> dict[str, float]:
        """10: the offer of insurance against a dealer's ace, per unit wagered: insuring the
        most allowed (``insurance_max`` of the wager) wins ``insurance_pays`` if the dealer's
        next card is a ten-value and loses otherwise; declining changes nothing. The chance is
        the shoe's ten-values among its cards less those seen (``cards`` and ``up``).

        >>> from pontoon.cards import parse_cards
        >>> from pontoon.rules import load_rules
        >>> g = Grader(load_rules("classic-blackjack"))  # 6 decks: 96 tens of 312
        >>> cards, up = parse_cards("TH TS"), parse_cards("AS")[0]
        >>> round(g.insurance(cards, up)["insure"] * 309 * 2, 9)  # 2 * 94 - 215 (its tens: 94)
        -27.0
        """
        from pontoon.analysis.composition import ShoeModel

        shoe = ShoeModel.of(self.rules, removed=[*cards, up])
        p = float(shoe.counts[9]) / shoe.size
        win = float(self.rules.insurance_pays) * p - (1.0 - p)
        return {NO_INSURANCE: 0.0, INSURE: float(self.rules.insurance_max) * win}

    def grade(
        self,
        cards: Sequence[Card],
        up: Card,
        answer: str,
        legal: Sequence[str],
        chart: str,
        doubled: bool = False,
    ) -> Grade:
        """Grade ``answer`` for ``cards`` against ``up`` (``legal``: the plays the round
        offers, in the engine's words; ``chart``: the optimal chart's play,
        :func:`pontoon.sim.reference.chart_move`)."""
        offer = answer in (INSURE, NO_INSURANCE)  # (10: the offer, graded alone; a play made
        # while it is open declines it, and is graded among the plays)
        every = self.insurance(cards, up) if offer else self.values(cards, up, doubled)
        values = {a: v for a, v in every.items() if a in legal}
        best = max(values, key=values.__getitem__)
        cost = values[best] - values[answer] if answer in values else float("nan")
        return Grade(
            cell_of(cards, up, self.rules.split_by, doubled),
            answer,
            best,
            chart,
            float(np.round(cost, 15)),
            values,
        )


__all__ = ["Grade", "Grader", "cell_of"]
