"""The environment's steps specialised to one table: every compiled function of
:mod:`~pontoon.env.kernel`, :mod:`~pontoon.env.settle`, :mod:`~pontoon.env.steps` and
:mod:`~pontoon.env.run` compiled once more with the table's rule switches, its shape and the
offsets of its layout as constants (:data:`SPECIALISED`), as the simulator compiles its
kernel per specialisation (:func:`pontoon.sim.kernel.kernel_for`): the code of rules not in
play is left out and the offsets are folded into the addresses.

The functions are the same code: each step reads these parameters through
:func:`pontoon.env.kernel.rule`, which reads ``PP`` at run time; a specialised copy of a
function is the same code with ``rule`` returning the table's value, and calling the
specialised copies of the helpers. The values still come from the parameter array that
:class:`~pontoon.env.spec.TableSpec` compiles from the rule set: no rule is written here.
numba caches each copy on disk under its own name (the function's name and a digest of the
values), so a table of the same shape and switches loads it in later processes.

>>> from pontoon.env.spec import TableSpec
>>> from pontoon.rules import load_rules
>>> specialisation(TableSpec.build(load_rules("nz-pontoon"), log=False).params)[:4]
(0, 1, 1, 0)
"""

from __future__ import annotations

import functools
import hashlib
import types
from collections.abc import Callable
from typing import Any, Final

from numba import njit
from numba.core.registry import CPUDispatcher

from pontoon.env import kernel, run, settle, steps
from pontoon.env import layout as L
from pontoon.env.kernel import njit_without_nrt
from pontoon.sim import compiled as C
from pontoon.sim.kernel import IntArray

# the parameters compiled in: the switches of the rules, the odds a step pays (5.1, 9.3,
# 10), the table's shape and the offsets of its layout (which follow from the shape)
SPECIALISED: Final = (
    C.PEEK,
    C.P21,
    C.H17,
    C.SPLIT_BY_VALUE,
    C.BURN,
    C.SUPER,
    C.SURRENDER,
    C.TAKES_ALL,
    C.RESCUE,
    C.ODDS + 2 * C.NATURAL,
    C.ODDS + 2 * C.NATURAL + 1,
    C.SURR_NUM,
    C.SURR_DEN,
    L.E_INS,
    L.E_INS_MAX_NUM,
    L.E_INS_MAX_DEN,
    L.E_INS_PAYS_NUM,
    L.E_INS_PAYS_DEN,
    L.E_HSA,
    L.E_BOXES,
    L.E_MAXH,
    L.E_NA,
    L.E_NBETS,
    L.E_NDBL,
    L.E_LOGMAX,
    L.E_OHC,
    L.E_OBX,
    L.E_OORD,
    L.E_ODC,
    L.E_OCNT,
    L.E_OLOG,
    L.E_OSH,
)
MODULES: Final = (kernel, settle, steps, run)  # each calls only the ones before it


def specialisation(params: IntArray) -> tuple[int, ...]:
    """The values of :data:`SPECIALISED` in a table's parameter array."""
    return tuple(int(params[k]) for k in SPECIALISED)


def _reader(spec: tuple[int, ...]) -> Callable[[IntArray, int], int]:
    """:func:`pontoon.env.kernel.rule` with the values ``spec`` compiled in."""
    known = [-1] * L.NPP_HEAD
    for k, v in zip(SPECIALISED, spec, strict=True):
        known[k] = v
    values = tuple(known)

    @njit_without_nrt(inline="always")
    def rule(PP: IntArray, k: int) -> int:
        v = values[k]
        return PP[k] if v < 0 else v

    return rule


@functools.cache
def steps_for(spec: tuple[int, ...]) -> types.SimpleNamespace:
    """The entry points of :mod:`pontoon.env.run` (``step_many``, ``reset_many`` …) compiled
    for the values ``spec`` (:func:`specialisation`); compiled, or loaded from numba's cache,
    when first called."""
    if any(v < 0 for v in spec):
        raise ValueError("a specialisation's values must not be negative (-1: read at run time)")
    tag = hashlib.sha256(repr((SPECIALISED, spec)).encode()).hexdigest()[:12]
    copies: dict[int, Any] = {id(kernel.rule): _reader(spec)}
    out = types.SimpleNamespace()
    for module in MODULES:
        names = {k: copies.get(id(v), v) for k, v in vars(module).items()}
        if module is run:  # the vector step compiles the action's step into itself
            names["step_act"] = copies[id(steps.make)]
        for name, f in vars(module).items():
            if not isinstance(f, CPUDispatcher) or f.py_func.__module__ != module.__name__:
                continue
            if id(f) in copies:
                continue
            py = f.py_func
            g = types.FunctionType(py.__code__, names, py.__name__, py.__defaults__)
            g.__qualname__ = f"{py.__qualname__}_{tag}"  # numba's cache names it by this
            g.__doc__ = py.__doc__
            options = {k: v for k, v in f.targetoptions.items() if k in ("inline", "_nrt")}
            copy = njit(cache=True, **options)(g)
            copies[id(f)] = names[name] = copy
            if module is run:
                setattr(out, name, copy)
    return out


__all__ = ["SPECIALISED", "specialisation", "steps_for"]
