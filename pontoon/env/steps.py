"""The environment's compiled steps: the deal, insurance, the seated player's decisions,
what is legal now (the action mask) and what the player sees (the observation), for one
table (the single env) or many stepped together (the vector env).

An action that is not legal now changes nothing and is answered with status 1: the mask and
the check are one function (:func:`action_bits`), built from the table of
:func:`pontoon.legality.refusal` that :func:`pontoon.env.spec.hand_masks` compiles. What the
player sees and the entry points from Python are in :mod:`pontoon.env.run`.
"""

from __future__ import annotations

from pontoon.env import layout as L
from pontoon.env.kernel import best, draw, jit, jit_inline, put, rule, to_dealer, value, won
from pontoon.env.settle import (
    card_reached,
    dealer_turn,
    hands_on,
    interim,
    peek,
    settle_hand,
    slot,
)
from pontoon.sim import compiled as C
from pontoon.sim.kernel import IntArray

# The constants compiled into this file's cached machine code (pontoon.sim.compiled's and
# pontoon.env.layout's), by digest: numba checks only this file for changes, so a changed
# layout must change this line too (tests/test_sim_compiled.py says to what).
COMPILED_LAYOUT = "15889cd4358da6d6"


@jit_inline
def hand_bits(W: IntArray, i: int, PP: IntArray, b: int, s: int) -> int:
    """What legality allows hand slot ``s`` of box ``b`` (bits in HAND_ACTIONS order): the
    table of :func:`pontoon.env.spec.hand_masks`, a byte per hand's facts."""
    o = L.NT + s * L.NHF
    n = W[i, o + L.HN]
    two = 1 if n == 2 else 0
    t = min(best(W[i, o + L.HARD], W[i, o + L.ACE]), 21)
    pair = 0
    if two:
        oc = rule(PP, L.E_OHC) + s * L.MAXC
        c0, c1 = W[i, oc], W[i, oc + 1]
        same = value(c0) == value(c1) if rule(PP, C.SPLIT_BY_VALUE) else c0 % 13 == c1 % 13
        pair = 1 if same else 0
    ctx = (two * 2 + W[i, o + L.FSP]) * 2 + W[i, o + L.SAC]
    ctx = (ctx * 2 + (W[i, o + L.DBL] > 0)) * 2 + W[i, o + L.ACTED]
    ctx = ctx * rule(PP, L.E_MAXH) + hands_on(W, i, PP, b) - 1
    up = value(W[i, rule(PP, L.E_ODC)])
    k = ((ctx * 2 + pair) * 22 + t) * 10 + up - 1  # packed eight to a word (pack_bytes)
    return (PP[PP[L.E_OMASK] + k // 8] >> (8 * (k % 8))) & 255  # type: ignore[no-any-return]


@jit_inline
def reached(W: IntArray, i: int, PP: IntArray, b: int, s: int) -> None:
    """A card has reached hand slot ``s`` of box ``b`` (:func:`card_reached`); split aces
    that may draw no more stand unless legality lets them split again (14.1(c))."""
    if card_reached(W, i, PP, s) and not (hand_bits(W, i, PP, b, s) >> L.SPLIT) & 1:
        W[i, L.NT + s * L.NHF + L.ST] = L.STOOD


@jit_inline
def action_bits(W: IntArray, i: int, PP: IntArray) -> int:
    """The legal actions now, as bits of the action numbers."""
    ph = W[i, L.PH]
    if ph == L.BET:
        nb = rule(PP, L.E_NBETS)
        return ((1 << nb) - 1) << (rule(PP, L.E_NA) - nb)
    if ph == L.INS:
        return (1 << L.INSURE) | (1 << L.NO_INSURANCE)
    if ph != L.DECIDE:
        return 0
    b = W[i, L.TURN]
    s = slot(W, i, PP, b, W[i, L.HI])
    bits = hand_bits(W, i, PP, b, s)
    if (bits >> L.DOUBLE) & 1:
        amt = W[i, L.NT + s * L.NHF + L.AMT]
        odbl = PP[L.E_ODBL]
        for k in range(1, rule(PP, L.E_NDBL)):
            if won(amt, PP[odbl + 2 * k], PP[odbl + 2 * k + 1]) >= 1:
                bits |= 1 << (L.NFIXED + k - 1)
    return bits


@jit
def _insurable(W: IntArray, i: int, PP: IntArray, b: int) -> int:
    """10: the most the box's player may insure (a part of the wager), 0 once it is
    settled."""
    s = slot(W, i, PP, b, 0)
    if W[i, L.NT + s * L.NHF + L.ST] == L.SETTLED:
        return 0
    return won(W[i, L.STAKE], rule(PP, L.E_INS_MAX_NUM), rule(PP, L.E_INS_MAX_DEN))


@jit
def ask_insurance(W: IntArray, i: int, PP: IntArray, first: int) -> bool:
    """The next box from ``first`` whose player may insure: its turn (True), or none."""
    for b in range(first, rule(PP, L.E_BOXES)):
        if _insurable(W, i, PP, b) >= 1:
            W[i, L.PH] = L.INS
            W[i, L.IB] = b
            return True
    return False


@jit
def advance(W: IntArray, i: int, PP: IntArray) -> None:
    """Run the automatic steps until a decision is awaited or the round is over."""
    boxes = rule(PP, L.E_BOXES)
    while W[i, L.TURN] < boxes:
        b = W[i, L.TURN]
        while W[i, L.HI] < hands_on(W, i, PP, b):
            s = slot(W, i, PP, b, W[i, L.HI])
            o = L.NT + s * L.NHF
            if W[i, o + L.HN] == 1 and W[i, o + L.ST] == L.OPEN:  # 13.5: the second card
                put(W, i, PP, s, draw(W, i, PP, True))
                reached(W, i, PP, b, s)
            if W[i, o + L.ST] == L.OPEN:
                return
            W[i, L.HI] += 1
        W[i, L.TURN] += 1
        W[i, L.HI] = 0
    dealer_turn(W, i, PP)


@jit
def deal(W: IntArray, i: int, PP: IntArray, stake: int) -> None:
    """8.2: a card to each box, one to the dealer, a second to each box; 8.5 the hole card;
    then insurance (10), the peek, interim settlement (9.1) and the first decision."""
    maxh = rule(PP, L.E_MAXH)
    boxes = rule(PP, L.E_BOXES)
    W[i, L.STAKE] = stake
    W[i, L.NET] = 0
    W[i, L.DN] = 0
    W[i, L.DH] = 0
    W[i, L.DA] = 0
    W[i, L.HOLE] = -1
    W[i, L.INSURED] = 0
    W[i, L.TURN] = 0
    W[i, L.HI] = 0
    for b in range(boxes):
        W[i, rule(PP, L.E_OBX) + b * L.NBF + L.NH] = 1
        W[i, rule(PP, L.E_OBX) + b * L.NBF + L.INSA] = 0
        W[i, rule(PP, L.E_OORD) + b * maxh] = b * maxh
        o = L.NT + b * maxh * L.NHF
        for f in range(L.NHF):
            W[i, o + f] = 0
        W[i, o + L.AMT] = stake
    for b in range(boxes):
        put(W, i, PP, b * maxh, draw(W, i, PP, True))
    to_dealer(W, i, PP, draw(W, i, PP, True))
    for b in range(boxes):
        put(W, i, PP, b * maxh, draw(W, i, PP, True))
    if rule(PP, C.PEEK):
        W[i, L.HOLE] = draw(W, i, PP, False)
    W[i, L.PH] = L.DECIDE
    offered = rule(PP, L.E_INS) and value(W[i, rule(PP, L.E_ODC)]) == 1
    if rule(PP, C.PEEK):
        if offered and ask_insurance(W, i, PP, 0):
            return
        peek(W, i, PP)
        if W[i, L.PH] == L.OVER:
            return
    interim(W, i, PP)
    advance(W, i, PP)
    if not rule(PP, C.PEEK) and offered and W[i, L.PH] == L.DECIDE:
        ask_insurance(W, i, PP, 0)


@jit
def act(W: IntArray, i: int, PP: IntArray, a: int) -> int:
    """:func:`make`, called."""
    return make(W, i, PP, a)


@jit_inline
def make(W: IntArray, i: int, PP: IntArray, a: int) -> int:
    """Make action ``a``: 0, or 1 (and nothing changed) when it is not legal now: not in
    the bits :func:`action_bits` gave when the table was last observed (every entry point
    observes after each change, :mod:`pontoon.env.run`). Compiled into the vector env's
    step (:func:`pontoon.env.run.step_many`, which a call cost some 20 words on the stack
    a table-step); the single env's step calls :func:`act`."""
    if a < 0 or a >= rule(PP, L.E_NA) or not (W[i, L.LEGAL] >> a) & 1:  # as observed
        return 1
    ph = W[i, L.PH]
    if ph == L.BET:
        deal(W, i, PP, PP[PP[L.E_OBETS] + a - (rule(PP, L.E_NA) - rule(PP, L.E_NBETS))])
        return 0
    if ph == L.INS:
        b = W[i, L.IB]
        if a == L.INSURE:
            W[i, rule(PP, L.E_OBX) + b * L.NBF + L.INSA] = _insurable(W, i, PP, b)
            W[i, L.INSURED] = 1
        if not ask_insurance(W, i, PP, b + 1):
            W[i, L.PH] = L.DECIDE
            if rule(PP, C.PEEK):  # the peek, then the play
                peek(W, i, PP)
                if W[i, L.PH] != L.OVER:
                    interim(W, i, PP)
                    advance(W, i, PP)
        void_if_empty(W, i)
        return 0
    b = W[i, L.TURN]
    s = slot(W, i, PP, b, W[i, L.HI])
    o = L.NT + s * L.NHF
    W[i, o + L.ACTED] = 1
    if a == L.HIT:
        put(W, i, PP, s, draw(W, i, PP, True))
        reached(W, i, PP, b, s)
    elif a == L.STAND:
        W[i, o + L.ST] = L.STOOD
    elif a == L.SPLIT:
        _split(W, i, PP, b, s)
    elif a == L.SURRENDER:
        if rule(PP, C.SURRENDER) == 1 or rule(PP, C.PEEK):  # settled at once; else 9.4: waits
            amt = W[i, o + L.AMT]
            W[i, L.NET] -= amt - won(amt, rule(PP, C.SURR_NUM), rule(PP, C.SURR_DEN))
            settle_hand(W, i, PP, s, L.SETTLED)
        else:
            W[i, o + L.ST] = L.SURRENDER_WAIT
    elif a == L.RESCUE:  # 12: the original wager lost, the double back
        W[i, L.NET] -= W[i, o + L.AMT]
        settle_hand(W, i, PP, s, L.SETTLED)
    else:  # a double, of the fraction the action names (14.1(b): one card)
        k = 0 if a == L.DOUBLE else a - L.NFIXED + 1
        odbl = PP[L.E_ODBL]
        W[i, o + L.DBL] = won(W[i, o + L.AMT], PP[odbl + 2 * k], PP[odbl + 2 * k + 1])
        put(W, i, PP, s, draw(W, i, PP, True))
        reached(W, i, PP, b, s)
        if W[i, o + L.ST] == L.OPEN and not rule(PP, C.RESCUE):
            W[i, o + L.ST] = L.STOOD
    advance(W, i, PP)
    void_if_empty(W, i)
    return 0


@jit_inline
def void_if_empty(W: IntArray, i: int) -> None:
    """16.7: a card was due with every card on the layout (none in the shoe or the discard
    rack), which the round engine refuses, leaving the round only to be voided (16.5): every
    wager is returned, even one already settled (a net of 0), and the round is over. The
    step went on with stand-in cards (:func:`pontoon.env.kernel.draw`) that nothing keeps.
    (The deal never finds the shoe empty: the layout is then clear.)"""
    if W[i, L.VOID]:
        W[i, L.NET] = 0
        W[i, L.PH] = L.OVER


@jit
def _split(W: IntArray, i: int, PP: IntArray, b: int, s: int) -> None:
    """13: the pair's second card makes a new hand, played next; the first hand takes its
    second card now (13.5)."""
    maxh = rule(PP, L.E_MAXH)
    obx = rule(PP, L.E_OBX) + b * L.NBF
    nh = W[i, obx + L.NH]
    ns = b * maxh + nh
    oord = rule(PP, L.E_OORD) + b * maxh
    for k in range(nh, W[i, L.HI] + 1, -1):
        W[i, oord + k] = W[i, oord + k - 1]
    W[i, oord + W[i, L.HI] + 1] = ns
    W[i, obx + L.NH] = nh + 1
    o, on = L.NT + s * L.NHF, L.NT + ns * L.NHF
    oc = rule(PP, L.E_OHC) + s * L.MAXC
    c0, c1 = W[i, oc], W[i, oc + 1]
    aces = 1 if value(c0) == 1 else 0
    for f in range(L.NHF):
        W[i, on + f] = 0
    W[i, on + L.AMT] = W[i, o + L.AMT]
    W[i, on + L.FSP] = 1
    W[i, on + L.SAC] = aces
    put(W, i, PP, ns, c1)
    W[i, o + L.HN] = 0
    W[i, o + L.HARD] = 0
    W[i, o + L.ACE] = 0
    put(W, i, PP, s, c0)
    W[i, o + L.FSP] = 1
    W[i, o + L.SAC] = aces
    put(W, i, PP, s, draw(W, i, PP, True))
    reached(W, i, PP, b, s)


__all__ = ["act", "action_bits", "advance", "deal", "hand_bits", "make"]
