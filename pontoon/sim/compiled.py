"""The rule set and a strategy chart in the flat form the kernel reads.

Every number here is read from the :class:`~pontoon.rules.RuleSet` (or the chart); the kernel
holds no rule of its own. :data:`NOT_SIMULATED` lists the knobs that cannot change a simulated
round (table limits, side wagers, irregularities), so a new
knob added to the rule set fails ``tests/test_sim_compiled.py`` until it is compiled or listed.

>>> from pontoon.rules import load_rules
>>> p = compile_rules(load_rules("nz-pontoon"))
>>> int(p[BEHIND_CUT]), int(p[SURRENDER])
(72, 2)
>>> int(p[ODDS + 2 * NATURAL]), int(p[ODDS + 2 * NATURAL + 1])  # 9.1: 3:2
(3, 2)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

import numpy as np
import numpy.typing as npt

from pontoon.analysis.chart import CODES, SCORES, Chart, pair_row, total_row
from pontoon.cards import ALL_CARDS, pack
from pontoon.rules import TABLE_POLICY, RuleSet

IntArray = npt.NDArray[np.int64]

# Indices into the compiled rule array (one int64 each). What legality judges (14.1(d), 12,
# 13, 14.1(c): must_draw_below, double_on, double_after_split, split_max_hands, resplit_aces,
# hit_split_aces) reaches the kernel as its move tables instead (kernel.decisions).
BEHIND_CUT: Final = 0  # cards behind the cutting card after a full shuffle (7)
BURN: Final = 1  # 8.1
PEEK: Final = 2  # 8.5
H17: Final = 3  # 14.3
TAKES_ALL: Final = 4  # 13.7: dealer_natural_takes == "all"
P21: Final = 5  # 9.2
BONUSES: Final = 6  # 11.1
BONUS_ON_DOUBLE: Final = 7  # 11.1
SUPER: Final = 8  # 11.2
SURRENDER: Final = 9  # 0 none, 1 late, 2 void-on-pontoon (9.3, 9.4)
SURR_NUM: Final = 10
SURR_DEN: Final = 11
RESCUE: Final = 12  # 12: a doubled hand is rescued where the chart's rescue table says
SPLIT_BY_VALUE: Final = 13
ODDS: Final = 14  # (num, den) for each category below, from ODDS + 2 * category (9.1 natural)
SB_MIN: Final = ODDS + 2 * 9
SB_SMALL: Final = SB_MIN + 1
SB_THRESHOLD: Final = SB_MIN + 2
SB_LARGE: Final = SB_MIN + 3
SB_OTHERS: Final = SB_MIN + 4
CARDS_PER_DECK: Final = SB_MIN + 5
INSURANCE: Final = CARDS_PER_DECK + 1  # 10: offered against a dealer ace
INS_PAYS_NUM: Final = INSURANCE + 1  # 10: its odds
INS_PAYS_DEN: Final = INSURANCE + 2
INS_MAX_NUM: Final = INSURANCE + 3  # 10: the most insured, a part of the wager
INS_MAX_DEN: Final = INSURANCE + 4
NPARAMS: Final = INS_MAX_DEN + 1

# Payment categories (win odds), the kernel's bonus counters use the same numbers.
EVEN: Final = 0
NATURAL: Final = 1
FIVE: Final = 2
SIX: Final = 3
SEVEN: Final = 4
MIXED: Final = 5
SUITED: Final = 6
SPADES: Final = 7
SUPER_BONUS: Final = 8
CATEGORY_NAMES: Final = (
    "even",
    "pontoon",
    "five_card_21",
    "six_card_21",
    "seven_card_21",
    "three_card_mixed",
    "three_card_suited",
    "three_card_spades",
    "super_bonus",
)

# Knobs that cannot change a simulated round: who may bet what and where (the simulator seats
# one player per box with a legal wager), side wagers and section 16, and the table's conduct
# (an interrupted round's policy).
NOT_SIMULATED: Final = TABLE_POLICY | frozenset(
    {
        "name",
        "boxes",
        "players_per_box",
        "boxes_per_player",
        "table_min",
        "table_max",
        "box_max",
        "rule_book",
        "super_sevens",
        "super_sevens_min",
        "super_sevens_max",
        "super_sevens_one_pays",
        "super_sevens_two_pays",
        "super_sevens_two_suited_pays",
        "super_sevens_three_pays",
        "super_sevens_three_suited_pays",
    }
)
COMPILED: Final = frozenset(
    {
        "deck",
        "decks",
        "penetration",
        "burn_card",
        "dealer_peeks",
        "dealer_hits_soft_17",
        "dealer_natural_takes",
        "natural_pays",
        "player_21_wins",
        "bonuses",
        "five_card_21_pays",
        "six_card_21_pays",
        "seven_card_21_pays",
        "three_card_mixed_pays",
        "three_card_suited_pays",
        "three_card_spades_pays",
        "bonus_on_double",
        "super_bonus",
        "super_bonus_min",
        "super_bonus_small",
        "super_bonus_threshold",
        "super_bonus_large",
        "super_bonus_others",
        "must_draw_below",
        "surrender",
        "surrender_returns",
        "double_on",
        "double_after_split",
        "double_rescue",
        "split_max_hands",
        "split_by",
        "resplit_aces",
        "hit_split_aces",
        "insurance",
        "insurance_pays",
        "insurance_max",
    }
)

_SURRENDER: Final = {"none": 0, "late": 1, "void-on-pontoon": 2}


def card_code(card: object) -> int:
    """A card's number in the kernel: its place in :data:`pontoon.cards.ALL_CARDS` (suit
    major: spades A-K, hearts, diamonds, clubs), so rank = code % 13 + 1, suit = code // 13."""
    return ALL_CARDS.index(card)


def compile_rules(rules: RuleSet) -> IntArray:
    """The rule set as the kernel's int64 array (indices above)."""
    p = np.zeros(NPARAMS, dtype=np.int64)
    n = len(pack(rules.deck, rules.decks))
    # Shoe.shuffle: the cutting card leaves round(n * penetration) cards in front of it.
    p[BEHIND_CUT] = n - round(n * rules.penetration)
    p[BURN] = rules.burn_card
    p[PEEK] = rules.dealer_peeks
    p[H17] = rules.dealer_hits_soft_17
    p[TAKES_ALL] = rules.dealer_natural_takes == "all"
    p[P21] = rules.player_21_wins
    p[BONUSES] = rules.bonuses
    p[BONUS_ON_DOUBLE] = rules.bonus_on_double
    p[SUPER] = rules.super_bonus
    p[SURRENDER] = _SURRENDER[rules.surrender]
    p[SURR_NUM], p[SURR_DEN] = _frac(rules.surrender_returns)
    p[RESCUE] = rules.double_rescue
    p[SPLIT_BY_VALUE] = rules.split_by == "value"
    odds = (
        Fraction(1),
        rules.natural_pays,
        rules.five_card_21_pays,
        rules.six_card_21_pays,
        rules.seven_card_21_pays,
        rules.three_card_mixed_pays,
        rules.three_card_suited_pays,
        rules.three_card_spades_pays,
        Fraction(0),  # the Super Bonus is a fixed amount, not odds
    )
    for k, f in enumerate(odds):
        p[ODDS + 2 * k], p[ODDS + 2 * k + 1] = (f.numerator, f.denominator) if f else (0, 1)
    p[SB_MIN] = rules.super_bonus_min
    p[SB_SMALL] = rules.super_bonus_small
    p[SB_THRESHOLD] = rules.super_bonus_threshold
    p[SB_LARGE] = rules.super_bonus_large
    p[SB_OTHERS] = rules.super_bonus_others
    p[CARDS_PER_DECK] = len(pack(rules.deck, 1))
    p[INSURANCE] = rules.insurance
    p[INS_PAYS_NUM], p[INS_PAYS_DEN] = _frac(rules.insurance_pays)
    p[INS_MAX_NUM], p[INS_MAX_DEN] = _frac(rules.insurance_max)
    return p


def _frac(f: Fraction) -> tuple[int, int]:
    return f.numerator, f.denominator


def template(rules: RuleSet) -> IntArray:
    """The shoe's cards in canonical (sorted) order: every shuffle starts from it."""
    return np.sort(np.array([card_code(c) for c in pack(rules.deck, rules.decks)], np.int64))


# Actions, in the kernel's numbers.
HIT: Final = 0
STAND: Final = 1
DOUBLE: Final = 2
SPLIT: Final = 3
SURRENDER_ACTION: Final = 4
ACTION_NAMES: Final = ("hit", "stand", "double", "split", "surrender")


def preferences() -> IntArray:
    """(8 codes, 3) the actions a chart cell asks for, most wanted first (-1: none), in the
    order of :data:`pontoon.analysis.chart.CODES`. Stand/hit/double/surrender codes follow
    the chart's own :data:`~pontoon.analysis.chart.SCORES`; ``P`` asks to split and ``Rp`` to
    surrender, else split. When nothing asked for is legal the total's row decides."""
    out = np.full((len(CODES), 3), -1, dtype=np.int64)
    order = (STAND, HIT, DOUBLE, SURRENDER_ACTION)  # SCORES' columns
    for k, code in enumerate(CODES):
        if code == "P":
            wants = [SPLIT]
        elif code == "Rp":
            wants = [SURRENDER_ACTION, SPLIT]
        else:
            ranked = sorted(range(4), key=lambda j: -SCORES[code][j])
            wants = [order[j] for j in ranked if SCORES[code][j] > 0]
        out[k, : len(wants)] = wants
    return out


def compile_chart(chart: Chart) -> tuple[IntArray, IntArray, IntArray]:
    """(totals, pairs, rescues): ``totals[soft, total, up - 1]`` and ``pairs[value - 1, up - 1]``
    hold the index of the cell's code in :data:`~pontoon.analysis.chart.CODES`;
    ``rescues[soft, total, up - 1]`` is 1 where a doubled hand still open after its card is
    rescued under ``double_rescue`` (12): the chart's rescue rows, or where a chart without
    them surrenders first (:meth:`~pontoon.analysis.chart.Chart.rescues`)."""
    totals = np.zeros((2, 22, 10), dtype=np.int64)
    for soft in (0, 1):
        for t in range(22):
            row = total_row(max(t, 2), bool(soft))
            for up in range(1, 11):
                totals[soft, t, up - 1] = CODES.index(chart.code(row, up))
    pairs = np.zeros((10, 10), dtype=np.int64)
    for v in range(1, 11):
        for up in range(1, 11):
            pairs[v - 1, up - 1] = CODES.index(chart.code(pair_row(v), up))
    rescues = chart.rescues().astype(np.int64)
    return totals, pairs, rescues
