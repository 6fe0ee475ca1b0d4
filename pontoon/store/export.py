"""Exports for analysts: rounds, events and the ledger as JSON Lines or Parquet.

``DIR/rounds.EXT`` (one row per round, its players' nets in ``players``), ``DIR/events.EXT``
(every event with its table, seq, round, time and hash) and ``DIR/ledger.EXT`` (every entry).
The shoe's state is never exported.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Select, select

from pontoon.errors import InputError
from pontoon.store.db import Store
from pontoon.store.schema import events, ledger, round_players, rounds

FORMATS = ("jsonl", "parquet")
_BATCH = 5000


def _rows(store: Store, query: Select[Any]) -> Iterator[dict[str, Any]]:
    with store.read() as conn:
        result = conn.execution_options(yield_per=_BATCH).execute(query)
        for row in result:
            yield dict(row._mapping)


def _rounds(store: Store, table: str | None) -> Iterator[dict[str, Any]]:
    q = select(rounds).order_by(rounds.c.id)
    if table:
        q = q.where(rounds.c.table_id == table)
    players: dict[int, list[dict[str, Any]]] = {}
    pq = select(round_players).order_by(round_players.c.round_id, round_players.c.player)
    for r in _rows(store, pq):
        players.setdefault(int(r["round_id"]), []).append(
            {"player": r["player"], "net": int(r["net"])}
        )
    for r in _rows(store, q):
        r["table"] = r.pop("table_id")
        r["players"] = players.get(int(r["id"]), [])
        yield r


def _events(store: Store, table: str | None) -> Iterator[dict[str, Any]]:
    q = select(events).order_by(events.c.table_id, events.c.seq)
    if table:
        q = q.where(events.c.table_id == table)
    for r in _rows(store, q):
        r["table"] = r.pop("table_id")
        yield r


def _ledger(store: Store, table: str | None) -> Iterator[dict[str, Any]]:
    q = select(ledger).order_by(ledger.c.table_id, ledger.c.seq)
    if table:
        q = q.where(ledger.c.table_id == table)
    for r in _rows(store, q):
        r["table"] = r.pop("table_id")
        yield r


def _arrow() -> Any:
    """pyarrow (untyped), imported only for Parquet."""
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        raise InputError("Parquet needs pyarrow: pip install 'pontoon[store]'") from None


def _schemas() -> dict[str, Any]:
    pa = _arrow()

    s, i64, i32 = pa.string(), pa.int64(), pa.int32()
    return {
        "rounds": pa.schema(
            [
                ("id", i64),
                ("table", s),
                ("number", i32),
                ("status", s),
                ("rules", s),
                ("started_at", s),
                ("ended_at", s),
                ("first_seq", i64),
                ("last_seq", i64),
                ("house", i64),
                ("players", pa.list_(pa.struct([("player", s), ("net", i64)]))),
            ]
        ),
        "events": pa.schema(
            [
                ("table", s),
                ("seq", i64),
                ("round_id", i64),
                ("at", s),
                ("kind", s),
                ("box", i32),
                ("hand", i32),
                ("player", s),
                ("card", s),
                ("amount", i64),
                ("detail", s),
                ("odds", s),
                ("rule", s),
                ("by", s),
                ("hash", s),
            ]
        ),
        "ledger": pa.schema(
            [
                ("id", i64),
                ("table", s),
                ("seq", i64),
                ("round_id", i64),
                ("at", s),
                ("kind", s),
                ("player", s),
                ("from_account", s),
                ("to_account", s),
                ("amount", i64),
            ]
        ),
    }


def export(store: Store, fmt: str, output: str | Path, table: str | None = None) -> dict[str, int]:
    """Write the three files; returns the number of rows in each."""
    if fmt not in FORMATS:
        raise InputError(f"--format is one of {', '.join(FORMATS)}")
    out = Path(output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make {out}: {exc.strerror}") from None
    sources = {"rounds": _rounds, "events": _events, "ledger": _ledger}
    counts: dict[str, int] = {}
    schemas = _schemas() if fmt == "parquet" else {}
    for name, source in sources.items():
        path = out / f"{name}.{fmt}"
        rows = source(store, table)
        if fmt == "jsonl":
            n = 0
            with path.open("w", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
                    n += 1
        else:
            n = _parquet(path, rows, schemas[name])
        counts[name] = n
    return counts


def _parquet(path: Path, rows: Iterator[dict[str, Any]], schema: Any) -> int:
    pa = _arrow()
    pq = importlib.import_module("pyarrow.parquet")

    n = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= _BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n += len(batch)
                batch = []
        if batch or n == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n
