"""The simulator's shuffle, in plain Python: the same cards as the kernel's, for the engine.

Every shuffle of a chunk's shoe draws from its own SplitMix64 stream, keyed by the chunk's key
(from a :class:`numpy.random.SeedSequence`) and the shuffle's number. A shuffle first puts
the cards in canonical order (:func:`pontoon.sim.compiled.card_code`) and then runs
Fisher-Yates from the front, drawing each place's card uniformly from those left (Lemire's
unbiased bounded integers). The kernel does the same place by place (the places in front of
the cutting card at once, the rest as the deal reaches them); :class:`KernelShuffler` does it
all at once for :class:`pontoon.shoe.Shoe`, which then deals exactly the kernel's cards, burn
card, cutting card and reshuffles included.

>>> s = Stream(chunk_key=1, shuffle=0)
>>> [s.below(6) for _ in range(5)]
[3, 1, 5, 1, 2]
"""

from __future__ import annotations

from typing import Any, Final

from pontoon.cards import ALL_CARDS

MASK64: Final = (1 << 64) - 1
GOLDEN: Final = 0x9E3779B97F4A7C15
MIX1: Final = 0xBF58476D1CE4E5B9
MIX2: Final = 0x94D049BB133111EB


def mix64(z: int) -> int:
    """SplitMix64's finaliser."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def stream_state(chunk_key: int, shuffle: int) -> int:
    """The starting state of shuffle number ``shuffle`` of a chunk."""
    return mix64((chunk_key ^ mix64((shuffle + 1) * GOLDEN & MASK64)) & MASK64)


class Stream:
    """One shuffle's SplitMix64 stream."""

    def __init__(self, chunk_key: int, shuffle: int) -> None:
        self.state = stream_state(chunk_key, shuffle)

    def next32(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        return mix64(self.state) >> 32

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), 1 <= n < 2**32 (Lemire's method)."""
        m = self.next32() * n
        low = m & 0xFFFFFFFF
        if low < n:
            t = ((1 << 32) - n) % n
            while low < t:
                m = self.next32() * n
                low = m & 0xFFFFFFFF
        return m >> 32


_ORDER: Final = {card: k for k, card in enumerate(ALL_CARDS)}


class KernelShuffler:
    """A :class:`pontoon.shoe.Shuffler` that shuffles exactly as the kernel does for the
    chunk ``chunk_key``. ``Shoe`` deals from the end of its list, so the order is reversed."""

    def __init__(self, chunk_key: int) -> None:
        self.chunk_key = chunk_key
        self.shuffles = 0

    def shuffle(self, x: Any, /) -> None:
        x.sort(key=_ORDER.__getitem__)
        stream = Stream(self.chunk_key, self.shuffles)
        self.shuffles += 1
        n = len(x)
        for i in range(n):
            j = i + stream.below(n - i)
            x[i], x[j] = x[j], x[i]
        x.reverse()
