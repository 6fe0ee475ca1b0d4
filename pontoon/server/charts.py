"""The optimal basic strategy chart behind the table page's hint, one per rule set."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pontoon.rules import RuleSet, rules_json


class Charts:
    """The optimal basic strategy chart of each rule set, computed once however many ask at
    once (the first asks, the others wait for its answer) on a thread of its own: a cold
    chart takes seconds to a minute and must not hold up the threads that read the history
    and replays. A failed computation is not kept: the next request tries again."""

    def __init__(self) -> None:
        self.done: dict[str, dict[str, Any]] = {}
        self.running: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pontoon-chart")

    async def get(self, rules: RuleSet) -> dict[str, Any]:
        key = rules_json(rules, sort_keys=True)
        if key in self.done:
            return self.done[key]
        running = self.running.get(key)
        if running is None:
            loop = asyncio.get_running_loop()
            running = self.running[key] = loop.run_in_executor(self.pool, _chart, rules)
            running.add_done_callback(lambda f: self._finished(key, f))
        return await asyncio.shield(running)  # one caller gone does not cancel the others'

    def _finished(self, key: str, future: asyncio.Future[dict[str, Any]]) -> None:
        del self.running[key]
        if not future.cancelled() and future.exception() is None:
            self.done[key] = future.result()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _chart(rules: RuleSet) -> dict[str, Any]:
    from pontoon.analysis.report import analyze

    report = analyze(rules, "basic")
    assert report.chart is not None
    return {"rules": rules.name, "ev": report.ev, "cells": report.chart.cells}
