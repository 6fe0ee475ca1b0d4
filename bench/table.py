"""The README's benchmark table, made from the benches' record (``bench/results/*.jsonl``, one
JSON line a run, written by ``bench/record.py``): for each row the newest line of its bench
that measured what the row shows (a full run, not ``--quick``; the server's rows by their
tables, store and mode) — the newest build's, and of its runs the latest — one cell of
figures, and the machine, its load and the date.

Run: .venv/bin/python bench/table.py           (rewrites the table in README.md)
     .venv/bin/python bench/table.py --check   (exit 1 when README.md's table is not current)
     .venv/bin/python bench/table.py --print   (the table alone)

The table lies between the two marker comments of README.md (``MARKERS``); nothing else of the
README is touched. ``tests/test_bench_table.py`` holds the README to what this script makes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
README = ROOT / "README.md"
MARKERS = (
    "<!-- bench-table: begin (bench/table.py writes it from bench/results/) -->",
    "<!-- bench-table: end -->",
)

Line = dict[str, Any]


@dataclass(frozen=True)
class Row:
    """A row: the bench's file, which of its lines count, what the row is, its figures."""

    bench: str
    what: str
    chooses: Callable[[Line], bool]
    figures: Callable[[Line], str]


def full(line: Line) -> bool:
    """A full run: not ``--quick`` (lines before the record took ``argv`` count as full)."""
    return "--quick" not in line.get("argv", [])


def server(
    tables: int, store: str, mode: str, processes: int = 1, seconds: float = 55
) -> Callable[[Line], bool]:
    """The server bench's lines of that many tables, store, mode and processes, at the bots'
    default pace, with no drills and no metrics scraped, for a minute or more (or what the row
    says for the large runs)."""

    def chooses(line: Line) -> bool:
        return (
            line.get("bench") == "server"
            and line.get("tables") == tables
            and line.get("store") == store
            and line.get("processes", 1) == processes
            and line.get("think_ms") == 150.0
            and not line.get("drills")
            and not line.get("metrics_scrapes")
            and bool(line.get("accounts")) == (mode == "accounts")
            and bool(line.get("operator")) == (mode == "operator")
            and line.get("seconds", 0) >= seconds
        )

    return chooses


def n(x: float) -> str:
    """A whole number with thousands separated: 21,900."""
    return f"{round(x):,}"


def m(x: float) -> str:
    """Millions to one decimal: 15.3 M."""
    return f"{x / 1e6:.1f} M"


def _engine(d: Line) -> str:
    by = d.get("rounds_per_second_by_decks", {})
    text = f"{n(d['rounds_per_second'])} rounds/s (1 deck {n(by['1'])}, 8 decks {n(by['8'])})"
    if "ratio_to_gymnasium" in d:
        text += f"; ×{d['ratio_to_gymnasium']:.2f} gymnasium's Blackjack-v1"
    return text


def _analysis(d: Line) -> str:
    process = d["process_seconds_classic_composition"]
    process_mb = d["process_peak_mb_classic_composition"]
    return (
        f"{d['seconds_basic']:.2f} s / {d['seconds_composition']:.2f} s, peak "
        f"{d['peak_mb']:.0f} MB; classic CDZ- as a process {process:.2f} s, {process_mb:.0f} MB"
    )


def _par(d: Line) -> str:
    return (
        f"{d['seconds']:.1f} s ({d['seconds_without_effects']:.1f} s without the "
        f"{d['rule_effects']} rule effects)"
    )


def _count(d: Line) -> str:
    plain, counting = m(d["plain_rounds_per_second"]), m(d["counting_rounds_per_second"])
    return (
        f"index chart {d['indices_seconds']:.1f} s ({d['indices']} indices); simulated, plain "
        f"{plain} / counting {counting} rounds/s"
    )


def _variance(d: Line) -> str:
    """One box: exact against simulated, the largest distance in standard errors; two boxes: the
    covariance the exact side's independence model leaves out shows there (bench/variance.py)."""
    z = {k: max(abs(c["z"]) for c in d["cases"] if c["boxes"] == k) for k in (1, 2)}
    cases = sum(c["boxes"] == 1 for c in d["cases"])
    return (
        f"{cases} games, {m(d['rounds'])} rounds each: one box within {z[1]:.2f} SE; two boxes "
        f"{z[2]:.2f} SE off (the covariance the model leaves out)"
    )


def _store(d: Line) -> str:
    s = d["sqlite"]
    return (
        f"{n(s['events_per_second'])} / {n(s['group_events_per_second'])} events/s, "
        f"+{s['ms_added_per_round']:.1f} ms a round"
    )


def _simulate(d: Line) -> str:
    return (
        f"{m(d['classic_rounds_per_second_per_core'])} / "
        f"{m(d['nz_pontoon_rounds_per_second_per_core'])} rounds/s; 2 workers "
        f"×{d['two_worker_speedup']:.2f}"
    )


def _env(d: Line) -> str:
    return (
        f"{n(d['steps_per_second'])} steps/s (×{d['ratio_to_gymnasium']:.1f} Blackjack-v1); "
        f"vector {m(d['vector_steps_per_second'])} steps/s"
    )


def _server(d: Line) -> str:
    return (
        f"{d['actions_per_second']:,.0f} actions/s, p50 {d['p50_ms']:.1f} ms, p99 "
        f"{d['p99_ms']:.1f} ms; lost {d['lost']}, verify {d['verify']}"
    )


def _certify(d: Line) -> str:
    return (
        f"{d['seconds']:.1f} s on {d['workers']} processes ({d['cpu_seconds']:.0f} CPU-s); "
        f"seeded {d['seeded_seconds']:.1f} s"
    )


def kind(name: str) -> Callable[[Line], bool]:
    return lambda line: line.get("bench") == name and full(line)


ROWS = (
    Row(
        "engine",
        "`engine.py`: the round engine, nz-pontoon, 6 decks, one core",
        kind("engine"),
        _engine,
    ),
    Row(
        "analysis",
        "`analysis.py`: exact analysis, nz-pontoon basic / composition, one core",
        kind("analysis"),
        _analysis,
    ),
    Row("par", "`par.py`: the whole nz-pontoon PAR sheet, all cores", kind("par"), _par),
    Row("count", "`count.py`: advantage play, nz-pontoon, all cores", kind("count"), _count),
    Row(
        "variance",
        "`variance.py`: the exact variance against simulated rounds",
        kind("variance"),
        _variance,
    ),
    Row(
        "store", "`store.py`: SQLite, one table / 20 tables in group commits", kind("store"), _store
    ),
    Row(
        "simulate",
        "`simulate.py`: one core, classic-blackjack / nz-pontoon",
        kind("simulate"),
        _simulate,
    ),
    Row(
        "env", "`env.py`: `Pontoon-v0`, one core; the vector env of 1,024 tables", kind("env"), _env
    ),
    Row(
        "server",
        "`server.py`: 50 tables × 3 bots, SQLite, 60 s",
        server(50, "sqlite", "open"),
        _server,
    ),
    Row(
        "server",
        "`server.py --accounts`: the same, every wager through a wallet",
        server(50, "sqlite", "accounts"),
        _server,
    ),
    Row(
        "server",
        "`server.py --processes 2`: 330 tables × 3 bots, PostgreSQL",
        server(330, "postgresql", "open", 2, seconds=25),
        _server,
    ),
    Row(
        "certify",
        "`certify.py`: 10⁵ secure six-deck shuffles, all cores",
        kind("certify"),
        _certify,
    ),
)


def lines(bench: str, results: Path = RESULTS) -> list[Line]:
    """Every line of ``bench``'s record, oldest first (none when it has no file yet)."""
    path = results / f"{bench}.jsonl"
    if not path.exists():
        return []
    return [json.loads(text) for text in path.read_text("utf-8").splitlines() if text.strip()]


def history() -> dict[str, int]:
    """Each commit of the checkout's history (short and full hashes) by its place, the newest
    highest; empty without git."""
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-list", "--topo-order", "--reverse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {h: i for i, h in enumerate(done.stdout.split())}


def newest(chosen: list[Line], places: dict[str, int]) -> Line:
    """The line of the newest build, and of those the latest measured: a sitting that
    alternates a build with the one before it (A B A B) leaves its last line to either."""

    def place(d: Line) -> int:
        head = str(d.get("commit") or "")
        found = [i for h, i in places.items() if head and h.startswith(head)]
        return max(found, default=-1)

    return max(chosen, key=lambda d: (place(d), str(d.get("date", ""))))


def machine(d: Line) -> str:
    """The machine, the load while it ran and the day: ``AMD EPYC, 2 cores, 24 GiB; load 1.4;
    2026-12-07``."""
    load = d.get("load_average", d.get("load_average_1m", d.get("load")))
    if isinstance(load, list):
        load = load[0]
    where = str(d.get("machine", "?")).split(" (")[0]
    day = str(d.get("date", "?"))[:10]
    return f"{where}; load {load:.1f}; {day}" if load is not None else f"{where}; {day}"


def table(results: Path = RESULTS) -> str:
    """The table's markdown: a row for each row of ``ROWS`` its record has a line for."""
    out = ["| bench/ | newest figures | machine, load, date |", "| --- | --- | --- |"]
    places = history()
    for row in ROWS:
        chosen = [d for d in lines(row.bench, results) if row.chooses(d)]
        if chosen:
            d = newest(chosen, places)
            out.append(f"| {row.what} | {row.figures(d)} | {machine(d)} |")
    return "\n".join(out)


def rewrite(text: str, made: str) -> str:
    """``text`` (the README) with the table between the markers replaced by ``made``."""
    begin, end = MARKERS
    head, found, rest = text.partition(begin + "\n")
    if not found or end not in rest:
        raise SystemExit(f"README.md lacks the table's markers: {begin} … {end}")
    _, _, tail = rest.partition(end)
    return f"{head}{begin}\n{made}\n{end}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 if README.md is not current")
    group.add_argument("--print", action="store_true", help="print the table alone")
    args = parser.parse_args()
    made = table()
    if args.print:
        print(made)
        return
    text = README.read_text("utf-8")
    new = rewrite(text, made)
    if args.check:
        sys.exit(0 if new == text else 1)
    if new != text:
        README.write_text(new, "utf-8")
        print("README.md: the benchmark table rewritten")


if __name__ == "__main__":
    main()
