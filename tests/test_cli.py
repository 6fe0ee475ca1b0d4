"""The command line: outputs, and exit code 2 with one readable line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
    ],
)
def test_round_bad_scenarios_exit_2(
    scenario: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(scenario)
    code, out, err = run(["round", str(f)], capsys)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


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
