"""The benches' one record and the README's table made from it: ``bench/record.py`` stamps and
appends each bench's JSON line to ``bench/results/<bench>.jsonl`` (never from a test), and
``bench/table.py`` writes the README's benchmark table from the newest lines. The README's table
must be what the script makes from the files as they are: a figure typed in by hand, or a
record that moved on without the README, fails here (``.venv/bin/python bench/table.py``
rewrites it)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (a dataclass looks its module up there)
    spec.loader.exec_module(module)
    return module


def test_the_readmes_table_is_what_the_record_makes() -> None:
    table = _bench("table")
    text = (ROOT / "README.md").read_text("utf-8")
    made = table.table()
    assert table.rewrite(text, made) == text, "the table is not current: python bench/table.py"
    rows = made.splitlines()[2:]
    assert 1 <= len(rows) <= 12
    assert all(row.count("|") == 4 for row in rows)  # three cells, each on its one line


def test_a_row_shows_the_newest_build_then_the_latest_run(tmp_path: Path) -> None:
    """An A B A B sitting ends on either build: the row shows the newer build's last run."""
    table = _bench("table")
    places = {"aaaaaaa0": 0, "bbbbbbb0": 1}
    lines = [
        {"commit": "bbbbbbb", "date": "2026-12-07T10:00:00Z", "n": 1},
        {"commit": "aaaaaaa", "date": "2026-12-07T10:01:00Z", "n": 2},
        {"commit": "bbbbbbb", "date": "2026-12-07T10:02:00Z", "n": 3},
        {"commit": "aaaaaaa", "date": "2026-12-07T10:03:00Z", "n": 4},
    ]
    assert table.newest(lines, places)["n"] == 3
    assert table.newest(lines, {})["n"] == 4  # without git: the latest run
    quick = {"bench": "engine", "argv": ["--quick"]}
    assert not table.kind("engine")(quick) and table.kind("engine")({"bench": "engine"})


def test_the_table_skips_a_bench_with_no_record_and_keeps_the_rest_of_the_readme(
    tmp_path: Path,
) -> None:
    table = _bench("table")
    line = {
        "bench": "par",
        "date": "2026-12-07T12:00:00Z",
        "commit": None,
        "machine": "AMD EPYC, 2 cores, 24 GiB",
        "load_average": [1.25, 1.0, 0.5],
        "seconds": 24.3,
        "seconds_without_effects": 5.2,
        "rule_effects": 18,
    }
    (tmp_path / "par.jsonl").write_text(json.dumps(line) + "\n", "utf-8")
    made = table.table(tmp_path)
    assert made.splitlines()[2:] == [
        "| `par.py`: the whole nz-pontoon PAR sheet, all cores | 24.3 s (5.2 s without the 18 "
        "rule effects) | AMD EPYC, 2 cores, 24 GiB; load 1.2; 2026-12-07 |"
    ]
    begin, end = table.MARKERS
    text = f"before\n{begin}\nold\n{end}\nafter\n"
    assert table.rewrite(text, made) == f"before\n{begin}\n{made}\n{end}\nafter\n"


def test_a_bench_line_is_stamped_and_never_appended_from_a_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _bench("record")
    monkeypatch.delenv(record.ENV, raising=False)
    assert record.destination("engine") is None  # under pytest: not the repository's record
    monkeypatch.setenv(record.ENV, "off")
    assert record.destination("engine") is None
    monkeypatch.setenv(record.ENV, str(tmp_path))
    line = record.emit({"bench": "engine", "rounds_per_second": 1, "cores": 1}, "engine")
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    kept = json.loads((tmp_path / "engine.jsonl").read_text("utf-8"))
    assert printed == kept == line
    for key in ("date", "commit", "machine", "machine_cores", "load_average", "python", "argv"):
        assert key in line, key
    assert line["cores"] == 1 and len(line["load_average"]) == 3


def test_a_server_row_takes_only_plain_runs_of_its_length() -> None:
    """A run with its metrics scraped, or shorter than the row says, is not the row's figure."""
    table = _bench("table")
    chooses = table.server(50, "sqlite", "open")
    plain = {"bench": "server", "tables": 50, "store": "sqlite", "think_ms": 150.0, "seconds": 60.2}
    assert chooses(plain)
    assert not chooses({**plain, "metrics_scrapes": 29})
    assert not chooses({**plain, "seconds": 30.2})
    assert not chooses({**plain, "accounts": True})
    assert table.server(330, "sqlite", "open", seconds=25)({**plain, "tables": 330, "seconds": 30})
