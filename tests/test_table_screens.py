"""The table page for every player: on a phone upright and on its side, a tablet and a desktop
it fits the screen (no sideways scrolling), shows the dealer's hand, the player's own box and
whose turn it is together, and offers targets a finger can hit (44 x 44 CSS pixels); a
listener hears the cards, the turn and the result in the live region (words.js); and a whole
round with insurance, a split and a double is played with the keyboard alone. Screenshots of
each size go to $PONTOON_TEST_ARTIFACTS or the test's tmp directory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright")

from playwright.sync_api import Page, sync_playwright

from pontoon.rules import load_rules
from tests.test_server_browser import ARGS, CHROMIUM, _serving, _step, artifacts, pytestmark

__all__ = ["artifacts", "pytestmark"]  # (the fixture and the marks, shared)

SIZES = [(390, 844), (844, 390), (768, 1024), (1280, 800), (360, 740)]
# burnt, box 4, the dealer, box 4 (eights); box 4's first hand draws 3 (11: doubled, 9);
# its second a king (18: stands); the dealer draws what is left
SPLIT_ROUND = ["4D", "8S", "AS", "8H", "3C", "9D", "KD", "6S", "7H", "JC", "2D", "5S"]


@contextmanager
def _page(db: Path, width: int, height: int, touch: bool) -> Iterator[tuple[str, Page]]:
    """A table served on a stacked shoe, and a browser's page at ``width`` x ``height`` (a
    touch screen's with ``touch``): the address and the page."""
    with (
        _serving(db, load_rules("nz-pontoon"), SPLIT_ROUND) as url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = browser.new_context(
            viewport={"width": width, "height": height}, is_mobile=touch, has_touch=touch
        )
        try:
            yield url, ctx.new_page()
        finally:
            browser.close()


def _inside(page: Page, selector: str, width: int, height: int) -> bool:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return bool(
        box["x"] >= -1
        and box["y"] >= -1
        and box["x"] + box["width"] <= width + 1
        and box["y"] + box["height"] <= height + 1
    )


TABLE_CONTROLS = "header button, header select, header a, #controls button, .box[role=button]"


def _small_targets(page: Page, controls: str = TABLE_CONTROLS) -> list[str]:
    """The visible ``controls`` smaller than 44 x 44 CSS pixels."""
    found: list[str] = page.evaluate(
        """(controls) => [...document.querySelectorAll(controls)]
            .filter((e) => e.offsetParent !== null)
            .filter((e) => { const r = e.getBoundingClientRect();
                             return r.width < 44 || r.height < 44; })
            .map((e) => (e.id || e.dataset.action || e.dataset.chip || e.textContent).trim())""",
        controls,
    )
    return found


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_table_fits_every_screen(
    tmp_path: Path, artifacts: Path, width: int, height: int
) -> None:
    with _page(tmp_path / "s.db", width, height, touch=width < 900) as (url, page):
        page.goto(url)
        page.fill("#player-name", "ana")
        page.click("#join-button")
        page.wait_for_selector("body[data-version]")
        _step(page, lambda: page.click('.box[data-box="4"]'))  # the middle box: off a phone's row
        _step(page, lambda: page.click('button[data-action="deal"]'))
        page.wait_for_selector('button[data-action="insure"]')
        page.screenshot(path=str(artifacts / f"table-{width}x{height}.png"))
        wide = page.evaluate("document.scrollingElement.scrollWidth")
        assert wide <= width, f"{wide} px wide on a {width} px screen"
        for what in ("#dealer-cards", ".box.mine", "#turn", 'button[data-action="insure"]'):
            assert _inside(page, what, width, height), f"{what} is off the {width}x{height} screen"
        assert page.inner_text("#turn").startswith("Your turn")
        assert _small_targets(page) == []
        heard = page.inner_text("#announce")
        for said in ("ace of spades to the dealer", "eight of spades to box 4", "insurance"):
            assert said in heard, heard


def _tab_to(page: Page, selector: str) -> None:
    """Press Tab until the control ``selector`` has the focus (at most 80 presses), and see
    that the focus shows."""
    for _ in range(80):
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
            assert outline != "none", f"{selector} has the focus and does not show it"
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def _press(page: Page, selector: str, key: str = "Enter") -> Any:
    _tab_to(page, selector)
    _step(page, lambda: page.keyboard.press(key))


def test_a_round_played_with_the_keyboard_alone(tmp_path: Path, artifacts: Path) -> None:
    with _page(tmp_path / "k.db", 390, 844, touch=False) as (url, page):
        page.goto(url)
        page.wait_for_selector("#join-button:not([disabled])")
        _tab_to(page, "#player-name")
        page.keyboard.type("ana")
        page.keyboard.press("Enter")  # sits down
        page.wait_for_selector("body[data-version]")
        _tab_to(page, '.chip[data-chip="500"]')
        page.keyboard.press(" ")  # the $5 chip
        page.wait_for_selector('.chip[data-chip="500"][aria-pressed="true"]')
        _press(page, '.box[data-box="4"]')  # a wager of $5
        _press(page, 'button[data-action="deal"]')
        _press(page, 'button[data-action="insure"]')  # (10)
        _press(page, 'button[data-action="split"]')  # (13)
        _press(page, 'button[data-action="double"]')  # 8 3: 11, doubled (12)
        _press(page, 'button[data-action="stand"]')  # 8 K: 18
        page.wait_for_selector("body[data-phase='over']", timeout=10_000)
        heard = page.inner_text("#announce")
        assert "ana" in heard and "your balance is" in heard, heard
        page.screenshot(path=str(artifacts / "keyboard-round.png"))


def _serious(page: Page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_every_page_in_each_state_passes_axe(tmp_path: Path, width: int, height: int) -> None:
    pytest.importorskip("axe_playwright_python")
    with _page(tmp_path / "a.db", width, height, touch=False) as (url, page):
        found: dict[str, list[str]] = {}
        page.goto(url)
        page.wait_for_selector(".box")
        found["table, watching"] = _serious(page)
        page.fill("#player-name", "ana")
        page.click("#join-button")
        page.wait_for_selector("body[data-version]")
        found["table, seated"] = _serious(page)
        _step(page, lambda: page.click('.box[data-box="4"]'))
        found["table, betting"] = _serious(page)
        _step(page, lambda: page.click('button[data-action="deal"]'))
        found["table, dealt (insurance offered)"] = _serious(page)
        for action in ("no-insurance", "split", "double", "stand"):
            _step(page, lambda a=action: page.click(f'button[data-action="{a}"]'))
        page.wait_for_selector("body[data-phase='over']")
        found["table, settled"] = _serious(page)
        for other in ("train", "recall", "pit"):
            page.goto(url + other)
            page.wait_for_load_state("networkidle")
            found[other] = _serious(page)
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.parametrize(("width", "height"), [(360, 740), (844, 390), (768, 1024)])
def test_the_other_pages_fit_every_screen(
    tmp_path: Path, artifacts: Path, width: int, height: int
) -> None:
    """The drill, recall and pit pages: no sideways scrolling, no control under 44 x 44."""
    with _page(tmp_path / "o.db", width, height, touch=True) as (url, page):
        for other in ("train", "recall", "pit"):
            page.goto(url + other)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(artifacts / f"{other}-{width}x{height}.png"))
            wide = page.evaluate("document.scrollingElement.scrollWidth")
            assert wide <= width, f"{other}: {wide} px wide on a {width} px screen"
            small = _small_targets(page, "button, select, input, a")
            assert small == [], f"{other}: {small}"


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_the_limits_and_reality_dialogs_fit_and_pass_axe(
    tmp_path: Path, artifacts: Path, width: int, height: int
) -> None:
    """Accounts mode: the player's limits dialog and the reality check's dialog fit the screen
    and have no serious or critical axe-core finding."""
    pytest.importorskip("axe_playwright_python")
    import time

    from pontoon.store.roles import Role
    from tests.test_accounts_browser import _accounts_table, _cashier, _log_in

    with _accounts_table(tmp_path / "l.db", (("tama", Role.CASHIER),)) as (app, base, browser):
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        page.goto(base + "/")
        _log_in(page, "ana", register=True)
        _cashier(base, "deposit", 5000, "receipt-1")
        page.click("#limits-button")
        page.wait_for_selector("#limits-dialog[open]")
        row = '#limits-table tr[data-kind="reality-minutes"]'
        page.fill(row + " input", "30")
        page.click(row + " button:has-text('Set')")
        page.wait_for_selector(row + " td.now:has-text('30 minutes')")
        page.screenshot(path=str(artifacts / f"limits-{width}x{height}.png"))
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        assert _inside(page, "#limits-dialog", width, height)
        found = {"limits": _serious(page)}
        page.click("#limits-close")
        page.click("#join-button")
        page.wait_for_selector("body[data-version]")
        _step(page, lambda: page.click('.box[data-box="1"]'))
        app.state.hub.door.clocks.clock = lambda: time.time() + 31 * 60
        page.click('.box[data-box="2"]')
        page.wait_for_selector("#reality-dialog[open]")
        page.screenshot(path=str(artifacts / f"reality-{width}x{height}.png"))
        assert _inside(page, "#reality-dialog", width, height)
        found["reality check"] = _serious(page)
        assert {k: v for k, v in found.items() if v} == {}
