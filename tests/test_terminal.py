"""``pontoon play``: the terminal table, driven by piped input on seeded shoes.

Seeded shoes deal the same cards every time, so the situations below are fixed:
``nz-pontoon`` seed 1 deals box 1 a hard 9 (7♠ 2♥) against a dealer 8♣, then A♦ 5♦ against
a Q♠; seed 6 deals the dealer an ace; seed 30 deals you a pontoon; seed 39 deals a pair of
nines; ``classic-blackjack`` seed 2 has the dealer's A♦ up and the 6♠ in the hole.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pontoon.cli import main
from pontoon.errors import InputError
from pontoon.hand import describe
from pontoon.money import dollars, parse_dollars, signed


def run_play(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    lines: list[str],
) -> tuple[int, str, str]:
    """``pontoon play ARGS`` with ``lines`` piped to stdin; (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = main(["play", *args])
    out, err = capsys.readouterr()
    return code, out, err


def money(text: str) -> int:
    """``-$1,002.50`` as cents."""
    sign = -1 if text.startswith("-") else 1
    return sign * parse_dollars(text.lstrip("+-").replace(",", ""))


def test_parse_dollars_exact_cents_without_floats() -> None:
    assert parse_dollars("10") == 1000
    assert parse_dollars(" $10.50 ") == 1050
    assert parse_dollars("10.5") == 1050
    assert parse_dollars("0.01") == 1
    assert parse_dollars("1234567.89") == 123456789
    for bad in ("", "abc", "-5", "1.234", "1e3", "NaN", "10,5", ".5", "5 5", "inf"):
        with pytest.raises(InputError, match="not an amount"):
            parse_dollars(bad)


def test_money_and_totals_as_shown() -> None:
    assert dollars(0) == "$0.00"
    assert dollars(100000) == "$1,000.00"
    assert signed(-250) == "-$2.50" and signed(750) == "+$7.50" and signed(0) == "$0.00"
    from pontoon.cards import parse_cards

    assert describe(parse_cards("AS 5D")) == "soft 16"
    assert describe(parse_cards("AS 5D KC")) == "hard 16"
    assert describe(parse_cards("AS QD")) == "pontoon"
    assert describe(parse_cards("AS QD"), from_split=True) == "21"  # not pontoon


def test_three_rounds_cards_totals_actions_refusals(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["", "s", "z", "h", "s"]  # round 1: hard 9, stand refused (14.1(d)), a bad key
    lines += ["", "r"]  # round 2: A♦ 5♦ against a Q♠: surrender (9.3)
    lines += ["", "h", "s"]  # round 3
    code, out, err = run_play(monkeypatch, capsys, ["--seed", "1", "--rounds", "3"], lines)
    assert code == 0, err
    assert "\x1b[" not in out  # piped: plain text, no colour codes
    # the layout: cards with suit symbols, totals, wager, whose turn
    assert re.search(r"Dealer +8♣ +hard 8", out)
    assert re.search(r"Box 1 +7♠ 2♥ +hard 9 +\$5\.00 +<- to act", out)
    # only the legal actions are offered: a hard 9 may not stand (14.1(d))
    assert "Box 1: h hit, d double, q quit > " in out
    assert (
        "Refused: illegal action 'stand' for box 1: rule 14.1(d) a total of 9 must draw to 12"
        in out
    )
    assert "Unknown key 'z': choose h hit, d double, or q to quit." in out
    assert "Box 1: h hit, s stand, d double, r surrender, q quit > r" in out
    assert "Box 1 (soft 16) is surrendered: -$2.50 (rule 9.3)." in out
    assert "Dealer takes the second card" in out
    assert "Round 3" in out and "Round 4" not in out
    assert "3 rounds played." in out
    # the money adds up: the rounds' nets make the session's net and the bankroll
    nets = [money(m) for m in re.findall(r"Round net (\S+),", out)]
    assert len(nets) == 3 and nets[1] == -250
    session = re.search(r"Session: 3 rounds, net (\S+), bankroll (\S+)\.", out)
    assert session is not None
    assert money(session.group(1)) == sum(nets)
    assert money(session.group(2)) == 100000 + sum(nets)


def test_same_seed_same_session(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["", "h", "s", "", "s", "", "h", "s"]
    first = run_play(monkeypatch, capsys, ["--seed", "1", "--rounds", "3"], lines)
    again = run_play(monkeypatch, capsys, ["--seed", "1", "--rounds", "3"], lines)
    assert first == again


def test_eof_mid_round_finishes_it_for_an_absent_player_16_6(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_play(monkeypatch, capsys, ["--seed", "1"], [""])  # wager, then EOF
    assert code == 0
    assert "drawn to 12 or more and stand (rule 16.6)" in out
    assert "Box 1 draws 7♠." in out  # the hard 9 is drawn to 16, then stands
    assert re.search(r"Box 1 +7♠ 2♥ 7♠ +hard 16 +\$5\.00 +lost -\$5\.00", out)
    assert "You leave the table." in out
    assert "Session: 1 round, net -$5.00, bankroll $995.00." in out


@pytest.mark.parametrize("lines", [[], ["q"], ["", "q"], ["", "h", "QUIT"]])
def test_eof_or_q_anywhere_ends_cleanly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], lines: list[str]
) -> None:
    code, out, err = run_play(monkeypatch, capsys, ["--seed", "1"], lines)
    assert code == 0 and err == ""
    assert "You leave the table." in out
    assert re.search(r"Session: [01] rounds?, net", out)


def test_wager_entry_in_dollars(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["ten", "4.99", "1000.01", "1500.01", "10.50", "h", "s", "", "q"]
    code, out, _ = run_play(monkeypatch, capsys, ["--seed", "1", "--bankroll", "150000"], lines)
    assert code == 0
    assert "Not accepted: 'ten' is not an amount: type dollars, like 10 or 10.50" in out
    assert "rule 15.6 each wager must be at least the minimum" in out
    assert "rule 15.2 the wager of you would exceed the maximum" in out
    assert "you have $1,500.00 left for this box, not $1,500.01" in out
    assert re.search(r"Box 1 +7♠ 2♥ +hard 9 +\$10\.50", out)
    assert "Wager on box 1 (Enter = $5.00, q quits): ten" in out
    # Enter repeats the last wager
    assert "Wager on box 1 (Enter = $10.50, q quits): \n" in out
    assert re.search(r"Box 1 +A♦ 5♦ +soft 16 +\$10\.50", out)


def test_bankroll_below_table_minimum_ends_the_session(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_play(
        monkeypatch, capsys, ["--seed", "1", "--bankroll", "500"], ["", "h", "s"]
    )
    assert code == 0
    assert "Your bankroll $0.00 is below the table minimum $5.00." in out
    assert "Session: 1 round, net -$5.00, bankroll $0.00." in out


def test_double_needs_the_money_or_doubles_for_less(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["", "d", "d 2", "q"]
    code, out, _ = run_play(monkeypatch, capsys, ["--seed", "1", "--bankroll", "700"], lines)
    assert code == 0
    assert "not enough money to double: it takes $5.00 and you have $2.00 off the table" in out
    assert re.search(r"7♠ 2♥ 7♠ +hard 16 +\$7\.00 doubled +lost -\$7\.00", out)


def test_insurance_against_a_dealer_ace(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_play(
        monkeypatch, capsys, ["--seed", "6", "--rounds", "1"], ["", "i", "i", "h", "s"]
    )
    assert code == 0
    assert "i insure ($2.50), n no insurance, h hit, d double, r surrender, q quit > i" in out
    assert "rule 10 you has already decided on insurance" in out  # the second "i"
    assert "Box 1 insurance loses: -$2.50 (rule 10)." in out
    assert "Round net -$7.50" in out


def test_pontoon_paid_at_once_9_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_play(monkeypatch, capsys, ["--seed", "30", "--rounds", "1"], [""])
    assert code == 0
    assert "Box 1 (pontoon) wins 3:2: +$7.50 (rule 9.1)." in out
    assert "q quit >" not in out  # no decision to make


def test_split_plays_each_hand(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["", "p", "s", "s"]
    code, out, _ = run_play(monkeypatch, capsys, ["--seed", "39", "--rounds", "1"], lines)
    assert code == 0
    assert "p split" in out
    assert "Box 1 hand 1: h hit, s stand, d double, q quit > s" in out
    assert re.search(r"Box 1 hand 2 +9♠ \S+ +\S+ \d+ +\$5\.00", out)


def test_two_boxes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["", "7", "s", "h", "s"]
    code, out, _ = run_play(
        monkeypatch, capsys, ["--seed", "39", "--boxes", "2", "--rounds", "1"], lines
    )
    assert code == 0
    assert "Wager on box 2 (Enter = $5.00, q quits): 7" in out
    assert re.search(r"Box 2 +K♠ J♥ +hard 20 +\$7\.00 +waiting", out)
    assert "Box 2: h hit, s stand, d double, q quit >" in out


def test_peek_game_hides_the_hole_card(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--rules", "classic-blackjack", "--seed", "2", "--rounds", "1"]
    code, out, _ = run_play(monkeypatch, capsys, args, ["", "h", "n", "s"])
    assert code == 0
    assert re.search(r"Dealer +A♦ \?\? +soft 11", out)
    assert "rule 10 insurance must be decided before the dealer peeks" in out
    assert out.index("6♠") > out.index("Dealer turns up the hole card 6♠")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--boxes", "4"], "--boxes must be 1 to 3 (rule 15.4)"),
        (["--boxes", "0"], "--boxes must be 1 to 3"),
        (["--wager", "100"], "--wager must be 500 to 100000 cents"),
        (["--bankroll", "-1"], "--bankroll must not be negative"),
    ],
)
def test_bad_options_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code, _, err = run_play(monkeypatch, capsys, args, [])
    assert code == 2
    assert message in err


@pytest.mark.integration
def test_console_script_with_piped_input() -> None:
    script = Path(sys.executable).parent / "pontoon"
    if not script.exists():
        pytest.skip("the pontoon console script is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONUTF8"] = "1"
    # seed 3: box 1 holds 4♠ 7♠ (hard 11) against a J♥; standing is refused (14.1(d))
    proc = subprocess.run(
        [str(script), "play", "--seed", "3"],
        input="\ns\nw\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=30,
        check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "\x1b[" not in out
    assert re.search(r"Dealer +J♥ +hard 10", out)
    assert re.search(r"Box 1 +4♠ 7♠ +hard 11 +\$5\.00 +<- to act", out)
    assert "Box 1: h hit, d double, r surrender, q quit > s" in out
    assert "rule 14.1(d) a total of 11 must draw to 12 or more" in out
    assert "Unknown key 'w'" in out
    assert "rule 16.6" in out  # EOF during the round: the hand is played out
    assert "Session: 1 round, net" in out


ANSWERS = ["", "h", "s", "d", "p", "r", "i", "n", "x", "q", "z", "d 1", "i 0.01", "7.25", "[red]"]


@settings(max_examples=40, deadline=None)
@given(
    preset=st.sampled_from(["nz-pontoon", "classic-blackjack"]),
    seed=st.integers(0, 10_000),
    boxes=st.integers(1, 3),
    lines=st.lists(st.sampled_from(ANSWERS), max_size=60),
)
def test_any_input_ends_cleanly_and_the_money_adds_up(
    preset: str, seed: int, boxes: int, lines: list[str]
) -> None:
    sys_stdin, sys_stdout = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO("\n".join(lines)), io.StringIO()
    try:
        args = ["play", "--rules", preset, "--seed", str(seed), "--boxes", str(boxes)]
        code = main([*args, "--bankroll", "2000"])
        out = sys.stdout.getvalue()
    finally:
        sys.stdin, sys.stdout = sys_stdin, sys_stdout
    assert code == 0
    session = re.search(r"Session: \d+ rounds?, net (\S+), bankroll (\S+)\.", out)
    assert session is not None, out
    nets = [money(m) for m in re.findall(r"Round net (\S+),", out)]
    assert money(session.group(1)) == sum(nets)
    assert money(session.group(2)) == 2000 + sum(nets) >= 0
