"""A Dask cluster for the commands that take ``--scheduler ADDRESS`` (``simulate``, ``par``,
``count``), and a pool of tasks on the local workers or that cluster."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, Generic, Self, TypeVar

from pontoon.errors import InputError

T = TypeVar("T")
R = TypeVar("R")


CONNECT_TIMEOUT = "10s"  # how long a scheduler may take to answer


@contextmanager
def dask_client(address: str) -> Iterator[Any]:
    """A client of the scheduler at ``address``; Dask missing or the scheduler unreachable is
    bad input (exit 2, one line)."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler needs Dask: pip install 'pontoon[sim]'") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client


def check_scheduler(address: str | None) -> None:
    """Refuse an unreachable scheduler (exit 2, one line) before any long work starts."""
    if address is not None:
        with dask_client(address):
            pass


class TaskPool(Generic[T, R]):
    """``fn`` over ``tasks`` on the local workers (processes, forked on Linux) or a Dask
    cluster, started on entering, the tasks ``order`` says first (the slowest), so that the
    caller can work meanwhile; :meth:`results` waits for them in task order, advancing a
    progress bar. One worker and no scheduler: the tasks run in :meth:`results`, here."""

    def __init__(
        self,
        fn: Callable[[T], R],
        tasks: Sequence[T],
        *,
        workers: int,
        scheduler: str | None = None,
        order: Sequence[int] | None = None,
        progress: bool = False,
        label: str = "tasks",
        rate: Callable[[float], str] | None = None,
    ) -> None:
        self.fn, self.tasks = fn, list(tasks)
        self.order = list(order) if order is not None else list(range(len(self.tasks)))
        self.workers, self.scheduler = workers, scheduler
        self.progress, self.label, self.rate = progress, label, rate
        self._stack = ExitStack()
        self._pending: dict[Any, int] = {}
        self._client: Any = None

    def __enter__(self) -> Self:
        if self.scheduler is not None and self.tasks:
            self._client = self._stack.enter_context(dask_client(self.scheduler))
            chosen = [self.tasks[i] for i in self.order]
            futures = self._client.map(self.fn, chosen, pure=False)
            self._pending = {f: i for f, i in zip(futures, self.order, strict=True)}
        elif self.workers > 1 and self.tasks:
            from concurrent.futures import ProcessPoolExecutor  # (only when a pool is used)
            from multiprocessing import get_context

            method = "fork" if sys.platform.startswith("linux") else "spawn"
            size = min(self.workers, len(self.tasks))
            pool = self._stack.enter_context(
                ProcessPoolExecutor(max_workers=size, mp_context=get_context(method))
            )
            self._pending = {pool.submit(self.fn, self.tasks[i]): i for i in self.order}
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def results(self) -> list[R]:
        """Every task's result, in task order."""
        from pontoon.progress import progress_bar

        out: dict[int, R] = {}
        with progress_bar(len(self.tasks), self.progress, self.label, self.rate) as advance:
            if self._client is not None:
                from distributed import as_completed as dask_completed

                done = dask_completed(list(self._pending), with_results=True)  # type: ignore[no-untyped-call]
                for fut, result in done:
                    out[self._pending[fut]] = result
                    advance(1)
            elif self._pending:
                from concurrent.futures import as_completed

                for fut in as_completed(self._pending):
                    out[self._pending[fut]] = fut.result()
                    advance(1)
            else:
                for i in self.order:
                    out[i] = self.fn(self.tasks[i])
                    advance(1)
        return [out[i] for i in range(len(self.tasks))]
