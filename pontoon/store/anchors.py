"""Anchors: the signed heads, as they are made, in an append-only place outside the database.

Each commit's signature (:mod:`pontoon.store.heads`) goes, once the commit is durable, as one
JSON line (``{"id", "at", "key", "body", "signature"}``) to the anchors: by default the file
``$XDG_STATE_HOME/pontoon/anchors.jsonl`` (``~/.local/state/…``), or the file given with
``--anchors PATH`` or ``$PONTOON_ANCHORS``, or the local syslog with ``--anchors syslog``
(facility LOCAL0, tag ``pontoon-anchors``), or ``--anchors off``. Lines are written with one
``write`` to a file opened ``O_APPEND``, so the processes of one store may share a file.

A copy of the database restored to an earlier moment, or cut short, still verifies by its own
chain: the anchors remember how far it went. ``pontoon verify --anchors PATH`` reads them (a
line may carry a prefix before its JSON, as syslog writes it) and fails when a table's last
anchored head is not in the store.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.jsonl")
>>> sink = Anchors(path)
>>> sink.write([Signed("1" * 32, "t", "k", '{"heads":{}}', "c2ln")])
>>> [s.id[:4] for s in read(path)]
['1111']
"""

from __future__ import annotations

import json
import os
import syslog
from collections.abc import Iterator
from pathlib import Path

from pontoon.errors import InputError
from pontoon.store.heads import Signed

ENV = "PONTOON_ANCHORS"
OFF = "off"
SYSLOG = "syslog"


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "pontoon" / "anchors.jsonl"


def where(given: str | None) -> str:
    """Where the anchors go: ``given``, else ``$PONTOON_ANCHORS``, else the default file."""
    return given or os.environ.get(ENV) or str(default_path())


class Anchors:
    """Appends signed heads to a file (made 0600, its folder 0700 if made), or to syslog."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._fd: int | None = None
        if target == SYSLOG:
            syslog.openlog("pontoon-anchors", 0, syslog.LOG_LOCAL0)
        elif target != OFF:
            path = Path(target)
            try:
                if not path.parent.is_dir():
                    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            except OSError as exc:
                raise InputError(f"--anchors {target}: cannot open it: {exc.strerror}") from None

    def write(self, signed: list[Signed]) -> None:
        if not signed or self.target == OFF:
            return
        lines = [json.dumps(s.to_dict(), separators=(",", ":")) for s in signed]
        if self._fd is None:
            for line in lines:
                syslog.syslog(syslog.LOG_INFO, line)
            return
        os.write(self._fd, ("\n".join(lines) + "\n").encode())

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read(path: str) -> Iterator[Signed]:
    """The signed heads of an anchors file, in order; a line that holds none: InputError."""
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115 (closed below, lines read lazily)
    except OSError as exc:
        raise InputError(f"--anchors {path}: cannot read it: {exc.strerror}") from None
    with f:
        for n, line in enumerate(f, 1):
            start = line.find("{")
            if not line.strip():
                continue
            try:
                data = json.loads(line[start:]) if start >= 0 else None
                yield Signed(*(str(data[k]) for k in Signed._fields))  # type: ignore[index]
            except (ValueError, KeyError, TypeError):
                raise InputError(f"--anchors {path}: line {n} is not a signed head") from None


__all__ = ["ENV", "OFF", "SYSLOG", "Anchors", "default_path", "read", "where"]
