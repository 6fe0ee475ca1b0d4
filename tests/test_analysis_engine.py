"""The analysis reads the rules as the round engine does: for single decisions the exact
expected value is also found by playing every possible card sequence (with its probability)
through :class:`pontoon.round.Round`, and the two must agree to rounding error."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import pytest

from pontoon.analysis.composition import comp_of
from pontoon.analysis.game import DOUBLE, STAND, SURRENDER, Context, Game
from pontoon.analysis.report import hand_values
from pontoon.cards import Card, pack, parse_cards
from pontoon.hand import hard_total, total
from pontoon.round import Move, Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import ScriptedCards

WAGER = 1000
SUIT_OF = "HDCS"  # representative cards of a value: suits that never make a 6-7-8 by accident


def rep(value: int, n: int = 0) -> Card:
    rank = "A23456789TJQK"[(13 if value == 10 else value) - 1]
    return Card.parse(rank + SUIT_OF[n % 4])


def left_in_shoe(rules: RuleSet, out: Sequence[Card]) -> dict[str, int]:
    have: dict[str, int] = {}
    for c in pack(rules.deck, rules.decks):
        have[c.code] = have.get(c.code, 0) + 1
    for c in out:
        have[c.code] -= 1
    return have


def by_value(have: dict[str, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for code, n in have.items():
        v = Card.parse(code).value
        out[v] = out.get(v, 0) + n
    return out


def dealer_sequences(
    rules: RuleSet, up: Card, counts: dict[int, int]
) -> list[tuple[Fraction, list[Card]]]:
    """Every way the dealer's hand goes on (second card and draws), with its probability."""
    out: list[tuple[Fraction, list[Card]]] = []

    def rec(cards: list[Card], drawn: list[Card], prob: Fraction, left: dict[int, int]) -> None:
        t = total(cards)
        soft = t != hard_total(cards)
        natural = len(cards) == 2 and t == 21
        if len(cards) >= 2 and (
            natural or t > 17 or (t == 17 and not (soft and rules.dealer_hits_soft_17))
        ):
            out.append((prob, drawn))
            return
        size = sum(left.values())
        for v, n in left.items():
            if n:
                c = rep(v, len(drawn) + 1)
                rec([*cards, c], [*drawn, c], prob * Fraction(n, size), {**left, v: n - 1})

    rec([up], [], Fraction(1), counts)
    return out


def play(rules: RuleSet, cards: list[Card], moves: Sequence[str]) -> int:
    rnd = Round(rules, ScriptedCards(cards))
    rnd.place_wager(1, "p", WAGER)
    rnd.deal()
    for m in moves:
        if rnd.over:
            break
        if rnd.phase == "insurance":
            rnd.apply_defaults()
        rnd.apply(Move(m, 1))
    if not rnd.over and rnd.current() is not None:
        rnd.apply(Move("stand", 1))
    assert rnd.over
    return rnd.net("p")


def engine_outcomes(
    rules: RuleSet, hand: str, up: str, action: str, draws: int
) -> dict[int, Fraction]:
    """P(net in cents) of ``action`` (then stand), all sequences through the engine; in the
    peek game given that the dealer has no pontoon."""
    p1, p2 = parse_cards(hand)
    u = Card.parse(up)
    have = left_in_shoe(rules, [p1, p2, u])
    counts = by_value(have)
    out: dict[int, Fraction] = {}
    firsts: list[tuple[Fraction, list[Card], dict[int, int]]] = [(Fraction(1), [], counts)]
    if draws:
        firsts = []
        size = sum(have.values())
        for code, n in have.items():  # the player's card, suits and all
            if n:
                c = Card.parse(code)
                left = dict(counts)
                left[c.value] -= 1
                firsts.append((Fraction(n, size), [c], left))
    for p_first, drawn, left in firsts:
        for p_dealer, seq in dealer_sequences(rules, u, left):
            if rules.dealer_peeks and len(seq) >= 1 and total([u, seq[0]]) == 21:
                continue  # the peek game: rounds where the dealer has pontoon end at once
            if rules.dealer_peeks:
                cards = [p1, u, p2, seq[0], *drawn, *seq[1:]]
            else:
                cards = [p1, u, p2, *drawn, *seq]
            net = play(rules, cards, [action])
            out[net] = out.get(net, Fraction(0)) + p_first * p_dealer
    mass = sum(out.values())
    return {net: p / mass for net, p in out.items()}


def by_engine(rules: RuleSet, hand: str, up: str, action: str, draws: int) -> float:
    """E[net] / wager of ``action`` (then stand), as :func:`engine_outcomes`."""
    outcomes = engine_outcomes(rules, hand, up, action, draws)
    return float(sum(net * p for net, p in outcomes.items())) / WAGER


def analysed(rules: RuleSet, hand: str, up: str, action: int) -> float:
    game = Game(rules, WAGER)
    cards = parse_cards(hand)
    u = Card.parse(up).value
    i = game.comps.index[comp_of([c.value for c in cards])]
    v = game.evaluate(Context())
    value = float(v.act[i, u - 1, action])
    if rules.dealer_peeks:
        value /= 1.0 - float(game.rows(Context()).pn[i, u - 1])
    return value


NZ1 = load_rules("nz-pontoon", {"decks": 1})


@pytest.mark.parametrize(
    ("hand", "up", "action", "code", "draws"),
    [
        ("QH 6D", "KC", STAND, "stand", 0),  # 13.7: a dealer pontoon takes the wager
        ("5H 6D", "KC", DOUBLE, "double", 1),  # 13.7: ... and only the original of a double
        ("5H 6D", "9C", DOUBLE, "double", 1),  # 9.2: a doubled 21 is paid at once, at 1:1
        ("QH 6D", "KC", SURRENDER, "surrender", 0),  # 9.4: surrender void on a pontoon
        ("9H 8D", "8C", STAND, "stand", 0),
    ],
)
def test_9_2_13_7_9_4_nz_pontoon_decisions_agree_with_the_round_engine(
    hand: str, up: str, action: int, code: str, draws: int
) -> None:
    assert analysed(NZ1, hand, up, action) == pytest.approx(
        by_engine(NZ1, hand, up, code, draws), abs=1e-12
    )


def test_13_7_all_wagers_lost_when_dealer_natural_takes_all() -> None:
    rules = NZ1.replace(dealer_natural_takes="all")
    assert analysed(rules, "5H 6D", "KC", DOUBLE) == pytest.approx(
        by_engine(rules, "5H 6D", "KC", "double", 1), abs=1e-12
    )


def test_11_1_suited_6_7_8_doubled_by_suits_agrees_with_the_engine() -> None:
    rules = NZ1.replace(bonus_on_double=True)
    rep_ = hand_values(rules, "6S,7S", "KD", wager=WAGER)
    assert rep_.values["double"] == pytest.approx(
        by_engine(rules, "6S 7S", "KD", "double", 1), abs=1e-12
    )


def test_peek_game_double_agrees_with_the_engine() -> None:
    rules = load_rules("classic-blackjack", {"decks": 1})
    assert analysed(rules, "5H 6D", "KC", DOUBLE) == pytest.approx(
        by_engine(rules, "5H 6D", "KC", "double", 1), abs=1e-12
    )


@pytest.mark.slow
def test_11_2_super_bonus_premium_is_exact() -> None:
    """7S 7S against 7D: the third seven is a spade 4 times in 21 (6 decks), and pays the
    Super Bonus (200 wagers for $5) instead of 3:2; 7S 7H never does. Hitting differs by
    exactly P(a seven) x 4/21 x (200 - 1.5)."""
    rules = load_rules("nz-pontoon")
    suited = hand_values(rules, "7S,7S", "7D").values["hit"]
    mixed = hand_values(rules, "7S,7H", "7D").values["hit"]
    assert suited - mixed == pytest.approx(21 / 285 * 4 / 21 * (200 - 1.5), abs=1e-12)


def test_a_split_on_a_shoe_of_fractional_cards_has_every_context_it_reaches() -> None:
    """A count's expected shoe holds fractions of cards. With 5.4 eights, 3.4 are left beside
    a pair of them, and the exact correction for unknown cards out (split.unknowns_out)
    reaches a split hand with 4 other eights out (each a < 3.4 takes one more), so the
    split-hand contexts must go that far: they stopped at 4 other eights and the analysis of
    such a shoe raised KeyError (count indices at a fifth of the shoe left, at high counts,
    where the sevens and eights a balanced count does not tag are enriched)."""
    import numpy as np

    from pontoon.analysis.composition import ShoeModel
    from pontoon.analysis.split import split_contexts

    rules = load_rules("classic-blackjack", {"decks": 1})
    full = ShoeModel.of(rules)
    counts = full.counts.astype(float).copy()
    counts[7] = 5.4  # eights
    game = Game(rules, shoe=full.scaled(counts, "5.4 eights"))
    assert max(c.extra for c in split_contexts(game, 8)) >= 5
    assert max(c.extra for c in split_contexts(Game(rules), 8)) == 3  # 2 eights beside a pair
    assert np.isfinite(game.shoe.counts).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "knobs", "strategy"),
    [
        ("nz-pontoon", {"decks": 1}, "composition"),
        ("nz-pontoon", {"decks": 1}, "basic"),
        ("nz-pontoon", {"decks": 1, "double_rescue": True}, "composition"),
        ("classic-blackjack", {"decks": 1}, "composition"),
        (
            "classic-blackjack",
            {"decks": 2, "dealer_peeks": True, "surrender": "late"},
            "composition",
        ),
        ("classic-blackjack", {"infinite": True}, "composition"),
        ("spanish-21", {"decks": 1}, "composition"),
        ("spanish-21", {"decks": 1}, "basic"),
    ],
)
def test_the_walks_compiled_loops_equal_numpy(
    preset: str, knobs: dict[str, object], strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backward walk's steps (standing, what each card brings, the wager lost to a
    busting card, in the peek game each card's chance of no dealer pontoon after it; each
    action's value, the choice, the values of arriving, the rescue) by the compiled loops
    the install builds, or by numpy: the same values to a few roundings, so the same
    choices and the same expected value; finite and infinite shoes, no hole card (void
    surrender, 9.4), the peek game, a rescue (12), the composition optimum and a chart."""
    import numpy as np

    from pontoon.analysis import compiled
    from pontoon.analysis.report import Report, analyze

    assert compiled.walk_sums is not None and compiled.walk_choose is not None
    knobs = dict(knobs)
    infinite = bool(knobs.pop("infinite", False))
    rules = load_rules(preset, knobs)
    fast = analyze(rules, strategy, infinite=infinite)
    monkeypatch.setattr(compiled, "walk_sums", None)
    monkeypatch.setattr(compiled, "walk_choose", None)
    slow = analyze(rules, strategy, infinite=infinite)
    assert fast.ev == pytest.approx(slow.ev, abs=1e-14)
    assert [row["play"] for row in fast.table] == [row["play"] for row in slow.table]
    cells = ("stand", "hit", "double", "surrender", "split")

    def values(rep: Report) -> np.ndarray:
        return np.array([[r[c] if r[c] is not None else np.nan for c in cells] for r in rep.table])

    np.testing.assert_allclose(values(fast), values(slow), rtol=0, atol=1e-13)
