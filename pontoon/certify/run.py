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

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from pontoon.cluster import TaskPool
from pontoon.errors import InputError
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


def _task(task: tuple[RuleSet, int | None, int, Generator]) -> Tally:
    return shuffle_chunk(*task)


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
    tasks = [(rules, key, n, generator) for key, n in zip(keys, sizes, strict=True)]
    with TaskPool(
        _task, tasks, workers=workers, progress=progress, label="chunks", rate=_rate
    ) as pool:
        parts = pool.results()
    tally = Tally(Pack.of(rules))
    for part in parts:
        tally.add(part)
    workers = min(workers, len(sizes))
    return Run(rules, seed, tally, time.perf_counter() - start, workers)


def _rate(chunks_per_second: float) -> str:
    return f"{chunks_per_second * CHUNK:,.0f} shuffles/s"
