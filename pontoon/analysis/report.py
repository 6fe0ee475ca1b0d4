"""The analysis as a user asks for it: a strategy's expected value with its decision table,
and the hand calculator (every legal action's value in one situation).

>>> from pontoon.rules import load_rules
>>> rep = analyze(load_rules("classic-blackjack", {"decks": 1, "split_max_hands": 1}),
...               strategy="composition", infinite=True)
>>> round(rep.ev * 100, 3)
-1.087
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pontoon.analysis.basic import optimal_chart
from pontoon.analysis.chart import Chart, pair_row, total_row
from pontoon.analysis.composition import Removal, ShoeModel, comp_of, total_of
from pontoon.analysis.evaluate import ACTION_NAMES, Outcome, evaluate
from pontoon.analysis.game import DOUBLE, HIT, STAND, SURRENDER, Context, Game
from pontoon.analysis.split import (
    POST_SPLIT,
    POST_SPLIT_NAMES,
    max_hands,
    split_hand_values,
    split_value,
)
from pontoon.analysis.suits import completing, pattern_configs
from pontoon.cards import RANKS, SUITS, Card
from pontoon.errors import InputError
from pontoon.rules import RuleSet

UP_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread: the analysis's matrices are small, and threads only contend."""
    try:
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:  # pragma: no cover - threadpoolctl is in the analysis extra
        yield
        return
    with threadpoolctl.threadpool_limits(1):
        yield


def method_text(game: Game, strategy: str, post_split: str = "cdz") -> str:
    shoe = "infinite shoe" if game.infinite else f"{game.rules.decks}-deck shoe, cards removed"
    if game.removed:
        shoe += f"; before the round {', '.join(removed_codes(game.removed))} out of the shoe"
    if game.shoe.note:
        shoe += f"; {game.shoe.note}"
    post = {
        "cdz": "; after a split CDZ- (played as the unsplit hand of the same cards)",
        "cdp1": "; after a split CDP1 (the best play with one other pair card out, every split)",
        "cdp": "; after a split CDP (the best play for the pair cards out)",
    }[post_split]
    plays = {
        "basic": "optimal total-dependent chart",
        "composition": "composition-dependent optimum" + post,
    }.get(strategy, f"chart {strategy}")
    return f"exact combinatorial analysis ({shoe}); {plays}; wager {game.wager} cents"


@dataclass
class Report:
    """A strategy's value for a rule set."""

    rules: RuleSet
    strategy: str
    wager: int
    ev: float
    seconds: float
    method: str
    outcome: Outcome
    chart: Chart | None = None
    infinite: bool = False
    table: list[dict[str, Any]] = field(default_factory=list)
    post_split: str = "cdz"
    game: Game | None = None  # the game analysed (its caches serve further questions)

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "ev": self.ev,
            "house_edge": -self.ev,
            "method": self.method,
            "strategy": self.strategy,
            "post_split": POST_SPLIT_NAMES[self.post_split]
            if self.strategy == "composition"
            else "chart",
            "wager": self.wager,
            "infinite": self.infinite,
            "seconds": round(self.seconds, 3),
            "ev_by_dealer": {UP_NAMES[u]: float(self.outcome.ev_by_up[u]) for u in range(10)},
            "dealer_probability": {UP_NAMES[u]: float(self.outcome.up_prob[u]) for u in range(10)},
            "table": self.table,
            "chart": self.chart.to_csv() if self.chart is not None else None,
            "removed": removed_codes(self.game.removed) if self.game is not None else [],
        }


def analyze(
    rules: RuleSet,
    strategy: str | Chart = "basic",
    *,
    wager: int = 500,
    infinite: bool = False,
    post_split: str = "cdz",
    removed: Sequence[Removal] = (),
    shoe: ShoeModel | None = None,
    one_shot: bool = False,
    forward: bool = False,
) -> Report:
    """The exact expected value of ``strategy`` (``basic``, ``composition`` or a chart);
    ``post_split`` (``cdz``, ``cdp1``, ``cdp``) says how ``composition`` plays split hands;
    ``removed``: cards out of the shoe before the round (any shoe: a counter's question);
    ``one_shot``: nothing else analyses this shoe in this process (the command), so memory
    the dealer's tables would keep for the next analysis goes back (:func:`evaluate`);
    ``forward``: the round's distribution follows (:func:`evaluate`)."""
    if wager < 1:
        raise InputError(f"--wager must be a positive number of cents, not {wager}")
    if post_split not in POST_SPLIT:
        raise InputError(f"unknown post-split strategy {post_split!r}: {', '.join(POST_SPLIT)}")
    start = time.perf_counter()
    with one_thread():
        game = Game(rules, wager, infinite=infinite, removed=removed, shoe=shoe)
        chart, name = _strategy(game, strategy)
        if chart is not None:
            post_split = "cdz"
        outcome = evaluate(game, chart, post_split, one_shot=one_shot, forward=forward)
    seconds = time.perf_counter() - start
    return Report(
        rules,
        name,
        wager,
        outcome.ev,
        seconds,
        method_text(game, name, post_split),
        outcome,
        chart,
        infinite,
        decision_table(game, outcome),
        post_split,
        game,
    )


def _strategy(game: Game, strategy: str | Chart) -> tuple[Chart | None, str]:
    """The chart a strategy plays (None: composition-dependent) and its name."""
    if isinstance(strategy, Chart):
        return strategy, strategy.name
    if strategy == "basic":
        return optimal_chart(game), "basic"
    if strategy == "composition":
        return None, "composition"
    raise InputError(f"unknown strategy {strategy!r}: basic, composition or a CSV file")


def decision_table(game: Game, outcome: Outcome) -> list[dict[str, Any]]:
    """Per two-card hand class (chart row) and dealer's first card: each action's expected
    value given the deal (in the peek game, and no dealer pontoon), probability-weighted over
    the hands of the class, and the strategy's most frequent choice."""
    rank_tens = game.rules.split_by == "rank"
    groups: dict[str, list[int]] = {}
    for k, (_i, a, b) in enumerate(outcome.hands):
        if {a, b} == {1, 10}:
            continue
        if a == b and not (a == 10 and rank_tens):
            row = pair_row(a)
        else:
            total, soft = total_of(comp_of([a, b]))
            row = total_row(total, soft)
        groups.setdefault(row, []).append(k)
    naturals = game.naturals(Context())
    out: list[dict[str, Any]] = []
    order = sorted(groups, key=_row_order)
    for row in order:
        ks = groups[row]
        for u in range(10):
            w = np.array([outcome.deal_prob[k, u] for k in ks])
            if game.peek:
                w = w * np.array([1.0 - naturals[outcome.hands[k][0], u] for k in ks])
            if w.sum() <= 0:
                continue
            w = w / w.sum()
            entry: dict[str, Any] = {"hand": row, "dealer": UP_NAMES[u]}
            for a, name in enumerate(ACTION_NAMES):
                vals = np.array([outcome.actions[k, u, a] for k in ks])
                entry[name] = None if np.isnan(vals).any() else float(w @ vals)
            picks = [int(outcome.choice[k, u]) for k in ks]
            votes = np.bincount([p for p in picks if p >= 0], weights=None, minlength=5)
            entry["play"] = ACTION_NAMES[int(np.argmax(votes))] if votes.sum() else None
            out.append(entry)
    return out


def _row_order(row: str) -> tuple[int, int]:
    kind = "HSP".index(row[0])
    rest = row[1:]
    num = {"T": 10, "A": 11}.get(rest, 0) or int(rest)
    return kind, num


# ---------------------------------------------------------------------- the hand calculator
def parse_up(text: str) -> tuple[int, Card | None]:
    """The dealer's first card: a card (``KD``) or a rank (``K``)."""
    t = text.strip().upper()
    if len(t) == 1:
        if t not in RANKS:
            raise InputError(f"unknown dealer card {text!r}: a rank A23456789TJQK or a card")
        rank = RANKS.index(t) + 1
        return min(rank, 10), None
    c = Card.parse(t)
    return c.value, c


def parse_hand(text: str) -> tuple[list[int], list[Card] | None]:
    """The player's cards (``7S,8D``); ranks alone (``7,8``) when the suits do not matter."""
    values: list[int] = []
    cards: list[Card] = []
    for p in text.replace(",", " ").split():  # an unknown card is named first
        t = p.upper()
        if len(t) == 1 and t in RANKS:
            values.append(min(RANKS.index(t) + 1, 10))
        else:
            c = Card.parse(t)
            cards.append(c)
            values.append(c.value)
    if len(values) < 2:
        raise InputError("--hand needs two cards or more, e.g. 7S,8D")
    return values, (cards if len(cards) == len(values) else None)


@dataclass
class HandReport:
    """Each legal action's expected value in one situation (per unit wager; in the peek game
    given that the dealer has no pontoon), the best one first."""

    hand: str
    dealer: str
    values: dict[str, float]
    note: str
    seconds: float

    @property
    def best(self) -> str:
        return max(self.values, key=self.values.__getitem__)

    def to_json(self, rules: RuleSet, method: str) -> dict[str, Any]:
        return {
            "rules": rules.to_dict(),
            "hand": self.hand,
            "dealer": self.dealer,
            "actions": self.values,
            "best": self.best,
            "ev": self.values[self.best],
            "note": self.note,
            "method": method,
            "seconds": round(self.seconds, 3),
        }


def hand_values(
    rules: RuleSet,
    hand: str,
    dealer: str,
    *,
    wager: int = 500,
    infinite: bool = False,
    strategy: str | Chart = "composition",
    post_split: str = "cdz",
    removed: Sequence[Removal] = (),
) -> HandReport:
    """The hand calculator: every legal action for ``hand`` against ``dealer``, each followed
    by ``strategy``: the composition-dependent best play (after a split as ``post_split``
    says), or a chart's play (``basic``: the optimal chart), after a split too."""
    if post_split not in POST_SPLIT:
        raise InputError(f"unknown post-split strategy {post_split!r}: {', '.join(POST_SPLIT)}")
    start = time.perf_counter()
    values, cards = parse_hand(hand)
    up, up_card = parse_up(dealer)
    _check_cards(ShoeModel.of(rules, infinite, removed), values, cards, up, up_card)
    c = comp_of(values)
    total, _soft = total_of(c)
    if total > 21:
        raise InputError(f"the hand {hand} is bust ({total})")
    pair = values[0] if len(values) == 2 and values[0] == values[1] else None
    if pair is not None and cards is not None and rules.split_by == "rank":
        pair = pair if cards[0].rank == cards[1].rank else None  # (13: a jack and a king)
    within = comp_of([pair]) if pair is not None else c
    with one_thread():
        chart: Chart | None = None
        if strategy != "composition":
            chart, _name = _strategy(
                Game(rules, wager, infinite=infinite, removed=removed), strategy
            )
        game = Game(rules, wager, infinite=infinite, within=within, removed=removed)
        ctx = Context()
        if chart is None:
            base = game.evaluate(ctx)
            post = np.where(np.isfinite(base.act), base.act, -1e9)
            follow = "the composition-dependent best play"
            after = f"; after a split {POST_SPLIT_NAMES[post_split]}"
        else:
            post = chart.scores(game.comps, rules.split_by == "rank")
            base = game.evaluate(ctx, scores=post, rescue=chart.rescues())
            post_split = "cdz"
            follow = f"the chart {chart.name}"
            after = "; after a split the chart"
        i = game.comps.index[c]
        rows = game.rows(ctx)
        norm = 1.0 - rows.pn[i, up - 1] if game.peek else 1.0
        legal = game.legal(ctx)[i, up - 1]  # (a hand of three cards has acted: no surrender)
        out: dict[str, float] = {}
        note = f"each action followed by {follow}"
        if len(values) == 2 and {values[0], values[1]} == {1, 10}:
            out["pontoon"] = (
                game.pay.natural
                if (rules.player_21_wins or game.peek)
                else float(game.pay.natural * (1 - rows.pn[i, up - 1]))
            )
            note = "a pontoon is paid at once (9.1)"
        elif total == 21:
            out["21"] = float(base.arr1[i, up - 1] / norm)
            note = "a 21 takes no decision (9.2)"
        else:
            acts = base.act[i, up - 1].copy()
            if i in base.premium and cards is not None:
                acts = _exact_suits(game, i, up, up_card, cards, acts, base.premium[i], rows)
            for a, name in (
                (STAND, "stand"),
                (HIT, "hit"),
                (DOUBLE, "double"),
                (SURRENDER, "surrender"),
            ):
                if legal[a]:
                    out[name] = float(acts[a] / norm)
            if pair is not None and max_hands(game, pair) >= 2:
                rescue = chart.rescues() if chart is not None else None
                vals = split_hand_values(game, pair, post, post_split, rescue)
                sv = split_value(game, pair, vals).ev[up - 1]
                out["split"] = float(sv / norm)
                note += after
    if game.peek and up in (1, 10):
        note += "; given that the dealer has no pontoon"
    report = HandReport(
        hand,
        dealer,
        dict(sorted(out.items(), key=lambda kv: -kv[1])),
        note,
        time.perf_counter() - start,
    )
    return report


def _exact_suits(
    game: Game,
    i: int,
    up: int,
    up_card: Card | None,
    cards: Sequence[Card],
    acts: np.ndarray,
    avg: tuple[np.ndarray, np.ndarray],
    rows: Any,
) -> np.ndarray:
    """Replace the suit-averaged 6-7-8 / 7-7-7 premium by the one of these very cards."""
    a, b = cards[0].value, cards[1].value
    third = completing(a, b)
    assert third is not None
    confs = pattern_configs(
        game.pay,
        suits=game.suits,
        infinite=game.infinite,
        up=up,
        hand=(a, b),
        fixed=(cards[0], cards[1]),
        up_card=up_card,
    )
    child = game.comps.child[i, third - 1]
    w = game.win21_weight(rows.table[child])[up - 1]
    p3 = rows.nxt[i, up - 1, third - 1]
    hit = sum(k.prob * p3 * (k.super_pay + (k.odds - game.win1[child]) * w) for k in confs)
    dbl = sum(k.prob * p3 * (k.odds_doubled - game.win2[child]) * w for k in confs)
    out = acts.copy()
    out[HIT] += hit - avg[0][up - 1]
    out[DOUBLE] += dbl - avg[1][up - 1]
    return out


def _check_cards(
    shoe: ShoeModel, values: list[int], cards: list[Card] | None, up: int, up_card: Card | None
) -> None:
    """Refuse cards the shoe does not hold (a ten in a Spanish deck, too many of a card)."""
    have = shoe.suit_counts.copy()
    for c in list(cards or []) + ([up_card] if up_card else []):
        have[c.rank - 1, SUITS.index(c.suit)] -= 1
        if have[c.rank - 1, SUITS.index(c.suit)] < -1e-9:
            raise InputError(f"the shoe holds no more {c.code}")
    for v in set([*values, up]):
        need = values.count(v) + (1 if up == v else 0)
        if need > shoe.counts[v - 1] + 1e-9:
            raise InputError(f"the shoe holds only {shoe.counts[v - 1]:g} cards of value {v}")


def parse_removed(text: str) -> list[Removal]:
    """Cards out of the shoe (``5S,5H,KD``); a rank alone (``5``, ``T``) is a card of that
    rank whose suit is not known."""
    out: list[Removal] = []
    for p in text.replace(",", " ").split():
        t = p.upper()
        out.append(RANKS.index(t) + 1 if len(t) == 1 and t in RANKS else Card.parse(t))
    return out


def removed_codes(removed: Sequence[Removal]) -> list[str]:
    """The cards out as written: ``5S``, or a rank alone."""
    return [x.code if isinstance(x, Card) else RANKS[x - 1] for x in removed]


__all__ = ["HandReport", "Report", "analyze", "hand_values"]
