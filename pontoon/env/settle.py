"""The environment's compiled dealer, continued: interim settlement (9.1), the peek (8.5),
the dealer's hand (14.3, 14.4) and the settlement of every hand (5.1, 9.4, 11.2, 13.7), as
:mod:`pontoon.dealer` does them, on the flat state of :mod:`pontoon.env.layout`."""

from __future__ import annotations

from pontoon.env import layout as L
from pontoon.env.kernel import (
    best,
    draw,
    finish,
    jit,
    jit_inline,
    odds21,
    reveal,
    rule,
    settle_insurance,
    to_dealer,
    value,
    won,
)
from pontoon.sim import compiled as C
from pontoon.sim.kernel import IntArray

# The constants compiled into this file's cached machine code (pontoon.sim.compiled's and
# pontoon.env.layout's), by digest: numba checks only this file for changes, so a changed
# layout must change this line too (tests/test_sim_compiled.py says to what).
COMPILED_LAYOUT = "15889cd4358da6d6"


@jit_inline
def slot(W: IntArray, i: int, PP: IntArray, b: int, k: int) -> int:
    """The slot of hand ``k`` of box ``b``."""
    return W[i, rule(PP, L.E_OORD) + b * rule(PP, L.E_MAXH) + k]  # type: ignore[no-any-return]


@jit_inline
def hands_on(W: IntArray, i: int, PP: IntArray, b: int) -> int:
    return W[i, rule(PP, L.E_OBX) + b * L.NBF + L.NH]  # type: ignore[no-any-return]


@jit_inline
def pontoon_at(W: IntArray, i: int, PP: IntArray, s: int) -> bool:
    o = L.NT + s * L.NHF
    return W[i, o + L.HN] == 2 and W[i, o + L.HARD] == 11 and W[i, o + L.ACE] == 1  # type: ignore[no-any-return]


@jit_inline
def settle_hand(W: IntArray, i: int, PP: IntArray, s: int, state: int) -> None:
    """A hand settled and its cards to the discard rack."""
    W[i, L.NT + s * L.NHF + L.ST] = state
    W[i, L.NT + s * L.NHF + L.DISC] = 1


@jit_inline
def natural_won(PP: IntArray, amt: int) -> int:
    """What a pontoon of ``amt`` wins (5.1)."""
    return won(amt, rule(PP, C.ODDS + 2 * C.NATURAL), rule(PP, C.ODDS + 2 * C.NATURAL + 1))


@jit
def interim(W: IntArray, i: int, PP: IntArray) -> None:
    """9.1: a pontoon is paid at once (where 21 wins, or in the peek game), else waits."""
    for b in range(rule(PP, L.E_BOXES)):
        s = slot(W, i, PP, b, 0)
        if pontoon_at(W, i, PP, s):
            if rule(PP, C.P21) or rule(PP, C.PEEK):
                amt = W[i, L.NT + s * L.NHF + L.AMT]
                W[i, L.NET] += natural_won(PP, amt)
                settle_hand(W, i, PP, s, L.SETTLED)
            else:
                W[i, L.NT + s * L.NHF + L.ST] = L.NATURAL_WAIT


@jit
def peek(W: IntArray, i: int, PP: IntArray) -> None:
    """8.5: with an ace or ten up the dealer looks at the hole card; insurance is settled,
    and a dealer pontoon ends the round at once."""
    upv = value(W[i, rule(PP, L.E_ODC)])
    if upv != 1 and upv != 10:
        return
    natural = upv + value(W[i, L.HOLE]) == 11
    settle_insurance(W, i, PP, natural)
    if not natural:
        return
    reveal(W, i, PP)
    for b in range(rule(PP, L.E_BOXES)):
        s = slot(W, i, PP, b, 0)
        amt = W[i, L.NT + s * L.NHF + L.AMT]
        if pontoon_at(W, i, PP, s):
            if rule(PP, C.P21):
                W[i, L.NET] += natural_won(PP, amt)
        else:
            W[i, L.NET] -= amt
        W[i, L.NT + s * L.NHF + L.ST] = L.SETTLED
    finish(W, i, PP)


@jit
def card_reached(W: IntArray, i: int, PP: IntArray, s: int) -> bool:
    """A card has reached an open hand: bust (14.2) or 21 (9.2, 11.2). True for split aces
    that may draw no more (14.1(c)): they stand unless legality lets them split again, which
    the caller asks only then."""
    o = L.NT + s * L.NHF
    hard = W[i, o + L.HARD]
    amt = W[i, o + L.AMT] + W[i, o + L.DBL]
    if hard > 21:
        W[i, L.NET] -= amt
        settle_hand(W, i, PP, s, L.SETTLED)
        return False
    if best(hard, W[i, o + L.ACE]) == 21:
        oc = rule(PP, L.E_OHC) + s * L.MAXC
        c0 = W[i, oc]
        if (
            rule(PP, C.SUPER)
            and not W[i, o + L.FSP]
            and W[i, o + L.DBL] == 0
            and W[i, L.DN] > 0
            and W[i, rule(PP, L.E_ODC)] % 13 == 6
            and W[i, o + L.HN] == 3
            and c0 % 13 == 6
            and W[i, oc + 1] == c0
            and W[i, oc + 2] == c0
        ):
            W[i, o + L.ST] = L.SUPER_WAIT  # 11.2: paid at the end of the round
        elif rule(PP, C.P21):
            num, den = odds21(W, i, PP, s)
            W[i, L.NET] += won(amt, num, den)
            settle_hand(W, i, PP, s, L.SETTLED)
        else:
            W[i, o + L.ST] = L.STOOD
        return False
    return W[i, o + L.SAC] == 1 and not rule(PP, L.E_HSA)


@jit
def dealer_turn(W: IntArray, i: int, PP: IntArray) -> None:
    """8.5, 14.3, 14.4: the dealer's second card (only when a hand waits for it) and draws
    (only when a hand stood), then the settlement."""
    full = False
    second = W[i, L.INSURED] == 1
    for b in range(rule(PP, L.E_BOXES)):
        for k in range(hands_on(W, i, PP, b)):
            x = W[i, L.NT + slot(W, i, PP, b, k) * L.NHF + L.ST]
            if x == L.STOOD:
                full = True
            elif x == L.NATURAL_WAIT or x == L.SURRENDER_WAIT:
                second = True
    second = second or full
    if rule(PP, C.PEEK):
        if second:
            reveal(W, i, PP)
    elif second:
        to_dealer(W, i, PP, draw(W, i, PP, True))
    dnat = W[i, L.DN] == 2 and W[i, L.DH] == 11 and W[i, L.DA] == 1
    if not rule(PP, C.PEEK):
        settle_insurance(W, i, PP, dnat)
    if full and not dnat:
        while True:
            hard = W[i, L.DH]
            t = best(hard, W[i, L.DA])
            soft = t != hard
            if t > 17 or (t == 17 and not (soft and rule(PP, C.H17))):
                break
            to_dealer(W, i, PP, draw(W, i, PP, True))
    settle_all(W, i, PP, dnat)
    finish(W, i, PP)


@jit
def settle_all(W: IntArray, i: int, PP: IntArray, dnat: bool) -> None:
    d = best(W[i, L.DH], W[i, L.DA])
    nat_num = rule(PP, C.ODDS + 2 * C.NATURAL)
    nat_den = rule(PP, C.ODDS + 2 * C.NATURAL + 1)
    for b in range(rule(PP, L.E_BOXES)):
        cap = W[i, L.STAKE]  # 13.7: what a dealer pontoon may still take from the box
        for k in range(hands_on(W, i, PP, b)):
            s = slot(W, i, PP, b, k)
            o = L.NT + s * L.NHF
            x = W[i, o + L.ST]
            amt = W[i, o + L.AMT] + W[i, o + L.DBL]
            if x == L.SURRENDER_WAIT:  # 9.4: void on a dealer pontoon
                if dnat:
                    W[i, L.NET] -= amt
                else:
                    W[i, L.NET] -= amt - won(amt, rule(PP, C.SURR_NUM), rule(PP, C.SURR_DEN))
            elif x == L.SUPER_WAIT:  # 11.2
                if amt < PP[C.SB_MIN]:
                    num, den = odds21(W, i, PP, s)
                    W[i, L.NET] += won(amt, num, den)
                elif amt >= PP[C.SB_THRESHOLD]:
                    W[i, L.NET] += PP[C.SB_LARGE]
                else:
                    W[i, L.NET] += PP[C.SB_SMALL]
            elif x == L.NATURAL_WAIT:
                if not dnat:
                    W[i, L.NET] += won(amt, nat_num, nat_den)
            elif x == L.STOOD:
                if dnat:  # 13.7, 13.8
                    lost = amt if rule(PP, C.TAKES_ALL) else min(amt, cap)
                    cap -= lost
                    W[i, L.NET] -= lost
                else:
                    p = best(W[i, o + L.HARD], W[i, o + L.ACE])
                    if d > 21 or p > d:
                        if p == 21:
                            num, den = odds21(W, i, PP, s)
                            W[i, L.NET] += won(amt, num, den)
                        else:
                            W[i, L.NET] += amt
                    elif p < d:
                        W[i, L.NET] -= amt
            if x != L.SETTLED:
                W[i, o + L.ST] = L.SETTLED
