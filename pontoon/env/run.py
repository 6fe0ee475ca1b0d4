"""The environment's compiled entry points: what the player sees (the observation and the
action mask), a fresh shoe, and the steps of one table (the single env) or of many at once
(the vector env), each a single call from Python."""

from __future__ import annotations

from pontoon.env import layout as L
from pontoon.env.kernel import best, jit, jit_inline, prefetch, rule, start_round, value
from pontoon.env.settle import hands_on, slot
from pontoon.env.steps import act, action_bits
from pontoon.sim import compiled as C
from pontoon.sim.kernel import BoolArray, FloatArray, Int8Array, IntArray

# The constants compiled into this file's cached machine code (pontoon.sim.compiled's and
# pontoon.env.layout's), by digest: numba checks only this file for changes, so a changed
# layout must change this line too (tests/test_sim_compiled.py says to what).
COMPILED_LAYOUT = "15889cd4358da6d6"


@jit_inline
def see(
    W: IntArray, i: int, PP: IntArray, OB: IntArray, CO: IntArray, MK: Int8Array, col: int
) -> None:
    """What the player sees, into column ``col``: the hand in question, the dealer's first
    card, the cards left and seen; the legal actions. Each entry is written once. Compiled
    into :func:`step_many` (a call passed its five arrays as some 40 words on the stack);
    the other entry points call :func:`observe`."""
    ph = W[i, L.PH]
    b = -1
    k = 0
    if ph == L.DECIDE:
        b = W[i, L.TURN]
        k = W[i, L.HI]
    elif ph == L.INS:
        b = W[i, L.IB]
    box = hand = hands = t = soft = n = pair = dbl = fsp = sac = acted = 0
    if b >= 0:
        s = slot(W, i, PP, b, k)
        o = L.NT + s * L.NHF
        hard, n = W[i, o + L.HARD], W[i, o + L.HN]
        t = best(hard, W[i, o + L.ACE])
        box, hand, hands, soft = b, k, hands_on(W, i, PP, b), 1 if t != hard else 0
        if n == 2:
            oc = rule(PP, L.E_OHC) + s * L.MAXC
            c0, c1 = W[i, oc], W[i, oc + 1]
            same = value(c0) == value(c1) if rule(PP, C.SPLIT_BY_VALUE) else c0 % 13 == c1 % 13
            if same:
                pair = value(c0)
        dbl = 1 if W[i, o + L.DBL] > 0 else 0
        fsp, sac, acted = W[i, o + L.FSP], W[i, o + L.SAC], W[i, o + L.ACTED]
    up = value(W[i, rule(PP, L.E_ODC)]) if W[i, L.DN] > 0 and ph != L.BET else 0
    OB[0, col] = ph
    OB[1, col] = box
    OB[2, col] = hand
    OB[3, col] = hands
    OB[4, col] = t
    OB[5, col] = soft
    OB[6, col] = n
    OB[7, col] = pair
    OB[8, col] = dbl
    OB[9, col] = fsp
    OB[10, col] = sac
    OB[11, col] = acted
    OB[12, col] = up
    OB[13, col] = W[i, L.NCARDS] - W[i, L.POS]
    ocnt = rule(PP, L.E_OCNT)
    for v in range(L.NVAL):
        CO[col, v] = W[i, ocnt + v]
    bits = action_bits(W, i, PP)
    W[i, L.LEGAL] = bits  # what act() checks the next action against
    for a in range(MK.shape[1]):  # bit by bit (a loop the compiler leaves unvectorised)
        MK[col, a] = bits & 1
        bits >>= 1


@jit
def observe(
    W: IntArray, i: int, PP: IntArray, OB: IntArray, CO: IntArray, MK: Int8Array, col: int
) -> None:
    """:func:`see`, called."""
    see(W, i, PP, OB, CO, MK, col)


@jit_inline
def observe_over(W: IntArray, i: int, PP: IntArray, FOB: IntArray, FCO: IntArray, col: int) -> None:
    """:func:`observe` at the end of a round, into the final observation's arrays, which hold
    nothing else: their other rows and the mask are 0 at the end of every round, as they were
    made, and only the phase, the dealer's first card and the cards left and seen are
    written."""
    FOB[0, col] = L.OVER
    FOB[12, col] = value(W[i, rule(PP, L.E_ODC)]) if W[i, L.DN] > 0 else 0
    FOB[13, col] = W[i, L.NCARDS] - W[i, L.POS]
    ocnt = rule(PP, L.E_OCNT)
    for v in range(L.NVAL):
        FCO[col, v] = W[i, ocnt + v]


@jit
def reset_table(W: IntArray, i: int, PP: IntArray, key: int) -> None:
    """A fresh shoe keyed ``key`` (uint64 bits) and the first round's betting."""
    for f in range(W.shape[1]):
        W[i, f] = 0
    W[i, L.KEY] = key
    W[i, L.HOLE] = -1
    start_round(W, i, PP)


@jit
def step_one(
    W: IntArray, PP: IntArray, i: int, a: int, OB: IntArray, CO: IntArray, MK: Int8Array
) -> int:
    """The single env's step: 1 when ``a`` was refused (nothing changed)."""
    refused = act(W, i, PP, a)
    observe(W, i, PP, OB, CO, MK, i)
    return refused


@jit
def next_round(
    W: IntArray, PP: IntArray, i: int, OB: IntArray, CO: IntArray, MK: Int8Array
) -> None:
    start_round(W, i, PP)
    observe(W, i, PP, OB, CO, MK, i)


AHEAD = 4  # tables ahead whose state step_many asks the cache for
# the action's step in step_many: called here; compiled into it in a specialised step
# (pontoon.env.special), which is 5-15 % faster but takes 9 s more to compile
step_act = act


@jit_inline
def fetch_ahead(W: IntArray, i: int, PP: IntArray) -> None:
    """Prefetch the lines of table ``i``'s state a step reads (the scalars and the first
    hand's fields, its cards, the boxes and the dealer's cards, the counts, the next card)."""
    for k in range(0, L.NT + L.NHF, 8):
        prefetch(W, i, k)
    for o in (rule(PP, L.E_OHC), rule(PP, L.E_OBX), rule(PP, L.E_ODC), rule(PP, L.E_OCNT)):
        prefetch(W, i, o)
        prefetch(W, i, o + 8)
    prefetch(W, i, rule(PP, L.E_OSH) + W[i, L.POS])


@jit
def step_many(
    W: IntArray,
    PP: IntArray,
    actions: IntArray,
    OB: IntArray,
    CO: IntArray,
    MK: Int8Array,
    RW: FloatArray,
    TERM: BoolArray,
    REF: BoolArray,
    FOB: IntArray,
    FCO: IntArray,
) -> int:
    """Every table's step; a table whose round ends starts the next round's betting in the
    same step (its last observation into FOB and FCO, :func:`observe_over`). Returns how many
    rounds ended."""
    unit = PP[L.E_UNIT]
    n = W.shape[0]
    ended = 0
    for i in range(n):
        if i + AHEAD < n:
            fetch_ahead(W, i + AHEAD, PP)
        REF[i] = step_act(W, i, PP, actions[i]) == 1
        if W[i, L.PH] == L.OVER:
            RW[i] = W[i, L.NET] / unit
            TERM[i] = True
            ended += 1
            observe_over(W, i, PP, FOB, FCO, i)
            start_round(W, i, PP)
        else:
            RW[i] = 0.0
            TERM[i] = False
        see(W, i, PP, OB, CO, MK, i)
    return ended


@jit
def reset_many(
    W: IntArray, PP: IntArray, keys: IntArray, OB: IntArray, CO: IntArray, MK: Int8Array
) -> None:
    for i in range(W.shape[0]):
        reset_table(W, i, PP, keys[i])
        observe(W, i, PP, OB, CO, MK, i)


__all__ = ["next_round", "observe", "reset_many", "reset_table", "see", "step_many", "step_one"]
