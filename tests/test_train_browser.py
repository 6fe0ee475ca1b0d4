"""The strategy drill's page (/train) in Debian's Chromium (Playwright, headless): a drill
dealt, a mistake graded with the best play and its cost, a right play, the summary with the
costliest mistake; the API's refusals. Screenshots go to $PONTOON_TEST_ARTIFACTS or the test's
tmp directory."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright")

from fastapi.testclient import TestClient
from playwright.sync_api import Page, sync_playwright

from pontoon.analysis.report import hand_values
from pontoon.rules import load_rules
from pontoon.server.app import create_app
from tests.test_server import ROUND
from tests.test_server_browser import ARGS, CHROMIUM, _serving, artifacts  # noqa: F401
from tests.test_server_helpers import SUPERVISOR

pytestmark = [
    pytest.mark.integration,  # the server, served in this process
    pytest.mark.usefixtures("patient_trainer"),
]


def _step(page: Page, do: object) -> None:
    v = page.get_attribute("body", "data-version")
    do()  # type: ignore[operator]
    page.wait_for_selector(f"body:not([data-version='{v}'])", timeout=60_000)


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_drill_in_the_browser(tmp_path: Path, artifacts: Path) -> None:  # noqa: F811
    with (
        _serving(tmp_path / "t.db", load_rules("nz-pontoon"), ROUND) as url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(url + "train")
        page.wait_for_selector("#rules option[value='classic-blackjack']", state="attached")
        page.select_option("#rules", "classic-blackjack")
        page.fill("#hands", "3")
        page.fill("#seed", "3")
        page.click("#start-button")
        page.wait_for_selector("#actions button", timeout=60_000)
        page.screenshot(path=str(artifacts / "train-0-dealt.png"))
        plays = []
        while page.locator("#actions button").count():
            cards = [c.get_attribute("data-card") for c in page.locator("#hand-cards .card").all()]
            up = page.locator("#dealer-cards .card").first.get_attribute("data-card")
            values = hand_values(load_rules("classic-blackjack"), ",".join(cards), up).values
            legal = [b.get_attribute("data-action") for b in page.locator("#actions button").all()]
            worst = min((a for a in legal if a in values), key=values.__getitem__)
            _step(page, lambda w=worst: page.click(f"#actions button[data-action='{w}']"))
            plays.append((worst, values))
            if len(plays) == 1:
                page.screenshot(path=str(artifacts / "train-1-graded.png"))
                text = page.inner_text("#grade")
                best = max(values, key=values.__getitem__)
                cost = values[best] - values[worst]
                assert f"The best play is {best}" in text
                assert f"costs ${cost * 100:.2f} per $100 wagered" in text
        page.wait_for_selector("#summary:not([hidden])")
        page.screenshot(path=str(artifacts / "train-2-summary.png"))
        assert "3 decisions, 0% right" in page.inner_text("#summary-line")
        assert page.locator("#costliest tbody tr").count() == 3
        browser.close()


def test_the_drill_api_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    app = create_app(f"sqlite:///{tmp_path / 'a.db'}", [], SUPERVISOR)
    with TestClient(app) as client:
        for body, message in (
            ({"rules": "/etc/passwd"}, "unknown rule set"),
            ({"mode": "cheat"}, "unknown mode"),
            ({"rules": "classic-blackjack", "mode": "rescue"}, "no rescue (12)"),
        ):
            r = client.post("/api/train", json=body)
            assert r.status_code == 400 and message in r.json()["error"], r.text
        assert client.post("/api/train", json={"hands": 0}).status_code == 422
        r = client.post("/api/train", json={"rules": "classic-blackjack", "hands": 1, "seed": 1})
        doc = r.json()
        assert r.status_code == 200 and doc["question"]["legal"]
        r = client.post(f"/api/train/{doc['id']}", json={"answer": "fly"})
        assert r.status_code == 400 and "'fly' is not a play here" in r.json()["error"]
        r = client.post(f"/api/train/{doc['id']}", json={"answer": doc["question"]["legal"][0]})
        done = r.json()
        assert done["question"] is None and len(done["summary"]["decisions"]) == 1
        assert done["grade"]["answer"] == doc["question"]["legal"][0]
        r = client.post(f"/api/train/{doc['id']}", json={"answer": "stand"})
        assert r.status_code == 400 and "no such drill" in r.json()["error"]


def test_a_named_learners_web_drill_is_kept(tmp_path: Path) -> None:
    """With a name, the page's decisions go to the server's store, and the next drill's weak
    cells come from them (as `train strategy --learner`)."""
    from pontoon.store.db import Store

    url = f"sqlite:///{tmp_path / 'a.db'}"
    with TestClient(create_app(url, [], SUPERVISOR)) as client:
        body = {"rules": "classic-blackjack", "hands": 2, "seed": 1, "learner": "ana"}
        doc = client.post("/api/train", json=body).json()
        while doc["question"] is not None:
            q = doc["question"]
            worst = "stand" if "stand" in q["legal"] else q["legal"][0]
            doc = client.post(f"/api/train/{doc['id']}", json={"answer": worst}).json()
        graded = doc["summary"]["decisions"]
    with Store(url) as store:
        rows = store.learner_decisions("ana", "strategy", "classic-blackjack")
    assert [r["cell"] for r in rows] == [d["cell"] for d in graded]
    assert [r["correct"] for r in rows] == [d["correct"] for d in graded]
