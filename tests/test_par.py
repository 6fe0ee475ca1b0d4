"""``pontoon par``: the PAR sheet's figures (JSON), its HTML page opened in Chromium, its PDF's
pages rendered, the rule effects on a process pool, and bad input (exit 2, one line)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pontoon.analysis import effects
from pontoon.analysis.par import Operator, OutcomesError, ParSheet, check_outcomes, par_sheet
from pontoon.analysis.par_render import to_html, write_pdf
from pontoon.analysis.report import analyze
from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.vocab import Ending

FAST = ["--rules", "classic-blackjack", "--set", "split_max_hands=2"]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def nz_sheet() -> ParSheet:
    """nz-pontoon's sheet (basic chart), with a rule effect."""
    rules = load_rules("nz-pontoon")
    rep = analyze(rules, "basic")
    effs = [effects.run_task(effects.Task(rules, "basic", 500, "cdz", "decks", 8))]
    effs[0]["delta_ev"] = effs[0]["ev"] - rep.ev
    return par_sheet(rep, Operator(), effs)


@pytest.fixture(scope="module")
def nz(nz_sheet: ParSheet) -> dict[str, Any]:
    return nz_sheet.to_json()


@pytest.mark.slow
def test_13_7_every_outcome_row_is_computed_and_a_broken_one_shows(
    nz_sheet: ParSheet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcome table's rows, 13.7's line included, are each computed from the
    distribution's own parts, so that their adding up to the expected value (computed apart)
    is a check: one row's frequency broken on purpose, or 13.7's refund, and the sheet is
    refused. (Before, the 13.7 line was the expected value less every other row: the sum
    could never fail, and absorbed any row's error.)"""
    rows = nz_sheet.outcomes()  # (checked as it is made)
    back = next(r for r in rows if r["ending"] == "13.7_refund")
    assert 0 < back["return"] < 0.01
    check_outcomes(rows, nz_sheet.report.ev)
    d = nz_sheet.dist
    busts = next(i for i, e in enumerate(d.ends) if e.why == Ending.BUST)
    broken = d.counts.copy()
    broken[busts] *= 1.0001  # one row's frequency, a ten-thousandth off
    monkeypatch.setattr(d, "counts", broken)
    with pytest.raises(OutcomesError, match="adds up to"):
        nz_sheet.outcomes()
    monkeypatch.undo()
    monkeypatch.setattr(d, "refund", d.refund * 1.01)  # 13.7's line, a hundredth off
    with pytest.raises(OutcomesError):
        nz_sheet.outcomes()


@pytest.mark.slow
def test_par_json_has_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["par", *FAST, "--no-effects", "--json", "--rounds", "300000", "--workers", "1"])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    assert code == 0
    assert {"ev", "variance", "sd", "distribution", "outcomes", "rule_effects"} <= set(doc)
    ev = analyze(load_rules("classic-blackjack", {"split_max_hands": 2}), "basic").ev
    assert doc["ev"] == pytest.approx(ev, abs=1e-12)
    assert sum(r["probability"] for r in doc["distribution"]) == pytest.approx(1, abs=1e-12)
    mean = sum(r["net"] * r["probability"] for r in doc["distribution"])
    assert mean == pytest.approx(ev, abs=1e-12)
    assert doc["sd"] == pytest.approx(doc["variance"] ** 0.5)
    assert sum(r["return"] for r in doc["outcomes"]) == pytest.approx(ev, abs=1e-12)
    for r in doc["outcomes"]:
        assert {"name", "probability", "payout", "one_in"} <= set(r)
    assert doc["rules"]["name"] == "classic-blackjack" and doc["strategy"] == "basic"
    assert doc["precision"]["ev"] == "exact" and doc["precision"]["variance"] == "exact"
    sim = doc["covariance_simulated"]  # two boxes of the chart, simulated, with its error
    assert sim["rounds"] == 300_000 and 0 < sim["se"] < 0.01
    assert doc["covariance"] == sim["value"]  # the figure the sheet uses, labelled so
    assert doc["precision"]["covariance"].startswith("simulated")
    assert abs(sim["value"] - doc["covariance_model"]) < 0.003 + 4 * sim["se"]
    variance2 = 2 * doc["variance"] + 2 * sim["value"]
    assert doc["boxes"][1]["variance"] == pytest.approx(variance2)


def check_sheet(nz: dict[str, Any]) -> None:
    names = {r["ending"] for r in nz["outcomes"]}
    # 9.1, 11.1, 11.2, 13.7, 9.4 all have their lines
    assert {"pontoon", "five_card_21", "678_spades", "777_suited", "super_bonus"} <= names
    assert "13.7_refund" in names  # one wager from all the split hands standing
    sb = nz["super_bonus"]
    assert sb["at_wager"] == 100_000 and sb["others_each"] == 5_000
    assert 1e5 < sb["one_in"] < 1e7 and not sb["display_odds"]
    ins = nz["insurance"]
    assert ins["p_win"] == pytest.approx(72 / 287, abs=0.01)  # tens after the ace, about
    assert ins["ev"] == pytest.approx(3 * ins["p_win"] - 1)
    op = nz["operator"]
    seven = nz["boxes"][6]
    assert op["theoretical_win_per_hour"] == round(-seven["ev_with_others"] * 500 * 60)
    assert op["band95"][0] < op["theoretical_win_per_shift"] < op["band95"][1]
    assert nz["boxes"][1]["variance"] == pytest.approx(2 * nz["variance"] + 2 * nz["covariance"])
    # 11.2: each other box's $50 (10 wagers) raises the table's variance by about
    # 2 * 10 * 2 * 200 * P(SB) + 100 * 2 * P(SB) with two boxes
    extra = nz["boxes"][1]["variance_with_others"] - nz["boxes"][1]["variance"]
    assert extra == pytest.approx(8200 * sb["probability"], rel=0.05)
    assert sum(nz["dealer"].values()) == pytest.approx(1, abs=1e-12)
    (eff,) = nz["rule_effects"]
    assert eff["knob"] == "decks" and eff["value"] == 8 and eff["delta_ev"] < 0


@pytest.mark.integration
def test_rule_effects_on_a_process_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(effects, "KNOBS", (("split_max_hands", (1, 2)),))
    rules = load_rules("classic-blackjack", {"split_max_hands": 2})
    base = analyze(rules, "composition").ev
    out = effects.rule_effects(rules, "composition", 500, "cdz", base, workers=2)
    assert [(e["knob"], e["value"]) for e in out] == [("split_max_hands", 1)]
    alone = analyze(rules.replace(split_max_hands=1), "composition").ev
    assert out[0]["ev"] == pytest.approx(alone, abs=1e-15)
    assert out[0]["delta_ev"] == pytest.approx(alone - base, abs=1e-15)


@pytest.mark.integration
@pytest.mark.browser
def test_nz_pontoon_sheet_as_html_and_pdf(nz: dict[str, Any], tmp_path: Path) -> None:
    """One test, so that the sheet is computed once (the test processes share nothing)."""
    check_sheet(nz)
    check_pdf(nz, tmp_path)
    check_html(nz, tmp_path)  # last: skipped where there is no Chromium


def check_html(nz: dict[str, Any], tmp_path: Path) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "par.html"
    page_file.write_text(to_html(nz), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(page_file.as_uri())
        assert page.title() == "PAR sheet: nz-pontoon"
        text = page.inner_text("body")
        assert "House advantage and volatility" in text and "Super Bonus (11.2)" in text
        widths = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        assert len(widths) == 2 and min(widths) > 300  # both plots drawn
        page.screenshot(path=str(tmp_path / "par.png"), full_page=True)
        browser.close()
    assert (tmp_path / "par.png").stat().st_size > 50_000


def check_pdf(nz: dict[str, Any], tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    path = tmp_path / "par.pdf"
    write_pdf(nz, str(path))
    pdf = pdfium.PdfDocument(str(path))
    assert len(pdf) >= 3
    first = pdf[0].get_textpage().get_text_range()
    assert "PAR sheet: nz-pontoon" in first and "House advantage" in first
    for i in range(len(pdf)):
        image = pdf[i].render(scale=1).to_pil().convert("L")
        lo, hi = image.getextrema()
        assert lo < 80 and hi > 200  # ink on paper
    pdf.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "colour=red"], "unknown knob 'colour'"),
        (["--wager", "0"], "--wager must be between"),
        (["--wager", "99999999"], "--wager must be between"),
        (["--format", "pdf"], "--format pdf needs --output"),
        (["--boxes", "9"], "--boxes (1-7)"),
        (["--hours", "0"], "--hours must be above 0"),
        (["--rounds", "-5"], "--rounds must be 0 or more"),
        (["--strategy", "/nonexistent.csv"], "nonexistent.csv"),
    ],
)
def test_bad_input_exit_2_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["par", *FAST, "--no-effects", "--rounds", "0", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_malformed_chart_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "bad.csv"
    chart.write_text("row,A,2\nH16,S\n", encoding="utf-8")
    code = main(["par", *FAST, "--no-effects", "--rounds", "0", "--strategy", str(chart)])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.integration
def test_rule_effects_on_a_dask_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(effects, "KNOBS", (("split_max_hands", (1,)),))
    rules = load_rules("classic-blackjack", {"split_max_hands": 2})
    local = effects.rule_effects(rules, "composition", 500, "cdz", 0.0, workers=1)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        remote = effects.rule_effects(
            rules, "composition", 500, "cdz", 0.0, workers=1, scheduler=cluster.scheduler_address
        )
    strip = [{k: v for k, v in e.items() if k != "seconds"} for e in local]
    assert strip == [{k: v for k, v in e.items() if k != "seconds"} for e in remote]


def test_an_unreachable_scheduler_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pontoon.cluster

    monkeypatch.setattr(pontoon.cluster, "CONNECT_TIMEOUT", "1s")  # (nothing answers port 9)
    args = ["--rounds", "0", "--infinite", "--strategy", "composition"]
    code = main(["par", *FAST, *args, "--scheduler", "tcp://127.0.0.1:9"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot reach the Dask scheduler" in err
