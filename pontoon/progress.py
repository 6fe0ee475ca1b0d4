"""A progress bar on stderr for long commands (``simulate``, ``par``), or nothing.

>>> with progress_bar(3, show=False, label="working") as advance:
...     advance(1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Advance = Callable[[int], None]


class progress_bar:
    """A rich progress bar (``label``, bar, done/total, ``rate(speed)``, ETA) on stderr when
    ``show``, else nothing; entering gives the function that advances it."""

    def __init__(
        self, total: int, show: bool, label: str, rate: Callable[[float], str] | None = None
    ) -> None:
        self.total = total
        self.show = show
        self.label = label
        self.rate = rate
        self.bar: Any = None

    def __enter__(self) -> Advance:
        if not self.show:
            return lambda n: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        rate = self.rate

        class _Rate(TextColumn):
            def render(self, task: Any) -> Any:
                from rich.text import Text

                speed = task.finished_speed or task.speed
                return Text(rate(speed) if speed and rate else "")

        self.bar = Progress(
            TextColumn(self.label),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(""),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        task = self.bar.add_task(self.label, total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
