"""The store's writer beside a server: its log's checkpoints, and a process of its own.

A server's event loop and its store writer share one interpreter lock when the writer is a
thread: while the writer builds a group's statements, hashes its events' chain and seals the
shoes (about a millisecond of Python a commit), the tables wait. :class:`WriterProcess` does
the same :meth:`~pontoon.store.db.Store.append_many` in a child process (``python -m
pontoon.store.writer``), the batches and their results pickled over its pipes: the server keeps
only the pickling. The child ends when the server does (its pipe closes; on Linux it is killed
with its parent too); one that died is started again at the next write, the write it held
refused (a :class:`~pontoon.store.db.StoreError`: the table takes itself back from the store,
which knows whether that commit happened).

:class:`Checkpoints` copies a SQLite store's write-ahead log back into the database on a
thread of its own (stores opened with ``own_checkpoints``), at most every
:data:`CHECKPOINT_SECONDS` while commits come, so no commit waits for that copy; the writer
then copies the few pages committed meanwhile before its next transaction: with every page
copied, that transaction starts the log again from its beginning (a log is only ever restarted
so), and the log stays short however long the writes go on.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from typing import IO, Any

from pontoon.store.db import Batch, Store, StoreError, Written
from pontoon.store.secret import ShoeKeys
from pontoon.store.signing import RecordKeys

CHECKPOINT_SECONDS = 0.5
_SIZE = struct.Struct("!I")
Results = list[Written | StoreError]


class Checkpoints:
    """The log of ``store`` (SQLite, ``own_checkpoints``) copied back beside its one writer,
    which writes through :meth:`append_many`. Other stores: their ``append_many`` alone."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.done = 0  # copies finished
        self._pool: ThreadPoolExecutor | None = None
        if store.own_checkpoints and store.dialect == "sqlite":
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="pontoon-checkpoint")
        self._running: Future[tuple[int, int] | None] | None = None
        self._began = 0.0  # time.monotonic() of the last copy begun
        self._finish = False  # a copy is done: the writer copies the rest

    def append_many(self, batches: list[Batch]) -> Results:
        """The store's ``append_many``; before it, the pages committed while the last copy
        ran (a few: no writer to race with, so the log restarts at this commit); after it, a
        new copy begun on the checkpoint thread if one is due."""
        if self._finish:
            self._finish = False
            self.store.checkpoint()
        results = self.store.append_many(batches)
        self._begin()
        return results

    def _begin(self) -> None:
        """A copy begun on the checkpoint thread, unless one is under way or began less than
        :data:`CHECKPOINT_SECONDS` ago."""
        if self._pool is None or self._running is not None:
            return
        now = time.monotonic()
        if now - self._began < CHECKPOINT_SECONDS:
            return
        self._began = now
        self._running = self._pool.submit(self.store.checkpoint)
        self._running.add_done_callback(self._done)

    def _done(self, done: Future[tuple[int, int] | None]) -> None:
        self._running = None
        if not done.cancelled() and done.exception() is None:
            self.done += 1  # (a failed one is tried again after a later commit)
            self._finish = True

    def close(self) -> None:
        """Stop the checkpoint thread (a copy under way finishes)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)


class WriterProcess:
    """:meth:`Store.append_many <pontoon.store.db.Store.append_many>` for the store at ``url``
    in a child process (``stalled_after``: as :class:`~pontoon.store.db.Store` takes it). One
    caller at a time (the group writer's thread). The keys and the anchors' place go to the
    child over its pipe (never on its command line)."""

    def __init__(
        self,
        url: str,
        shoe_keys: ShoeKeys | None,
        stalled_after: float | None = None,
        record_keys: RecordKeys | None = None,
        anchors: str | None = None,
    ) -> None:
        self.url, self.shoe_keys, self.stalled_after = url, shoe_keys, stalled_after
        self.record_keys, self.anchors = record_keys, anchors
        self.cpu_seconds = 0.0  # the child's CPU in its commits
        self.checkpoints = 0  # its log's copies
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.RLock()  # one write at a time; close waits for it
        self._ready = False  # the child said it opened the store
        self._start()  # (from the thread that makes it: a child killed with its parent
        # thread on Linux is killed when that thread ends, so make it on the main thread)

    def _start(self) -> None:
        """Start the child (its answer that it opened the store is read at the first write:
        a server does not wait for it at start-up)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "pontoon.store.writer", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None
        self._proc, self._ready = proc, False
        with suppress(OSError):  # (a child already gone is found at the first write)
            # (the store's URL on the pipe, not on its command line)
            config = (self.url, self.shoe_keys, self.stalled_after, self.record_keys, self.anchors)
            _send(proc.stdin, config)

    def _await_ready(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            ready = _receive(proc.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self._stop()
            raise StoreError(f"the store's writer process did not start ({exc})") from None
        if isinstance(ready, BaseException):
            self._stop()
            raise ready
        self._ready = True

    def append_many(self, batches: list[Batch]) -> Results:
        """The group written by the child, as the store's ``append_many`` answers; the child
        gone: :class:`StoreError` (and a new child for the next call)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._stop()
                self._start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            if not self._ready:
                self._await_ready(proc)
            try:
                _send(proc.stdin, batches)
                answer = _receive(proc.stdout)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                self._stop()
                raise StoreError(f"the store's writer process ended ({exc}): try again") from None
            if isinstance(answer, BaseException):
                raise answer
            results, cpu, self.checkpoints = answer
            self.cpu_seconds += cpu
            return list(results)

    def close(self) -> None:
        """The child ends once the write under way (if any) is answered: its input closed,
        killed if it does not end within 10 s."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_SIZE.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(_SIZE.size)
    if len(head) < _SIZE.size:
        raise EOFError("the pipe closed")
    (size,) = _SIZE.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the pipe closed")
    return pickle.loads(data)


def _die_with(parent: int) -> None:
    """Linux: this process is killed when its parent ends (a server killed with SIGKILL leaves
    no writer behind to commit after it); elsewhere it ends at its closed pipe."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it ended before the line above
        sys.exit(0)


def _serve(parent: int) -> None:
    """The child: answers each group of batches with their results, until its input ends."""
    _die_with(parent)
    out = os.fdopen(os.dup(1), "wb")  # the answers; anything printed goes to stderr
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    url, keys, stalled_after, record_keys, anchors = _receive(inp)
    try:
        store = Store(
            url,
            keys,
            record_keys=record_keys,
            anchors=anchors,
            own_checkpoints=True,
            stalled_after=stalled_after,
        )
    except Exception as exc:  # (a store that cannot open: the server says why)
        _send(out, StoreError(f"the store's writer cannot open it: {exc}"))
        return
    if store.dialect == "postgresql":
        store.engine.dispose()  # (the schema's check is read; writes have their own pool)
    checkpoints = Checkpoints(store)
    _send(out, None)  # ready
    try:
        while True:
            try:
                batches = _receive(inp)
            except EOFError:
                break
            start = time.thread_time()
            try:
                results = checkpoints.append_many(batches)
                answer: Any = (results, time.thread_time() - start, checkpoints.done)
            except Exception as exc:  # (a key that does not open a shoe, say)
                answer = exc
            try:
                _send(out, answer)
            except (pickle.PicklingError, TypeError, AttributeError):
                _send(out, StoreError(f"the store's writer failed: {answer}"))
    finally:
        checkpoints.close()
        store.close()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
