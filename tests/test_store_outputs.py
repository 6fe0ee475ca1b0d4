"""What ``pontoon replay``, ``rounds`` and ``export`` print and write, pinned byte for byte.

The store is built the same way every time: scripted rounds, seeded shoes and a clock that
moves on an hour each time it is read. SQLite and PostgreSQL (``PONTOON_TEST_POSTGRES_URL``)
give the same bytes. When an output changes on purpose, the failing assertion shows the new
output and its digest.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pontoon.rules import load_rules
from pontoon.store import chain
from pontoon.store.db import Store
from pontoon.store.session import TerminalRecorder
from tests.test_store import (  # url: the fixture, both back ends
    SCENARIOS,
    _crash_mid_round,
    cli,
    record_rounds,
    url,  # noqa: F401
)

ROUNDS = 13  # what build() records
RECORDED = (
    "9_1_pontoon_paid_3_2_at_once_rounded_down.json",
    "9_3_surrender_half_returned_dealer_takes_second_card_only.json",
    "10_insurance_lost_dealer_stands_soft_18.json",
    "11_2_super_bonus_fixed_pay_and_5000_to_others.json",
    "13_resplit_to_four_hands_double_after_split.json",
    "13_7_obo_back_bettor_followed_both.json",
    "15_10_shoe_exhausted_and_15_11_damaged_card_replaced_by_supervisor.json",
    "16_5_void_whole_round_every_wager_returned.json",
)


def _clock() -> Iterator[str]:
    start = datetime(2025, 6, 1, tzinfo=UTC)
    for hour in itertools.count():
        yield (start + timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def build(db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Three rounds of two players on table 't1', the scripted rounds on 'scenario', and on
    'terminal' a round voided (16.5) and one left open."""
    monkeypatch.setattr(chain, "now", _clock().__next__)
    record_rounds(db, 3)
    for name in RECORDED:
        code, out = cli(["round", str(SCENARIOS / name), "--db", db], capsys)
        assert code == 0, (name, out)
    _crash_mid_round(db, seed=9)
    rec = TerminalRecorder(db, "terminal", load_rules("nz-pontoon", {"decks": "8"}), "you")
    assert rec.recover(100_000, 9).resumed is None  # other rules: the open round is void
    rec.close()
    _crash_mid_round(db, seed=5)


def outputs(db: str, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Every command's exit code and output, and every exported file, by name."""
    commands = [
        *(
            ["replay", "--round", str(i), *j]
            for i in range(1, ROUNDS + 1)
            for j in ([], ["--json"])
        ),
        ["rounds"],
        ["rounds", "--json"],
        ["rounds", "--table", "t1"],
        ["rounds", "--table", "no-such-table"],
        ["rounds", "--player", "ana", "--outcome", "win", "--json"],
        ["rounds", "--outcome", "void"],
        ["rounds", "--outcome", "open", "--json"],
        ["rounds", "--since", "2025-06-02", "--until", "2025-06-02T12:00", "--limit", "3"],
        ["export", "--output", f"{out}/all"],
        ["export", "--output", f"{out}/t1", "--table", "t1", "--json"],
        ["export", "--output", f"{out}/none", "--table", "no-such-table"],
        ["export", "--output", f"{out}/pq", "--format", "parquet"],
    ]
    got = {}
    for args in commands:
        code, text = cli([*args, "--db", db], capsys)
        got[" ".join(args).replace(str(out), "OUT")] = f"{code}\n{text.replace(str(out), 'OUT')}"
    import pyarrow.parquet as pq

    for path in sorted(out.glob("*/*")):
        name = str(path.relative_to(out))
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            got[name] = f"{table.schema}\n{json.dumps(table.to_pylist())}"
        else:
            got[name] = path.read_text(encoding="utf-8")
    return got


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


ROUNDS_TEXT = """\
0
    id  table          no.  started (UTC)        status  players
    13  terminal         2  2025-06-02 09:00:00  open    you -$20.00; house $0.00
    12  terminal         1  2025-06-02 07:00:00  void    you $0.00; house $0.00
    11  scenario         8  2025-06-02 04:00:00  over    ana $0.00, ben $0.00, cat $0.00; house $0.00
    10  scenario         7  2025-06-02 03:00:00  over    ana +$10.00; house -$10.00
     9  scenario         6  2025-06-02 02:00:00  over    ana -$10.00, ben -$6.00; house +$16.00
     8  scenario         5  2025-06-02 01:00:00  over    ana +$10.00; house -$10.00
     7  scenario         4  2025-06-02 00:00:00  over    ana +$1,000.00, ben +$70.00, cat +$5,000.00; house -$6,070.00
     6  scenario         3  2025-06-01 23:00:00  over    ana +$5.00; house -$5.00
     5  scenario         2  2025-06-01 22:00:00  over    ana -$5.01, ben -$2.50; house +$7.51
     4  scenario         1  2025-06-01 21:00:00  over    ana +$15.01, ben -$10.00, cat +$7.51; house -$12.52
     3  t1               3  2025-06-01 14:00:00  over    ana +$27.50, ben +$7.50; house -$35.00
     2  t1               2  2025-06-01 11:00:00  over    ana -$10.00, ben $0.00; house +$10.00
     1  t1               1  2025-06-01 03:00:00  over    ana -$15.00, ben +$10.00; house +$5.00
"""  # noqa: E501

GOLDEN = {  # sha256 of each output above, first 16 hex digits
    "replay --round 1": "6929407911f82fd7",
    "replay --round 1 --json": "5197e63c9a8dfa74",
    "replay --round 2": "83ab9312aef9eedc",
    "replay --round 2 --json": "0a06b1ffb5a312e7",
    "replay --round 3": "ed8e6910129ac79b",
    "replay --round 3 --json": "77d2c67ea4d4d3a3",
    "replay --round 4": "b942c858825d85ee",
    "replay --round 4 --json": "de009db5f97cbaee",
    "replay --round 5": "a1c5c229b4e29e7b",
    "replay --round 5 --json": "cba56e3e682cc0e8",
    "replay --round 6": "17d243c23fa18a68",
    "replay --round 6 --json": "80ec5e3ddaedaca2",
    "replay --round 7": "f4f5d04906f540dd",
    "replay --round 7 --json": "43fb0d71227869e7",
    "replay --round 8": "946be7b65ee337e3",
    "replay --round 8 --json": "ed4abf46689d5706",
    "replay --round 9": "9a3351043f449f4c",
    "replay --round 9 --json": "dd88b1b7ccc01dfa",
    "replay --round 10": "d6205f6605a6f6af",
    "replay --round 10 --json": "791f2fdc57504087",
    "replay --round 11": "b689b4576e34225e",
    "replay --round 11 --json": "9a94568b61f9a076",
    "replay --round 12": "13ff1609a58a748a",
    "replay --round 12 --json": "491481f2389f073e",
    "replay --round 13": "57b3db1428a567cf",
    "replay --round 13 --json": "12cc3b0d9477b499",
    "rounds": "d9e561d974fac1cd",
    "rounds --json": "6f60f283a3c23e6e",
    "rounds --table t1": "139bbd5006b34c82",
    "rounds --table no-such-table": "a49fc79c9cec5e11",
    "rounds --player ana --outcome win --json": "48db014146f79e64",
    "rounds --outcome void": "0fe6d986441c21ca",
    "rounds --outcome open --json": "61c34789fdd8b948",
    "rounds --since 2025-06-02 --until 2025-06-02T12:00 --limit 3": "0214f4b60b71b739",
    "export --output OUT/all": "2d502ada42791858",
    "export --output OUT/t1 --table t1 --json": "ed3a29a27c3bc992",
    "export --output OUT/none --table no-such-table": "6aa763c640575eb8",
    "export --output OUT/pq --format parquet": "8340072151f3f993",
    "all/events.jsonl": "f0b3f18b1cf207cd",
    "all/ledger.jsonl": "c9b626e642cba38b",
    "all/rounds.jsonl": "d89dadce3782cb9a",
    "none/events.jsonl": "e3b0c44298fc1c14",
    "none/ledger.jsonl": "e3b0c44298fc1c14",
    "none/rounds.jsonl": "e3b0c44298fc1c14",
    "pq/events.parquet": "5035a0c793289c14",
    "pq/ledger.parquet": "f10f834631c906cb",
    "pq/rounds.parquet": "53d9e103bb2854b7",
    "t1/events.jsonl": "033e3961b4a1f093",
    "t1/ledger.jsonl": "2f4cb27eb8dd8c2c",
    "t1/rounds.jsonl": "1c3faf943a143fb1",
}


def test_outputs_are_pinned_byte_for_byte(
    url: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    build(url, monkeypatch, capsys)
    got = outputs(url, tmp_path / "out", capsys)
    assert got["rounds"] == ROUNDS_TEXT, got["rounds"]
    assert sorted(got) == sorted(GOLDEN)
    for name, text in got.items():
        assert digest(text) == GOLDEN[name], f"{name}: now {digest(text)}\n{text}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay", "--round", "99"], "no round 99 in the store"),
        (["rounds", "--outcome", "won"], "--outcome is one of win, lose, push, over, void, open"),
        (["rounds", "--since", "yesterday"], "'yesterday' is not a date: use YYYY-MM-DD or"),
        (["export", "--output", "OUT/file/dir"], "cannot make OUT/file/dir: Not a directory"),
        (["export", "--output", "OUT", "--format", "csv"], "export: argument --format: invalid"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    Store(db).close()  # an empty store
    (tmp_path / "file").write_text("")
    code, out = cli([a.replace("OUT", str(tmp_path)) for a in args] + ["--db", db], capsys)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith(f"pontoon: {message}".replace("OUT", str(tmp_path))), out
