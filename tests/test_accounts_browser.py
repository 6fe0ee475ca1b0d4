"""Accounts mode in the browser: a player registers, logs in, is bought in by the
cashier, sits down, plays a round that the dealer paces, leaves, is cashed out and logs out;
the supervisor logs in and voids a round (16.5). Playwright drives Debian's Chromium."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright")

import httpx
from playwright.sync_api import Browser, Page, sync_playwright
from sqlalchemy import text

from pontoon.cli import main
from pontoon.rules import load_rules
from pontoon.server.app import create_app
from pontoon.server.table import TableConfig
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from tests.test_accounts import PASSWORD, ROUND
from tests.test_server_browser import ARGS, CHROMIUM, _seen, _step, artifacts  # noqa: F401
from tests.test_server_helpers import in_thread, stacked

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium"),
]


@contextmanager
def _accounts_table(
    db: Path, staff: tuple[tuple[str, Role], ...]
) -> Iterator[tuple[Any, str, Browser]]:
    """Table kauri in accounts mode on a stacked shoe, ``staff`` made first: the app, its
    address and a browser."""
    with Store(f"sqlite:///{db}") as store:
        people = Accounts(store, hasher("minimum"))
        for name, role in staff:
            people.create(name, PASSWORD, role)
    table = TableConfig("kauri", load_rules("nz-pontoon"), 60.0, 60.0, 0, stacked(ROUND))
    app = create_app(f"sqlite:///{db}", [table], accounts=True, password_strength="minimum")
    with in_thread(app) as host, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield app, f"http://{host}", browser
        finally:
            browser.close()


def _page(browser: Browser, url: str) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(url)
    return page


def _log_in(page: Page, name: str, register: bool = False) -> None:
    page.wait_for_selector("#login:not([hidden])")
    page.fill("#login-name", name)
    page.fill("#login-password", PASSWORD)
    page.click("#register-button" if register else "#login-button")
    page.wait_for_selector(f"#account-name:has-text('{name} (')")


def _cashier(base: str, kind: str, amount: int, reference: str) -> int:
    """tama, the cashier, records a movement of ana's wallet (over the API)."""
    with httpx.Client(base_url=base) as http:
        me = http.post("/api/login", json={"name": "tama", "password": PASSWORD}).json()
        r = http.post(
            "/api/cashier",
            json={"account": "ana", "kind": kind, "amount": amount, "reference": reference},
            headers={"X-CSRF-Token": me["csrf"]},
        )
        assert r.status_code == 200, r.text
        balance: int = r.json()["balance"]
        return balance


def test_register_buy_in_play_cash_out_and_a_supervisor_voids(
    tmp_path: Path,
    artifacts: Path,  # noqa: F811
) -> None:
    db = tmp_path / "accounts.db"
    staff = (("tama", Role.CASHIER), ("hemi", Role.DEALER), ("mere", Role.SUPERVISOR))
    with _accounts_table(db, staff) as (_, base, browser):
        ana = _page(browser, base + "/")
        assert ana.is_hidden("#player-name")  # no name to type: an account sits down
        ana.screenshot(path=str(artifacts / "accounts-0-login.png"))
        _log_in(ana, "ana", register=True)
        assert "wallet $0.00" in ana.inner_text("#account-name")
        assert _cashier(base, "deposit", 5000, "receipt-1") == 5000  # the buy-in
        ana.reload()
        ana.wait_for_selector("#account-name:has-text('wallet $50.00')")
        ana.click("#join-button")
        ana.wait_for_selector("body[data-version]")
        _step(ana, lambda: ana.click('.box[data-box="1"]'))  # the 10-dollar chip
        assert "wallet $40.00" in ana.inner_text("#account-name")
        hemi = _page(browser, base + "/")
        _log_in(hemi, "hemi")
        hemi.wait_for_selector('button[data-action="deal"]')  # the dealer paces the table
        _seen(ana, lambda: hemi.click('button[data-action="deal"]'))
        ana.screenshot(path=str(artifacts / "accounts-1-dealt.png"))
        ana.wait_for_selector('button[data-action="stand"]')  # the key acts on what is legal
        _step(ana, lambda: ana.keyboard.press("s"))  # Q 7 stands; the dealer busts
        ana.wait_for_selector("body[data-phase='over']")
        ana.wait_for_selector("#account-name:has-text('wallet $60.00')")
        ana.screenshot(path=str(artifacts / "accounts-2-won.png"))
        # the supervisor logs in and voids the next round: the wager goes back (16.5)
        mere = _page(browser, base + "/")
        _log_in(mere, "mere")
        mere.wait_for_selector("#supervisor:not([hidden])")
        _step(ana, lambda: ana.click('.box[data-box="3"]'))
        _seen(ana, lambda: hemi.click('button[data-action="deal"]'))
        mere.select_option("#procedure", "void")
        _seen(ana, lambda: mere.click("#procedure-apply"))
        ana.wait_for_selector("body[data-phase='over']")
        ana.wait_for_selector("#account-name:has-text('wallet $60.00')")
        mere.screenshot(path=str(artifacts / "accounts-3-supervisor-void.png"))
        ana.click("#leave-button")
        ana.wait_for_selector("#join:not([hidden])")
        assert _cashier(base, "withdrawal", 6000, "receipt-2") == 0  # cashed out
        ana.click("#logout-button")
        ana.wait_for_selector("#login:not([hidden])")
        ana.screenshot(path=str(artifacts / "accounts-4-logged-out.png"))
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0


def test_a_player_sets_limits_and_answers_the_reality_check_in_dialogs(
    tmp_path: Path,
    artifacts: Path,  # noqa: F811
) -> None:
    """The limits dialog sets a loss limit and a reality check; when the
    check is due, the wager waits behind a dialog with the time played and the net, and is
    placed once the player chooses to keep playing."""
    db = tmp_path / "limits.db"
    with _accounts_table(db, (("tama", Role.CASHIER),)) as (app, base, browser):
        ana = _page(browser, base + "/")
        _log_in(ana, "ana", register=True)
        assert _cashier(base, "deposit", 5000, "receipt-1") == 5000
        ana.click("#limits-button")
        ana.wait_for_selector("#limits-dialog[open]")
        row = '#limits-table tr[data-kind="%s"]'
        ana.fill(row % "loss-day" + " input", "25.5")
        ana.click(row % "loss-day" + " button:has-text('Set')")
        ana.wait_for_selector(row % "loss-day" + " td.now:has-text('$25.50')")
        ana.fill(row % "reality-minutes" + " input", "30")
        ana.click(row % "reality-minutes" + " button:has-text('Set')")
        ana.wait_for_selector(row % "reality-minutes" + " td.now:has-text('30 minutes')")
        ana.fill(row % "deposit-day" + " input", "1.234")  # not a sum of money: refused here
        ana.click(row % "deposit-day" + " button:has-text('Set')")
        assert "whole number of dollars" in ana.inner_text("#limits-message")
        ana.screenshot(path=str(artifacts / "limits-0-dialog.png"))
        ana.click("#limits-close")
        ana.click("#join-button")
        ana.wait_for_selector("body[data-version]")
        _step(ana, lambda: ana.click('.box[data-box="1"]'))  # $10: the clock starts
        clocks = app.state.hub.door.clocks
        clocks.clock = lambda: time.time() + 31 * 60  # half an hour and a minute later
        ana.click('.box[data-box="2"]')
        ana.wait_for_selector("#reality-dialog[open]")
        assert ana.inner_text("#reality-minutes") == "31 min"
        assert ana.inner_text("#reality-net") == "-$10.00"
        assert ana.inner_text("#reality-every") == "30"
        ana.screenshot(path=str(artifacts / "limits-1-reality-check.png"))
        assert "wallet $40.00" in ana.inner_text("#account-name")  # the wager waits
        _step(ana, lambda: ana.click("#reality-go"))
        assert ana.is_hidden("#reality-dialog")
        ana.wait_for_selector("#account-name:has-text('wallet $30.00')")
    with Store(f"sqlite:///{db}") as store, store.read() as conn:
        acks = conn.execute(text("SELECT value FROM play_limits WHERE kind='reality-ack'"))
        assert [int(v) for (v,) in acks] == [31]
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0
