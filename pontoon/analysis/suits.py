"""Suits, where the odds depend on them: 6-7-8 and 7-7-7 (11.1) and the Super Bonus (11.2).

A three-card 21 of 6-7-8 or 7-7-7 pays by suits (mixed, one suit, spades), and three sevens of
one suit against a dealer's 7 earn the Super Bonus. Only two-card hands of 6-7, 6-8, 7-8 or 7-7
can still become one, so the analysis keeps value compositions everywhere (paying such a 21 at
the mixed-suit odds) and adds here, at those two-card hands, the exact *premium* of the suits:
the first two cards' suits (and the dealer's first card's, and for a split hand the other pair
card's) are enumerated with their probabilities from the shoe's suit counts, and the third
card's suit is drawn from what is left of its rank.

>>> from pontoon.rules import load_rules
>>> from pontoon.analysis.payoffs import Payoffs
>>> rules = load_rules("nz-pontoon")
>>> from pontoon.analysis.composition import ShoeModel
>>> suits = ShoeModel.of(rules).pattern_suits()
>>> confs = pattern_configs(Payoffs(rules, 500), suits=suits, infinite=False, up=7, hand=(7, 7))
>>> round(sum(c.prob for c in confs), 12)
1.0
>>> best = max(confs, key=lambda c: c.super_pay)     # 7-7 of one suit against a 7
>>> round(best.super_pay, 4)                           # 4 sevens of that suit left of 21
38.0952
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from pontoon.analysis.payoffs import Payoffs, card
from pontoon.cards import SUITS, Card
from pontoon.vocab import Ending

Paid = tuple[tuple[float, int, Ending], ...]  # (P(third card's suit), cents won, why), by suit
Paid1 = tuple[int, Ending]  # one 21's: cents won, why

PATTERN_RANKS = (6, 7, 8)


def completing(a: int, b: int) -> int | None:
    """The rank that makes two cards a 6-7-8 or 7-7-7, or None."""
    lo, hi = min(a, b), max(a, b)
    return {(6, 7): 8, (6, 8): 7, (7, 8): 6, (7, 7): 7}.get((lo, hi))


@dataclass(frozen=True)
class Config:
    """One suit configuration of a two-card hand: its probability, and once the completing
    rank is drawn, the expected Super Bonus (in wagers) and the expected odds otherwise, for a
    hit (``odds``) and for a double (``odds_doubled``); ``hit``/``double``: what each suit of
    the third card pays (the distribution of a round needs them apart)."""

    prob: float
    super_pay: float
    odds: float
    odds_doubled: float
    hit: Paid = ()
    double: Paid = ()


def pattern_configs(
    pay: Payoffs,
    *,
    suits: Mapping[tuple[int, str], float],
    infinite: bool,
    up: int,
    hand: tuple[int, int],
    split: bool = False,
    extra_pairs: float = 0.0,
    fixed: tuple[Card, ...] | None = None,
    up_card: Card | None = None,
) -> list[Config]:
    """The suit configurations of the two-card hand ``hand`` (values) against first card
    ``up``, from a shoe holding ``suits`` cards of each (rank, suit) of 6, 7 and 8
    (:meth:`~pontoon.analysis.composition.ShoeModel.pattern_suits`). ``split``: a split hand
    (the other pair card, of ``hand[0]``'s rank, is out of the shoe too; ``extra_pairs``
    more of that rank are out by resplits, taken from each suit alike). ``fixed``/``up_card``:
    the actual cards, when they are known. Kept by every argument's value (a game of a
    shoe, or of a hand, asks again what another already worked out: the drill's grader asked
    four times in five)."""
    held = tuple(sorted(suits.items()))
    key = (
        pay.rules,
        pay.wager,
        held,
        infinite,
        up,
        tuple(hand),
        split,
        extra_pairs,
        fixed,
        up_card,
    )
    if (found := _KEPT.get(key)) is None:
        if len(_KEPT) >= KEPT_MOST:
            _KEPT.clear()
        made = _configs(pay, suits, infinite, up, tuple(hand), split, extra_pairs, fixed, up_card)
        found = _KEPT[key] = tuple(made.values())
    return list(found)


KEPT_MOST = 4096  # configurations kept (a few KB each at most)
_KEPT: dict[tuple[object, ...], tuple[Config, ...]] = {}


def _configs(
    pay: Payoffs,
    held: Mapping[tuple[int, str], float],
    infinite: bool,
    up: int,
    hand: tuple[int, ...],
    split: bool,
    extra_pairs: float,
    fixed: tuple[Card, ...] | None,
    up_card: Card | None,
) -> dict[tuple[object, ...], Config]:
    third = completing(hand[0], hand[1])
    assert third is not None
    # The cards whose suits matter, in dealing order: the dealer's first card (if its rank is
    # 6, 7 or 8), the other pair card of a split, then the hand's two cards.
    ranks: list[int] = []
    if up in PATTERN_RANKS:
        ranks.append(up)
    if split:
        ranks.append(hand[0])
    ranks += list(hand)
    known: list[str | None] = [None] * len(ranks)
    if fixed is not None:
        known[-2:] = [fixed[0].suit, fixed[1].suit]
        if up_card is not None and up in PATTERN_RANKS:
            known[0] = up_card.suit
    out: dict[tuple[object, ...], Config] = {}

    @functools.cache
    def settled(a: str, b: str, s: str) -> tuple[float | None, float, Paid1, float, Paid1]:
        """The 21 of suits ``a``, ``b`` and ``s``: its Super Bonus (or None) and, hit then
        doubled, what it wins in wagers and is paid (each worked out once a call: the suits
        of the cards before it come again and again)."""
        cards = (card(hand[0], a), card(hand[1], b), card(third, s))
        sup = None if split else pay.super_cards(cards, up_rank=up)
        won = 0.0 if sup is not None else _win(pay, cards, False)
        paid = (
            (pay.cents(sup), Ending.SUPER_BONUS)
            if sup is not None
            else pay.paid(cards, doubled=False)
        )
        return sup, won, paid, _win(pay, cards, True), pay.paid(cards, doubled=True)

    for suits in itertools.product(SUITS, repeat=len(ranks)):
        if any(k is not None and k != s for k, s in zip(known, suits, strict=True)):
            continue
        counts = dict(held)
        prob = 1.0
        for i, (r, s) in enumerate(zip(ranks, suits, strict=True)):
            if known[i] is None:
                prob *= 0.25 if infinite else counts[r, s] / sum(counts[r, t] for t in SUITS)
            counts[r, s] -= 1
        if prob == 0.0:
            continue
        if split:
            for s in SUITS:
                counts[hand[0], s] -= extra_pairs / 4
        a, b = suits[-2], suits[-1]
        for s in SUITS:
            counts[third, s] = max(counts[third, s], 0.0)
        left = sum(counts[third, s] for s in SUITS)
        if infinite:
            third_suits = dict.fromkeys(SUITS, 0.25)
        elif left > 0:
            third_suits = {s: counts[third, s] / left for s in SUITS}
        else:  # no card of the rank left: were one to come it would not match (a nil
            # premium), and the configuration keeps its chance
            third_suits = {next(s for s in SUITS if s not in (a, b)): 1.0}
        super_pay = odds = odds_doubled = 0.0
        hit: dict[tuple[int, Ending], float] = {}
        double: dict[tuple[int, Ending], float] = {}
        for s, p in third_suits.items():
            if p <= 0:
                continue
            sup, won, paid, won_doubled, dpaid = settled(a, b, s)
            if sup is not None:
                super_pay += p * sup
            else:
                odds += p * won
            hit[paid] = hit.get(paid, 0.0) + p
            odds_doubled += p * won_doubled
            double[dpaid] = double.get(dpaid, 0.0) + p
        h = tuple(sorted((p, c, e) for (c, e), p in hit.items()))
        d = tuple(sorted((p, c, e) for (c, e), p in double.items()))
        key = (
            round(super_pay, 12),
            round(odds, 12),
            round(odds_doubled, 12),
            _rounded(h),
            _rounded(d),
        )
        old = out.get(key)
        out[key] = Config(prob + (old.prob if old else 0.0), super_pay, odds, odds_doubled, h, d)
    return out


def _rounded(paid: Paid) -> tuple[tuple[float, int, str], ...]:
    return tuple((round(p, 12), c, str(e)) for p, c, e in paid)


def _win(pay: Payoffs, cards: tuple[Card, ...], doubled: bool) -> float:
    return pay.win_cards(cards, doubled=doubled)
