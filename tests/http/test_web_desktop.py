"""The web page on a desktop screen: two columns, headless Chromium against the real
daemon and a fake Ollama, as in test_web_page.py."""

from __future__ import annotations

from tests.browser import BROWSER_LOOP, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import DESKTOP, new_page
from tests.runners import start_daemon

pytestmark = BROWSER_LOOP


async def _box(page, selector: str) -> dict:
    return await page.locator(selector).bounding_box()


async def test_the_remember_box_stays_under_ask_when_a_search_lists_many_results(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The search card (right column) grew with its results and the Remember card, in the
    # grid's second row, moved down below it: off a 1280x800 screen, under an empty gap.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **DESKTOP)
        await page.goto(daemon.url + "/")
        ask, remember = await _box(page, ".ask"), await _box(page, ".remember")
        gap = remember["y"] - (ask["y"] + ask["height"])
        await page.fill("#search-input", "a")
        await page.locator("#search-results > li").nth(7).wait_for()
        await page.locator("#search-results .hit-head").first.click()
        await page.locator("#search-results .note-text").first.wait_for()
        search, ask, remember = await _box(page, ".search"), await _box(page, ".ask"), await _box(page, ".remember")
        assert search["height"] > ask["height"] + remember["height"]  # the case in question
        assert remember["x"] == ask["x"], "Remember stays in the left column"
        assert remember["y"] - (ask["y"] + ask["height"]) == gap, "Remember moved away from Ask"
        assert remember["y"] + remember["height"] <= DESKTOP["viewport"]["height"], "Remember went off the screen"
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_forget_token_takes_the_notes_off_the_screen_and_out_of_back(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A borrowed computer or a shared tablet: after "Forget token" the search results, the
    # heading opened and the answer stayed on the screen, and Back showed earlier ones.
    token = "shared-device-t0ken"
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=token, embedded=True)
    try:
        page, watch = await new_page(browser, **DESKTOP)
        await page.goto(daemon.url + "/")
        await page.fill("#token-input", token)
        await page.press("#token-input", "Enter")
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        await page.fill("#question", "How do I feed the sourdough starter?")
        await page.press("#question", "Control+Enter")
        await page.locator("#answer[data-state=done]").wait_for()
        await page.fill("#search-input", "coffee grind")
        await page.locator("#search-results .hit-head").first.click()
        await page.locator("#search-results .note-text").first.wait_for()
        assert "grind" in (await page.locator("main").inner_text()).lower()

        await page.click("#forget-token")
        await page.locator("#auth").wait_for()
        shown = (await page.locator("main").inner_text()).lower()
        assert "grind" not in shown and "starter" not in shown, shown
        assert await page.locator("main .hit").count() == 0
        assert "#" not in page.url, "the search stays out of the address"
        await page.go_back()
        await page.locator("#auth").wait_for()
        shown = (await page.locator("main").inner_text()).lower()
        assert "grind" not in shown and "starter" not in shown, shown
        assert all("401" in e for e in watch.errors), watch.errors
    finally:
        daemon.stop()
