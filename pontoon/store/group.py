"""Group commit for an asyncio server: the writes of many tables share one durable commit.

Each table still awaits its own write before it tells anybody what happened (write-ahead of
effect); while one commit is on its way to the disk, the writes queued meanwhile wait and then
go together in the next transaction (:meth:`~pontoon.store.db.Store.append_many`), so the
number of commits (fsyncs) per second no longer limits the number of actions per second.

The commits are made on a thread, or (``process``) by a process of its own
(:class:`~pontoon.store.writer.WriterProcess`: the event loop does not share its interpreter
with them); a SQLite store's log is copied back beside them
(:class:`~pontoon.store.writer.Checkpoints`).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Executor, ThreadPoolExecutor

from pontoon.store.db import Batch, Store, StoreError, Written
from pontoon.store.writer import Checkpoints, WriterProcess


class GroupWriter:
    """The one writer of a store in an event loop. ``await append(batch)`` returns once the
    batch is durable, or raises the store's error for it (nothing of it written)."""

    def __init__(self, store: Store, executor: Executor | None = None, process: bool = False):
        self.store = store
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix="pontoon-store")
        self._queue: list[tuple[Batch, asyncio.Future[Written]]] = []
        self._task: asyncio.Task[None] | None = None
        self.commits = 0  # transactions
        self.batches = 0  # batches written in them
        self.seconds = 0.0  # time spent in them
        self.cpu_seconds = 0.0  # the writer's CPU in them (the rest: the disk, the GIL)
        self.failed = 0  # transactions the store refused (each batch in them told so)
        self.since: float | None = None  # when the commit under way began (perf_counter)
        self.process = (
            WriterProcess(
                store.url,
                store.keys_given,
                store.stalled_after,
                store.record_keys_given,
                store.anchors_target,
            )
            if process
            else None
        )
        self._checkpoints = Checkpoints(store) if self.process is None else None

    async def append(self, batch: Batch) -> Written:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Written] = loop.create_future()
        self._queue.append((batch, future))
        if self._task is None:
            self._task = loop.create_task(self._drain())
        return await future

    @property
    def waiting(self) -> int:
        """Batches queued for the next commit."""
        return len(self._queue)

    def busy_for(self) -> float:
        """How long the commit under way has taken so far (0.0: none under way)."""
        since = self.since
        return 0.0 if since is None else time.perf_counter() - since

    def stats(self) -> dict[str, float]:
        """Group commits so far: transactions, batches in them, seconds spent in them, the
        CPU seconds of the writer (its thread, or its process) in them, and the copies of a
        SQLite store's log back into the database."""
        cpu = self.cpu_seconds if self.process is None else self.process.cpu_seconds
        done = self._checkpoints.done if self._checkpoints is not None else 0
        return {
            "commits": self.commits,
            "batches": self.batches,
            "seconds": self.seconds,
            "cpu_seconds": cpu,
            "checkpoints": done if self.process is None else self.process.checkpoints,
        }

    def close(self) -> None:
        """Stop the checkpoint thread or the writer's process (a commit under way finishes)."""
        if self._checkpoints is not None:
            self._checkpoints.close()
        if self.process is not None:
            self.process.close()

    def _append_many(self, batches: list[Batch]) -> list[Written | StoreError]:
        if self.process is not None:
            return self.process.append_many(batches)
        assert self._checkpoints is not None
        start = time.thread_time()
        try:
            return self._checkpoints.append_many(batches)
        finally:
            self.cpu_seconds += time.thread_time() - start

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                group, self._queue = self._queue, []
                batches = [b for b, _ in group]
                results: list[Written | StoreError] | list[Exception]
                start = self.since = time.perf_counter()
                try:
                    results = await loop.run_in_executor(self.executor, self._append_many, batches)
                except Exception as exc:  # every waiting table gets it
                    results = [exc] * len(group)
                    self.failed += 1
                self.since = None
                self.seconds += time.perf_counter() - start
                self.commits += 1
                self.batches += len(group)
                for (_, future), result in zip(group, results, strict=True):
                    if future.done():
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            self._task = None
