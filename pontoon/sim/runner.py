"""Running a job's chunks: in this process, on local processes, or on a Dask cluster.

The rounds are cut into chunks of a fixed size (:meth:`Job.chunk_rounds`); chunk ``i`` plays
from a fresh shoe with the key drawn from the ``i``-th child of ``SeedSequence(seed)``.
Results are added up in chunk order, so the same seed gives the same answer with any number
of workers or on any cluster.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from pontoon.cluster import dask_client
from pontoon.errors import InputError
from pontoon.progress import Advance as Progress
from pontoon.progress import progress_bar
from pontoon.sim.job import ChunkResult, Job, run_chunk


def chunk_keys(seed: int, chunks: int) -> list[int]:
    """One 64-bit key per chunk, from independent children of one SeedSequence."""
    children = np.random.SeedSequence(seed).spawn(chunks)
    return [int(c.generate_state(1, np.uint64)[0]) for c in children]


@dataclass
class Run:
    """What a simulation produced and how long it took."""

    job: Job
    seed: int
    rounds: int
    result: ChunkResult
    seconds: float
    workers: int
    chunks: int
    scheduler: str | None = None

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.seconds if self.seconds > 0 else 0.0


def _tasks(job: Job, keys: list[int], sizes: list[int]) -> list[ChunkResult]:
    """A Dask task: consecutive chunks, their results in order."""
    return [run_chunk(job, key, n)[0] for key, n in zip(keys, sizes, strict=True)]


_worker_job: Job | None = None  # a local worker's job, given once when the pool starts


def _set_job(job: Job) -> None:
    global _worker_job
    _worker_job = job


def _local_task(key: int, rounds: int) -> ChunkResult:
    assert _worker_job is not None
    return run_chunk(_worker_job, key, rounds)[0]


def simulate(
    job: Job,
    rounds: int,
    seed: int,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
) -> Run:
    """Play ``rounds`` rounds of ``job`` and add up the results."""
    if rounds < 1:
        raise InputError(f"--rounds must be at least 1, not {rounds}")
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    job = job.for_rounds(rounds)  # the whole run's kernel, not each chunk's
    sizes = job.chunk_rounds(rounds)
    keys = chunk_keys(seed, len(sizes))
    run_chunk(job, 1, 1)  # compile (or load the cached kernel) before the clock and the fork
    show = sys.stderr.isatty() if progress is None else progress
    start = time.perf_counter()
    total = InOrder()
    with progress_bar(rounds, show, "simulating", _rounds_per_second) as advance:
        if scheduler is not None:
            _dask(job, keys, sizes, scheduler, advance, total)
        elif workers == 1 or len(sizes) == 1:
            for i, (key, n) in enumerate(zip(keys, sizes, strict=True)):
                total.put(i, run_chunk(job, key, n)[0])
                advance(n)
        else:
            _local(job, keys, sizes, workers, advance, total)
    seconds = time.perf_counter() - start
    return Run(job, seed, rounds, total.result(), seconds, workers, len(sizes), scheduler)


class InOrder:
    """The chunks' results added up in chunk order as they come, so the sum (its rounding
    too) does not depend on which worker finished first; only the results that came before
    an earlier chunk's are held (not every chunk's accumulators: a run with probes holds
    over a megabyte a chunk)."""

    def __init__(self) -> None:
        self.total: ChunkResult | None = None
        self.next = 0
        self.early: dict[int, ChunkResult] = {}

    def put(self, i: int, part: ChunkResult) -> None:
        self.early[i] = part
        while self.next in self.early:
            part = self.early.pop(self.next)
            if self.total is None:
                self.total = part
            else:
                self.total.add(part)
            self.next += 1

    def result(self) -> ChunkResult:
        assert self.total is not None and not self.early, "a chunk's result is missing"
        return self.total


def _local(
    job: Job, keys: list[int], sizes: list[int], workers: int, advance: Progress, out: InOrder
) -> None:
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    todo = iter(enumerate(zip(keys, sizes, strict=True)))
    with ProcessPoolExecutor(
        max_workers=min(workers, len(sizes)), mp_context=ctx, initializer=_set_job, initargs=(job,)
    ) as pool:
        running: dict[Future[ChunkResult], tuple[int, int]] = {}

        def submit() -> None:
            nxt = next(todo, None)
            if nxt is not None:
                i, (key, n) = nxt
                running[pool.submit(_local_task, key, n)] = (i, n)

        for _ in range(2 * workers):  # a few chunks ahead: each future holds its result
            submit()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                i, n = running.pop(fut)
                out.put(i, fut.result())
                advance(n)
                submit()


def _dask(
    job: Job, keys: list[int], sizes: list[int], address: str, advance: Progress, out: InOrder
) -> None:
    with dask_client(address) as client:
        from distributed import as_completed as dask_completed

        shared = client.scatter(job, broadcast=True)
        threads = sum(client.nthreads().values())
        tasks = guided(len(keys), threads)
        futures = client.map(
            _tasks,
            [shared] * len(tasks),
            [keys[t.start : t.stop] for t in tasks],
            [sizes[t.start : t.stop] for t in tasks],
            pure=False,
        )
        index = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        # results come with their completion, gathered in batches (no round trip each); the
        # list goes, so that each task's result leaves the cluster once it has been added
        done = dask_completed(futures, with_results=True)  # type: ignore[no-untyped-call]
        del futures
        for fut, results in done:
            for i, result in zip(index[fut.key], results, strict=True):
                out.put(i, result)
                advance(sizes[i])


def guided(chunks: int, threads: int) -> list[range]:
    """Consecutive chunks grouped into tasks that shrink towards the end (guided scheduling):
    each takes a quarter of the remaining chunks' share per thread, the last ones a single
    chunk. Few tasks, so little of the cluster's per-task overhead (a few ms each), and short
    ones last, so no worker waits long for another.

    >>> [len(t) for t in guided(40, 2)]
    [5, 4, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    out = []
    start = 0
    while start < chunks:
        size = max(1, (chunks - start) // (4 * max(threads, 1)))
        out.append(range(start, start + size))
        start += size
    return out


def _rounds_per_second(speed: float) -> str:
    return f"{speed / 1e6:.1f} M rounds/s"


def iter_bins(hist: np.ndarray[Any, Any]) -> Iterator[tuple[int, int]]:
    """(bin, count) of the non-empty bins."""
    for i in np.flatnonzero(hist):
        yield int(i), int(hist[i])
