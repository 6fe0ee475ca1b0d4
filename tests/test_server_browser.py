"""Three players in three browser contexts play a round through the page (Playwright driving
Debian's Chromium, headless). Screenshots go to $PONTOON_TEST_ARTIFACTS or the test's tmp
directory. Skipped only when /usr/bin/chromium is absent (.ci/run installs it)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright")

from playwright.sync_api import Page, Route, sync_playwright

from pontoon.cli import main
from pontoon.rules import RuleSet, load_rules
from pontoon.server.app import create_app
from pontoon.server.table import TableConfig
from tests.test_server import ROUND
from tests.test_server_helpers import SUPERVISOR, in_thread, stacked

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def _serving(db: Path, rules: RuleSet, cards: list[str]) -> Iterator[str]:
    """The table ``kauri`` served in a thread, its first shoe stacked with ``cards``; yields
    the page's URL."""
    table = TableConfig("kauri", rules, 60.0, 60.0, 100_000, stacked(cards))
    with in_thread(create_app(f"sqlite:///{db}", [table], SUPERVISOR)) as host:
        yield f"http://{host}/"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    db = tmp_path / "browser.db"
    with _serving(db, load_rules("nz-pontoon"), ROUND) as url:
        yield url, db


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    out = Path(os.environ.get("PONTOON_TEST_ARTIFACTS", tmp_path / "artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def _step(page: Page, do: Any) -> None:
    """``page`` sends a message (``do``) and the test waits for the server's answer to it
    (the page counts them in ``data-answered``; the state the message made comes first). (The
    waits are selectors, not ``wait_for_function``: its predicate is evaluated as a string,
    which the page's Content-Security-Policy refuses.)"""
    n = page.get_attribute("body", "data-answered")
    do()
    page.wait_for_selector(f"body:not([data-answered='{n}'])" if n else "body[data-answered]")


def _seen(page: Page, do: Any) -> None:
    """Another page does something (``do``) and the test waits until ``page`` has seen the
    table move on."""
    v = page.get_attribute("body", "data-version")
    do()
    page.wait_for_selector(f"body:not([data-version='{v}'])", timeout=10_000)


def test_three_players_play_a_round_in_the_browser(
    server: tuple[str, Path], artifacts: Path
) -> None:
    url, db = server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pages: dict[str, Page] = {}
        held: list[Route] = []
        for name in ("ana", "ben", "cat"):
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            if name == "ben":  # the table list held back: the form cannot be sent without it
                page.route("**/api/tables", lambda route: held.append(route))
            page.goto(url)
            if name == "ben":
                while not held:
                    page.wait_for_timeout(20)
                page.fill("#player-name", name)
                assert page.is_disabled("#join-button")
                held[0].continue_()
            if name == "ana":  # before anyone joins, the empty table shows its seven boxes
                page.wait_for_selector(".box.empty")
                assert page.locator(".box.empty").count() == 7
                assert "empty seat" in page.inner_text("#boxes")
                page.screenshot(path=str(artifacts / "0-empty-table.png"))
            page.fill("#player-name", name)
            page.click("#join-button")
            page.wait_for_selector("body[data-version]")
            pages[name] = page
        ana, ben, cat = pages["ana"], pages["ben"], pages["cat"]
        _step(ana, lambda: ana.click('.box[data-box="1"]'))  # the 10-dollar chip
        ben.click('.chip[data-chip="500"]')
        _step(ben, lambda: ben.click('.box[data-box="1"]'))  # behind ana
        _step(cat, lambda: cat.click('.box[data-box="2"]'))
        _step(cat, lambda: cat.click('.box[data-box="2"]'))
        ana.wait_for_selector('button[data-action="deal"]')
        cat.screenshot(path=str(artifacts / "1-bets.png"))
        _step(cat, lambda: cat.keyboard.press("Enter"))  # deal
        # the dealer's lone ace is announced as pontoon.hand.describe says: soft 11
        ana.wait_for_selector("#dealer-total:text-is('soft 11')", timeout=10_000)
        ben.wait_for_selector('button[data-action="insure"]')
        _step(ben, lambda: ben.click('button[data-action="insure"]'))
        _step(cat, lambda: cat.keyboard.press("n"))
        _step(ana, lambda: ana.click('button[data-action="no-insurance"]'))
        ana.screenshot(path=str(artifacts / "2-dealt.png"))
        ana.check("#hint-toggle")  # the strategy hint, from the optimal chart
        ana.wait_for_selector("#hint:has-text('(P8 v A)')", timeout=60_000)
        _step(ana, lambda: ana.keyboard.press("p"))  # split
        ben.wait_for_selector('button[data-action="split"][data-follow="both"]')
        ben.screenshot(path=str(artifacts / "3-follow-split.png"))
        _step(ben, lambda: ben.click('button[data-action="split"][data-follow="both"]'))
        ana.wait_for_selector('button[data-action="hit"]')  # ana's turn again, on her page too
        _step(ana, lambda: ana.keyboard.press("h"))  # 8 7 K: bust
        _step(ana, lambda: ana.keyboard.press("s"))
        cat.wait_for_selector('button[data-action="double"]')
        _step(cat, lambda: cat.keyboard.press("d"))
        for page in pages.values():
            page.wait_for_selector("body[data-phase='over']")
        assert "cat +$40.00" in cat.inner_text("#result")
        assert "bust" in ana.inner_text("#boxes")
        assert ana.locator(".card").count() >= 10  # cards drawn as cards
        for name, page in pages.items():
            page.screenshot(path=str(artifacts / f"4-over-{name}.png"))
        ana.wait_for_selector("#history li")
        ana.click("#history li")
        ana.wait_for_selector("#replay:not([hidden])")
        for _ in range(14):
            ana.click("#replay-next")
        assert ana.locator("#replay .card").count() >= 3
        ana.screenshot(path=str(artifacts / "5-replay.png"))
        # the supervisor applies a section 16 procedure from the page: 16.5, the round void
        sup = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        sup.goto(f"{url}?supervisor={SUPERVISOR}&table=kauri")
        sup.wait_for_selector("#supervisor:not([hidden])")
        # the token is taken out of the address bar once read; the tab keeps it on a reload
        assert SUPERVISOR not in sup.url and sup.url.endswith("/?table=kauri"), sup.url
        sup.reload()
        sup.wait_for_selector("#supervisor:not([hidden])")
        assert SUPERVISOR not in sup.url
        _step(ana, lambda: ana.click('.box[data-box="3"]'))
        _step(ana, lambda: ana.keyboard.press("Enter"))
        assert ana.get_attribute("body", "data-phase") != "over"
        # leaving with a wager in play is refused, and the page says why
        ana.click("#leave-button")
        ana.wait_for_selector("#message:has-text('stands until')", timeout=10_000)
        sup.select_option("#procedure", "void")
        _seen(ana, lambda: sup.click("#procedure-apply"))
        ana.wait_for_selector("body[data-phase='over']")
        assert "void" in ana.inner_text("#boxes")
        sup.screenshot(path=str(artifacts / "6-supervisor-void.png"))
        # between rounds cat leaves through the button: cashed out, back to watching
        cat.click("#leave-button")
        cat.wait_for_selector("#join:not([hidden])")
        assert "$1040.00 cashed out" in cat.inner_text("#message")
        assert cat.is_hidden("#leave-button")
        ana.wait_for_selector("#players:not(:has-text('cat'))", timeout=10_000)
        cat.screenshot(path=str(artifacts / "7-left.png"))
        browser.close()
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0


def test_the_hint_after_a_double_is_rescue_or_stand(tmp_path: Path, artifacts: Path) -> None:
    """12 (double_rescue): a doubled hand that has its card and is still open is rescued or
    stands, by the chart's rescue row of its total (``X14``); a chart without those rows
    rescues where the total's row surrenders first, and ``H14`` against a K hits: stand.
    The two tabs of the session: leaving in one takes both back to watching at once."""
    # burn, box 1, dealer, box 1, the double's card: ana 6 5 doubles against a K, gets a 3
    rules = load_rules("nz-pontoon", {"double_rescue": True})
    with (
        _serving(tmp_path / "rescue.db", rules, ["4D", "6S", "KD", "5C", "3H"]) as url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ana = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        ana.goto(url)
        ana.fill("#player-name", "ana")
        ana.click("#join-button")
        ana.wait_for_selector("body[data-version]")
        _step(ana, lambda: ana.click('.box[data-box="1"]'))
        _step(ana, lambda: ana.keyboard.press("Enter"))  # deal
        ana.check("#hint-toggle")
        hint = "#hint:text-is('hint: {}')"
        ana.wait_for_selector(hint.format("double (else hit) (H11 v K)"), timeout=60_000)
        _step(ana, lambda: ana.keyboard.press("d"))
        ana.wait_for_selector('button[data-action="rescue"]')
        ana.wait_for_selector(hint.format("rescue (X14 v K)"), timeout=10_000)
        ana.screenshot(path=str(artifacts / "rescue-hint.png"))
        # a second tab of ana's session, its chart served without the rescue rows
        token = ana.evaluate("sessionStorage.getItem('pontoon-token-kauri')")
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(
            f"sessionStorage.setItem('pontoon-token-kauri', {json.dumps(token)})"
        )

        def without_rescue_rows(route: Route) -> None:
            response = route.fetch()
            chart = response.json()
            chart["cells"] = {k: v for k, v in chart["cells"].items() if not k.startswith("X")}
            route.fulfill(response=response, json=chart)

        context.route("**/api/tables/kauri/chart", without_rescue_rows)
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_selector('button[data-action="rescue"]')
        tab.check("#hint-toggle")
        tab.wait_for_selector(hint.format("stand (H14 v K)"), timeout=10_000)
        assert ana.inner_text('button[data-action="rescue"] kbd') == "r"
        _step(ana, lambda: ana.keyboard.press("r"))  # rescue (surrender is not legal now)
        ana.wait_for_selector("body[data-phase='over']")
        assert "ana -$10.00" in ana.inner_text("#result")
        ana.click("#leave-button")
        for page in (ana, tab):
            page.wait_for_selector("#join:not([hidden])", timeout=10_000)
            assert "$990.00 cashed out" in page.inner_text("#message")
        browser.close()
