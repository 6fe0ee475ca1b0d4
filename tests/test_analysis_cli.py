"""``pontoon analyze`` and ``pontoon strategy``: outputs and refusals (exit 2, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pontoon.analysis.chart import RESCUE_ROWS, ROWS, Chart
from pontoon.cli import main
from pontoon.errors import InputError

FAST = ["--rules", "classic-blackjack", "--set", "decks=1", "--set", "split_max_hands=2"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["analyze", *FAST, "--infinite", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert {"rules", "ev", "method", "seconds", "table", "chart"} <= set(doc)
    assert doc["rules"]["decks"] == 1 and -0.01 < doc["ev"] < 0.0
    assert {"hand", "dealer", "stand", "hit", "double", "surrender", "split", "play"} <= set(
        doc["table"][0]
    )


def test_ev_by_dealer_card_weighs_up_to_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["analyze", *FAST, "--infinite", "--json"], capsys)
    doc = json.loads(out)
    weighted = sum(doc["dealer_probability"][u] * ev for u, ev in doc["ev_by_dealer"].items())
    assert weighted == pytest.approx(doc["ev"], abs=1e-12)
    _, text, _ = run(["analyze", *FAST, "--infinite"], capsys)
    ace = doc["ev_by_dealer"]["A"] * 100
    assert f"A   {doc['dealer_probability']['A']:.4f}  {ace:+.4f} %" in text


def test_analyze_text_and_composition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["analyze", *FAST, "--strategy", "composition"], capsys)
    assert code == 0 and "expected return" in out and "H16" in out


def test_hand_calculator(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["analyze", "--hand", "7S,8D", "--dealer", "K", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert set(doc["actions"]) == {"stand", "hit", "double", "surrender"}
    assert doc["best"] == "hit"  # 15 against a king, no hole card
    code, out, _ = run(["analyze", "--hand", "8S,8D", "--dealer", "6"], capsys)
    assert code == 0 and "split" in out
    # 9.3: surrender only on the first two cards; a hand of three has acted (and, doubling on
    # any two cards only, no double either)
    code, out, _ = run(["analyze", "--hand", "7S,5D,2C", "--dealer", "K", "--json"], capsys)
    assert code == 0 and set(json.loads(out)["actions"]) == {"stand", "hit"}


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "--hand", "7S,8X", "--dealer", "K"],
        ["analyze", "--hand", "7S", "--dealer", "K"],
        ["analyze", "--hand", "TS,6D", "--dealer", "K"],  # no tens in a Spanish deck
        ["analyze", "--hand", "KS,QD,5C", "--dealer", "K"],  # bust
        ["analyze", "--hand", "7S,8D"],
        ["analyze", "--strategy", "no-such-chart.csv"],
        ["analyze", "--wager", "0"],
        ["strategy", "--format", "png"],
        ["strategy", "--format", "gif"],
        ["analyze", "--set", "decks=12"],
    ],
)
def test_bad_input_exit_2_one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert err.startswith("pontoon: ") and err.count("\n") == 1


def test_strategy_csv_reads_back_with_the_same_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, csv_text, _ = run(["strategy", *FAST, "--infinite", "--format", "csv"], capsys)
    assert code == 0
    chart = Chart.from_csv(csv_text)
    assert [line.split(",")[0] for line in csv_text.splitlines()[1:]] == list(ROWS)
    path = tmp_path / "chart.csv"
    path.write_text(csv_text)
    _, basic, _ = run(["analyze", *FAST, "--infinite", "--json"], capsys)
    _, mine, _ = run(["analyze", *FAST, "--infinite", "--strategy", str(path), "--json"], capsys)
    assert json.loads(mine)["ev"] == pytest.approx(json.loads(basic)["ev"], abs=1e-12)
    assert chart.code("PA", 6) == "P"


@pytest.mark.slow
def test_rescue_rows_are_written_and_read_back_with_the_same_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """12 (double_rescue): the chart gets the rescue rows X6-X20, and ``analyze --strategy``
    of the CSV it writes gives the ``basic`` value exactly: the value is the chart's."""
    rescue = [*FAST, "--set", "double_rescue=true", "--infinite"]
    code, csv_text, _ = run(["strategy", *rescue, "--format", "csv"], capsys)
    assert code == 0
    rows = [line.split(",")[0] for line in csv_text.splitlines()[1:]]
    assert rows == [*ROWS, *RESCUE_ROWS]
    chart = Chart.from_csv(csv_text)
    assert chart.code("X16", 10) == "R" and chart.code("X20", 10) == "S"
    path = tmp_path / "chart.csv"
    path.write_text(csv_text)
    _, basic, _ = run(["analyze", *rescue, "--json"], capsys)
    _, mine, _ = run(["analyze", *rescue, "--strategy", str(path), "--json"], capsys)
    assert json.loads(mine)["ev"] == pytest.approx(json.loads(basic)["ev"], abs=1e-12)
    code, text, _ = run(["strategy", *rescue], capsys)
    assert code == 0 and "X16" in text and "rescue" in text
    png = tmp_path / "chart.png"
    code, _, _ = run(["strategy", *rescue, "--format", "png", "--output", str(png)], capsys)
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path.write_text(csv_text.replace("X16,", "X16,H,").replace("X16,H,S,", "X16,H,", 1))
    code, _, err = run(["analyze", *rescue, "--strategy", str(path)], capsys)
    assert code == 2 and "rescue row X16" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_strategy_text_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["strategy", *FAST, "--infinite"], capsys)
    assert code == 0 and "Basic strategy" in out and "H16" in out
    png = tmp_path / "chart.png"
    code, out, _ = run(
        ["strategy", *FAST, "--infinite", "--format", "png", "--output", str(png)], capsys
    )
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hand,2,3\n", "header"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nH4,H,H,H,H,H,H,H,H,H,X\n", "unknown cell"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nH4,P,H,H,H,H,H,H,H,H,H\n", "pair"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nH4,H,H,H,H,H,H,H,H,H,H\n", "missing rows"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nX12,S,S,S,S,S,S,R,R,Rs,R\n", "rescue row X12"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nX21,S,S,S,S,S,S,R,R,R,R\n", "unknown row"),
        ("hand,2,3,4,5,6,7,8,9,T,A\nH4" + ",H" * 10 + "\nH4" + ",S" * 10 + "\n", "H4 given twice"),
    ],
)
def test_bad_charts_are_refused(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Chart.from_csv(text)


@pytest.mark.integration
def test_analyze_loads_neither_the_round_engine_nor_the_store() -> None:
    """`pontoon analyze` is the analysis alone: the command line's parser (every command's
    options, the trainer's included) loads no round engine, store or server to build itself,
    so a whole `analyze` process keeps to its time and memory beside Farmer's analyser."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys; from pontoon.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['analyze', '--rules', 'classic-blackjack', '--set', 'decks=1', '--set',"
        " 'split_max_hands=1', '--json'])\n"
        "heavy = ('pontoon.round', 'pontoon.store.db', 'sqlalchemy', 'pontoon.server.app',"
        " 'pontoon.train.strategy')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[-1] == "[]", out
