"""Game recall and the table report against theory, on a store
filled by chart-playing players at an honest table and at a rigged one (a dealer dealing
seconds: tests/audit_fill.py), plus a table behind the players' built-in wallets."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pontoon.analysis import analyze
from pontoon.audit.recall import MARK
from pontoon.cli import main
from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe
from pontoon.store.accounts import Accounts, hasher
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.roles import Movement
from tests.audit_fill import fill

ROUNDS = 200


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('audit') / 'audit.db'}"
    fill(url, "honest", ROUNDS, seed=2)
    fill(url, "rigged", ROUNDS, seed=3, rigged=True)
    with Store(url) as store:
        people = Accounts(store, hasher("minimum"))
        people.create("dee", "dee-password-1")
        people.cashier("dee", Movement.DEPOSIT, 100_000, "r1", None)
        people.create("ana", "ana-password-1")  # ana plays at tables without wallets too:
        people.cashier("ana", Movement.DEPOSIT, 7_500, "r2", None)  # their money is the table's
        log = TableLog(store, "rigged", top_up=True)  # a round left open, then voided (16.5)
        rules = load_rules("nz-pontoon")
        rnd = Round(rules, Shoe(rules, np.random.default_rng(5)))
        rnd.place_wager(1, "ana", 500)
        log.start(rnd).commit()
        open_round = log.open_round()
        assert open_round is not None
        log.void(open_round, "interrupted; cannot be reconstructed")
    fill(url, "wallets", 12, seed=4, players=("dee",), wallet=True)
    return url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    if code == 0 and "--json" in argv:
        return code, json.loads(out)
    return code, out + err


@pytest.fixture(scope="module")
def report_doc(db: str) -> dict[str, Any]:
    from pontoon.audit.report import table_report

    with Store(db) as store:
        return table_report(store)


def test_the_theoretical_win_is_the_exact_edge_times_the_wagers(
    report_doc: dict[str, Any],
) -> None:
    edge = -analyze(load_rules("nz-pontoon"), "basic").ev  # analysed apart
    (theory,) = report_doc["theory"]
    assert theory["edge"] == pytest.approx(edge, abs=1e-12)
    for t in report_doc["tables"]:
        assert t["theoretical_win"] == round(edge * t["wagered"])
        assert t["hold"] == t["win"] / t["wagered"]
        lo, hi = t["band95"]
        assert lo < t["theoretical_win"] < hi


def test_the_rigged_table_is_flagged_and_the_honest_one_is_not(
    report_doc: dict[str, Any],
) -> None:
    tables = {t["table"]: t for t in report_doc["tables"]}
    honest, rigged = tables["honest"], tables["rigged"]
    assert honest["rounds"] == rigged["rounds"] == ROUNDS
    assert honest["wagered"] == ROUNDS * 3 * 500
    assert not honest["flagged"] and abs(honest["z"]) < 1.96
    assert rigged["flagged"] and rigged["z"] > 3  # seconds dealt to the dealer: a high hold
    assert rigged["void_rounds"] == 1  # the voided round moved no money and is counted apart
    assert sum(p["win"] for p in rigged["players"]) == rigged["win"]


def test_periods_and_players_add_up_to_the_table(report_doc: dict[str, Any]) -> None:
    for t in report_doc["tables"]:
        for part in ("periods", "players"):
            rows = t[part]
            assert sum(r["wagered"] for r in rows) == t["wagered"]
            assert sum(r["win"] for r in rows) == t["win"]
        assert sum(r["rounds"] for r in t["periods"]) == t["rounds"]


def test_report_command_json_text_and_plot(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "report.png"
    code, doc = run(capsys, "report", "--db", db, "--table", "rigged", "--json", "--plot", str(png))
    assert code == 0
    (t,) = doc["tables"]
    for key in ("table", "rounds", "wagered", "win", "hold", "theoretical_win", "band95"):
        assert key in t
    assert t["flagged"] is True and "series" not in t
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    code, text = run(capsys, "report", "--db", db, "--period", "shift")
    assert code == 0 and "FLAGGED" in text and "Table honest" in text
    code, doc = run(capsys, "report", "--db", db, "--from", "2999-01-01", "--json")
    assert code == 0 and doc["tables"] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--table", "nowhere"], "no finished round of table 'nowhere'"),
        (["--from", "yesterday"], "is not a date"),
        (["--period", "week"], "invalid choice"),
    ],
)
def test_report_bad_input_is_exit_2(
    db: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(capsys, "report", "--db", db, *argv)
    assert code == 2 and message in text and len(text.strip().splitlines()) == 1


def test_recall_the_last_ten_rounds_with_wallet_balances(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = run(capsys, "recall", "--db", db, "--player", "dee", "--json")
    assert code == 0 and doc["recall"] is True and doc["mark"] == MARK
    rounds = doc["rounds"]
    assert len(rounds) == 10
    assert [r["round"] for r in rounds] == sorted((r["round"] for r in rounds), reverse=True)
    for newer, older in itertools.pairwise(rounds):
        assert older["balance_after"] == newer["balance_before"]  # one wallet, in order
    for r in rounds:
        assert r["balance_of"] == "wallet"
        assert r["balance_after"] - r["balance_before"] == r["net"]
        kinds = [e["kind"] for e in r["events"]]
        assert kinds[0] == "rules" and "deal" in kinds and kinds[-1] in ("end", "withdraw")
        assert all(e["text"] for e in r["events"])


def test_recall_in_words_is_marked_and_any_round_for_a_supervisor(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(capsys, "recall", "--db", db, "--player", "ana", "--last", "2")
    assert code == 0 and text.startswith(f"*** {MARK} ***") and "not live play ***" in text
    assert text.count("Round ") == 2
    code, doc = run(capsys, "recall", "--db", db, "--round", "1", "--json")
    assert code == 0
    (r,) = doc["rounds"]
    assert set(r["players"]) == {"ana", "ben", "cy"}
    for p in r["players"].values():
        assert p["balance_of"] == "table"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--player", "nobody"], "no finished round of player 'nobody'"),
        (["--player", "ana", "--last", "0"], "--last must be between 1 and 100"),
        (["--round", "999999"], "no round 999999"),
    ],
)
def test_recall_bad_input_is_exit_2(
    db: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(capsys, "recall", "--db", db, *argv)
    assert code == 2 and message in text and len(text.strip().splitlines()) == 1


@pytest.mark.integration
def test_recall_and_the_report_over_the_server(db: str) -> None:
    """A player recalls their own rounds (the others masked); the supervisor's token reads
    the report, its plot and any round; a player may not, nor may a wrong token."""
    pytest.importorskip("fastapi")
    from pontoon.server.app import create_app
    from pontoon.server.table import TableConfig
    from tests.test_server_helpers import serving

    table = TableConfig("honest", load_rules("nz-pontoon"))
    with serving(create_app(db, [table], supervisor_token="sup-token-0123")) as client:
        token = client.post("/api/tables/honest/join", json={"name": "ana"}).json()["token"]
        r = client.get(f"/api/recall?table=honest&token={token}")
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["recall"] is True and len(doc["rounds"]) == 10
        names = {e.get("player") for x in doc["rounds"] for e in x["events"]} - {None}
        assert names == {"ana", "player 2", "player 3"}  # ben and cy are not named to ana
        assert all("ben" not in e["text"] for x in doc["rounds"] for e in x["events"])
        assert client.get("/recall").status_code == 200
        assert client.get("/pit").status_code == 200
        # the report and any round: the supervisor's
        assert client.get(f"/api/report?token={token}").status_code == 401  # not a supervisor token
        assert client.get("/api/report").status_code == 401
        r = client.get("/api/report?token=sup-token-0123&table=rigged")
        assert r.status_code == 200 and r.json()["tables"][0]["flagged"] is True
        r = client.get("/api/report.png?token=sup-token-0123&table=rigged")
        assert r.status_code == 200 and r.content[:4] == b"\x89PNG"
        r = client.get("/api/report?token=sup-token-0123&from=soon")
        assert r.status_code == 400 and "is not a date" in r.json()["detail"]
        r = client.get("/api/recall/1?token=sup-token-0123")
        assert r.status_code == 200 and set(r.json()["rounds"][0]["players"]) == {
            "ana",
            "ben",
            "cy",
        }
        assert client.get("/api/recall/99999?token=sup-token-0123").status_code == 404
        assert client.get(f"/api/recall/1?table=honest&token={token}").status_code == 403


@pytest.mark.integration
def test_the_shared_supervisor_token_cannot_set_a_table_it_has_no_account_to_record(
    db: str,
) -> None:
    """Demo mode: a pit setting is recorded under the pit boss's account, and the shared
    supervisor token has none, so opening, closing or new limits are refused with one line
    (403) and the table is as it was: no 500, nothing changed in memory without its record."""
    pytest.importorskip("fastapi")
    from pontoon.server.app import create_app
    from pontoon.server.table import TableConfig
    from tests.test_server_helpers import serving

    table = TableConfig("honest", load_rules("nz-pontoon"))
    with serving(create_app(db, [table], supervisor_token="sup-token-0123")) as client:
        url = "/api/pit/tables/honest?token=sup-token-0123"
        r = client.post(url, json={"open": False, "table_min": 2000})
        assert r.status_code == 403 and "--accounts" in r.json()["detail"]
        (listed,) = client.get("/api/pit/tables?token=sup-token-0123").json()
        assert listed["open"] is True and listed["table_min"] == 500


def test_16_5_a_box_voided_by_the_supervisor_is_not_counted_as_wagered(tmp_path: Path) -> None:
    """16.5: a box the supervisor voids has its wagers returned — no game was played on it,
    so neither its wager nor its theoretical win counts, even one voided after it was settled
    (bust, then void); a round whose every box was voided is a void round."""
    from pontoon.audit.report import table_report
    from pontoon.irregularities import Irregularity
    from pontoon.layout import Move
    from pontoon.sim.reference import play_out
    from tests.audit_fill import optimal

    rules = load_rules("nz-pontoon")
    shoe = Shoe(rules, np.random.default_rng(0))
    chart = optimal()
    with Store(f"sqlite:///{tmp_path / 'v.db'}") as store:
        log = TableLog(store, "kauri", top_up=True)
        for voided in ([0, 1], [2], [1, 2]):  # (0: box 1 played to a bust first)
            rnd = Round(rules, shoe)
            rnd.place_wager(1, "ana", 500)
            rnd.place_wager(2, "ben", 700)
            rnd.deal()
            while 0 in voided and (turn := rnd.to_act()) is not None and turn.box == 1:
                rnd.apply(Move("hit", 1))  # box 1 busts, and is settled (seed 0's cards)
            for box in voided:
                if box:
                    rnd.apply_irregularity(Irregularity("void", by="supervisor", box=box))
            play_out(rnd, chart, chart.rescues())
            log.start(rnd).commit(shoe, cash_out=True)
            if 0 in voided:
                outcomes = [e.detail for e in rnd.events if e.kind == "outcome" and e.box == 1]
                assert outcomes == ["bust", "void"]
        (t,) = table_report(store)["tables"]
    assert t["rounds"] == 2 and t["void_rounds"] == 1
    assert t["wagered"] == 500 + 700  # ben's box in the first round, ana's in the second
    players = {p["player"]: p for p in t["players"]}
    assert set(players) == {"ana", "ben"} and players["ana"]["wagered"] == 500


def test_the_theorys_covariance_is_simulated_with_its_standard_error() -> None:
    """The report's band takes two boxes' covariance from the simulator (the chart's two
    boxes, each from a fresh shoe, seed 1), with its standard error: not the exact model's,
    which leaves out the cards each box takes from the other's shoe."""
    from pontoon.analysis.covariance import simulated_covariance
    from pontoon.analysis.distribution import round_distribution
    from pontoon.audit.theory import COVARIANCE_ROUNDS, theory
    from tests.audit_fill import rules_json

    rules = load_rules("nz-pontoon")
    t = theory(rules_json(rules))
    again = simulated_covariance(rules, t.chart, rules.table_min, COVARIANCE_ROUNDS, 1, 1)
    assert (t.covariance, t.covariance_se) == (again.value, again.se)
    assert 0 < t.covariance_se < 0.003
    model = round_distribution(analyze(rules, "basic", wager=rules.table_min)).covariance()
    assert t.covariance != model and abs(t.covariance - model) < 5 * t.covariance_se
