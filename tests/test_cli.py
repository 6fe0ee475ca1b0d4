"""The command line: outputs, and exit code 2 with one readable line for bad input."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pontoon import cli
from pontoon.cli import main

SCENARIOS = Path(__file__).parent / "data" / "scenarios"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_rules_lists_presets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules"], capsys)
    assert code == 0
    for name in ("nz-pontoon", "nz-blackjack", "spanish-21", "classic-blackjack"):
        assert name in out


def test_rules_prints_every_knob_with_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules", "nz-pontoon"], capsys)
    assert code == 0
    assert "must_draw_below" in out and "rule 14.1(d)" in out
    assert "dealer_hits_soft_17" in out and "rule 14.3" in out


def test_rules_json_with_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules", "spanish-21", "--set", "decks=8", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["decks"] == 8 and data["deck"] == "spanish"
    assert data["natural_pays"] == "3:2"


def test_rule_file_with_preset_and_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "casino.toml"
    f.write_text('preset = "nz-blackjack"\ndecks = 4\nsurrender = "late"\n')
    code, out, _ = run(["rules", str(f), "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["decks"] == 4 and data["surrender"] == "late"
    assert data["deck"] == "standard" and data["name"] == "casino"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rules", "--set", "decks=9"], "knob 'decks' must be between 1 and 8"),
        (["rules", "--set", "nonsense=1"], "unknown knob 'nonsense'"),
        (["rules", "--set", "decks"], "--set needs KEY=VALUE"),
        (["rules", "--set", "natural_pays=x"], "odds must be written like 3:2"),
        (["rules", "--set", "surrender=sometimes"], "must be one of none, late"),
        (["rules", "no-such-rules"], "unknown rule set"),
        (["round", "/no/such/file.json"], "cannot read"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exit_2_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_toml_rule_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("decks = = 3")
    code, _, err = run(["rules", str(f)], capsys)
    assert code == 2 and "not a TOML rule file" in err


def test_round_prints_the_result_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["round", str(SCENARIOS / "13_7_obo_back_bettor_followed_both.json")], capsys
    )
    doc = json.loads(out)
    assert code == 0
    assert set(doc) >= {"dealer", "boxes", "players", "events"}
    wager = doc["boxes"][0]["hands"][0]["wagers"][0]
    assert set(wager) >= {"player", "amount", "outcome", "net"}
    assert doc["events"][0]["kind"] == "rules"


def test_round_set_overrides_the_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(
        json.dumps(
            {
                "shoe": ["5S", "9H", "6D", "8C", "9C"],
                "boxes": [{"box": 1, "wagers": [{"player": "ana", "amount": 1000}]}],
                "actions": [{"box": 1, "action": "stand"}],
            }
        )
    )
    code, _, err = run(["round", str(f)], capsys)
    assert code == 2 and "14.1(d)" in err
    code, out, _ = run(["round", str(f), "--set", "must_draw_below=0"], capsys)
    assert code == 0 and json.loads(out)["players"]["ana"]["net"] == -1000


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ("{", "not a JSON scenario"),
        ("[]", "a scenario is a JSON object"),
        ('{"shoe": ["9S"], "boxes": []}', "'boxes' must list at least one box"),
        ('{"shoe": ["XX"], "boxes": []}', "unknown card 'XX'"),
        (
            '{"shoe": ["9S", "7H", "8D"], "boxes": [{"box": 1, "wagers": '
            '[{"player": "a", "amount": 10.5}]}]}',
            "'amount' must be a whole number",
        ),
        (
            '{"shoe": ["9S", "7H"], "boxes": [{"box": 1, "wagers": '
            '[{"player": "a", "amount": 1000}]}]}',
            "too few cards",
        ),
        (
            '{"shoe": ["9S", "7H", "8D"], "boxes": [{"box": 1, "wagers": '
            '[{"player": "a", "amount": 1000}]}]}',
            "missing action: box 1",
        ),
        (
            '{"shoe": ["9S", "7H", "8D"], "boxes": [{"box": 1, "wagers": '
            '[{"player": "a", "amount": 1000}]}], "actions": [{"box": 1, "action": "fly"}]}',
            "unknown action",
        ),
        (  # 15: each box of the layout is listed once
            '{"shoe": ["9S", "7H", "8D", "KC", "2C"], "boxes": ['
            '{"box": 1, "wagers": [{"player": "a", "amount": 1000}]},'
            '{"box": 1, "wagers": [{"player": "b", "amount": 1000}]}]}',
            "box 1 is listed twice: list each box once (rule 15)",
        ),
        (  # 15.3: one wager a player on a box
            '{"shoe": ["9S", "7H", "8D"], "boxes": [{"box": 1, "wagers": ['
            '{"player": "a", "amount": 1000}, {"player": "a", "amount": 500}]}]}',
            "box 1: 'a' wagers twice: one wager a player on a box (15.3)",
        ),
    ],
)
def test_round_bad_scenarios_exit_2(
    scenario: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(scenario)
    code, out, err = run(["round", str(f)], capsys)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


@pytest.mark.integration
def test_console_script_runs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pontoon.cli",
            "round",
            str(SCENARIOS / "14_1_d_stand_on_hard_11_refused.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("pontoon: illegal action 'stand' for box 1: rule 14.1(d)")


# ---------------------------------------------------------------- a reader that goes away
# `pontoon rules nz-pontoon | head -1`: every command ends quietly — no traceback, nothing on
# stderr, status 1 — when its stdout is a pipe whose reader has gone (cli.main).

BIG_ROUND = SCENARIOS / "15_super_sevens_one_seven_two_sevens_suited_three_sevens.json"
PLAY_INPUT = "\nh\ns\ns\n" * 20  # about ten rounds of hit-then-stand: 9.7 kB of rich output


def run_reader_leaves(
    args: list[str], lines: int, *, stdin: str = "", buffered: bool = True
) -> tuple[int, str]:
    """``python -m pontoon.cli ARGS`` with stdout a pipe whose reader reads ``lines`` lines and
    then closes it (``lines=0``: the reader is gone before the command starts); returns the
    exit status and stderr. ``buffered``: stdout block-buffered, as when a person pipes the
    command (the interpreter's last flush is where it fails); else every print is a write
    (PYTHONUNBUFFERED=1), and the print fails.

    Reading lines: the pipe is shrunk to one page (4,096 bytes) and read a byte at a time, so
    a command printing more than that is still blocked in a write when the reader leaves. A
    shorter output goes out in one write before the first line can be read, and nothing more
    can fail: only ``lines=0`` tests it (and ``rules`` prints 113 bytes)."""
    r, w = os.pipe()
    if lines == 0:
        os.close(r)
    elif hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with subprocess.Popen(
        [sys.executable, "-m", "pontoon.cli", *args],
        stdin=subprocess.PIPE,
        stdout=w,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        os.close(w)
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(stdin.encode())  # a few bytes: the pipe takes them without blocking
        proc.stdin.close()
        if lines:
            seen = 0
            while seen < lines and (byte := os.read(r, 1)):
                seen += byte == b"\n"
            os.close(r)
        err = proc.stderr.read().decode()
        status = proc.wait(timeout=300)
    return status, err


def assert_quiet(status: int, err: str, *, gone: bool = True) -> None:
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert err == ""
    if gone:  # the test did make the reader leave while the command was still writing
        assert status == 1
    else:
        assert status in (0, 1)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store holding a scripted round and a terminal session."""
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'p.db'}"
    for args, stdin in (
        (["round", str(BIG_ROUND), "--db", url], ""),
        (["play", "--seed", "3", "--rounds", "2", "--db", url], PLAY_INPUT),
    ):
        subprocess.run(
            [sys.executable, "-m", "pontoon.cli", *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )
    return url


SLOW = pytest.mark.slow  # the exact analysis or the simulator's chart first: seconds each


def command_id(value: object) -> str | None:
    """``round 15_super_sevens….json`` for a test id (no temporary folders)."""
    if not isinstance(value, list):
        return None
    return " ".join(Path(a).name if "/" in a else a for a in value)


@pytest.mark.integration
@pytest.mark.parametrize(
    "args",
    [
        ["rules"],
        ["rules", "nz-pontoon"],
        ["rules", "spanish-21", "--json"],
        ["round", str(BIG_ROUND)],
        ["--help"],
        ["round", "--help"],
        ["analyze", "--hand", "7S,8D", "--dealer", "K"],
        pytest.param(["strategy", "--infinite"], marks=SLOW),
        pytest.param(["simulate", "--rounds", "1000", "--seed", "1", "--workers", "1"], marks=SLOW),
    ],
    ids=command_id,
)
def test_reader_gone_before_the_output(args: list[str]) -> None:
    assert_quiet(*run_reader_leaves(args, 0))


@pytest.mark.integration
@pytest.mark.parametrize(
    "args", [["rules"], ["rules", "nz-pontoon"], ["round", str(BIG_ROUND)]], ids=command_id
)
def test_reader_gone_unbuffered(args: list[str]) -> None:
    assert_quiet(*run_reader_leaves(args, 0, buffered=False))


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "gone"),
    [
        (["rules"], ""),  # 113 bytes: all written before the first line is read
        (["rules", "nz-pontoon"], "bu"),  # 5,183 bytes
        (["round", str(BIG_ROUND)], "bu"),  # 11,387 bytes
        pytest.param(["strategy", "--infinite"], "", marks=SLOW),  # 2,035 bytes
        # 25 kB in one sys.stdout.write: unbuffered, the one write() ends short when the reader
        # leaves, and TextIOWrapper does not retry the rest (no error: CPython's, not ours)
        pytest.param(["analyze", "--infinite"], "b", marks=SLOW),
    ],
    ids=command_id,
)
@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_reader_leaves_after_one_line(args: list[str], gone: str, buffered: bool) -> None:
    """``gone``: whether the reader leaves while the command is still writing, b buffered, u
    unbuffered (then the status must be 1)."""
    status, err = run_reader_leaves(args, 1, buffered=buffered)
    assert_quiet(status, err, gone=("b" if buffered else "u") in gone)


@pytest.mark.integration
@pytest.mark.parametrize("lines", [0, 1])
@pytest.mark.parametrize("db", [False, True], ids=["", "db"])
def test_play_reader_leaves(lines: int, db: bool, tmp_path: Path) -> None:
    """rich writes pontoon play's output: its broken pipe ends the same way."""
    args = ["play", "--seed", "3", "--rounds", "10"]
    url = f"sqlite:///{tmp_path / 'p.db'}"
    if db:
        args += ["--db", url]
    assert_quiet(*run_reader_leaves(args, lines, stdin=PLAY_INPUT))
    if db:  # the store was closed properly: it verifies, and the session goes on from it
        done = subprocess.run(
            [sys.executable, "-m", "pontoon.cli", "verify", "--db", url],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0 and done.stdout.startswith("intact"), done.stdout


@pytest.mark.integration
@pytest.mark.parametrize(
    "args",
    [
        ["rounds"],
        ["rounds", "--json"],
        ["replay", "--round", "1"],
        ["replay", "--round", "1", "--json"],
        ["verify"],
        ["export", "--output", "{tmp}"],
    ],
    ids=command_id,
)
def test_store_commands_reader_gone(args: list[str], store_url: str, tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert_quiet(*run_reader_leaves([*args, "--db", store_url], 0))


@pytest.mark.integration
def test_replay_reader_leaves_after_one_line(store_url: str) -> None:
    args = ["replay", "--round", "1", "--json", "--db", store_url]  # 20 kB
    assert_quiet(*run_reader_leaves(args, 1))


@pytest.mark.integration
def test_serve_reader_gone(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    args = [
        "serve",
        "--db",
        f"sqlite:///{tmp_path / 's.db'}",
        "--supervisor-token",
        "reader-gone-supervisor",
    ]
    assert_quiet(*run_reader_leaves([*args, "--port", "0"], 0))


def test_other_broken_pipes_are_not_hidden(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A BrokenPipeError while stdout is fine (a worker's pipe, a socket) is a real error."""

    def broken(args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli.COMMANDS, "rules", broken)
    with pytest.raises(BrokenPipeError):
        main(["rules"])
