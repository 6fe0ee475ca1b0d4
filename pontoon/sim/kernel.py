"""The compiled kernel: rounds of the game played from a shuffled shoe, exactly as
:class:`pontoon.round.Round` plays them with one seated player on each box who follows a chart
and insures, against a dealer's ace, from the true count the job names (10; never unless
asked).

The rules come in as the array of :func:`pontoon.sim.compiled.compile_rules`; the chart as
the move tables that :func:`decisions` builds once per job from the tables of
:func:`~pontoon.sim.compiled.compile_chart` and what :func:`pontoon.legality.allowed` says a
hand may do (9.3, 12, 13, 14.1: the kernel asks no such question in play). Money is whole
cents, odds are fractions and payments are rounded down (``amount * num // den``), as in
:mod:`pontoon.settlement`. The shoe is :class:`pontoon.shoe.Shoe`'s: shuffle, cutting card,
burn card (8.1), reshuffle before a round after the cutting card came out (8.7) or when it is
next (8.8), and a reshuffle of the discard rack when the shoe runs out mid-round (16.7).
Shuffles are Fisher-Yates from the front (:mod:`pontoon.sim.rng`): the places in front of the
cutting card at once, the rest :data:`AHEAD` at a time when the deal reaches them.

Everything is in this one module so that numba caches it as one unit (``cache=True``). The
indices of :mod:`pontoon.sim.compiled` are frozen into the cached machine code, and numba
checks only this file for changes: whoever renumbers them must change this file too (its
cache is then compiled again).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from pontoon.legality import Facts, allowed
from pontoon.rules import RuleSet
from pontoon.sim import compiled as C
from pontoon.vocab import Action

# The constants compiled into this file's cached machine code (pontoon.sim.compiled's and
# pontoon.env.layout's), by digest: numba checks only this file for changes, so a changed
# layout must change this line too (tests/test_sim_compiled.py says to what).
COMPILED_LAYOUT = "15889cd4358da6d6"

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Int8Array = npt.NDArray[np.int8]

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
MIX1 = U64(0xBF58476D1CE4E5B9)
MIX2 = U64(0x94D049BB133111EB)
M32 = U64(0xFFFFFFFF)
PROBE_SALT = U64(0x9B0BE5)  # the probes' stream: the chunk's key with this mixed in
TWO32 = U64(1 << 32)
S27 = U64(27)
S30 = U64(30)
S31 = U64(31)
S32 = U64(32)
ONE = U64(1)

DEALER = 28  # the dealer's cards are hand slot 28; box b's hands use slots 4b..4b+3
NSLOT = 29
MAXC = 24  # cards in one hand (21 one-valued aces and a bust card at most)

# hand states, as in pontoon.round
OPEN = 0
STOOD = 1
NATURAL_WAIT = 2
SUPER_WAIT = 3
SETTLED = 4
SURRENDER_WAIT = 5

# accumulators (float64 array acc)
A_ROUNDS = 0  # rounds dealt
A_PLAYED = 1  # rounds played (not sat out)
A_NET = 2  # sum of every box's net, cents
A_SQ = 3  # sum over rounds of (the round's net over all boxes / base wager) ** 2
A_WAGERED = 4  # sum of initial wagers, cents
A_SESSIONS = 5
A_RUINED = 6
A_SNET = 7  # sum of session results, cents
A_SSQ = 8  # sum of (session result / base wager) ** 2
NACC = 9

# counters (int64 array cats): payment categories 0-8 (compiled.CATEGORY_NAMES), then
K_DEALER_PONTOON = 9
K_SURRENDER = 10
K_SPLIT = 11
K_DOUBLE = 12
K_BUST = 13
K_SHUFFLE = 14
K_SHUFFLE_16_7 = 15
K_RESCUE = 16
NCATS = 17

HBINS = 80  # round net histogram: half-wager bins from -16 (-8 wagers) up
HOFF = 16
TCBINS = 21  # true count bins -10..+10
TCOFF = 10
# options (int64 array opts)
O_OTHERS = 0  # count 11.2's payment to the other boxes' players
O_HANDS = 1  # hands per session (0: no sessions)
O_BANKROLL = 2  # cents
O_COUNTING = 3
O_TRACE = 4
O_SBINS = 5  # session histogram bins (of one base wager each)
O_SOFF = 6  # the bin of a zero session result
O_GOAL = 7  # a session also ends when its result reaches this many cents (0: no goal)
O_ONE = 8  # one player plays every box: a session is the boxes' total (else one per box)
O_PROBE = 9  # strategy indices by simulation: each box's first decision a random legal play
O_INSURE = 10  # 10: the boxes insure against a dealer ace (at the true counts insure_at says)
NOPTS = 11

# probes (float64 array probes[cell, action, true count bin, (sum, sum of squares, rounds)]):
# a box's first decision, its cell: (soft, total) as soft * 22 + total, a pair of value v as
# 44 + v - 1; times 10 dealer cards (up - 1). The figure is the box's net in wagers.
PROBE_CELLS = 54 * 10
FIRST = 32  # the move tables' context of a box's first decision (two cards, one hand)


@njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@njit(cache=True)
def stream_state(key: np.uint64, shuffle: int) -> np.uint64:
    """As :func:`pontoon.sim.rng.stream_state`."""
    return _mix(key ^ _mix(U64(shuffle + 1) * GOLDEN))


@njit(cache=True)
def _reject(rs: np.uint64, n: int, m: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Lemire's rejection step (rare): (state, m) once ``m``'s low half is acceptable."""
    un = U64(n)
    t = (TWO32 - un) % un
    while (m & M32) < t:
        rs += GOLDEN
        m = (_mix(rs) >> S32) * un
    return rs, m


AHEAD = 8  # places shuffled at a time beyond the cutting card


@njit(cache=True)
def shuffle_places(
    shoe: IntArray, start: int, end: int, ncards: int, rs: np.uint64
) -> tuple[int, np.uint64]:
    """Fisher-Yates from the front, places ``start`` to ``end`` (at most ``ncards``) of the
    shoe, on the stream whose state is ``rs``: each place takes a card drawn uniformly from
    those not yet placed (Lemire's method). Returns (the end, the stream's state)."""
    end = max(min(end, ncards), start + 1)
    for i in range(start, end):
        left = U64(ncards - i)
        rs += GOLDEN
        m = (_mix(rs) >> S32) * left
        if (m & M32) < left:
            rs, m = _reject(rs, ncards - i, m)
        j = i + np.int64(m >> S32)
        c = shoe[j]
        shoe[j] = shoe[i]
        shoe[i] = c
    return end, rs


@njit(cache=True)
def _refill(
    tmpl: IntArray,
    shoe: IntArray,
    hc: IntArray,
    hn: IntArray,
    disc: IntArray,
    nh: IntArray,
    order: IntArray,
    boxes: int,
    hole: int,
) -> int:
    """16.7: the shoe ran out mid-round; the discard rack (every card not on the layout) is
    put in canonical order to be shuffled. Returns its number of cards."""
    cnt = np.zeros(52, np.int64)
    for i in range(tmpl.shape[0]):
        cnt[tmpl[i]] += 1
    for b in range(boxes):
        for k in range(nh[b]):
            s = order[b, k]
            if not disc[s]:
                for i in range(hn[s]):
                    cnt[hc[s, i]] -= 1
    for i in range(hn[DEALER]):
        cnt[hc[DEALER, i]] -= 1
    if hole >= 0:
        cnt[hole] -= 1
    n = 0
    for code in range(52):
        for _ in range(cnt[code]):
            shoe[n] = code
            n += 1
    return n


@njit(cache=True, inline="always")
def _better(odds: Sequence[int], a: int, b: int) -> bool:
    """Category a's odds strictly above category b's."""
    return odds[2 * a] * odds[2 * b + 1] > odds[2 * b] * odds[2 * a + 1]


@njit(cache=True)
def _win_cat(
    n: int,
    total: int,
    doubled: int,
    c0: int,
    c1: int,
    c2: int,
    bonus: tuple[int, int],
    odds: Sequence[int],
) -> int:
    """settlement.win_odds for a hand that is not a pontoon: the category of the best odds.
    ``bonus``: (bonuses, bonus_on_double); ``odds``: (num, den) of every category. Scalars
    and tuples only, so the call costs no reference counting."""
    if not bonus[0] or (doubled and not bonus[1]) or total != 21:
        return C.EVEN
    best = C.EVEN
    if n == 5:
        cand = C.FIVE
    elif n == 6:
        cand = C.SIX
    elif n >= 7:
        cand = C.SEVEN
    else:
        cand = -1
    if cand >= 0 and _better(odds, cand, best):
        best = cand
    if n == 3:
        r0 = c0 % 13 + 1
        r1 = c1 % 13 + 1
        r2 = c2 % 13 + 1
        lo = min(r0, r1, r2)
        hi = max(r0, r1, r2)
        mid = r0 + r1 + r2 - lo - hi
        if (lo == 6 and mid == 7 and hi == 8) or (lo == 7 and hi == 7):
            s0 = c0 // 13
            if s0 == c1 // 13 and s0 == c2 // 13:
                cand = C.SPADES if s0 == 0 else C.SUITED
            else:
                cand = C.MIXED
            if _better(odds, cand, best):
                best = cand
    return best


@njit(cache=True, inline="always")
def _won(amount: int, odds: Sequence[int], cat: int) -> int | np.int64:
    """settlement.winnings, rounded down to the cent (exact: the quotient is never within a
    rounding error of a whole number unless it is one)."""
    x = amount * odds[2 * cat]
    den = odds[2 * cat + 1]
    return x if den == 1 else np.int64(x / den)


# The kernel's action numbers and the words legality judges.
_ACTIONS = {
    C.HIT: Action.HIT,
    C.STAND: Action.STAND,
    C.DOUBLE: Action.DOUBLE,
    C.SPLIT: Action.SPLIT,
    C.SURRENDER_ACTION: Action.SURRENDER,
}
NCTX = 64


def context_facts(ctx: int, total: int, up: int, pair: bool) -> Facts:
    """The facts of a hand in the context ``ctx`` of the move tables (:func:`decisions`)."""
    return Facts(
        cards=2 if ctx >> 5 else 3,
        total=total,
        pair=pair,
        from_split=bool((ctx >> 4) & 1),
        split_aces=bool((ctx >> 3) & 1),
        hands=ctx % 4 + 1,
        acted=bool((ctx >> 2) & 1),
        up=up,
    )


@functools.lru_cache(maxsize=8)
def _allowed(rules: RuleSet) -> tuple[BoolArray, BoolArray]:
    """(64 ctx, 22 total, 10 up, 5 actions) and (64 ctx, 10 pair value, 10 up, 5 actions):
    :func:`pontoon.legality.allowed` for every hand the move tables look up, by the kernel's
    action numbers (a pair of value ``v`` totals 12 if aces, else ``2 v``)."""
    ok = np.zeros((NCTX, 22, 10, len(_ACTIONS)), dtype=bool)
    pair_ok = np.zeros((NCTX, 10, 10, len(_ACTIONS)), dtype=bool)
    for ctx in range(NCTX):
        for up in range(1, 11):
            for t in range(22):
                f = context_facts(ctx, t, up, False)
                for x, action in _ACTIONS.items():
                    ok[ctx, t, up - 1, x] = allowed(action, f, rules)
            for pv in range(1, 11):
                f = context_facts(ctx, 12 if pv == 1 else 2 * pv, up, True)
                for x, action in _ACTIONS.items():
                    pair_ok[ctx, pv - 1, up - 1, x] = allowed(action, f, rules)
    return ok, pair_ok


def first_decisions(rules: RuleSet) -> tuple[IntArray, IntArray]:
    """(22 total + 22 soft: [soft, total, up - 1, action]) and (10 pair value, 10 up, 5
    actions) as int64: the plays :func:`pontoon.legality.allowed` allows a box's first
    decision (context :data:`FIRST`), which probing draws from. A soft total's row is the
    hard total's (legality asks the total and the cards, not softness)."""
    ok, pair_ok = _allowed(rules)
    first = ok[FIRST].astype(np.int64)
    return np.stack([first, first]), pair_ok[FIRST].astype(np.int64)


def _first_allowed(rows: list[IntArray], ok: BoolArray) -> Int8Array:
    """The chart's move in each cell: the first action of the cells' preferences
    (:func:`pontoon.sim.compiled.preferences`) in ``rows`` (chart codes, the row asked first
    first, each shaped as a cell) that ``ok`` (each cell's allowed actions) allows; else hit
    if allowed, else stand."""
    prefs = C.preferences()
    move = np.where(ok[..., C.HIT], C.HIT, C.STAND)
    for codes in reversed(rows):  # the last choice first, each overwritten by a better one
        for j in reversed(range(prefs.shape[1])):
            x = np.broadcast_to(prefs[codes, j], move.shape)
            fine = (x >= 0) & np.take_along_axis(ok, np.maximum(x, 0)[..., None], -1)[..., 0]
            move = np.where(fine, x, move)
    return move.astype(np.int8)


def decisions(
    rules: RuleSet, totals: IntArray, pairs: IntArray
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The chart's move in every context a hand that has not doubled can be in, looked up in
    play: ``moves[ctx, soft, total, up - 1]`` for a hand that is not a pair that may be split
    and ``pair_moves[ctx, value - 1, up - 1]`` for one that is, where ``ctx`` =
    ((((two cards) * 2 + from a split) * 2 + split aces) * 2 + acted) * 4 + hands - 1
    (:func:`context_facts`); a doubled hand has stood or been rescued, as the chart's rescue
    table says (``compile_chart``). Each cell is the first action its row asks for that
    :func:`pontoon.legality.allowed` allows (a pair's row, then its total's); built once per
    job from the rule set and the chart's tables (:func:`pontoon.sim.compiled.compile_chart`)."""
    ok, pair_ok = _allowed(rules)
    ok = np.broadcast_to(ok[:, None], (NCTX, 2, *ok.shape[1:]))  # soft or not: the same facts
    moves = _first_allowed([totals[None]], ok)
    pv = np.arange(1, 11)
    pair_totals = totals[(pv == 1).astype(np.int64), np.where(pv == 1, 12, 2 * pv)]
    pair_moves = _first_allowed([pairs[None], pair_totals[None]], pair_ok)
    return moves, pair_moves


@njit(cache=True)
def _record_session(
    acc: FloatArray,
    shist: IntArray,
    snet: int,
    wager: int,
    soff: int,
    sbins: int,
    ruined: int,
) -> None:
    acc[A_SESSIONS] += 1
    acc[A_RUINED] += ruined
    acc[A_SNET] += snet
    acc[A_SSQ] += (snet / wager) ** 2
    shist[min(max(snet // wager + soff, 0), sbins - 1)] += 1


SWITCHES = (
    "boxes",
    "peek",
    "p21",
    "h17",
    "by_value",
    "burn",
    "sup",
    "surr",
    "takes_all",
    "bonuses",
    "bonus_on_double",
    "rescue",
    "counting",
    "sessions",
    "tracing",
    "others",
    "probing",
    "insure",
)


def specialisation(P: IntArray, opts: IntArray | Sequence[int], boxes: int) -> tuple[int, ...]:
    """The values of :data:`SWITCHES`: the number of boxes and the switches of the compiled
    rule set ``P`` and of the options ``opts``, which :func:`kernel_for` compiles in as
    constants (all read from ``P`` and ``opts``: the kernel holds no rule of its own).

    >>> from pontoon.rules import load_rules
    >>> from pontoon.sim.compiled import compile_rules
    >>> specialisation(compile_rules(load_rules("classic-blackjack")), [1] + [0] * (NOPTS - 1), 1)
    (1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0)
    """
    return tuple(
        int(v)
        for v in (
            boxes,
            P[C.PEEK],
            P[C.P21],
            P[C.H17],
            P[C.SPLIT_BY_VALUE],
            P[C.BURN],
            P[C.SUPER],
            P[C.SURRENDER],
            P[C.TAKES_ALL],
            P[C.BONUSES],
            P[C.BONUS_ON_DOUBLE],
            P[C.RESCUE],
            opts[O_COUNTING],
            opts[O_HANDS] > 0 or opts[O_GOAL] > 0,
            opts[O_TRACE],
            opts[O_OTHERS],
            opts[O_PROBE],
            opts[O_INSURE] and P[C.INSURANCE],
        )
    )


@functools.cache
def kernel_for(spec: tuple[int, ...] | None) -> Callable[..., None]:
    """:func:`run_chunk` compiled with the switches ``spec`` (:func:`specialisation`) as
    constants, so that the code of rules not in play is left out; numba caches each on disk.
    ``None`` gives the generic kernel instead: one machine code for every rule set, which reads
    the switches from its first argument at run time (slower, but compiled once)."""
    generic = spec is None
    fixed = spec or (0,) * len(SWITCHES)

    @njit(cache=True, nogil=True)
    def run_chunk(
        sw: IntArray,
        P: IntArray,
        moves: Int8Array,
        pair_moves: Int8Array,
        rescues: IntArray,
        tmpl: IntArray,
        tags: IntArray,
        ramp: IntArray,
        nboxes: IntArray,
        edges: FloatArray,
        key: np.uint64,
        nrounds: int,
        wager: int,
        opts: IntArray,
        acc: FloatArray,
        hist: IntArray,
        cats: IntArray,
        shist: IntArray,
        tcs: FloatArray,
        trace: IntArray,
        legal: IntArray,
        pair_legal: IntArray,
        probes: FloatArray,
        insure_at: IntArray,
    ) -> None:
        """Play ``nrounds`` rounds from a fresh shoe keyed ``key``; add into the accumulators.
        ``insure_at``: per chart (as ``moves``), the true count from which the boxes insure."""
        # the switches: the generic kernel's from its first argument, else constants (numba
        # compiles only the branch that the closure's ``generic`` names)
        (
            boxes,
            peek,
            p21,
            h17,
            by_value,
            burn,
            sup,
            surr,
            takes_all,
            bonuses,
            bonus_on_double,
            rescue,
            counting,
            sessions,
            tracing,
            others,
            probing,
            insure,
        ) = sw if generic else fixed
        # 10: insurance is played by a kernel of its own switches only (Job.for_rounds): the
        # generic kernel leaves its code out (with it, it ran a third slower, insuring or not)
        insure = 0 if generic else insure
        hands = opts[O_HANDS]
        bankroll = opts[O_BANKROLL]
        goal = opts[O_GOAL]
        one = opts[O_ONE]
        sbins = opts[O_SBINS]
        soff = opts[O_SOFF]
        per_deck = P[C.CARDS_PER_DECK]
        full_cut = P[C.BEHIND_CUT]
        ntmpl = tmpl.shape[0]
        odds = (
            P[C.ODDS],
            P[C.ODDS + 1],
            P[C.ODDS + 2],
            P[C.ODDS + 3],
            P[C.ODDS + 4],
            P[C.ODDS + 5],
            P[C.ODDS + 6],
            P[C.ODDS + 7],
            P[C.ODDS + 8],
            P[C.ODDS + 9],
            P[C.ODDS + 10],
            P[C.ODDS + 11],
            P[C.ODDS + 12],
            P[C.ODDS + 13],
            P[C.ODDS + 14],
            P[C.ODDS + 15],
            P[C.ODDS + 16],
            P[C.ODDS + 17],
        )
        bonus = (bonuses, bonus_on_double)
        surr_num = P[C.SURR_NUM]
        surr_den = P[C.SURR_DEN]
        sb_min = P[C.SB_MIN]
        sb_threshold = P[C.SB_THRESHOLD]
        sb_large = P[C.SB_LARGE]
        sb_small = P[C.SB_SMALL]
        sb_others = P[C.SB_OTHERS]

        shoe = np.empty(ntmpl, np.int64)
        rank = np.empty(52, np.int64)  # a card code's rank - 1 and value (A = 1, tens = 10)
        value = np.empty(52, np.int64)
        for code in range(52):
            rank[code] = code % 13
            value[code] = min(code % 13 + 1, 10)
        hc = np.zeros((NSLOT, MAXC), np.int64)
        hn = np.zeros(NSLOT, np.int64)
        hard = np.zeros(NSLOT, np.int64)
        ace = np.zeros(NSLOT, np.int64)
        state = np.zeros(NSLOT, np.int64)
        dbl = np.zeros(NSLOT, np.int64)
        fsp = np.zeros(NSLOT, np.int64)
        sac = np.zeros(NSLOT, np.int64)
        disc = np.zeros(NSLOT, np.int64)
        acted = np.zeros(NSLOT, np.int64)
        amount = np.zeros(NSLOT, np.int64)
        order = np.zeros((7, 4), np.int64)
        nh = np.zeros(7, np.int64)
        net = np.zeros(7, np.int64)
        ins = np.zeros(7, np.int64)  # 10: each box's insurance this round
        snet = np.zeros(7, np.int64)
        sn = np.zeros(7, np.int64)
        probe_cell = np.full(7, -1, np.int64)  # probing: each box's cell and play this round
        probe_play = np.zeros(7, np.int64)
        prs = stream_state(key ^ PROBE_SALT, 0)  # the probes' own stream: the shoe's is kept

        # (typed in comments: annotations would be a constant compiled into the kernel)
        def draw(
            pos,  # type: int
            fy,  # type: int
            ncards,  # type: int
            bcut,  # type: int
            cutr,  # type: bool
            nshuf,  # type: int
            rs,  # type: np.uint64
            seen,  # type: int
            rc,  # type: int
            hole,  # type: int
            nb,  # type: int
        ):
            # type: (...) -> tuple[int, int, int, int, int, bool, int, np.uint64, int, int]
            """Shoe.draw: the next card, and the shoe's locals after it. When the shuffle has
            not reached the card it goes on; when the shoe has run out mid-round (16.7) the
            discard rack is put in it (:func:`_refill`) and shuffled on a stream of its own.
            Scalars go in and out; the arrays are this kernel's own, read where the function
            is defined: numba inlines an inner function where it is called (the deal, the
            boxes' draws, the dealer's), so no array is passed and none is reference-counted
            (a helper taking the arrays made the kernel 6x slower)."""
            if pos == fy:
                if pos == ncards:
                    if counting:
                        for x in range(seen, pos):
                            rc += tags[shoe[x]]
                    ncards = _refill(tmpl, shoe, hc, hn, disc, nh, order, nb, hole)
                    cutr = cutr or bcut >= 1  # every card was dealt
                    pos = 0
                    seen = 0
                    bcut = 0
                    rs = stream_state(key, nshuf)
                    nshuf += 1
                    cats[K_SHUFFLE_16_7] += 1
                fy, rs = shuffle_places(
                    shoe, pos, ncards - bcut if pos == 0 else pos + AHEAD, ncards, rs
                )
            return shoe[pos], pos + 1, fy, ncards, bcut, cutr, nshuf, rs, seen, rc

        def insures(
            pos,  # type: int
            seen,  # type: int
            rc,  # type: int
            ncards,  # type: int
            mb,  # type: int
        ):
            # type: (...) -> bool
            """10: the boxes insure against the dealer's ace now: the true count of the cards
            seen, those on the table included (the hole card aside), at the chart's
            ``insure_at`` or above (0 without a count)."""
            now = 0.0
            if counting:
                rn = rc
                for i in range(seen, pos - peek):
                    rn += tags[shoe[i]]
                unseen = ncards - pos + peek
                now = rn * per_deck / unseen if unseen > 0 else 0.0
            return bool(now >= insure_at[mb])

        # the shoe (pontoon.shoe.Shoe), in locals: cards shoe[pos:ncards] are still to come
        pos = 0
        ncards = 0
        bcut = 0  # cards behind the cutting card
        cutr = False  # the cutting card came out before a 16.7 reshuffle of the discards
        nshuf = 0  # shuffles so far: each has its own stream
        rs = U64(0)  # the stream's state
        fy = 0  # shoe[:fy] are shuffled (Fisher-Yates from the front), shoe[fy:] not yet
        seen = 0  # counting: shoe[:seen] are in the running count
        rc = 0

        inv2wager = 1.0 / (2 * wager)
        n_played = 0
        net_sum = 0
        sq_sum = 0.0
        wagered = 0
        r = 0
        # a chunk deals its rounds, then finishes the sessions in play if they end at a goal
        while r < nrounds or (sessions and goal > 0 and (sn[0] > 0 if one else sn[:boxes].any())):
            # 7, 8.7, 8.8: reshuffle before the round if the cutting card has come out or is
            # next; the cards are dealt in order, so it has come out if and only if the
            # last card dealt, shoe[pos - 1], lay at or behind it (no check at every draw)
            if nshuf == 0 or cutr or ncards - pos <= bcut:
                shoe[:ntmpl] = tmpl
                ncards = ntmpl
                pos = 0
                bcut = full_cut
                cutr = False
                rs = stream_state(key, nshuf)
                nshuf += 1
                cats[K_SHUFFLE] += 1
                # every card in front of the cutting card will be dealt: shuffle them now
                fy, rs = shuffle_places(shoe, 0, ncards - bcut, ncards, rs)
                if burn:  # 8.1: the burn card (a round's cards follow it: no check needed)
                    pos = 1
                seen = pos
                rc = 0
            # the wager: flat, or by the true count
            w = wager
            w2 = 2 * wager
            inv2w = inv2wager
            play = 1
            nb = boxes  # the boxes dealt this round (by the true count: Job.boxes_by_count)
            tcb = 0
            mb = 0  # the chart this round plays: one per true count with indices (Job)
            if counting:
                for i in range(seen, pos):
                    rc += tags[shoe[i]]
                seen = pos
                left = ncards - pos
                tc = rc * per_deck / left if left > 0 else 0.0
                tcb = min(max(int(np.floor(tc)), -TCOFF), TCOFF) + TCOFF
                if moves.shape[0] > 1:
                    mb = tcb
                    for e in range(edges.shape[0]):  # by depth: the nearest depth's charts
                        if left < edges[e] * ntmpl:
                            mb += TCBINS
                nb = nboxes[tcb]
                if ramp[tcb] == 0:
                    play = 0  # Wonging out: the round is dealt without the player
                else:
                    w = wager * ramp[tcb]
                    w2 = 2 * w
                    inv2w = 1.0 / w2
            if sessions and play:  # a session ends when the bankroll left cannot cover the wager
                if one:
                    if bankroll + snet[0] < w * nb:
                        _record_session(acc, shist, snet[0], wager, soff, sbins, 1)
                        snet[0] = 0
                        sn[0] = 0
                else:
                    for b in range(nb):
                        if bankroll + snet[b] < w:
                            _record_session(acc, shist, snet[b], wager, soff, sbins, 1)
                            snet[b] = 0
                            sn[b] = 0
            # a fresh layout
            for b in range(nb):
                probe_cell[b] = -1
                nh[b] = 1
                order[b, 0] = 4 * b
                net[b] = 0
                s = 4 * b  # the other slots are set when a split makes them
                hn[s] = 0
                hard[s] = 0
                ace[s] = 0
                state[s] = OPEN
                dbl[s] = 0
                fsp[s] = 0
                sac[s] = 0
                disc[s] = 0
                acted[s] = 0
                amount[s] = w
            hn[DEALER] = 0
            hard[DEALER] = 0
            ace[DEALER] = 0
            hole = -1
            # 8.2: a card to each box, one to the dealer, a second to each box; 8.5: hole card
            ndeal = 2 * nb + 1 + peek
            for i in range(ndeal):
                # Shoe.draw
                c, pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc = draw(
                    pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc, hole, nb
                )
                if i < nb:
                    s = 4 * i
                elif i == nb:
                    s = DEALER
                elif i <= 2 * nb:
                    s = 4 * (i - nb - 1)
                else:
                    hole = c
                    break
                hc[s, hn[s]] = c
                hn[s] += 1
                v = value[c]
                hard[s] += v
                ace[s] |= np.int64(v == 1)
            upv = hard[DEALER]
            uprank = rank[hc[DEALER, 0]] + 1
            ended = False
            if insure:  # 10: in the peek game before the peek, every box (Round's INSURANCE)
                for b in range(nb):
                    ins[b] = 0
                if peek and upv == 1 and insures(pos, seen, rc, ncards, mb):
                    for b in range(nb):
                        ins[b] = w * P[C.INS_MAX_NUM] // P[C.INS_MAX_DEN]
            # the peek: a dealer blackjack (an ace or ten up, and the hole card makes 11)
            if peek and upv + value[hole] == 11 and (upv == 1 or upv == 10):
                ended = True
                cats[K_DEALER_PONTOON] += play
                for b in range(nb):
                    net[b] += ins[b] * P[C.INS_PAYS_NUM] // P[C.INS_PAYS_DEN]  # 10: it wins
                    s = 4 * b
                    if hard[s] == 11 and ace[s]:
                        if p21:
                            net[b] += _won(w, odds, C.NATURAL)
                            cats[C.NATURAL] += play
                    else:
                        net[b] -= w
            if not ended:
                # 9.1: interim settlement of pontoons
                for b in range(nb):
                    s = 4 * b
                    if hard[s] == 11 and ace[s]:
                        if p21 or peek:
                            net[b] += _won(w, odds, C.NATURAL)
                            cats[C.NATURAL] += play
                            state[s] = SETTLED
                            disc[s] = 1
                        else:
                            state[s] = NATURAL_WAIT
                # 10: without a hole card, each box whose wager is still in play
                if insure and not peek and upv == 1 and insures(pos, seen, rc, ncards, mb):
                    for b in range(nb):
                        if state[4 * b] != SETTLED:
                            ins[b] = w * P[C.INS_MAX_NUM] // P[C.INS_MAX_DEN]
                # 8.3: the boxes in turn, each hand to completion (13.5)
                for b in range(nb):
                    k = 0
                    while k < nh[b]:
                        s = order[b, k]
                        need = hn[s] == 1  # a split hand's second card
                        while True:
                            if need:
                                need = False
                                # Shoe.draw
                                c, pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc = draw(
                                    pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc, hole, nb
                                )
                                n = hn[s]
                                hc[s, n] = c
                                n += 1
                                hn[s] = n
                                v = value[c]
                                hs = hard[s] + v
                                hard[s] = hs
                                ace[s] |= np.int64(v == 1)
                                # Round._after_card
                                if hs > 21:  # 14.2
                                    net[b] -= amount[s] * (1 + dbl[s])
                                    state[s] = SETTLED
                                    disc[s] = 1
                                    cats[K_BUST] += play
                                elif hs == 21 or (hs == 11 and ace[s]):
                                    if (
                                        sup
                                        and not fsp[s]
                                        and not dbl[s]
                                        and uprank == 7
                                        and n == 3
                                        and rank[hc[s, 0]] == 6
                                        and hc[s, 1] == hc[s, 0]
                                        and hc[s, 2] == hc[s, 0]
                                    ):
                                        state[s] = SUPER_WAIT  # 11.2: paid at the end
                                    elif p21:  # 9.2: paid at once
                                        cat = _win_cat(
                                            n, 21, dbl[s], hc[s, 0], hc[s, 1], hc[s, 2], bonus, odds
                                        )
                                        net[b] += _won(amount[s] * (1 + dbl[s]), odds, cat)
                                        cats[cat] += play
                                        state[s] = SETTLED
                                        disc[s] = 1
                                    else:
                                        state[s] = STOOD
                                if dbl[s] and state[s] == OPEN:  # 14.1(b): one card only
                                    if (
                                        rescue
                                        and rescues[
                                            mb,
                                            ace[s] & (hs <= 11),
                                            hs + 10 * (ace[s] & (hs <= 11)),
                                            upv - 1,
                                        ]
                                    ):
                                        # 12: the rescue, where the chart's rescue table says:
                                        # the original wager is lost, the double comes back
                                        cats[K_RESCUE] += play
                                        net[b] -= amount[s]
                                        state[s] = SETTLED
                                        disc[s] = 1
                                    else:
                                        state[s] = STOOD
                            if state[s] != OPEN:
                                break
                            c0 = hc[s, 0]
                            c1 = hc[s, 1]
                            hs = hard[s]
                            # the chart's move, looked up (decisions): split aces that may not
                            # draw (14.1(c)) stand here unless they split again
                            n = hn[s]
                            soft = ace[s] & (hs <= 11)
                            t = hs + 10 * soft
                            ctx = (((n == 2) * 2 + fsp[s]) * 2 + sac[s]) * 2 + acted[s]
                            ctx = ctx * 4 + nh[b] - 1
                            pair = False
                            if n == 2:
                                pair = value[c0] == value[c1] if by_value else rank[c0] == rank[c1]
                            if pair:
                                a = pair_moves[mb, ctx, value[c0] - 1, upv - 1]
                            else:
                                a = moves[mb, ctx, soft, t, upv - 1]
                            if probing and ctx == FIRST:  # a random legal play instead
                                if pair:
                                    cell = 44 + value[c0] - 1
                                    ok = pair_legal[value[c0] - 1, upv - 1]
                                else:
                                    cell = soft * 22 + t
                                    ok = legal[soft, t, upv - 1]
                                nok = 0
                                for x in range(ok.shape[0]):
                                    nok += ok[x]
                                if nok > 0:
                                    prs += GOLDEN
                                    pick = np.int64(_mix(prs) % U64(nok))
                                    for x in range(ok.shape[0]):
                                        if ok[x]:
                                            if pick == 0:
                                                a = x
                                            pick -= 1
                                    probe_cell[b] = cell * 10 + upv - 1
                                    probe_play[b] = a
                            acted[s] = 1
                            if a == C.STAND:
                                state[s] = STOOD
                                break
                            if a == C.SURRENDER_ACTION:
                                cats[K_SURRENDER] += play
                                if surr == 1 or peek:  # settled at once
                                    net[b] -= amount[s] - amount[s] * surr_num // surr_den
                                    state[s] = SETTLED
                                    disc[s] = 1
                                else:
                                    state[s] = SURRENDER_WAIT  # 9.4: after the dealer's 2nd card
                                break
                            if a == C.SPLIT:  # 13: the new hand is played next
                                cats[K_SPLIT] += play
                                ns = 4 * b + nh[b]
                                for i in range(nh[b], k + 1, -1):
                                    order[b, i] = order[b, i - 1]
                                order[b, k + 1] = ns
                                nh[b] += 1
                                v = value[c1]
                                hc[ns, 0] = c1
                                hn[ns] = 1
                                hard[ns] = v
                                ace[ns] = v == 1
                                fsp[ns] = 1
                                sac[ns] = v == 1
                                amount[ns] = amount[s]
                                state[ns] = OPEN
                                dbl[ns] = 0
                                disc[ns] = 0
                                acted[ns] = 0
                                v = value[c0]
                                hn[s] = 1
                                hard[s] = v
                                fsp[s] = 1
                                sac[s] = v == 1
                            elif a == C.DOUBLE:
                                cats[K_DOUBLE] += play
                                dbl[s] = 1
                            need = True
                        k += 1
                # 8.5, 14.3, 14.4: the dealer's second card (only if a hand waits for it) and
                # draws (only if a hand stood)
                full = False
                second = False
                for b in range(nb):
                    for k in range(nh[b]):
                        x = state[order[b, k]]
                        if x == STOOD:
                            full = True
                        elif x == NATURAL_WAIT or x == SURRENDER_WAIT:  # noqa: SIM109
                            second = True
                second = second or full
                if insure:  # 10: an insured box waits for the dealer's second card
                    for b in range(nb):
                        if ins[b] > 0:
                            second = True
                dnat = False
                if second:
                    if peek:
                        c = hole
                        hole = -1
                        hc[DEALER, 1] = c
                        hn[DEALER] = 2
                        v = value[c]
                        hard[DEALER] += v
                        ace[DEALER] |= np.int64(v == 1)
                    while True:
                        hs = hard[DEALER]
                        if hn[DEALER] == 2:
                            dnat = hs == 11 and ace[DEALER] == 1
                            if dnat or not full:
                                break
                        if hn[DEALER] >= 2:
                            soft = ace[DEALER] and hs <= 11
                            t = hs + 10 if soft else hs
                            if t > 17 or (t == 17 and not (soft and h17)):
                                break
                        # Shoe.draw
                        c, pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc = draw(
                            pos, fy, ncards, bcut, cutr, nshuf, rs, seen, rc, hole, nb
                        )
                        hc[DEALER, hn[DEALER]] = c
                        hn[DEALER] += 1
                        v = value[c]
                        hard[DEALER] += v
                        ace[DEALER] |= np.int64(v == 1)
                if dnat:
                    cats[K_DEALER_PONTOON] += play
                if insure:  # 10: insurance settled by the dealer's second card
                    for b in range(nb):
                        if ins[b] > 0:
                            if dnat:
                                net[b] += ins[b] * P[C.INS_PAYS_NUM] // P[C.INS_PAYS_DEN]
                            else:
                                net[b] -= ins[b]
                hs = hard[DEALER]
                d = hs + 10 if (ace[DEALER] and hs <= 11) else hs
                # Round._settle_all
                for b in range(nb):
                    cap = w  # 13.7: what a dealer pontoon may still take from the box's player
                    for k in range(nh[b]):
                        s = order[b, k]
                        x = state[s]
                        if x == SETTLED:
                            continue
                        stake = amount[s] * (1 + dbl[s])
                        if x == STOOD:
                            if dnat:
                                if takes_all:
                                    net[b] -= stake
                                else:
                                    lost = min(stake, cap)
                                    cap -= lost
                                    net[b] -= lost
                            else:
                                hs = hard[s]
                                p = hs + 10 * (ace[s] & (hs <= 11))
                                won = (d > 21) | (p > d)
                                if won and p == 21 and bonus[0]:  # 11.1 (rare: not branchless)
                                    cat = _win_cat(
                                        hn[s], p, dbl[s], hc[s, 0], hc[s, 1], hc[s, 2], bonus, odds
                                    )
                                    if cat != C.EVEN:
                                        cats[cat] += play
                                    net[b] += _won(stake, odds, cat)
                                else:  # even money, a stand-off or the stake lost, without a branch
                                    net[b] += stake * (np.int64(won) - np.int64(p < d and not won))
                        elif x == SURRENDER_WAIT:
                            if dnat:  # 9.4
                                net[b] -= stake
                            else:
                                net[b] -= stake - stake * surr_num // surr_den
                        elif x == SUPER_WAIT:
                            if stake < sb_min:
                                cat = _win_cat(3, 21, 0, hc[s, 0], hc[s, 1], hc[s, 2], bonus, odds)
                                net[b] += _won(stake, odds, cat)
                                cats[cat] += play
                            else:
                                if stake >= sb_threshold:
                                    net[b] += sb_large
                                else:
                                    net[b] += sb_small
                                cats[C.SUPER_BONUS] += play
                                if others:
                                    for ob in range(nb):
                                        if ob != b:
                                            net[ob] += sb_others
                        elif x == NATURAL_WAIT:  # noqa: SIM102
                            if not dnat:
                                net[b] += _won(stake, odds, C.NATURAL)
                                cats[C.NATURAL] += play
            if counting:  # the round's cards are seen (the hole card too, at the end)
                for i in range(seen, pos):
                    rc += tags[shoe[i]]
                seen = pos
            # the round's results
            if tracing:
                for b in range(nb):
                    trace[r, b] = net[b]
            if probing:
                for b in range(nb):
                    if probe_cell[b] >= 0:
                        x = net[b] / w
                        at = probes[probe_cell[b], probe_play[b], tcb]
                        at[0] += x
                        at[1] += x * x
                        at[2] += 1
            total = 0
            for b in range(nb):
                total += net[b]
            if counting:
                u = total / (w * nb)
                tcs[tcb, 0] += 1
                tcs[tcb, 1] += u
                tcs[tcb, 2] += u * u
                tcs[tcb, 3] += play
            if play:
                n_played += 1
                net_sum += total
                ft = float(total)
                sq_sum += ft * ft
                wagered += w * nb
                for b in range(nb):
                    x = net[b]
                    # floor((4x + w) / 2w): the nearest half wager, by a product, made exact
                    y = 4 * x + w
                    q = np.int64(y * inv2w + 64.0) - 64  # truncated above 0: floor
                    if q * w2 > y:
                        q -= 1
                    elif (q + 1) * w2 <= y:
                        q += 1
                    # (the ignore: mypy's min and max of numpy's int64 and an int are no index)
                    hist[min(max(q + HOFF, 0), HBINS - 1)] += 1  # type: ignore[index]
                    if sessions and not one:
                        snet[b] += x
                        sn[b] += 1
                        if sn[b] == hands or (goal > 0 and snet[b] >= goal):
                            _record_session(acc, shist, snet[b], wager, soff, sbins, 0)
                            snet[b] = 0
                            sn[b] = 0
                if sessions and one:
                    snet[0] += total
                    sn[0] += 1
                    if sn[0] == hands or (goal > 0 and snet[0] >= goal):
                        _record_session(acc, shist, snet[0], wager, soff, sbins, 0)
                        snet[0] = 0
                        sn[0] = 0
            r += 1
        acc[A_ROUNDS] += r
        acc[A_PLAYED] += n_played
        acc[A_NET] += net_sum
        acc[A_SQ] += sq_sum / (float(wager) * float(wager))
        acc[A_WAGERED] += wagered

    return run_chunk
