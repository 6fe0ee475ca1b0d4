"""In the browser: a player's game recall (marked, never like live play) and the pit
boss's report with its plot, in accounts mode. Playwright drives Debian's Chromium; the
screenshots go to the artifacts folder."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright")

from playwright.sync_api import Browser, Page, sync_playwright

from pontoon.rules import load_rules
from pontoon.server.app import create_app
from pontoon.server.table import TableConfig
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from pontoon.store.roles import Movement
from pontoon.store.schema import operator_calls
from tests.audit_fill import fill
from tests.test_accounts import PASSWORD
from tests.test_server_browser import ARGS, CHROMIUM, artifacts  # noqa: F401
from tests.test_server_helpers import in_thread

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium"),
]


def _logged_in(browser: Browser, base: str, name: str) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(base + "/")
    page.wait_for_selector("#login:not([hidden])")
    page.fill("#login-name", name)
    page.fill("#login-password", PASSWORD)
    page.click("#login-button")
    page.wait_for_selector(f"#account-name:has-text('{name} (')")
    return page


def test_recall_and_the_pit_bosss_report_in_the_browser(
    tmp_path: Path,
    artifacts: Path,  # noqa: F811
) -> None:
    url = f"sqlite:///{tmp_path / 'pit.db'}"
    with Store(url) as store:
        people = Accounts(store, hasher("minimum"))
        people.create("dee", PASSWORD)
        people.cashier("dee", Movement.DEPOSIT, 50_000, "r1", None)
        people.create("pita", PASSWORD, Role.PITBOSS)
    fill(url, "honest", 60, seed=2, players=("dee", "ana"), wallet=False)
    fill(url, "rigged", 150, seed=3, rigged=True)
    fill(url, "wallets", 12, seed=4, players=("dee",), wallet=True)
    with Store(url) as store, store.write() as conn:  # as the outbox leaves a refused rollback
        row = {"key": "table:kauri:3f1c", "account": "dee", "kind": "debit", "amount": 2500}
        row |= {"table_id": "kauri", "status": "disputed", "at": "2026-12-07T04:00:00.000000Z"}
        row |= {"tries": 3, "error": "unknown transaction", "next_at": "2026-12-07T04:00:16Z"}
        conn.execute(operator_calls.insert().values(row))
    table = TableConfig("kauri", load_rules("nz-pontoon"))
    app = create_app(url, [table], accounts=True, password_strength="minimum")
    with in_thread(app) as host, sync_playwright() as pw:
        base = f"http://{host}"
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        dee = _logged_in(browser, base, "dee")
        dee.goto(base + "/recall")
        dee.wait_for_selector("section.round")
        assert dee.inner_text("#recall-banner").startswith("GAME RECALL")
        assert dee.locator("section.round").count() == 10
        first = dee.locator("section.round").first
        assert "before" in first.locator(".balance").inner_text()
        assert first.locator(".card").count() >= 4  # the dealer's and the box's cards
        assert "ana" not in dee.inner_text("#rounds")  # another player is not named
        dee.screenshot(path=str(artifacts / "recall-player.png"), full_page=False)
        pita = _logged_in(browser, base, "pita")
        assert pita.is_visible("#pit-link")
        pita.click("#pit-link")
        pita.wait_for_selector("section.report-table")
        rigged = pita.locator("section[data-table='rigged'] tr.total")
        assert "FLAGGED" in rigged.inner_text()
        honest = pita.locator("section[data-table='honest'] tr.total")
        assert "FLAGGED" not in honest.inner_text()
        row = "#tables tr[data-table='kauri']"
        assert "open" in pita.inner_text(f"{row} .status")
        pita.click(f"{row} button.toggle")  # the pit boss closes the table
        pita.wait_for_selector(f"{row} .status:has-text('closed')")
        pita.wait_for_selector("#disputes-panel:not([hidden])")  # the money owed, in sight
        disputed = pita.inner_text("#disputes tr[data-key='table:kauri:3f1c']")
        assert "rollback" in disputed and "$25.00" in disputed and "unknown transaction" in disputed
        pita.wait_for_selector("#plot:not([hidden])")
        pita.wait_for_function("document.getElementById('plot').naturalWidth > 0")
        pita.screenshot(path=str(artifacts / "pit-report.png"), full_page=True)
        pita.fill("#round", "1")
        pita.click("#find button")
        pita.wait_for_selector("section.round[data-round='1']")
        assert "dee" in pita.inner_text("#rounds") and "ana" in pita.inner_text("#rounds")
        pita.screenshot(path=str(artifacts / "recall-supervisor.png"))
        browser.close()
