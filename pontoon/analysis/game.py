"""The player's hand, exactly: expected values of stand, hit, double and surrender for every
composition and every dealer's first card, by backward induction over the compositions.

A :class:`Context` is an unsplit hand or a split hand of a pair (with ``extra`` more cards of
the pair's value out of the shoe: the other pair card and any resplit ones). For each context
:meth:`Game.evaluate` walks the compositions from the highest totals down (one more card always
makes a higher hard total, or a soft one a hard one), so every hand's children are known when
the hand is. A *policy* (``scores``: higher is preferred among the legal actions) plays a
chart or the composition-dependent strategy of an unsplit hand after a split; without one the
best action is taken.

Values are per unit of wager. In the peek game they are *unnormalised*: ``E[payoff ; no dealer
pontoon]`` (what the hand is worth in the rounds where play goes on), which orders the actions
exactly as the conditional expectation does. Next to each value runs a second channel,
``P(dealer pontoon and the hand stood)``, which :mod:`pontoon.analysis.split` needs for 13.7.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from pontoon.analysis.composition import (
    Comp,
    Compositions,
    Floats,
    Ints,
    Removal,
    ShoeModel,
    comp_of,
)
from pontoon.analysis.dealer import BUST, NATURAL, DealerCache
from pontoon.analysis.payoffs import MIXED, Payoffs, card
from pontoon.analysis.suits import PATTERN_RANKS, Config, completing, pattern_configs
from pontoon.analysis.values import (
    DOUBLE,
    HIT,
    NEG,
    STAND,
    SURRENDER,
    Context,
    Values,
    values_at,
)
from pontoon.analysis.walk import CHUNK, Chooser, evaluate_many
from pontoon.cards import Card
from pontoon.legality import Facts, allowed
from pontoon.rules import RuleSet
from pontoon.vocab import Action

ACTIONS: Final = (Action.STAND, Action.HIT, Action.DOUBLE, Action.SURRENDER)  # the columns
UPS: Final = np.arange(1, 11)


ROWS_KEPT: Final = 2  # split-hand contexts whose Rows stay cached (about 7 MB each)
DealerKey = tuple[tuple[float, ...], bool, bool]  # shoe counts, infinite, dealer hits soft 17
_DEALER_CACHE: OrderedDict[DealerKey, DealerCache] = OrderedDict()
_DEALER_LOCK = threading.Lock()
DEALER_CACHE_SHOES: Final = 2  # about 15 MB each for a 6-deck shoe with resplits


def _dealer_cache(counts: Floats, infinite: bool, hits_soft_17: bool) -> DealerCache:
    """The dealer's outcome tables by cards out, shared by every game of one shoe and soft-17
    rule in this process (the tables depend on nothing else): rule variations, a hand
    calculator after its chart, ``strategy`` after ``analyze`` reuse them."""
    key = (tuple(counts.tolist()), infinite, hits_soft_17)
    with _DEALER_LOCK:  # analyses may run in threads (the table server)
        if key in _DEALER_CACHE:
            _DEALER_CACHE.move_to_end(key)
        else:
            _DEALER_CACHE[key] = DealerCache(counts, infinite, hits_soft_17)
            while len(_DEALER_CACHE) > DEALER_CACHE_SHOES:
                _DEALER_CACHE.popitem(last=False)
        return _DEALER_CACHE[key]


_CARDS: dict[tuple[int, str], Card] = {}
# each rule set's and wager's: what each composition wins, hit and doubled, and what standing
# on it wins against each dealer's outcome (Game.win1, win2, coef1, coef2)
_WINS: dict[tuple[RuleSet, int], tuple[Floats, Floats, Floats, Floats]] = {}
WINS_KEPT: Final = 16
# each rule set's: what it allows each kind of hand (Game.legal_table), by (rules, split, aces)
_LEGAL: dict[tuple[RuleSet, bool, bool], np.ndarray] = {}


def _cards_of(c: Comp) -> list[Card]:
    """:func:`pontoon.analysis.payoffs.cards_of`, each card made once."""
    out: list[Card] = []
    for i, n in enumerate(c):
        if n:
            key = (i + 1, MIXED[len(out) % 4])  # one suit for the cards of a value, as there
            if key not in _CARDS:
                _CARDS[key] = card(*key)
            out += [_CARDS[key]] * n
    return out


@dataclass
class Rows:
    """What the shoe offers each composition of a context, for each dealer's first card."""

    mask: np.ndarray  # (M,) compositions in play in this context
    nxt: Floats  # (M, 10 up, 10 card): next card's probabilities
    table: Floats  # (M, 10 up, 7): dealer outcomes (dealer.OUTCOMES)
    pn: Floats  # (M, 10 up): dealer pontoon
    f: Floats  # (M, 10 up): 1 - pn in the peek game, else 1 (weight of a settlement now)


class Game:
    """One rule set, one wager, one shoe: everything the hand-by-hand analysis needs."""

    def __init__(
        self,
        rules: RuleSet,
        wager: int = 500,
        *,
        infinite: bool = False,
        within: Comp | None = None,
        removed: Sequence[Removal] = (),
        shoe: ShoeModel | None = None,
    ) -> None:
        """``within``: analyse only the hands holding these cards (a hand calculator's
        question needs no more); ``removed``: cards out of the shoe before the round;
        ``shoe``: another shoe altogether (a count's expected shoe)."""
        self.within = within
        self.rules = rules
        self.wager = wager
        self.pay = Payoffs(rules, wager)
        self.shoe = shoe if shoe is not None else ShoeModel.of(rules, infinite, removed)
        self.removed = tuple(removed)
        self.suits = self.shoe.pattern_suits()
        self.infinite = infinite
        self.peek = rules.dealer_peeks
        self.comps = Compositions.every()
        if (wins := _WINS.get((rules, wager))) is None:  # (the same for every shoe: kept)
            hands = [_cards_of(x) for x in self.comps.comps]
            win1 = np.array([self.pay.win_cards(h, doubled=False) for h in hands])
            win2 = np.array([self.pay.win_cards(h, doubled=True) for h in hands])
            if len(_WINS) >= WINS_KEPT:
                _WINS.clear()
            wins = _WINS[rules, wager] = (
                win1,
                win2,
                self._stand_coef(1, win1),
                self._stand_coef(2, win2),
            )
        self.win1, self.win2, self.coef1, self.coef2 = wins  # (read only, never written)
        counts = self.shoe.probs() if infinite else self.shoe.counts
        self.dealer = _dealer_cache(counts, infinite, rules.dealer_hits_soft_17)
        self._rows: OrderedDict[Context, Rows] = OrderedDict()
        self._naturals: dict[Context, Floats] = {}
        self._premiums: dict[Context, dict[int, list[list[tuple[float, float, float]]]]] = {}
        self._configs: dict[tuple[object, ...], list[Config]] = {}
        self.endings: object = None  # the distribution's table of endings (endings.endings_of)

    # ------------------------------------------------------------------ the dealer
    def _stand_coef(self, amount: int, win: Floats) -> Floats:
        """Per composition, what standing wins for each dealer outcome (17-21, bust, pontoon)."""
        c = self.comps
        coef = np.zeros((len(c), 7))
        for o in range(5):
            t = 17 + o
            coef[:, o] = np.where(c.total > t, win, np.where(c.total == t, 0.0, -amount))
        coef[:, BUST] = win
        if not self.peek:
            coef[:, NATURAL] = -self.pay.natural_loss(amount == 2)
        return coef

    def in_play(self, ctx: Context) -> np.ndarray:
        """(M,) the compositions that are hands of ``ctx``: two cards or more, holding the
        split pair's card, within the hand calculator's cards."""
        c = self.comps
        mask = c.ncards >= 2
        if self.within is not None:
            mask &= (c.matrix >= np.array(self.within)).all(axis=1)
        if ctx.pair is not None:
            mask &= c.containing(ctx.pair)
        return mask

    def offer(self, removed: Ints, table: Floats) -> tuple[Floats, Floats, Floats]:
        """What the shoe offers hands with ``removed`` cards out (rows of counts besides the
        dealer's first card) and the dealer's ``table`` of outcomes (:class:`Rows`): the next
        card's probabilities (k, 10 up, 10 card); P(dealer pontoon) and the weight of a
        settlement now, f (k, 10 up)."""
        left = self.shoe.remaining(removed.astype(np.float64))  # (k, 10)
        nxt = np.repeat(left[:, None, :], 10, axis=1)  # (k, 10 up, 10 card)
        if not self.infinite:
            nxt -= np.eye(10)  # the dealer's first card is out
        np.clip(nxt, 0.0, None, out=nxt)
        size = nxt.sum(axis=-1, keepdims=True)
        if size.min() > 0:
            nxt /= size
        else:  # (a shoe too short to deal from: never in a real one)
            nxt = np.divide(nxt, size, out=np.zeros_like(nxt), where=size > 0)
        pn = table[..., NATURAL]
        f = 1.0 - pn if self.peek else np.ones_like(pn)
        return nxt, pn, f

    def naturals_after_draw(self, removed: Ints) -> list[tuple[int, Floats]]:
        """In the peek game with a finite shoe, a first ace's or ten's chance of a pontoon
        once the hand has drawn each card (the drawn card is not the dealer's second): (first
        card index, (k, 10 card) P(pontoon)) for those two; none otherwise, where the chance
        stays :meth:`offer`'s."""
        if not self.peek or self.infinite:
            return []
        out = []
        for u, nat in ((1, 10), (10, 1)):
            rem = np.clip(self.shoe.remaining(removed + np.eye(10)[u - 1]), 0.0, None)
            sz = rem.sum(axis=-1, keepdims=True)
            left = rem[:, nat - 1][:, None] - (np.arange(1, 11) == nat)
            out.append((u - 1, np.divide(left, sz - 1, out=np.zeros_like(left), where=sz > 1)))
        return out

    def shoe_after(self, removed: Floats) -> Floats:
        """(…, 10 up, 10 card) counts (or probabilities) left after ``removed`` (…, 10) and
        each first card."""
        removed = np.asarray(removed, dtype=np.float64)
        out = removed[..., None, :] + np.eye(10)
        return self.shoe.remaining(out)

    def rows(self, ctx: Context) -> Rows:
        """The shoe's offer to each composition of ``ctx``, over all of them (cached)."""
        if ctx in self._rows:
            self._rows.move_to_end(ctx)
            return self._rows[ctx]
        c = self.comps
        m = len(c)
        mask = self.in_play(ctx)
        idx = np.flatnonzero(mask)
        removed = c.matrix[idx] + np.array(ctx.offset())
        table = np.zeros((m, 10, 7))
        table[idx] = self.dealer.tables(removed)
        nxt, f = np.zeros((m, 10, 10)), np.ones((m, 10))
        for lo in range(0, len(idx), CHUNK):  # (a chunk at a time: fewer temporaries)
            at = idx[lo : lo + CHUNK]
            nxt[at], _, f[at] = self.offer(removed[lo : lo + CHUNK], table[at])
        rows = Rows(mask, nxt, table, table[..., NATURAL], f)
        self._rows[ctx] = rows
        split = [k for k in self._rows if k.pair is not None]
        for k in split[: max(len(split) - ROWS_KEPT, 0)]:  # the unsplit hand's stay
            del self._rows[k]
        return rows

    def naturals(self, ctx: Context) -> Floats:
        """(M, 10 up) P(dealer pontoon) for each composition of ``ctx`` (0 out of play):
        :attr:`Rows.pn` without the rest of :meth:`rows`."""
        if ctx in self._rows:
            return self._rows[ctx].pn
        if ctx not in self._naturals:
            idx = np.flatnonzero(self.in_play(ctx))
            pn = np.zeros((len(self.comps), 10))
            pn[idx] = self.dealer.tables(self.comps.matrix[idx] + np.array(ctx.offset()))[
                ..., NATURAL
            ]
            self._naturals[ctx] = pn
        return self._naturals[ctx]

    # ------------------------------------------------------------------ legality
    def legal(self, ctx: Context) -> np.ndarray:
        """(M, 10 up, 4) which actions the rules allow (14.1, 12, 9.3) in ``ctx``, as
        :func:`pontoon.legality.allowed` says: looked up by the hand's cards (two, or more)
        and total in :meth:`legal_table`. A composition of one card is not a hand yet (8.2):
        it may do nothing."""
        table = self.legal_table(ctx.pair is not None, ctx.pair == 1)
        c = self.comps
        out: np.ndarray = table[np.minimum(c.ncards, 3) - 1, c.total]
        return out

    def legal_table(self, split: bool, aces: bool) -> np.ndarray:
        """(3 cards: one, two, three or more; 22 total; 10 up; 4) :func:`~pontoon.legality.allowed`
        for an unsplit hand, or a split hand (of aces): every fact of a hand the analysis
        plays (never doubled: a doubled hand has stood; an unsplit hand of two cards has made
        no decision, one of more has hit; a split hand shares its box with another). Built
        once for each rule set and kind of context, and shared by their games."""
        key = (self.rules, split, aces)
        if key not in _LEGAL:
            out = np.zeros((3, 22, 10, 4), dtype=bool)
            for n in (2, 3):
                for t in range(2, 22):
                    for u in UPS:
                        f = Facts(
                            cards=n,
                            total=t,
                            from_split=split,
                            split_aces=aces,
                            hands=2 if split else 1,
                            acted=n > 2,
                            up=int(u),
                        )
                        for a, action in enumerate(ACTIONS):
                            out[n - 1, t, u - 1, a] = allowed(action, f, self.rules)
            if len(_LEGAL) >= WINS_KEPT * 2:
                _LEGAL.clear()
            out.flags.writeable = False
            _LEGAL[key] = out
        return _LEGAL[key]

    # ------------------------------------------------------------------ suits
    def configs(self, ctx: Context, up: int, hand: tuple[int, int]) -> list[Config]:
        """Suit configurations of a two-card hand that can still make 6-7-8 or 7-7-7."""
        key = (ctx, up if up in PATTERN_RANKS else 0, hand)
        if key not in self._configs:
            self._configs[key] = pattern_configs(
                self.pay,
                suits=self.suits,
                infinite=self.infinite,
                up=up,
                hand=hand,
                split=ctx.pair is not None,
                extra_pairs=max(ctx.extra - 1, 0),
            )
        return self._configs[key]

    def pattern_nodes(self, ctx: Context) -> list[tuple[int, tuple[int, int], int]]:
        """(composition, hand, completing rank) of the two-card hands of ``ctx`` whose third
        card can make a 6-7-8 or 7-7-7 (none when the rules pay neither by suits)."""
        if not (self.rules.bonuses or self.rules.super_bonus):
            return []
        out = []
        for a in PATTERN_RANKS:
            for b in PATTERN_RANKS:
                if a > b and ctx.pair is None:
                    continue
                if ctx.pair is not None and a != ctx.pair:
                    continue
                third = completing(a, b)
                if third is not None:
                    out.append((self.comps.index[comp_of([a, b])], (a, b), third))
        return out

    def win21_weight(self, table: Floats) -> Floats:
        """(10 up,) the weight of a 21's odds for a hand whose dealer's outcomes are ``table``
        (10 up, 7): paid at once (9.2; in the peek game only when play goes on), or when the
        dealer ends below 21 or busts."""
        if self.rules.player_21_wins:
            pn = table[:, NATURAL]
            f: Floats = 1.0 - pn if self.peek else np.ones_like(pn)
            return f
        w: Floats = table[:, :4].sum(axis=1) + table[:, BUST]
        return w

    def premiums(self, ctx: Context) -> dict[int, list[list[tuple[float, float, float]]]]:
        """For each pattern node of ``ctx`` and first card: [(prob, hit premium, double
        premium)] over the suit configurations (cached)."""
        if ctx in self._premiums:
            return self._premiums[ctx]
        out: dict[int, list[list[tuple[float, float, float]]]] = {}
        offset = np.array(ctx.offset())
        for i, hand, third in self.pattern_nodes(ctx):
            child = self.comps.child[i, third - 1]
            removed = self.comps.matrix[[i, child]] + offset
            tables = self.dealer.tables(removed)
            nxt = self.offer(removed[:1], tables[:1])[0][0]
            w21 = self.win21_weight(tables[1])
            base1, base2 = self.win1[child], self.win2[child]
            per_up = []
            for u in UPS:
                p3 = nxt[u - 1, third - 1]
                w = w21[u - 1]
                per_up.append(
                    [
                        (
                            k.prob,
                            p3 * (k.super_pay + (k.odds - base1) * w),
                            p3 * (k.odds_doubled - base2) * w,
                        )
                        for k in self.configs(ctx, int(u), hand)
                    ]
                )
            out[i] = per_up
        self._premiums[ctx] = out
        return out

    # ------------------------------------------------------------------ backward induction
    def evaluate(
        self,
        ctx: Context,
        scores: Floats | None = None,
        chooser: Chooser | None = None,
        rescue: np.ndarray | None = None,
    ) -> Values:
        """Every composition of ``ctx`` played by ``scores`` (or optimally). ``chooser``, if
        given, sets the scores of each group of hands (same soft/hard total) from their
        action values as the walk reaches it: how a total-dependent chart is optimised.
        ``rescue`` (2 soft, 22 total, 10 up; :meth:`Chart.rescues`): under ``double_rescue``
        where a doubled hand is rescued; None: wherever that is worth more than standing."""
        return self.evaluate_many([ctx], scores, chooser, rescue)[0]

    def evaluate_many(
        self,
        ctxs: list[Context],
        scores: Floats | None = None,
        chooser: Chooser | None = None,
        rescue: np.ndarray | None = None,
    ) -> list[Values]:
        """:meth:`evaluate` for several contexts in one walk (a pair's split hands with 1, 2,
        ... other pair cards out): :func:`pontoon.analysis.walk.evaluate_many`."""
        return evaluate_many(self, ctxs, scores, chooser, rescue)


__all__ = [
    "ACTIONS",
    "DOUBLE",
    "HIT",
    "NEG",
    "STAND",
    "SURRENDER",
    "Chooser",
    "Context",
    "Game",
    "Rows",
    "Values",
    "values_at",
]
