"""The environment's compiled dealer: the shoe, the cards, the dealer's hand and the
settlement of a table whose state is one row of ``W`` (:mod:`pontoon.env.layout`).

Each step is :class:`pontoon.round.Round`'s (the dealer steps of :mod:`pontoon.dealer`) on
the flat state, with the rules read from the parameter array ``PP`` that
:class:`pontoon.env.spec.TableSpec` compiles from the rule set: no rule is written here, only
how the round applies them. The shoe is :class:`pontoon.shoe.Shoe`'s and its shuffles are
the simulator's (:class:`pontoon.sim.rng.KernelShuffler` deals the same cards): shuffle,
cutting card, burn card (8.1), reshuffle before a round after the cutting card came out (8.7)
or when it is next (8.8), the discard rack reshuffled when the shoe runs out (16.7).
``tests/test_env_engine.py`` plays the same shoes through these steps and the round engine.

numba caches each function (``cache=True``) checking only its own file for changes, and the
entry points (:mod:`pontoon.env.run`) carry the helpers they call compiled in: after editing
this file, ``settle.py`` or ``steps.py``, delete ``pontoon/env/__pycache__``. A changed layout
(``layout.py``, :mod:`pontoon.sim.compiled`) changes each such file's ``COMPILED_LAYOUT``
(``tests/test_sim_compiled.py`` says to what), so their caches are compiled again.

Every step is compiled without numba's reference counting (:data:`jit`): the steps
allocate nothing and only read and write the arrays the Python caller holds for the whole
call, and the counting's atomic increments around each helper's call were half of a vector
step's time (docs/researchers/env.md, "Speed").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]  # (llvmlite has no types)
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic

from pontoon.env import layout as L
from pontoon.sim import compiled as C
from pontoon.sim.kernel import IntArray, shuffle_places, stream_state

# The constants compiled into this file's cached machine code (pontoon.sim.compiled's and
# pontoon.env.layout's), by digest: numba checks only this file for changes, so a changed
# layout must change this line too (tests/test_sim_compiled.py says to what).
COMPILED_LAYOUT = "15889cd4358da6d6"

U64 = np.uint64

_F = TypeVar("_F", bound=Callable[..., Any])


def njit_without_nrt(**options: Any) -> Callable[[_F], _F]:
    """numba's ``njit(**options)`` compiling without its reference counting (``_nrt=False``,
    an option numba's own types do not list), typed as numba types its other options: the
    compiled function is called as the Python function it compiles. numba reads no
    annotation (it types the arguments it is given): they change no machine code."""
    everything: dict[str, Any] = {**options, "_nrt": False}
    return cast(Callable[[_F], _F], njit(**everything))


jit: Final = njit_without_nrt(cache=True)  # a step: no reference counting (nothing allocated)
jit_inline: Final = njit_without_nrt(cache=True, inline="always")  # a hot path's helper


def _prefetch(typingctx: Any, W: Any, i: Any, k: Any) -> tuple[Any, Callable[..., Any]]:
    """Ask the processor for the cache line of ``W[i, k]`` ahead of its use (LLVM's
    ``prefetch``, for a write): the vector env's next tables' states, which do not all stay
    in the cache."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        aryty = sig.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(  # type: ignore[no-untyped-call]  # (numba's own, untyped)
            context, builder, aryty, ary, args[1:], wraparound=False
        )
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(W, i, k), codegen


# numba's types call an intrinsic with its typing context among the arguments; compiled code
# calls it without (numba passes that), as typed here
prefetch: Final = cast(Callable[[IntArray, int, int], None], intrinsic(_prefetch))


@jit_inline
def rule(PP: IntArray, k: int) -> int:
    """A rule's switch or value, or an offset of the table's layout: ``PP[k]``, read at run
    time here. A step specialised to a table (:mod:`pontoon.env.special`) has it compiled in
    as a constant instead, so that the code of rules not in play is left out.
    (The ``no-any-return`` ignores of the steps: numpy's types give an element of an int64
    array as Any; numba knows it is an int64.)"""
    return PP[k]  # type: ignore[no-any-return]


@jit
def shuffle_shoe(W: IntArray, i: int, PP: IntArray, n: int) -> None:
    """Fisher-Yates over the shoe's ``n`` cards on the stream of this shuffle, as the
    simulator shuffles (:func:`pontoon.sim.kernel.shuffle_places`: Lemire's unbiased draws)."""
    osh = rule(PP, L.E_OSH)
    rs = stream_state(U64(W[i, L.KEY]), W[i, L.NSHUF])
    W[i, L.NSHUF] += 1
    shuffle_places(W[i, osh : osh + n], 0, n, n, rs)


@jit_inline
def value(c: int) -> int:
    return min(c % 13 + 1, 10)


@jit_inline
def best(hard: int, ace: int) -> int:
    return hard + 10 if ace and hard <= 11 else hard


@jit_inline
def note(W: IntArray, i: int, PP: IntArray, x: int) -> None:
    """Add an entry to the round's log (when the table keeps one)."""
    n = W[i, L.LOGN]
    if n < rule(PP, L.E_LOGMAX):
        W[i, rule(PP, L.E_OLOG) + n] = x
        W[i, L.LOGN] = n + 1


@jit
def _clear_counts(W: IntArray, i: int, PP: IntArray) -> None:
    o = rule(PP, L.E_OCNT)
    for v in range(L.NVAL):
        W[i, o + v] = 0


@jit
def start_round(W: IntArray, i: int, PP: IntArray) -> None:
    """Shoe.start_round, then the betting (8.2): a new log, a shuffle when due."""
    W[i, L.LOGN] = 0
    W[i, L.VOID] = 0
    n = W[i, L.NCARDS]
    left = n - W[i, L.POS]
    bcut = W[i, L.BCUT]
    if W[i, L.NSHUF] == 0 or W[i, L.CUTR] or left <= bcut:
        if W[i, L.NSHUF] == 0:
            note(W, i, PP, L.LOG_SHUFFLE[0])  # 7
        elif W[i, L.CUTR] or left < bcut:
            note(W, i, PP, L.LOG_SHUFFLE[1])  # 8.7
        else:
            note(W, i, PP, L.LOG_SHUFFLE[2])  # 8.8
        ntmpl = PP[L.E_NTMPL]
        otmpl = PP[L.E_OTMPL]
        osh = rule(PP, L.E_OSH)
        for k in range(ntmpl):
            W[i, osh + k] = PP[otmpl + k]
        W[i, L.NCARDS] = ntmpl
        W[i, L.POS] = 0
        W[i, L.BCUT] = PP[C.BEHIND_CUT]
        W[i, L.CUTR] = 0
        shuffle_shoe(W, i, PP, ntmpl)
        _clear_counts(W, i, PP)
        if rule(PP, C.BURN):  # 8.1
            note(W, i, PP, L.LOG_BURN - W[i, osh])
            W[i, L.POS] = 1
    W[i, L.PH] = L.BET


@jit
def _refill(W: IntArray, i: int, PP: IntArray) -> None:
    """16.7: the shoe ran out mid-round; every card not on the layout (the discard rack)
    is put in canonical order and shuffled (the codes counted in the row's scratch). With no
    such card the round is marked void (``VOID``) and the shoe stays as it was."""
    cnt = W[i, rule(PP, L.E_OSH) + PP[L.E_NTMPL] :]
    for code in range(L.NCODES):
        cnt[code] = 0
    otmpl = PP[L.E_OTMPL]
    for k in range(PP[L.E_NTMPL]):
        cnt[PP[otmpl + k]] += 1
    maxh = rule(PP, L.E_MAXH)
    ohc = rule(PP, L.E_OHC)
    for b in range(rule(PP, L.E_BOXES)):
        for k in range(W[i, rule(PP, L.E_OBX) + b * L.NBF + L.NH]):
            s = W[i, rule(PP, L.E_OORD) + b * maxh + k]
            o = L.NT + s * L.NHF
            if not W[i, o + L.DISC]:
                for j in range(W[i, o + L.HN]):
                    cnt[W[i, ohc + s * L.MAXC + j]] -= 1
    for j in range(W[i, L.DN]):
        cnt[W[i, rule(PP, L.E_ODC) + j]] -= 1
    if W[i, L.HOLE] >= 0:
        cnt[W[i, L.HOLE]] -= 1
    osh = rule(PP, L.E_OSH)
    n = 0
    for code in range(L.NCODES):
        for _ in range(cnt[code]):
            W[i, osh + n] = code
            n += 1
    if n == 0:  # every card is on the layout: the round can only be voided (16.5)
        W[i, L.VOID] = 1
        return
    W[i, L.NCARDS] = n
    W[i, L.POS] = 0
    W[i, L.CUTR] = W[i, L.CUTR] or W[i, L.BCUT] >= 1
    W[i, L.BCUT] = 0
    note(W, i, PP, L.LOG_SHUFFLE[3])
    shuffle_shoe(W, i, PP, n)
    _clear_counts(W, i, PP)


@jit_inline
def draw(W: IntArray, i: int, PP: IntArray, seen: bool) -> int:
    """Shoe.draw: the next card (counted among the cards seen unless face down); an ace that
    is no card when 16.7 finds none (the round is void: :func:`pontoon.env.steps.act`)."""
    if W[i, L.POS] == W[i, L.NCARDS]:
        _refill(W, i, PP)
        if W[i, L.VOID]:
            return 0
    pos = W[i, L.POS]
    c = W[i, rule(PP, L.E_OSH) + pos]
    W[i, L.POS] = pos + 1
    if rule(PP, L.E_LOGMAX):
        note(W, i, PP, c)
    if seen:
        W[i, rule(PP, L.E_OCNT) + value(c) - 1] += 1
    return c  # type: ignore[no-any-return]


@jit_inline
def put(W: IntArray, i: int, PP: IntArray, s: int, c: int) -> None:
    """A card to hand slot ``s``."""
    o = L.NT + s * L.NHF
    n = W[i, o + L.HN]
    W[i, rule(PP, L.E_OHC) + s * L.MAXC + n] = c
    W[i, o + L.HN] = n + 1
    v = value(c)
    W[i, o + L.HARD] += v
    if v == 1:
        W[i, o + L.ACE] = 1


@jit_inline
def to_dealer(W: IntArray, i: int, PP: IntArray, c: int) -> None:
    W[i, rule(PP, L.E_ODC) + W[i, L.DN]] = c
    W[i, L.DN] += 1
    v = value(c)
    W[i, L.DH] += v
    if v == 1:
        W[i, L.DA] = 1


@jit_inline
def reveal(W: IntArray, i: int, PP: IntArray) -> None:
    """8.5: the hole card turned over (and seen)."""
    c = W[i, L.HOLE]
    if c >= 0:
        W[i, L.HOLE] = -1
        to_dealer(W, i, PP, c)
        W[i, rule(PP, L.E_OCNT) + value(c) - 1] += 1


@jit_inline
def won(amount: int, num: int, den: int) -> int:
    """settlement.winnings: rounded down to the minor unit."""
    return amount * num // den


@jit
def odds21(W: IntArray, i: int, PP: IntArray, s: int) -> tuple[int, int]:
    """settlement.win_odds of a 21 that is no pontoon on slot ``s`` (odds_tables)."""
    o = L.NT + s * L.NHF
    n = W[i, o + L.HN]
    d = 1 if W[i, o + L.DBL] > 0 else 0
    if n == 3:
        oc = rule(PP, L.E_OHC) + s * L.MAXC
        c0, c1, c2 = W[i, oc], W[i, oc + 1], W[i, oc + 2]
        r0, r1, r2 = c0 % 13 + 1, c1 % 13 + 1, c2 % 13 + 1
        lo, hi = min(r0, r1, r2), max(r0, r1, r2)
        mid = r0 + r1 + r2 - lo - hi
        sp = 0
        if c0 // 13 == c1 // 13 and c0 // 13 == c2 // 13:
            sp = 2 if c0 // 13 == 0 else 1
        k = PP[L.E_ODDS3] + ((((d * 14 + lo) * 14 + mid) * 14 + hi) * 3 + sp) * 2
    else:
        k = PP[L.E_ODDSN] + (d * (L.MAXC + 1) + min(n, L.MAXC)) * 2
    return PP[k], PP[k + 1]


@jit_inline
def settle_insurance(W: IntArray, i: int, PP: IntArray, natural: bool) -> None:
    for b in range(rule(PP, L.E_BOXES)):
        amt = W[i, rule(PP, L.E_OBX) + b * L.NBF + L.INSA]
        if amt > 0:
            if natural:
                W[i, L.NET] += won(amt, rule(PP, L.E_INS_PAYS_NUM), rule(PP, L.E_INS_PAYS_DEN))
            else:
                W[i, L.NET] -= amt


@jit_inline
def finish(W: IntArray, i: int, PP: IntArray) -> None:
    """8.6: the round is over (the hole card, if still down, is shown)."""
    reveal(W, i, PP)
    W[i, L.PH] = L.OVER
