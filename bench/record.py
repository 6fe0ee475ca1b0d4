"""One way for every bench to end: its figures stamped with where and when they were measured,
printed as the last line (one JSON object), and appended to ``bench/results/<bench>.jsonl``,
the benches' one record (``bench/table.py`` makes the README's table from it).

The stamp: ``date`` (UTC), ``commit`` (of the checkout whose package is measured — this one,
or an older build's that ``PYTHONPATH`` names; ``dirty`` when its package or benches had
changes not committed), ``machine`` (processor, cores, memory), ``machine_cores``,
``load_average`` (1, 5 and 15 minutes, at the end of the run: the host may be shared),
``python`` and ``argv`` (the bench's options, so that a short ``--quick`` run is told from a
full one); and, when set in the environment, ``build`` (``$PONTOON_BENCH_BUILD``: which build,
in an A/B sitting) and ``sitting`` (``$PONTOON_BENCH_SITTING``: how the runs were arranged). A
figure the bench set itself keeps its own value (``cores`` is how many cores the bench used;
the machine's are ``machine_cores``).

Where the line goes: ``$PONTOON_BENCH_RESULTS`` names another folder, or ``off`` for none;
under pytest (``PYTEST_CURRENT_TEST`` set, as it is in the processes a test starts) nothing is
appended unless that variable names a folder, so that the tests' short runs never enter the
record. The lines' fields: docs/reference/files.md, "Benchmark lines".
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
ENV = "PONTOON_BENCH_RESULTS"


def machine() -> str:
    """The processor's name, the cores and the memory: ``AMD EPYC, 2 cores, 24 GiB``."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                cpu,
            )
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores"
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        text += f", {round(memory / 2**30)} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return text


def measured() -> Path:
    """The checkout whose ``pontoon`` package the bench measures: this one, or the one
    ``PYTHONPATH`` names (an older build in an A/B sitting, run by this checkout's bench)."""
    import pontoon

    return Path(pontoon.__file__).resolve().parent.parent


def commit() -> tuple[str | None, bool]:
    """The measured checkout's commit (short) and whether its package or benches differ from
    it."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(measured()), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = ["--", "pontoon", "bench", ":!bench/results"]  # (the record itself aside)
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", *changed))
    except (OSError, subprocess.CalledProcessError):
        return None, False
    return head, dirty


def stamp(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the stamp before its figures (the figures' own values kept)."""
    head, dirty = commit()
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    out: dict[str, Any] = {
        "date": now.isoformat().replace("+00:00", "Z"),
        "commit": head,
        "dirty": dirty,
        "machine": machine(),
        "machine_cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "argv": sys.argv[1:],
    }
    for key in ("build", "sitting"):
        if os.environ.get(f"PONTOON_BENCH_{key.upper()}"):
            out[key] = os.environ[f"PONTOON_BENCH_{key.upper()}"]
    out.update(result)
    out.setdefault("cores", os.cpu_count())
    return out


def destination(name: str) -> Path | None:
    """The file the line of bench ``name`` goes to, or None (see the module's docstring)."""
    where = os.environ.get(ENV)
    if where == "off":
        return None
    if where:
        return Path(where) / f"{name}.jsonl"
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return None
    return RESULTS / f"{name}.jsonl"


def emit(result: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """Stamp ``result``, print it as the last line and append it to the bench's file
    (``name``: the file's stem, by default the script's own, ``engine`` for
    ``bench/engine.py``). Returns the stamped line."""
    line = stamp(result)
    text = json.dumps(line)
    path = destination(name or Path(sys.argv[0]).stem)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text, flush=True)
    return line


__all__ = ["destination", "emit", "machine", "measured", "stamp"]
