# mypy: ignore-errors
"""The environment's compiled entry points: what the player sees (the observation and the
action mask), a fresh shoe, and the steps of one table (the single env) or of many at once
(the vector env), each a single call from Python."""

from __future__ import annotations

from numba import njit

from pontoon.env import layout as L
from pontoon.env.kernel import best, start_round, value
from pontoon.env.settle import hands_on, slot
from pontoon.env.steps import act, action_bits
from pontoon.sim import compiled as C


@njit(cache=True)
def observe(W, i, PP, OB, CO, MK, col):
    """What the player sees, into column ``col``: the hand in question, the dealer's first
    card, the cards left and seen; the legal actions."""
    ph = W[i, L.PH]
    for r in range(L.NOBS):
        OB[r, col] = 0
    OB[0, col] = ph
    b = -1
    if ph == L.DECIDE:
        b = W[i, L.TURN]
        k = W[i, L.HI]
    elif ph == L.INS:
        b = W[i, L.IB]
        k = 0
    if b >= 0:
        s = slot(W, i, PP, b, k)
        o = L.NT + s * L.NHF
        hard, ace, n = W[i, o + L.HARD], W[i, o + L.ACE], W[i, o + L.HN]
        t = best(hard, ace)
        OB[1, col] = b
        OB[2, col] = k
        OB[3, col] = hands_on(W, i, PP, b)
        OB[4, col] = t
        OB[5, col] = 1 if t != hard else 0
        OB[6, col] = n
        if n == 2:
            oc = PP[L.E_OHC] + s * L.MAXC
            c0, c1 = W[i, oc], W[i, oc + 1]
            same = value(c0) == value(c1) if PP[C.SPLIT_BY_VALUE] else c0 % 13 == c1 % 13
            if same:
                OB[7, col] = value(c0)
        OB[8, col] = 1 if W[i, o + L.DBL] > 0 else 0
        OB[9, col] = W[i, o + L.FSP]
        OB[10, col] = W[i, o + L.SAC]
        OB[11, col] = W[i, o + L.ACTED]
    if W[i, L.DN] > 0 and ph != L.BET:
        OB[12, col] = value(W[i, PP[L.E_ODC]])
    OB[13, col] = W[i, L.NCARDS] - W[i, L.POS]
    ocnt = PP[L.E_OCNT]
    for v in range(L.NVAL):
        CO[col, v] = W[i, ocnt + v]
    bits = action_bits(W, i, PP)
    W[i, L.LEGAL] = bits  # what act() checks the next action against
    for a in range(MK.shape[1]):
        MK[col, a] = (bits >> a) & 1


@njit(cache=True)
def reset_table(W, i, PP, key):
    """A fresh shoe keyed ``key`` (uint64 bits) and the first round's betting."""
    for f in range(W.shape[1]):
        W[i, f] = 0
    W[i, L.KEY] = key
    W[i, L.HOLE] = -1
    start_round(W, i, PP)


@njit(cache=True)
def step_one(W, PP, i, a, OB, CO, MK):
    """The single env's step: 1 when ``a`` was refused (nothing changed)."""
    refused = act(W, i, PP, a)
    observe(W, i, PP, OB, CO, MK, i)
    return refused


@njit(cache=True)
def next_round(W, PP, i, OB, CO, MK):
    start_round(W, i, PP)
    observe(W, i, PP, OB, CO, MK, i)


@njit(cache=True)
def step_many(W, PP, actions, OB, CO, MK, RW, TERM, REF, FOB, FCO, FMK):
    """Every table's step; a table whose round ends starts the next round's betting in the
    same step (its last observation into FOB, FCO, FMK)."""
    unit = PP[L.E_UNIT]
    for i in range(W.shape[0]):
        REF[i] = act(W, i, PP, actions[i]) == 1
        if W[i, L.PH] == L.OVER:
            RW[i] = W[i, L.NET] / unit
            TERM[i] = True
            observe(W, i, PP, FOB, FCO, FMK, i)
            start_round(W, i, PP)
        else:
            RW[i] = 0.0
            TERM[i] = False
        observe(W, i, PP, OB, CO, MK, i)


@njit(cache=True)
def reset_many(W, PP, keys, OB, CO, MK):
    for i in range(W.shape[0]):
        reset_table(W, i, PP, keys[i])
        observe(W, i, PP, OB, CO, MK, i)


__all__ = ["next_round", "observe", "reset_many", "reset_table", "step_many", "step_one"]
