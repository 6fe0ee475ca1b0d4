"""Bad input on the command line: exit 2, one readable line, nothing made — the numbers an
option cannot hold, a seed below 0, a float that is no number, a store that is no store or
not there, a URL that cannot be read, an address that cannot be listened on, a scenario nested
past reading, a plot with no format or folder (each of these ended in a traceback)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pontoon.store.db import Store
from tests.test_store import cli

SCENARIOS = Path(__file__).parent / "data" / "scenarios"
SCENARIO = SCENARIOS / "9_1_pontoon_paid_3_2_at_once_rounded_down.json"


def _cases(tmp: Path) -> list[tuple[list[str], str]]:
    (tmp / "notdb.db").write_text("hello")
    (tmp / "notdb.db").chmod(0o600)
    (tmp / "deep.json").write_text("[" * 100_000)
    new = f"sqlite:///{tmp / 'new.db'}"
    store = f"sqlite:///{tmp / 'store.db'}"
    Store(store).close()
    return [
        (["simulate", "--seed", "-1", "--rounds", "10"], "a seed is 0 or more, not -1"),
        (["play", "--seed", "-1"], "a seed is 0 or more"),
        (["replay", "--round", "99999999999999999999999"], "is too large a number"),
        (["rounds", "--limit", "1e3"], "not a whole number: '1e3'"),
        (["count", "ramp", "--bankroll", "100000", "--spread", "nan"], "not a finite number"),
        (["rules", "--set", "decks=٦"], "needs a whole-number value"),
        (["verify", "--db", f"sqlite:///{tmp / 'notdb.db'}"], "file is not a database"),
        (["rounds", "--db", "postgresql://u@[::1"], "cannot read the store URL"),
        (["rounds", "--db", "postgresql://u@127.0.0.1:1/x"], "cannot open the store"),
        (["round", str(SCENARIO), "--db", f"sqlite:///{tmp}/no/dir.db"], "cannot open the store"),
        (["round", str(SCENARIO), "--db", new, "--table", ""], "a table's name is 1 to 64"),
        (["train", "progress", "--learner", "ana", "--db", new], "no store at"),
        (["round", str(tmp / "deep.json")], "nested too deep"),
        (["strategy", "--format", "png", "--output", str(tmp / "x.txt")], "'txt' is not supported"),
        (["strategy", "--format", "png", "--output", str(tmp / "no" / "x.png")], "cannot write"),
        (["export", "--db", store, "--output", ""], "--output names the folder"),
        (["par", "--format", "pdf", "--output", str(tmp / "no" / "x.pdf")], "no folder"),
        (["certify", "--output", str(tmp)], "is a folder, not a file"),
        (["analyze", "--hand", "1Z", "--dealer", "6"], "unknown card '1Z'"),
    ]


@pytest.mark.parametrize("case", range(19))
def test_bad_input_is_refused_in_one_line_and_makes_nothing(
    case: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, said = _cases(tmp_path)[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out = cli(argv, capsys)
    assert code == 2 and out.count("\n") == 1 and said in out, out
    assert "Traceback" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing made


def test_serve_refuses_an_address_it_cannot_listen_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("fastapi")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        db = f"sqlite:///{tmp_path / 's.db'}"
        code, out = cli(["serve", "--port", str(port), "--db", db], capsys)
    assert code == 2 and out.count("\n") == 1, out
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in out
