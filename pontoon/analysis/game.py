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
from collections.abc import Callable, Sequence
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
from pontoon.cards import Card
from pontoon.legality import Facts, allowed
from pontoon.rules import RuleSet
from pontoon.vocab import Action

STAND, HIT, DOUBLE, SURRENDER = range(4)
ACTIONS: Final = (Action.STAND, Action.HIT, Action.DOUBLE, Action.SURRENDER)  # the columns
NEG: Final = -np.inf
UPS: Final = np.arange(1, 11)
Chooser = Callable[[bool, int, np.ndarray, Floats], Floats]


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


@dataclass(frozen=True)
class Context:
    """An unsplit hand (``pair`` None) or a split hand of ``pair`` with ``extra`` other cards
    of that value out of the shoe."""

    pair: int | None = None
    extra: int = 0

    def offset(self) -> tuple[int, ...]:
        """The cards out of the shoe besides the hand's own, by value."""
        v = [0] * 10
        if self.pair is not None:
            v[self.pair - 1] = self.extra
        return tuple(v)


@dataclass
class Rows:
    """What the shoe offers each composition of a context, for each dealer's first card."""

    mask: np.ndarray  # (M,) compositions in play in this context
    nxt: Floats  # (M, 10 up, 10 card): next card's probabilities
    table: Floats  # (M, 10 up, 7): dealer outcomes (dealer.OUTCOMES)
    pn: Floats  # (M, 10 up): dealer pontoon
    f: Floats  # (M, 10 up): 1 - pn in the peek game, else 1 (weight of a settlement now)


@dataclass
class Values:
    """Every composition's action values (``act``, -inf when illegal), its value under the
    policy (``node``), and the value of arriving at it by a hit (``arr1``; ``sarr1``: the
    same for P(dealer pontoon and the hand stood)); ``rescued``: where a doubled hand ending
    on that composition is rescued (12); ``by_suits``: a 6-7/6-8/7-8/7-7 hand plays best for
    its suits (no policy was given)."""

    act: Floats  # (M, 10, 4)
    choice: np.ndarray  # (M, 10)
    node: Floats
    arr1: Floats
    sarr1: Floats
    premium: dict[int, tuple[Floats, Floats]]  # composition -> average (hit, double) premium
    rescued: np.ndarray  # (M, 10) bool
    by_suits: bool = False

    def slim(self) -> Values:
        """These values as playing the hands forwards reads them: an unsplit hand's, all."""
        return self


FILL: Final = {"act": NEG, "rescued": False}  # out of play; every other array holds 0


def _dense(rows: np.ndarray, every: np.ndarray, m: int, name: str) -> np.ndarray:
    """A Values array over all ``m`` compositions from its ``rows`` in play (``every``)."""
    out = np.full((m, *rows.shape[1:]), FILL.get(name, 0), dtype=rows.dtype)
    out[every] = rows
    return out


class _LazyValues(Values):
    """The :class:`Values` of a split hand, kept as the rows of the compositions in play
    (those holding the pair card: a third of them on average). Each field becomes the
    usual array over every composition when first read, and stays; :func:`values_at`
    reads rows without that."""

    def __init__(
        self,
        every: np.ndarray,
        m: int,
        compact: dict[str, np.ndarray],
        premium: dict[int, tuple[Floats, Floats]],
        by_suits: bool,
    ) -> None:
        self._every = every
        self._m = m
        self._compact = compact
        self._inv = np.full(m, -1, dtype=np.int64)
        self._inv[every] = np.arange(len(every))
        self.premium = premium
        self.by_suits = by_suits

    def slim(self) -> _LazyValues:
        """These values as playing the hands forwards reads them (:mod:`pontoon.analysis.reach`,
        :mod:`pontoon.analysis.pairs`): the choices, the rescues (12), and the action values
        only where the suits decide the play; the rest is dropped."""
        keep = {
            "choice": self._compact["choice"].astype(np.int8),
            "rescued": self._compact["rescued"].copy(),
        }
        if self.premium and self.by_suits:
            keep["act"] = self._compact["act"]
        return _LazyValues(self._every, self._m, keep, self.premium, self.by_suits)

    def __getattr__(self, name: str) -> np.ndarray:
        compact = self.__dict__.get("_compact")  # (not there while unpickling)
        if compact is None or name not in compact:
            raise AttributeError(name)
        out = _dense(compact[name], self._every, self._m, name)
        setattr(self, name, out)
        return out


def values_at(v: Values, name: str, idx: np.ndarray) -> np.ndarray:
    """``getattr(v, name)[idx]``, without making a split hand's whole array."""
    if isinstance(v, _LazyValues) and name not in v.__dict__:
        at = v._inv[idx]
        out: np.ndarray = v._compact[name][np.where(at < 0, 0, at)]
        out[at < 0] = FILL.get(name, 0)
        return out
    rows: np.ndarray = getattr(v, name)[idx]
    return rows


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
        self.comps = Compositions.build()
        c = self.comps
        hands = [_cards_of(x) for x in c.comps]
        self.win1 = np.array([self.pay.win_cards(h, doubled=False) for h in hands])
        self.win2 = np.array([self.pay.win_cards(h, doubled=True) for h in hands])
        self.coef1 = self._stand_coef(1, self.win1)
        self.coef2 = self._stand_coef(2, self.win2)
        counts = self.shoe.probs() if infinite else self.shoe.counts
        self._dealer = _dealer_cache(counts, infinite, rules.dealer_hits_soft_17)
        self._rows: OrderedDict[Context, Rows] = OrderedDict()
        self._premiums: dict[Context, dict[int, list[list[tuple[float, float, float]]]]] = {}
        self._configs: dict[tuple[object, ...], list[Config]] = {}
        self._legal: dict[tuple[bool, bool], np.ndarray] = {}
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

    def offer(self, removed: Ints, table: Floats) -> tuple[Floats, Floats, Floats, Floats]:
        """What the shoe offers hands with ``removed`` cards out (rows of counts besides the
        dealer's first card) and the dealer's ``table`` of outcomes (:class:`Rows`): the next
        card's probabilities (k, 10 up, 10 card); P(dealer pontoon) and the weight of a
        settlement now, f (k, 10 up); f once a card is drawn (k, 10 up, 10 card)."""
        rem = np.clip(self.shoe.remaining(removed[:, None, :] + np.eye(10)), 0.0, None)
        size = rem.sum(axis=-1, keepdims=True)
        nxt = np.divide(rem, size, out=np.zeros_like(rem), where=size > 0)
        pn = table[..., NATURAL]
        f = 1.0 - pn if self.peek else np.ones_like(pn)
        f_after = np.broadcast_to(f[:, :, None], nxt.shape).copy()
        if self.peek and not self.infinite:  # the drawn card is not the dealer's second
            for u, nat in ((1, 10), (10, 1)):
                sz = size[:, u - 1]
                left = rem[:, u - 1, nat - 1][:, None] - (np.arange(1, 11) == nat)
                pn_x = np.divide(left, sz - 1, out=np.zeros_like(left), where=sz > 1)
                f_after[:, u - 1] = 1.0 - pn_x
        return nxt, pn, f, f_after

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
        table[idx] = self._dealer.tables(removed)
        nxt, f = np.zeros((m, 10, 10)), np.ones((m, 10))
        nxt[idx], _, f[idx], _ = self.offer(removed, table[idx])
        rows = Rows(mask, nxt, table, table[..., NATURAL], f)
        self._rows[ctx] = rows
        split = [k for k in self._rows if k.pair is not None]
        for k in split[: max(len(split) - ROWS_KEPT, 0)]:  # the unsplit hand's stay
            del self._rows[k]
        return rows

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
        once for each kind of context."""
        key = (split, aces)
        if key not in self._legal:
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
            self._legal[key] = out
        return self._legal[key]

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
            tables = self._dealer.tables(removed)
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
        ... other pair cards out): their hands in play are the rows of one set of arrays, so
        each group of hands is one step for all of them."""
        if chooser is not None and len(ctxs) != 1:
            raise ValueError("a chooser optimises one context")
        r = self.rules
        c = self.comps
        m = len(c)
        ins = [np.flatnonzero(self.in_play(x)) for x in ctxs]
        bounds = np.cumsum([0, *(len(i) for i in ins)])
        comp = np.concatenate(ins)  # each row's composition
        ctx_of = np.repeat(np.arange(len(ctxs)), np.diff(bounds))
        at = np.full((len(ctxs), m), -1, dtype=np.int64)  # each composition's row
        for q, idx in enumerate(ins):
            at[q, idx] = np.arange(bounds[q], bounds[q + 1])
        removed = c.matrix[comp] + np.array([x.offset() for x in ctxs])[ctx_of]
        if not self.infinite:
            self._dealer.fill(removed)  # every table the walk reads, in one go
        legal = np.concatenate([self.legal(x)[idx] for x, idx in zip(ctxs, ins, strict=True)])
        prem = [self.premiums(x) for x in ctxs]
        avg_prem = [
            {
                i: (
                    np.array([sum(p * h for p, h, _ in confs) for confs in per_up]),
                    np.array([sum(p * d for p, _, d in confs) for confs in per_up]),
                )
                for i, per_up in pq.items()
            }
            for pq in prem
        ]
        node_rows = np.zeros(len(comp), dtype=bool)  # rows of pattern nodes
        for q, pq in enumerate(prem):
            rows = at[q, list(pq)]
            node_rows[rows[rows >= 0]] = True  # (the hand calculator's may be out of play)
        k = len(comp)
        act = np.full((k, 10, 4), NEG)
        choice = np.zeros((k, 10), dtype=np.int64)
        node = np.zeros((k, 10))
        arr1, sarr1 = np.zeros((k, 10)), np.zeros((k, 10))
        arr2, sarr2 = np.zeros((k, 10)), np.zeros((k, 10))  # arriving by a double
        rescued = np.zeros((k, 10), dtype=bool)
        loss = self.pay.surrender_loss
        by_group = np.argsort(c.group_of[comp], kind="stable")
        ends = np.searchsorted(c.group_of[comp][by_group], np.arange(len(c.groups()) + 1))
        for g, (_soft, t, _) in enumerate(c.groups()):
            at_g = by_group[ends[g] : ends[g + 1]]  # this group's rows
            if not at_g.size:
                continue
            idx = comp[at_g]
            tab = self._dealer.tables(removed[at_g])
            nxt, pn, f, fa = self.offer(removed[at_g], tab)
            stand1 = np.einsum("kuo,ko->ku", tab, self.coef1[idx])
            stand2 = np.einsum("kuo,ko->ku", tab, self.coef2[idx])
            hit = np.full_like(stand1, NEG)
            dbl = np.full_like(stand1, NEG)
            shit = np.zeros_like(stand1)
            sdbl = np.zeros_like(stand1)
            if t < 21:
                ch = c.child[idx]
                bust = (ch < 0)[:, None, :]
                safe = at[ctx_of[at_g][:, None], np.where(ch < 0, 0, ch)]  # a bust reads any
                a1 = np.where(bust, -fa, arr1[safe].transpose(0, 2, 1))
                a2 = np.where(bust, -2.0 * fa, arr2[safe].transpose(0, 2, 1))
                hit = (nxt * a1).sum(axis=-1)
                dbl = (nxt * a2).sum(axis=-1)
                shit = (nxt * np.where(bust, 0.0, sarr1[safe].transpose(0, 2, 1))).sum(axis=-1)
                sdbl = (nxt * np.where(bust, 0.0, sarr2[safe].transpose(0, 2, 1))).sum(axis=-1)
            if self.peek:
                surr = -loss * (1.0 - pn)
            elif r.surrender == "void-on-pontoon":  # 9.4
                surr = -pn - (1.0 - pn) * loss
            else:
                surr = np.full_like(pn, -loss)
            vals = np.stack([stand1, hit, dbl, surr], axis=-1)
            nodes = np.flatnonzero(node_rows[at_g])
            for j in nodes:
                avg = avg_prem[ctx_of[at_g[j]]][int(idx[j])]
                vals[j, :, HIT] += avg[0]
                vals[j, :, DOUBLE] += avg[1]
            svals = np.stack([pn, shit, sdbl, np.zeros_like(pn)], axis=-1)
            lg = legal[at_g]
            key = vals if scores is None else scores[idx]
            if chooser is not None:
                key = chooser(_soft, t, idx, np.where(lg, vals, NEG))
            pick = np.argmax(np.where(lg, key, NEG), axis=-1)
            v = np.take_along_axis(vals, pick[..., None], axis=-1)[..., 0]
            sv = np.take_along_axis(svals, pick[..., None], axis=-1)[..., 0]
            if scores is None and chooser is None:
                for j in nodes:
                    q, i = ctx_of[at_g[j]], int(idx[j])
                    v[j] = self._best_by_suits(vals[j], lg[j], avg_prem[q][i], prem[q][i])
            act[at_g] = np.where(lg, vals, NEG)
            choice[at_g] = pick
            node[at_g] = v
            if t == 21:
                if r.player_21_wins:  # 9.2: paid at once
                    arr1[at_g] = self.win1[idx][:, None] * f
                    arr2[at_g] = self.win2[idx][:, None] * f
                else:
                    arr1[at_g], sarr1[at_g] = stand1, pn
                    arr2[at_g], sarr2[at_g] = stand2, pn
            else:
                arr1[at_g], sarr1[at_g] = v, sv
                arr2[at_g], sarr2[at_g] = stand2, pn
                if r.double_rescue:  # 12: forfeit the original wager instead of standing
                    forfeit = -f
                    if rescue is None:
                        better = forfeit > stand2
                    else:
                        better = np.broadcast_to(rescue[int(_soft), t][None, :], stand2.shape)
                    arr2[at_g] = np.where(better, forfeit, stand2)
                    sarr2[at_g] = np.where(better, 0.0, pn)
                    rescued[at_g] = better
        by_suits = scores is None and chooser is None
        arrays = dict(
            act=act,
            choice=choice,
            node=node,
            arr1=arr1,
            sarr1=sarr1,
            rescued=rescued,
        )
        out: list[Values] = []
        for q, (x, idx) in enumerate(zip(ctxs, ins, strict=True)):
            part = {name: a[bounds[q] : bounds[q + 1]] for name, a in arrays.items()}
            if x.pair is None:  # the unsplit hand's: read everywhere
                dense = {name: _dense(a, idx, m, name) for name, a in part.items()}
                out.append(Values(**dense, premium=avg_prem[q], by_suits=by_suits))
            else:
                out.append(_LazyValues(idx, m, part, avg_prem[q], by_suits))
        return out

    @staticmethod
    def _best_by_suits(
        vals: Floats,
        legal: np.ndarray,
        avg: tuple[Floats, Floats],
        per_up: list[list[tuple[float, float, float]]],
    ) -> Floats:
        """The value of a pattern node played best for its suits (10 up,)."""
        out = np.zeros(10)
        for u in range(10):
            base = vals[u].copy()
            base[HIT] -= avg[0][u]
            base[DOUBLE] -= avg[1][u]
            total = 0.0
            for p, h, d in per_up[u]:
                cand = base + np.array([0.0, h, d, 0.0])
                total += p * float(np.max(np.where(legal[u], cand, NEG)))
            out[u] = total
        return out
