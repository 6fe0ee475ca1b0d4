"""What a table of the learning environment is, in the flat form its compiled steps read.

Nothing here is a rule written again: the rule set reaches the steps as
:func:`pontoon.sim.compiled.compile_rules`' array (as it reaches the simulator), what a hand
may do as a table of :func:`pontoon.legality.refusal` over every fact a hand can show, the
odds of a 21 as a table of :func:`pontoon.settlement.win_odds`, and the table's limits are
checked by :meth:`pontoon.round.Round.check_wager`.

>>> spec = TableSpec.build(load_rules("nz-pontoon"))
>>> [a.name for a in spec.actions]
['hit', 'stand', 'double', 'split', 'surrender', 'rescue', 'insure', 'no-insurance', 'bet']
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, NamedTuple

import numpy as np

from pontoon.cards import Card
from pontoon.env import layout as L
from pontoon.env.layout import MAXC
from pontoon.errors import InputError
from pontoon.legality import Facts, refusal
from pontoon.round import Round
from pontoon.rules import RuleSet, load_rules, parse_set_options
from pontoon.settlement import win_odds
from pontoon.shoe import ScriptedCards
from pontoon.sim import compiled as C
from pontoon.vocab import HAND_ACTIONS, Action

IntArray = C.IntArray
BET_WORD: Final = "bet"


class EnvAction(NamedTuple):
    """One action of the environment: a move of the game (``name`` its word) or a bet of
    ``amount`` cents; ``fraction`` the part of the wager a double adds."""

    name: str
    fraction: Fraction | None = None
    amount: int | None = None


def rules_of(rules: str | RuleSet, set: Mapping[str, Any] | Sequence[str] | None) -> RuleSet:
    """``rules=`` (a preset name, a TOML file or a :class:`RuleSet`) and ``set=`` (knob
    values, as a mapping or ``"knob=value"`` items, as ``--set`` takes them)."""
    changes: Mapping[str, Any]
    if set is None:
        changes = {}
    elif isinstance(set, Mapping):
        changes = dict(set)
    else:
        changes = parse_set_options(list(set))
    if isinstance(rules, RuleSet):
        return rules.replace(**changes) if changes else rules
    return load_rules(rules, changes)


@functools.lru_cache(maxsize=16)
def hand_masks(rules: RuleSet) -> IntArray:
    """``[ctx, pair, total, up - 1]``: the bits (in :data:`HAND_ACTIONS` order) of what
    :func:`pontoon.legality.refusal` allows a hand, ``ctx`` = ((((two cards * 2 + from a
    split) * 2 + split aces) * 2 + doubled) * 2 + acted) * hands + hands on the box - 1."""
    maxh = rules.split_max_hands
    out = np.zeros((32 * maxh, 2, 22, 10), np.int64)
    for ctx in range(32 * maxh):
        hands, rest = ctx % maxh + 1, ctx // maxh
        acted, doubled = rest & 1, (rest >> 1) & 1
        split_aces, from_split, two = (rest >> 2) & 1, (rest >> 3) & 1, (rest >> 4) & 1
        for pair in (0, 1):
            for t in range(22):
                for up in range(1, 11):
                    f = Facts(
                        2 if two else 3,
                        t,
                        bool(pair),
                        bool(from_split),
                        bool(split_aces),
                        bool(doubled),
                        hands,
                        bool(acted),
                        up,
                    )
                    bits = 0
                    for k, action in enumerate(HAND_ACTIONS):
                        if refusal(action, f, rules) is None:
                            bits |= 1 << k
                    out[ctx, pair, t, up - 1] = bits
    return out


def pack_bytes(values: IntArray) -> IntArray:
    """Values 0-255 packed eight to an int64 (value ``k`` in byte ``k % 8`` of word
    ``k // 8``): the legality table stays small enough for the cache.

    >>> pack_bytes(np.array([1, 2, 255, 0, 0, 0, 0, 0, 7])).tolist()
    [16712193, 7]
    """
    padded = np.zeros(-(-len(values) // 8) * 8, np.uint8)
    padded[: len(values)] = values
    return padded.view("<u8").astype(np.int64)


def _card(value: int, suit: str = "S") -> Card:
    return Card.parse(("A" if value == 1 else "K" if value == 10 else str(value)) + suit)


@functools.lru_cache(maxsize=16)
def odds_tables(rules: RuleSet) -> tuple[IntArray, IntArray]:
    """The odds (numerator, denominator) of a winning 21 that is no pontoon, from
    :func:`pontoon.settlement.win_odds`: ``three[doubled, r0, r1, r2, suits]`` for three
    cards of ranks ``r0 <= r1 <= r2`` (1-13) whose suits are mixed (0), one suit (1) or all
    spades (2); ``more[doubled, n]`` for ``n`` cards otherwise (an even-money win when the
    hand is not 21)."""
    three = np.zeros((2, 14, 14, 14, 3, 2), np.int64)
    three[..., 1] = 1
    three[..., 0] = 1
    names = "A23456789TJQK"
    for doubled in (0, 1):
        for r0 in range(1, 14):
            for r1 in range(r0, 14):
                for r2 in range(r1, 14):
                    for k, suits in enumerate(("SHD", "HHH", "SSS")):
                        cards = [
                            Card.parse(names[r - 1] + s)
                            for r, s in zip((r0, r1, r2), suits, strict=True)
                        ]
                        odds = win_odds(rules, cards, natural=False, doubled=bool(doubled))
                        three[doubled, r0, r1, r2, k] = (odds.numerator, odds.denominator)
    more = np.ones((2, MAXC + 1, 2), np.int64)
    for doubled in (0, 1):
        for n in range(2, 22):  # (more than 21 cards cannot make 21)
            if n == 3:
                continue
            values = [1] * n  # n cards of hard total 21 (no soft total: 21 exactly)
            left = 21 - n
            for j in range(n):
                add = min(9, left)
                values[j] += add
                left -= add
            if left:  # two cards cannot make a hard 21: a soft one (A + ten)
                values = [1, 10]
            cards = [_card(v) for v in values]
            odds = win_odds(rules, cards, natural=False, doubled=bool(doubled))
            more[doubled, n] = (odds.numerator, odds.denominator)
    return three, more


@dataclass(frozen=True)
class TableSpec:
    """A table's rules, boxes, actions and bets, compiled into one parameter array."""

    rules: RuleSet
    boxes: int
    wager: int  # cents: the unit of the reward
    bets: tuple[int, ...]  # the wagers a round may start with, cents
    doubles: tuple[Fraction, ...]  # the parts of the wager a double may add
    actions: tuple[EnvAction, ...]
    params: IntArray
    logmax: int

    @classmethod
    def build(
        cls,
        rules: RuleSet,
        *,
        boxes: int = 1,
        wager: int | None = None,
        bets: Sequence[int] | None = None,
        doubles: Sequence[Fraction | str | float] = (Fraction(1),),
        log: bool = True,
    ) -> TableSpec:
        if not 1 <= boxes <= rules.boxes:
            raise InputError(f"boxes must be 1 to {rules.boxes} (15.1), not {boxes}")
        unit = wager if wager is not None else (bets[0] if bets else max(rules.table_min, 100))
        amounts = tuple(int(b) for b in bets) if bets else (unit,)
        for amount in sorted({unit, *amounts}):  # 15.1-15.4: as the round checks wagers
            probe = Round(rules, ScriptedCards([]))
            for b in range(1, boxes + 1):
                probe.place_wager(b, "player", amount)
        fracs = tuple(Fraction(d) for d in doubles)
        if not fracs or fracs[0] != 1 or any(not 0 < f <= 1 for f in fracs):
            raise InputError(
                "doubles: the parts of the wager a double adds, 1 first, each in (0, 1]"
            )
        actions = (
            *(
                EnvAction(a.value, Fraction(1) if a is Action.DOUBLE else None)
                for a in HAND_ACTIONS
            ),
            EnvAction(Action.INSURE.value),
            EnvAction(Action.NO_INSURANCE.value),
            *(EnvAction(Action.DOUBLE.value, f) for f in fracs[1:]),
            *(EnvAction(BET_WORD, amount=a) for a in amounts),
        )
        if len(actions) > 62:
            raise InputError("at most 62 actions: fewer bets or double fractions")
        maxh = rules.split_max_hands
        ntmpl = len(C.template(rules))
        logmax = (boxes * maxh + 1) * MAXC + 8 if log else 0
        three, more = odds_tables(rules)
        mask = hand_masks(rules)
        head = np.zeros(L.NPP_HEAD, np.int64)
        head[: L.E0] = C.compile_rules(rules)
        head[L.E_BOXES], head[L.E_MAXH], head[L.E_NTMPL] = boxes, maxh, ntmpl
        head[L.E_INS] = rules.insurance
        head[L.E_INS_MAX_NUM] = rules.insurance_max.numerator
        head[L.E_INS_MAX_DEN] = rules.insurance_max.denominator
        head[L.E_INS_PAYS_NUM] = rules.insurance_pays.numerator
        head[L.E_INS_PAYS_DEN] = rules.insurance_pays.denominator
        head[L.E_HSA] = rules.hit_split_aces
        head[L.E_NA], head[L.E_NDBL], head[L.E_NBETS] = len(actions), len(fracs), len(amounts)
        head[L.E_UNIT], head[L.E_LOGMAX] = unit, logmax
        *rows, head[L.E_L] = L.offsets(boxes, maxh, ntmpl, logmax)
        head[L.E_OHC : L.E_OSH + 1] = rows
        parts = [
            C.template(rules),
            np.array([x for f in fracs for x in (f.numerator, f.denominator)], np.int64),
            np.array(amounts, np.int64),
            pack_bytes(mask.ravel()),
            three.ravel(),
            more.ravel(),
        ]
        starts = np.cumsum([L.NPP_HEAD, *(len(p) for p in parts[:-1])])
        head[L.E_OTMPL : L.E_ODDSN + 1] = starts
        params = np.concatenate([head, *parts]).astype(np.int64)
        return cls(rules, boxes, unit, amounts, fracs, actions, params, logmax)

    @property
    def first_bet(self) -> int:
        """The number of the first bet action."""
        return len(self.actions) - len(self.bets)


__all__ = ["EnvAction", "TableSpec", "hand_masks", "odds_tables", "pack_bytes", "rules_of"]
