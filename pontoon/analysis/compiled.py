"""The analysis's compiled loops (:mod:`pontoon.analysis._compiled`, Cython, built by the
install), or None for each where the package was installed without a C compiler: then the
numpy code beside each call does the same work. Callers read them here at call time, so that
a test can take one away and compare the two."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

dealer_trie: Callable[..., None] | None = None  # pontoon.analysis.dealer._evaluate
walk_sums: Callable[..., None] | None = None  # pontoon.analysis.walk._Walk._sums
walk_choose: Callable[..., None] | None = None  # pontoon.analysis.walk._Walk._choose
add_endings: Callable[..., None] | None = None  # pontoon.analysis.reach.Forward.emit
forward_step: Callable[..., None] | None = None  # pontoon.analysis.reach.Forward._step
with suppress(ImportError):  # (an install without a C compiler: the Nones stand)
    from pontoon.analysis._compiled import (
        add_endings,
        dealer_trie,
        forward_step,
        walk_choose,
        walk_sums,
    )

__all__ = ["add_endings", "dealer_trie", "forward_step", "walk_choose", "walk_sums"]
