"""How long a server took over the messages it applied, from the text read to the reply
posted (parsing, the table's lock, the rules, the commit and the broadcast queued): a
histogram with fixed bounds, as a metrics system keeps one, so that the counts of several
processes (or of two moments, subtracted) add up.

The quantiles it gives are bounds, not measurements: "99 % took at most this", to the
bucket (six a decade, so within 50 %).

>>> t = Timings()
>>> for ms in [0.3] * 98 + [4.0, 40.0]:
...     t.add(ms / 1000)
>>> t.count, at_most(t.counts, 0.5), at_most(t.counts, 0.99), at_most(t.counts, 1.0)
(100, 0.3, 5.0, 50.0)
>>> at_most([0] * len(t.counts), 0.99) is None
True
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

# 1, 1.5, 2, 3, 5, 7 a decade, from 0.1 ms to 10 s; a last bucket above
BOUNDS_MS: tuple[float, ...] = (
    *(round(m * 10.0**e, 4) for e in range(-1, 4) for m in (1, 1.5, 2, 3, 5, 7)),
    10_000.0,
)
_BOUNDS_S = tuple(b / 1000 for b in BOUNDS_MS)


class Timings:
    """The counts of durations in each bucket: ``counts[i]`` took at most ``BOUNDS_MS[i]``
    (and more than the bound before it); the last, more than every bound."""

    def __init__(self) -> None:
        self.counts = [0] * (len(BOUNDS_MS) + 1)
        self.count = 0
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bisect_left(_BOUNDS_S, seconds)] += 1
        self.count += 1
        self.seconds += seconds

    def doc(self) -> dict[str, Any]:
        """As ``/api/stats`` gives it."""
        return {
            "count": self.count,
            "seconds": round(self.seconds, 6),
            "bounds_ms": list(BOUNDS_MS),
            "counts": list(self.counts),
            "p50_ms_at_most": at_most(self.counts, 0.50),
            "p99_ms_at_most": at_most(self.counts, 0.99),
        }


def at_most(counts: list[int], q: float) -> float | None:
    """The bound (ms) under which a share ``q`` of the durations counted fell; None when
    there are none, or when that share includes some past the last bound."""
    total = sum(counts)
    if total == 0:
        return None
    seen = 0
    for i, n in enumerate(counts):
        seen += n
        if seen >= q * total:
            return BOUNDS_MS[i] if i < len(BOUNDS_MS) else None
    return None
