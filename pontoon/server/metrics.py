"""What operations watch: Prometheus metrics (the official client, ``prometheus_client``) and
the health checks' answers.

The metrics are read at each scrape from what the server counts anyway (the hub's answers and
its histogram of handling times, the store writer's commits, the operator's calls, the leases,
the throttles), so that between scrapes they cost the tables nothing. They are served on an
address of their own (``pontoon serve --metrics-port``, on 127.0.0.1 unless told otherwise),
never on the tables' port: only whoever can reach that address reads them.

======================================  ======================================================
``pontoon_messages_total{answer}``      messages that would change a table: ``ok``, ``refused``
``pontoon_message_seconds``             their handling time, commit included (histogram)
``pontoon_store_commits_total``         the store writer's transactions (group commits)
``pontoon_store_commit_seconds``        their time (``_count``, ``_sum``)
``pontoon_store_batches_total``         the tables' writes in them
``pontoon_store_failed_commits_total``  transactions the store refused
``pontoon_store_waiting``               writes queued for the next commit
``pontoon_sockets``                     open sockets
``pontoon_tables``                      tables this process serves
``pontoon_tables_in_round``             of them, those with a round in play
``pontoon_round_idle_seconds{table}``   since a table's round in play last moved (a stuck table)
``pontoon_operator_calls_total``        calls to an operator's wallet, by ``kind`` and ``answer``
``pontoon_operator_open_disputes``      the store's open disputes with the operator
``pontoon_leases_taken_total``          leases this process took; ``_takeovers``: from another
``pontoon_throttled_total``             requests refused while their key waits (logins, ...)
======================================  ======================================================
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select, text

from pontoon.store.schema import operator_calls

from .timing import BOUNDS_MS

STUCK = 10.0  # seconds a commit may take before the writer is not keeping up
BACKLOG = 5000  # writes queued before the writer is not keeping up


class ServerMetrics(Collector):
    """The metrics of the server whose hub is ``state.hub`` (read at each scrape)."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        hub = getattr(self.state, "hub", None)
        if hub is None:  # (not started yet)
            return
        answered = CounterMetricFamily(
            "pontoon_messages", "Messages that would change a table, by answer", labels=["answer"]
        )
        for answer, n in hub.answered.items():
            answered.add_metric([answer], n)
        yield answered
        t = hub.applying
        cumulative, buckets = 0, []
        for bound, n in zip(BOUNDS_MS, t.counts, strict=False):
            cumulative += n
            buckets.append((str(bound / 1000), cumulative))
        buckets.append(("+Inf", t.count))
        yield HistogramMetricFamily(
            "pontoon_message_seconds",
            "Time to handle a message that would change a table, its commit included",
            buckets=buckets,
            sum_value=t.seconds,
        )
        yield from _writer(hub.writer)
        tables = list(hub.tables.values())
        yield GaugeMetricFamily(
            "pontoon_sockets", "Open sockets", value=sum(len(x.clients) for x in tables)
        )
        yield GaugeMetricFamily("pontoon_tables", "Tables this process serves", value=len(tables))
        playing = sum(1 for x in tables if x.round is not None and not x.round.over)
        yield GaugeMetricFamily(
            "pontoon_tables_in_round", "Tables with a round in play", value=playing
        )
        idle = GaugeMetricFamily(
            "pontoon_round_idle_seconds",
            "Of each table with a round in play, the time since the round last moved",
            labels=["table"],
        )
        for x in tables:
            since = x.timer.since  # (when the round last moved: the interrupted-round clock)
            if x.round is not None and not x.round.over and since is not None:
                idle.add_metric([x.name], max(0.0, x.config.clock() - since))
        yield idle
        yield from _operator(hub)
        tenure = hub.tenure
        taken = CounterMetricFamily("pontoon_leases_taken", "Leases this process took")
        taken.add_metric([], tenure.taken if tenure is not None else 0)
        yield taken
        over = CounterMetricFamily(
            "pontoon_leases_takeovers", "Leases taken that another process had held"
        )
        over.add_metric([], tenure.took_over if tenure is not None else 0)
        yield over
        throttles = [hub.throttle]
        door = getattr(self.state, "door", None)
        if door is not None:
            throttles += [door.by_name, door.by_account, door.registering]
        throttled = CounterMetricFamily(
            "pontoon_throttled", "Requests refused while their key waits (failed logins, ...)"
        )
        throttled.add_metric([], sum(x.refused for x in throttles))
        yield throttled


def _writer(writer: Any) -> Iterator[Metric]:
    stats = writer.stats()
    for name, key, help_ in (
        ("pontoon_store_commits", "commits", "The store writer's transactions"),
        ("pontoon_store_batches", "batches", "The tables' writes in them"),
    ):
        c = CounterMetricFamily(name, help_)
        c.add_metric([], stats[key])
        yield c
    failed = CounterMetricFamily("pontoon_store_failed_commits", "Transactions the store refused")
    failed.add_metric([], writer.failed)
    yield failed
    yield SummaryMetricFamily(
        "pontoon_store_commit_seconds",
        "Time of the store writer's transactions",
        count_value=stats["commits"],
        sum_value=stats["seconds"],
    )
    yield GaugeMetricFamily(
        "pontoon_store_waiting", "Writes queued for the next commit", value=writer.waiting
    )


def _operator(hub: Any) -> Iterator[Metric]:
    remote = hub.remote
    if remote is None:
        return
    calls = CounterMetricFamily(
        "pontoon_operator_calls", "Calls to the operator's wallet", labels=["kind", "answer"]
    )
    for (kind, answer), n in sorted(remote.answers.items()):
        calls.add_metric([kind, answer], n)
    yield calls
    with hub.store.read() as conn:  # (the scrape's own thread)
        c = operator_calls.c
        open_ = conn.execute(select(func.count()).where(c.status == "disputed")).scalar_one()
    yield GaugeMetricFamily(
        "pontoon_operator_open_disputes", "Open disputes with the operator", value=open_
    )


def serve_metrics(state: Any, host: str, port: int) -> Any:
    """Serve the metrics of ``state``'s server at ``http://host:port/metrics`` on a thread of
    their own; the server (``shutdown()`` stops it)."""
    registry = CollectorRegistry()
    registry.register(ServerMetrics(state))
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server


async def readiness(hub: Any, timeout: float = 2.0) -> list[str]:
    """Why this process is not ready to serve (none: ready): the store does not answer within
    ``timeout``; under leases, no table held; the writer stuck or far behind."""
    why: list[str] = []

    def ping() -> None:
        with hub.store.read() as conn:
            conn.execute(text("SELECT 1"))

    try:
        await asyncio.wait_for(asyncio.to_thread(ping), timeout)
    except Exception as exc:  # (TimeoutError, the store's errors): not reachable
        why.append(f"the store does not answer: {type(exc).__name__}")
    if hub.tenure is not None and not hub.tenure.held:
        why.append("no table held (by lease): the others serve them")
    busy = hub.writer.busy_for()
    if busy > STUCK:
        why.append(f"the store's writer has been in one commit for {busy:.0f} s")
    if hub.writer.waiting > BACKLOG:
        why.append(f"{hub.writer.waiting} writes wait for the store")
    return why


__all__ = ["BACKLOG", "STUCK", "ServerMetrics", "readiness", "serve_metrics"]
