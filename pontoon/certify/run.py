"""Shuffling for the certification, as a live table shuffles: ``Shoe(rules, rng)`` and
``shoe.shuffle()`` (every card gathered, shuffled, the cutting card placed at the rules'
penetration, the first card burnt, 8.1), the shoe read through ``shoe.discards`` and
``shoe.remaining``.

The shuffles are cut into chunks of :data:`CHUNK`. Each chunk is one shoe, new from the box
(the pack in deck order, as a table's first shuffle), shuffled again and again: each shuffle
takes the previous shoe's cards in the order they lie. Chunk ``i`` shuffles with
``generator(key_i)``: the secure generator (``seeded(None)``, ``secrets.SystemRandom``, a
table's) for every chunk, or with ``--seed S`` ``seeded(key_i)``, a ``numpy`` generator whose
key is drawn from the ``i``-th child of ``SeedSequence(S)``. Chunks are counted in
:class:`~pontoon.certify.tally.Tally` and added in chunk order, so a seed gives the same
answer on any number of worker processes.

>>> from pontoon.rules import load_rules
>>> run = certify(load_rules("nz-pontoon", {"decks": 1}), 200, seed=1, workers=1)
>>> run.tally.shuffles, run.tally.pairs_of_shoes, run.tally.cut_off
(200, 199, 0)
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from pontoon.errors import InputError
from pontoon.progress import Advance, progress_bar
from pontoon.rules import RuleSet
from pontoon.shoe import Shoe, Shuffler, seeded

from .tally import Pack, Tally

CHUNK = 1000
MIN_SHUFFLES = 100

Generator = Callable[[int | None], Shuffler]  # a chunk's key (None: secure) -> its generator


@dataclass
class Run:
    rules: RuleSet
    seed: int | None  # None: the secure generator
    tally: Tally
    seconds: float
    workers: int


def chunk_keys(seed: int | None, chunks: int) -> list[int | None]:
    """One key per chunk: independent children of ``SeedSequence(seed)``, or None (secure)."""
    if seed is None:
        return [None] * chunks
    children = np.random.SeedSequence(seed).spawn(chunks)
    return [int(c.generate_state(1, np.uint64)[0]) for c in children]


def shuffle_chunk(rules: RuleSet, key: int | None, count: int, generator: Generator) -> Tally:
    """Shuffle one shoe ``count`` times and count every shoe it held."""
    pack = Pack.of(rules)
    shoe = Shoe(rules, generator(key))
    behind = pack.n - round(pack.n * rules.penetration)  # 7: where the cutting card goes
    shoes = np.empty((count, pack.n), np.int16)
    lookup = pack.index.__getitem__
    cut_off = 0
    for i in range(count):
        shoe.shuffle()
        # the burnt card (in the rack), then the shoe, next card first
        shoes[i] = np.fromiter(map(lookup, [*shoe.discards, *shoe.remaining]), np.int16, pack.n)
        cut_off += shoe.behind_cut != behind
    tally = Tally(pack)
    with threadpool_limits(1):  # small matrices: BLAS threads would only contend
        tally.count(shoes, rules.burn_card, cut_off)
    return tally


_worker: tuple[RuleSet, Generator] | None = None  # a local worker's rules, given once


def _set_worker(rules: RuleSet, generator: Generator) -> None:
    global _worker
    _worker = (rules, generator)


def _task(key: int | None, count: int) -> Tally:
    assert _worker is not None
    return shuffle_chunk(_worker[0], key, count, _worker[1])


def certify(
    rules: RuleSet,
    shuffles: int,
    *,
    seed: int | None = None,
    workers: int | None = None,
    progress: bool = False,
    generator: Generator = seeded,
) -> Run:
    """Shuffle ``shuffles`` times on ``workers`` processes (default: every core)."""
    if shuffles < MIN_SHUFFLES:
        raise InputError(f"--shuffles must be at least {MIN_SHUFFLES}, not {shuffles}")
    if seed is not None and seed < 0:
        raise InputError(f"--seed must not be negative, not {seed}")
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    sizes = [CHUNK] * (shuffles // CHUNK) + ([shuffles % CHUNK] if shuffles % CHUNK else [])
    keys = chunk_keys(seed, len(sizes))
    start = time.perf_counter()
    with progress_bar(shuffles, progress, "shuffling", _rate) as advance:
        if workers == 1 or len(sizes) == 1:
            parts = []
            for key, n in zip(keys, sizes, strict=True):
                parts.append(shuffle_chunk(rules, key, n, generator))
                advance(n)
        else:
            parts = _local(rules, generator, keys, sizes, workers, advance)
    tally = Tally(Pack.of(rules))
    for part in parts:
        tally.add(part)
    workers = min(workers, len(sizes))
    return Run(rules, seed, tally, time.perf_counter() - start, workers)


def _local(
    rules: RuleSet,
    generator: Generator,
    keys: list[int | None],
    sizes: list[int],
    workers: int,
    advance: Advance,
) -> list[Tally]:
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    out: dict[int, Tally] = {}
    with ProcessPoolExecutor(
        max_workers=min(workers, len(sizes)),
        mp_context=ctx,
        initializer=_set_worker,
        initargs=(rules, generator),
    ) as pool:
        futures = {
            pool.submit(_task, key, n): (i, n)
            for i, (key, n) in enumerate(zip(keys, sizes, strict=True))
        }
        for fut in as_completed(futures):
            i, n = futures[fut]
            out[i] = fut.result()
            advance(n)
    return [out[i] for i in range(len(sizes))]


def _rate(speed: float) -> str:
    return f"{speed:,.0f} shuffles/s"
