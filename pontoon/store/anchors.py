"""Anchors: the signed heads, as they are made, in an append-only place outside the database.

Each commit's signature (:mod:`pontoon.store.heads`) goes, once the commit is durable, as one
JSON line (``{"id", "at", "key", "body", "signature"}``) to the anchors: by default the file
``$XDG_STATE_HOME/pontoon/anchors.jsonl`` (``~/.local/state/…``), or the file given with
``--anchors PATH`` or ``$PONTOON_ANCHORS``, or the local syslog with ``--anchors syslog``
(facility LOCAL0, tag ``pontoon-anchors``), or an ``http://`` or ``https://`` URL that takes them
by ``POST`` (``application/x-ndjson``, a line a head; ``$PONTOON_ANCHORS_TOKEN``, if set, as a
bearer token — never in the URL), or ``--anchors off``. Lines are written with one ``write`` to
a file opened ``O_APPEND``, so the processes of one store may share a file. A URL is sent to
from a thread of its own, never holding up a commit: lines wait in memory (at most
:data:`BACKLOG`) while it does not answer 2xx, and are sent again, every failure logged.

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
import logging
import os
import syslog
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from pontoon.errors import InputError
from pontoon.store.heads import Signed

ENV = "PONTOON_ANCHORS"
TOKEN_ENV = "PONTOON_ANCHORS_TOKEN"
OFF = "off"
SYSLOG = "syslog"
BACKLOG = 100_000  # lines a URL's sender keeps while it cannot send (then the oldest go)
log = logging.getLogger(__name__)


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "pontoon" / "anchors.jsonl"


def where(given: str | None) -> str:
    """Where the anchors go: ``given``, else ``$PONTOON_ANCHORS``, else the default file."""
    return given or os.environ.get(ENV) or str(default_path())


class Anchors:
    """Appends signed heads to a file (made 0600, its folder 0700 if made), to syslog, or to a
    URL (:class:`Sender`)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._fd: int | None = None
        self._sender: Sender | None = None
        if target.startswith(("http://", "https://")):
            self._sender = Sender(target, os.environ.get(TOKEN_ENV))
        elif target == SYSLOG:
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
        if self._sender is not None:
            self._sender.put(lines)
            return
        if self._fd is None:
            for line in lines:
                syslog.syslog(syslog.LOG_INFO, line)
            return
        os.write(self._fd, ("\n".join(lines) + "\n").encode())

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._sender is not None:
            self._sender.close()


class Sender:
    """POSTs anchor lines to ``url`` from a daemon thread: each time, every line waiting (up
    to 1,000); on a failure (no answer in 10 s, or not 2xx) it logs an error and tries again
    after ``retry`` seconds, doubling to 30. :meth:`close` waits up to 5 s for what waits."""

    def __init__(self, url: str, token: str | None = None, retry: float = 1.0) -> None:
        self.url, self.retry = url, retry
        self.headers = {"Content-Type": "application/x-ndjson"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.sent = 0
        self._lines: deque[str] = deque()
        self._cv = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="pontoon-anchors", daemon=True)
        self._thread.start()

    def put(self, lines: list[str]) -> None:
        with self._cv:
            self._lines.extend(lines)
            dropped = len(self._lines) - BACKLOG
            for _ in range(max(dropped, 0)):
                self._lines.popleft()
            if dropped > 0:
                log.error("anchors: %d line(s) dropped: %s has not taken them", dropped, self.url)
            self._cv.notify()

    def _run(self) -> None:
        wait = self.retry
        while True:
            with self._cv:
                while not self._lines and not self._closing:
                    self._cv.wait()
                if not self._lines:
                    return
                batch = [self._lines[i] for i in range(min(len(self._lines), 1000))]
            try:
                body = ("\n".join(batch) + "\n").encode()
                req = urllib.request.Request(self.url, body, self.headers, method="POST")
                with urllib.request.urlopen(req, timeout=10) as answer:
                    answer.read()
            except OSError as exc:  # (urllib's HTTPError and URLError are OSErrors)
                log.error("anchors: %s did not take %d line(s): %s", self.url, len(batch), exc)
                if self._closing:
                    return
                time.sleep(wait)
                wait = min(wait * 2, 30.0)
                continue
            wait = self.retry
            with self._cv:
                for _ in batch:
                    self._lines.popleft()
                self.sent += len(batch)

    def close(self) -> None:
        with self._cv:
            self._closing = True
            self._cv.notify()
        self._thread.join(5.0)


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


__all__ = [
    "ENV",
    "OFF",
    "SYSLOG",
    "TOKEN_ENV",
    "Anchors",
    "Sender",
    "default_path",
    "read",
    "where",
]
