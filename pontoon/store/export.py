"""Exports for analysts: rounds, events and the ledger as JSON Lines or Parquet.

``DIR/rounds.EXT`` (one row per round, its players' nets in ``players``), ``DIR/events.EXT``
(every event with its table, seq, round, time and hash) and ``DIR/ledger.EXT`` (every entry).
The shoe's state is never exported.

The rows are read in one place, as plain data, by :func:`rows`, which :mod:`pontoon.store.show`
uses too; the Parquet schemas come from the store's own (``schema.py``).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import BigInteger, Column, Connection, Integer, Select, Table, select

from pontoon.errors import InputError
from pontoon.store.db import Store
from pontoon.store.schema import events, ledger, round_players, rounds

FORMATS = ("jsonl", "parquet")
_BATCH = 5000
_IDS = 500  # rounds whose players are read with one query (bound parameters stay few)

# Each file: its table and its order.
_FILES: dict[str, tuple[Table, tuple[Column[Any], ...]]] = {
    "rounds": (rounds, (rounds.c.id,)),
    "events": (events, (events.c.table_id, events.c.seq)),
    "ledger": (ledger, (ledger.c.table_id, ledger.c.seq)),
}


def _columns(name: str) -> list[Column[Any]]:
    """A file's columns: its table's, less the events' lease token (which process wrote an
    event is the server's affair, not the analyst's: docs/operators/store.md)."""
    tbl = _FILES[name][0]
    return [c for c in tbl.columns if not (tbl is events and c.name == "fence")]


def rows(store: Store, query: Select[Any], players: bool = False) -> Iterator[dict[str, Any]]:
    """The rows ``query`` selects, in its order, as plain data: ``table`` for ``table_id``;
    with ``players`` (a query of rounds), each round's ``players``: their nets by name."""
    with store.read() as conn:
        result = conn.execution_options(yield_per=_BATCH).execute(query)
        for part in result.partitions(_IDS):
            batch = [dict(r._mapping) for r in part]
            for r in batch:
                r["table"] = r.pop("table_id")
            if players:
                _add_players(conn, batch)
            yield from batch


def _add_players(conn: Connection, batch: list[dict[str, Any]]) -> None:
    """Each round's ``players``: their nets by name, in the order of the names."""
    nets: dict[int, dict[str, int]] = {r["id"]: {} for r in batch}
    rp = round_players.c
    q = select(round_players).where(rp.round_id.in_(list(nets))).order_by(rp.player)
    for p in conn.execute(q):
        nets[p.round_id][p.player] = p.net
    for r in batch:
        r["players"] = nets[r["id"]]


def _file_rows(store: Store, name: str, table: str | None) -> Iterator[dict[str, Any]]:
    """The rows of one file; a round's players as a list of ``{player, net}``."""
    tbl, order = _FILES[name]
    q = select(*_columns(name)).order_by(*order)
    if table:
        q = q.where(tbl.c.table_id == table)
    if tbl is not rounds:
        return rows(store, q)
    return (
        r | {"players": [{"player": p, "net": n} for p, n in r["players"].items()]}
        for r in rows(store, q, players=True)
    )


def _arrow() -> Any:
    """pyarrow (untyped), imported only for Parquet."""
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        raise InputError("Parquet needs pyarrow: pip install 'pontoon[store]'") from None


def _schema(name: str) -> Any:
    """The Parquet schema of one file: its table's columns in order, typed as stored."""
    pa = _arrow()
    fields = []
    for c in _columns(name):
        if isinstance(c.type, BigInteger):
            kind = pa.int64()
        elif isinstance(c.type, Integer):
            kind = pa.int32()
        else:
            kind = pa.string()
        fields.append(("table" if c.name == "table_id" else c.name, kind))
    if name == "rounds":
        players = pa.list_(pa.struct([("player", pa.string()), ("net", pa.int64())]))
        fields.append(("players", players))
    return pa.schema(fields)


def export(store: Store, fmt: str, output: str | Path, table: str | None = None) -> dict[str, int]:
    """Write the three files; returns the number of rows in each."""
    if fmt not in FORMATS:
        raise InputError(f"--format is one of {', '.join(FORMATS)}")
    if not str(output):
        raise InputError("--output names the folder the files go in")
    out = Path(output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make {out}: {exc.strerror}") from None
    counts: dict[str, int] = {}
    for name in _FILES:
        path = out / f"{name}.{fmt}"
        source = _file_rows(store, name, table)
        if fmt == "jsonl":
            n = 0
            with path.open("w", encoding="utf-8") as f:
                for row in source:
                    f.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
                    n += 1
        else:
            n = _parquet(path, source, _schema(name))
        counts[name] = n
    return counts


def _parquet(path: Path, source: Iterator[dict[str, Any]], schema: Any) -> int:
    pa = _arrow()
    pq = importlib.import_module("pyarrow.parquet")

    n = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in source:
            batch.append(row)
            if len(batch) >= _BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n += len(batch)
                batch = []
        if batch or n == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n
