"""One truth of what a hand may do: :func:`pontoon.legality.allowed` (9.3, 12, 13, 14.1).

The analysis (:meth:`Game.legal`) and the compiled kernel's move tables
(:func:`pontoon.sim.kernel.decisions`) are derived from it. Here every fact each of them can
meet is put to ``legality.allowed`` itself, one hand at a time, under every preset and the
variations of each knob legality reads, and their answers must be its answers:

- the analysis, at every composition of two cards or more (its real number of cards and total)
  and every dealer's first card, in every context: an unsplit hand (two cards: no decision yet;
  more: it has hit), a split hand of any pair (whatever the number of hands on the box and
  whether the hand acted before its second card), split aces;
- the kernel, in every cell of its move tables: two cards or more, every total, from a split,
  split aces, acted, 1-4 hands, every first card, a pair or not, for charts asking every
  code of every cell.

Neither plays a doubled hand through these tables (it has stood, or is rescued where the
chart's rescue table says) nor a hand that refused an exposed card (16.4).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from pontoon.analysis.chart import CODES, Chart
from pontoon.analysis.game import Context, Game
from pontoon.legality import Facts, allowed
from pontoon.rules import PRESETS, RuleSet, load_rules
from pontoon.sim import compiled as C
from pontoon.sim import kernel as K
from pontoon.vocab import Action

# --set variations of every knob legality reads (other values of a preset's own)
VARIATIONS: list[dict[str, str]] = [
    {},
    {"double_on": "any-two"},
    {"double_on": "any-number"},
    {"double_on": "9-11"},
    {"double_on": "10-11"},
    {"surrender": "none"},
    {"surrender": "late"},
    {"surrender": "void-on-pontoon"},
    {"double_after_split": "false"},
    {"hit_split_aces": "true", "resplit_aces": "false"},
    {"hit_split_aces": "false", "resplit_aces": "true"},
    {"split_max_hands": "1"},
    {"split_max_hands": "2"},
    {"must_draw_below": "12"},
    {"must_draw_below": "17"},
]
_distinct: dict[RuleSet, tuple[str, dict[str, str]]] = {}
for _p in PRESETS:
    for _v in VARIATIONS:
        _distinct.setdefault(load_rules(_p, _v), (_p, _v))
RULE_SETS = list(_distinct.values())  # every preset, and each variation that changes it
IDS = [p + "".join(f"-{k}={x}" for k, x in v.items()) for p, v in RULE_SETS]

ANALYSIS_ACTIONS = (Action.STAND, Action.HIT, Action.DOUBLE, Action.SURRENDER)  # its columns
KERNEL_ACTIONS = sorted(  # by the kernel's action numbers
    [
        (C.HIT, Action.HIT),
        (C.STAND, Action.STAND),
        (C.DOUBLE, Action.DOUBLE),
        (C.SPLIT, Action.SPLIT),
        (C.SURRENDER_ACTION, Action.SURRENDER),
    ]
)
WANTS = [[a for a in row if a >= 0] for row in C.preferences().tolist()]  # by chart code


class Legality:
    """``legality.allowed`` under one rule set for the ``actions`` (in order), each hand's
    facts asked once."""

    def __init__(self, rules: RuleSet, actions: tuple[Action, ...]) -> None:
        self.rules = rules
        self.actions = actions
        self.answers: dict[Facts, tuple[bool, ...]] = {}

    def __call__(self, f: Facts) -> tuple[bool, ...]:
        if f not in self.answers:
            self.answers[f] = tuple(allowed(a, f, self.rules) for a in self.actions)
        return self.answers[f]


@pytest.mark.parametrize(("preset", "knobs"), RULE_SETS, ids=IDS)
def test_9_3_12_14_1_the_analysis_allows_what_legality_allows(
    preset: str, knobs: dict[str, str]
) -> None:
    """9.3 (surrender on the first two cards of an unsplit hand), 12 (which hands double,
    after a split or not), 14.1(a) no draw on 21, 14.1(c) split aces, 14.1(d) must draw:
    Game.legal is legality.allowed at every composition, first card and context (for a
    split hand whatever the number of hands on the box and whether it acted before its
    second card: the analysis knows neither)."""
    rules = load_rules(preset, knobs)
    game = Game(rules)
    c = game.comps
    ask = Legality(rules, ANALYSIS_ACTIONS)
    pairs = (c.ncards == 2) & (c.matrix == 2).any(axis=1)
    groups: dict[tuple[int, int, bool], list[int]] = {}
    for i in np.flatnonzero(c.ncards >= 2).tolist():
        groups.setdefault((int(c.ncards[i]), int(c.total[i]), bool(pairs[i])), []).append(i)
    wanted: dict[tuple[bool, bool, int, int, bool], list[list[bool]]] = {}

    def want(split: bool, aces: bool, n: int, t: int, pair: bool) -> list[list[bool]]:
        """(10 up, 4): what legality allows such a hand, the same for every fact the
        analysis does not know."""
        key = (split, aces, n, t, pair)
        if key not in wanted:
            hands = range(2, max(rules.split_max_hands, 2) + 1) if split else range(1, 2)
            rows = []
            for up in range(1, 11):
                answers = {
                    ask(Facts(n, t, pair, split, aces, hands=h, acted=acted, up=up))
                    for h in hands
                    for acted in ((False, True) if split else (n > 2,))
                }
                assert len(answers) == 1, (key, up, answers)
                rows.append(list(answers.pop()))
            wanted[key] = rows
        return wanted[key]

    for pair in (None, *range(1, 11)):
        legal = game.legal(Context(pair=pair, extra=0 if pair is None else 1))
        assert legal.shape == (len(c), 10, 4) and legal.dtype == bool
        assert not legal[c.ncards < 2].any()  # one card is not a hand yet (8.2)
        for (n, t, is_pair), idx in groups.items():
            w = want(pair is not None, pair == 1, n, t, is_pair)
            assert (legal[idx] == np.array(w)).all(), (pair, n, t, is_pair)


@pytest.mark.parametrize(("preset", "knobs"), RULE_SETS, ids=IDS)
def test_9_3_12_13_14_1_the_kernels_moves_are_the_first_preference_legality_allows(
    preset: str, knobs: dict[str, str]
) -> None:
    """9.3 surrender, 12 double, 13 split (pairs, the number of hands, split aces again),
    14.1 draw: each cell of the kernel's move tables holds the first action its chart cell
    asks for that legality.allowed allows — the pair's row first when the two cards are a
    pair, then the total's row — else hit if allowed, else stand; in every context the
    kernel's play loop can look up (its ctx computed as the loop computes it), for charts
    that ask every code in every cell."""
    rules = load_rules(preset, knobs)
    ask = Legality(rules, tuple(a for _, a in KERNEL_ACTIONS))
    ncodes = len(CODES)

    @functools.cache
    def by_codes(ok: tuple[bool, ...], pair: bool) -> list[int]:
        """For each chart code, the first action it asks for that ``ok`` allows; else (for a
        pair: -1, the total's row decides) hit if allowed, else stand."""
        out = []
        for wants in WANTS:
            x = next((x for x in wants if ok[x]), -1)
            if x < 0 and not pair:
                x = C.HIT if ok[C.HIT] else C.STAND
            out.append(x)
        return out

    # the move by context, total, first card and the code of the total's row; for a pair (by
    # its value): the first allowed of the pair's row (-1: none), and that of its total's row
    by_code = np.full((64, 22, 10, ncodes), -9)
    pair_by_code = np.full((64, 10, 10, ncodes), -9)
    pair_total_by_code = np.full((64, 10, 10, ncodes), -9)
    for two in (0, 1):
        for from_split in (0, 1):
            for aces in (0, 1):
                for acted in (0, 1):
                    for hands in range(1, 5):
                        ctx = (((two * 2 + from_split) * 2 + aces) * 2 + acted) * 4 + hands - 1
                        hand = Facts(
                            cards=2 if two else 3,
                            total=0,
                            from_split=bool(from_split),
                            split_aces=bool(aces),
                            hands=hands,
                            acted=bool(acted),
                        )
                        for up in range(1, 11):
                            for t in range(22):
                                ok = ask(hand._replace(total=t, up=up))
                                by_code[ctx, t, up - 1] = by_codes(ok, False)
                            for v in range(1, 11):
                                ok = ask(
                                    hand._replace(total=12 if v == 1 else 2 * v, pair=True, up=up)
                                )
                                pair_by_code[ctx, v - 1, up - 1] = by_codes(ok, True)
                                pair_total_by_code[ctx, v - 1, up - 1] = by_codes(ok, False)
    rng = np.random.default_rng(1996)
    with open(f"tests/data/sim/{preset}.csv", encoding="utf-8") as fh:
        sim_totals, sim_pairs, _ = C.compile_chart(Chart.from_csv(fh.read(), preset))
    charts = [(sim_totals, sim_pairs)]
    charts += [(np.full((2, 22, 10), k), np.full((10, 10), (k + 3) % ncodes)) for k in range(8)]
    charts += [
        (rng.integers(0, ncodes, (2, 22, 10)), rng.integers(0, ncodes, (10, 10))) for _ in range(4)
    ]
    cx = np.arange(64)[:, None, None, None]
    soft = np.arange(2)[None, :, None, None]
    t = np.arange(22)[None, None, :, None]
    u = np.arange(10)
    v = np.arange(1, 11)[None, :, None]
    pair_soft = (v == 1).astype(int)
    pair_t = np.where(v == 1, 12, 2 * v)
    for totals, pairs in charts:
        moves, pair_moves = K.decisions(rules, totals, pairs)
        assert moves.shape == (64, 2, 22, 10) and pair_moves.shape == (64, 10, 10)  # one chart
        want = by_code[cx, t, u, totals[soft, t, u]]
        assert (moves == want).all(), np.argwhere(moves != want)[:5]
        first_row = pair_by_code[cx[..., 0], v - 1, u, pairs[v - 1, u]]
        then = pair_total_by_code[cx[..., 0], v - 1, u, totals[pair_soft, pair_t, u]]
        want = np.where(first_row >= 0, first_row, then)
        assert (pair_moves == want).all(), np.argwhere(pair_moves != want)[:5]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("rescue", [False, True])
def test_12_14_1_b_a_doubled_hand_stands_or_is_rescued_as_legality_allows(
    preset: str, rescue: bool
) -> None:
    """14.1(b), 12: the move tables are never asked about a doubled hand: after its one card
    it may only stand, or be rescued where the rules allow a rescue — which the kernel does
    (by the chart's rescue table) when its rescue switch, read from the rule set, is on."""
    rules = load_rules(preset, {"double_rescue": str(rescue).lower()})
    P = C.compile_rules(rules)
    spec = dict(zip(K.SWITCHES, K.specialisation(P, [0] * K.NOPTS, 1), strict=True))
    for cards in (3, 4):
        for t in range(4, 22):
            for from_split, aces in ((False, False), (True, False), (True, True)):
                f = Facts(cards, t, from_split=from_split, split_aces=aces, doubled=True, up=5)
                assert allowed(Action.STAND, f, rules)
                assert not any(
                    allowed(a, f, rules) for a in (Action.HIT, Action.DOUBLE, Action.SPLIT)
                )
                assert allowed(Action.RESCUE, f, rules) == bool(spec["rescue"]) == rescue
