"""Group commit for an asyncio server: the writes of many tables share one durable commit.

Each table still awaits its own write before it tells anybody what happened (write-ahead of
effect); while one commit is on its way to the disk, the writes queued meanwhile wait and then
go together in the next transaction (:meth:`~pontoon.store.db.Store.append_many`), so the
number of commits (fsyncs) per second no longer limits the number of actions per second.

A SQLite store opened with ``own_checkpoints`` has its write-ahead log copied back into the
database on a second thread (:meth:`~pontoon.store.db.Store.checkpoint`, at most every
:data:`CHECKPOINT_SECONDS` while commits come), so no commit waits for that copy. The writer
then copies the few pages committed while it ran, before its next transaction: with every
page copied, that transaction starts the log again from its beginning (a log is only ever
restarted so), and the log stays short however long the writes go on.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Executor, ThreadPoolExecutor

from pontoon.store.db import Batch, Store, StoreError, Written

CHECKPOINT_SECONDS = 0.5


class GroupWriter:
    """The one writer of a store in an event loop. ``await append(batch)`` returns once the
    batch is durable, or raises the store's error for it (nothing of it written)."""

    def __init__(self, store: Store, executor: Executor | None = None) -> None:
        self.store = store
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix="pontoon-store")
        self._queue: list[tuple[Batch, asyncio.Future[Written]]] = []
        self._task: asyncio.Task[None] | None = None
        self.commits = 0  # transactions
        self.batches = 0  # batches written in them
        self.seconds = 0.0  # time spent in them
        self.cpu_seconds = 0.0  # the writer's CPU in them (the rest: the disk, the GIL)
        self.checkpoints = 0  # the log copied back (own_checkpoints)
        self._checkpointer: ThreadPoolExecutor | None = None
        if store.own_checkpoints and store.dialect == "sqlite":
            self._checkpointer = ThreadPoolExecutor(1, thread_name_prefix="pontoon-checkpoint")
        self._checkpoint: asyncio.Future[tuple[int, int] | None] | None = None
        self._checkpointed = 0.0  # time.monotonic() of the last one begun
        self._finish = False  # one done: the writer copies the rest before its next commit

    async def append(self, batch: Batch) -> Written:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Written] = loop.create_future()
        self._queue.append((batch, future))
        if self._task is None:
            self._task = loop.create_task(self._drain())
        return await future

    def stats(self) -> dict[str, float]:
        """Group commits so far: transactions, batches in them, seconds spent in them and the
        CPU seconds of the writer's thread in them."""
        return {
            "commits": self.commits,
            "batches": self.batches,
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
            "checkpoints": self.checkpoints,
        }

    def _checkpoint_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        """After a commit: the log copied back on the checkpoint thread, unless a copy is
        under way or one began less than :data:`CHECKPOINT_SECONDS` ago."""
        if self._checkpointer is None or self._checkpoint is not None:
            return
        now = time.monotonic()
        if now - self._checkpointed < CHECKPOINT_SECONDS:
            return
        self._checkpointed = now
        self._checkpoint = loop.run_in_executor(self._checkpointer, self.store.checkpoint)
        self._checkpoint.add_done_callback(self._checkpoint_done)

    def _checkpoint_done(self, done: asyncio.Future[tuple[int, int] | None]) -> None:
        self._checkpoint = None
        if not done.cancelled() and done.exception() is None:
            self.checkpoints += 1  # (a failed one is tried again after the next commit)
            self._finish = True

    def close(self) -> None:
        """Stop the checkpoint thread (a copy under way finishes)."""
        if self._checkpointer is not None:
            self._checkpointer.shutdown(wait=True)

    def _append_many(self, batches: list[Batch]) -> list[Written | StoreError]:
        start = time.thread_time()
        try:
            if self._finish:  # a few pages: no writer to race with, the log restarts
                self._finish = False
                self.store.checkpoint()
            return self.store.append_many(batches)
        finally:
            self.cpu_seconds += time.thread_time() - start

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                group, self._queue = self._queue, []
                batches = [b for b, _ in group]
                results: list[Written | StoreError] | list[Exception]
                start = time.perf_counter()
                try:
                    results = await loop.run_in_executor(self.executor, self._append_many, batches)
                except Exception as exc:  # every waiting table gets it
                    results = [exc] * len(group)
                self.seconds += time.perf_counter() - start
                self.commits += 1
                self.batches += len(group)
                self._checkpoint_soon(loop)
                for (_, future), result in zip(group, results, strict=True):
                    if future.done():
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            self._task = None
