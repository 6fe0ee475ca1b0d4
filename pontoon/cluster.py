"""A Dask cluster for the commands that take ``--scheduler ADDRESS`` (``simulate``, ``par``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pontoon.errors import InputError


@contextmanager
def dask_client(address: str) -> Iterator[Any]:
    """A client of the scheduler at ``address``; Dask missing or the scheduler unreachable is
    bad input (exit 2, one line)."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler needs Dask: pip install 'pontoon[sim]'") from None
    try:
        client = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client
