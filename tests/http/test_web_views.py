"""The web page on a small phone (360 x 640, touch) as a person finds their way around it:
Back returns to the view before, a reload keeps the search, and every button and link is
a finger's target. Headless Chromium against the real daemon and a fake Ollama, as in
test_web_page.py."""

from __future__ import annotations

import asyncio
import datetime
from urllib.parse import urlsplit

from tests.browser import BROWSER_LOOP, WAIT_MS, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import new_page
from tests.runners import start_daemon, wait_until

pytestmark = BROWSER_LOOP

SMALL_PHONE = {"viewport": {"width": 360, "height": 640}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
QUERY = "sourdough starter"
QUESTION = "How do I feed a sourdough starter?"

# Every button and link the page shows that is smaller than a finger (44 x 44 CSS px,
# WCAG 2.5.5) or reaches out of the screen: [tag, text, width, height, x].
SMALL_TARGETS = """() => [...document.querySelectorAll('button, a, [role=button]')]
  .filter((node) => node.getClientRects().length && getComputedStyle(node).visibility !== 'hidden')
  .map((node) => { const r = node.getBoundingClientRect();
    return [node.tagName, node.textContent.trim().slice(0, 30), r.width, r.height, r.x, r.right]; })
  .filter(([, , w, h, x, right]) => w < 44 || h < 44 || x < 0 || right > innerWidth)"""


async def _type_into(page, selector: str, text: str) -> None:
    """Tap the box and type, as a person does (so each change is the person's own)."""
    await page.tap(selector)
    await page.keyboard.type(text)


async def _scroll_kept(page) -> int:
    """Wait until the page's history entry holds the scroll it has now; return it."""
    kept = "history.state && history.state.y === Math.round(scrollY) ? 'kept' : null"
    await wait_until(lambda: page.evaluate(kept), timeout=WAIT_MS / 1000)
    return await page.evaluate("Math.round(scrollY)")


async def test_back_returns_to_the_view_before_and_leaves_only_from_the_first(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Back (or a swipe back) left the page: a person who searched, opened a result and
    # pressed Back to get to the results again lost the page, the results and the answer.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto("about:blank")
        await page.goto(daemon.url + "/")
        await _type_into(page, "#search-input", QUERY)
        results = page.locator("#search-results > li")
        await results.nth(3).wait_for()
        listed = await page.locator("#search-results .hit-head").all_text_contents()
        third = results.nth(2)
        await third.scroll_into_view_if_needed()
        y = await _scroll_kept(page)
        assert y > 0
        await third.locator(".hit-head").tap()
        await third.locator(".note-text").wait_for()

        await page.go_back()  # to the results, the result shut, scrolled where they were
        assert page.url.startswith(daemon.url + "/")
        await third.locator(".hit-body").wait_for(state="hidden")
        assert await page.locator("#search-results .hit-head").all_text_contents() == listed
        assert await page.evaluate("Math.round(scrollY)") == y
        await page.go_forward()  # and Forward opens it again
        await third.locator(".note-text").wait_for()
        await page.go_back()
        await third.locator(".hit-body").wait_for(state="hidden")

        await page.evaluate("scrollTo(0, 0)")
        await _scroll_kept(page)
        await _type_into(page, "#question", QUESTION)
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        await page.locator("#answer a.cite").tap()
        await page.locator("#source-1 .note-text").wait_for()
        await page.go_back()  # the source shut, the answer still there
        await page.locator("#source-1 .hit-body").wait_for(state="hidden")
        assert await page.text_content("#answer") == "Feed the starter twice a day [1]."
        await page.go_back()  # before the question: no answer, the results still there
        await page.locator("#answer-box").wait_for(state="hidden")
        assert await page.locator("#search-results .hit-head").all_text_contents() == listed
        await page.go_back()  # before the search: the page as it opened
        await page.locator("#search-results > li").first.wait_for(state="detached")
        assert await page.input_value("#search-input") == ""
        assert page.url == daemon.url + "/"
        await page.go_back()  # Back from the first view leaves the page
        assert page.url == "about:blank"
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_reload_keeps_the_search_and_the_url_holds_only_the_query(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A phone's browser reloads a tab it put away (or the person pulls to refresh): the
    # search they were reading was gone.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto(daemon.url + "/")
        await _type_into(page, "#search-input", QUERY)
        results = page.locator("#search-results > li")
        await results.first.wait_for()
        listed = await page.locator("#search-results .hit-head").all_text_contents()
        await results.first.locator(".hit-head").tap()
        await results.first.locator(".note-text").wait_for()
        await _type_into(page, "#question", QUESTION)
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        # What the person typed in the search box, and nothing else: no question, no note
        # text, no path (the token never: test_web_page.py).
        assert urlsplit(page.url).fragment == "q=sourdough+starter"
        await page.go_back()
        await page.reload()
        await results.first.locator(".note-text").wait_for()  # open again, as it was
        assert await page.input_value("#search-input") == QUERY
        assert await page.locator("#search-results .hit-head").all_text_contents() == listed
        assert await page.locator("#answer-box").is_hidden()
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_every_button_and_link_is_a_fingers_target_on_a_small_phone(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # An answer's [1] was a 26 x 19 px target and each number of a [2, 3] 11 x 19 px: a
    # finger meant for [2] opened source 3 or nothing.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]. Keep it cool [2, 3]."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token="tok-en", embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#auth").wait_for()
        assert await page.evaluate(SMALL_TARGETS) == []
        await page.fill("#token-input", "tok-en")
        await page.tap("#auth button")
        await page.locator("#status").get_by_text("embedder reachable").wait_for()

        await _type_into(page, "#search-input", QUERY)
        first = page.locator("#search-results > li").first
        await first.wait_for()
        await first.locator(".hit-head").tap()
        await first.locator(".similar-toggle").tap()
        await first.locator(".copy-link").first.wait_for()
        await _type_into(page, "#question", QUESTION)
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
        before = daily.read_bytes() if daily.exists() else None
        await _type_into(page, "#remember-text", "Kingfsher seen at dusk")
        state = page.locator("#remember-state")
        await page.tap("#remember-button")
        await state.get_by_text("Saved to daily/").wait_for()
        assert b"Kingfsher" in daily.read_bytes()
        assert await page.locator("#forget-token").is_visible()
        assert await page.evaluate(SMALL_TARGETS) == []

        # The target is the finger's, not only the digit's: a tap near the edge of "3" opens 3.
        three = page.locator("#answer a.cite", has_text="3")
        await three.scroll_into_view_if_needed()
        box = await three.bounding_box()
        await page.touchscreen.tap(box["x"] + box["width"] - 3, box["y"] + 3)
        await page.locator("#source-3 .note-text").wait_for()
        assert await page.locator("#source-2 .hit-body").is_hidden()

        await page.tap("#forget-capture")
        await state.get_by_text("Taken back").wait_for()
        assert (daily.read_bytes() if daily.exists() else None) == before  # as it was, byte for byte
        # Chromium logs the first request's 401 (the one that asks for the token) itself.
        watch.errors = [e for e in watch.errors if "status of 401" not in e]
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_back_while_a_new_search_is_on_its_way_shows_the_view_before(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A person who opened a result, typed another search and pressed Back before its
    # results came (a phone over a slow network) found the other query still in the box
    # over the results before it, and that search not stopped: its results came later
    # and took the page.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto(daemon.url + "/")
        await _type_into(page, "#search-input", QUERY)
        results = page.locator("#search-results > li")
        await results.first.wait_for()
        listed = await page.locator("#search-results .hit-head").all_text_contents()
        await results.first.locator(".hit-head").tap()
        await results.first.locator(".note-text").wait_for()

        held = []
        await page.route("**/search?*rye*", lambda route: held.append(route))  # never answered
        async with page.expect_request("**/search?*rye*") as asked:
            await page.fill("#search-input", "rye bread")
        request = await asked.value
        failed = []
        page.on("requestfailed", lambda r: failed.append(r))
        await page.go_back()
        assert await page.input_value("#search-input") == QUERY
        assert await page.locator("#search-results .hit-head").all_text_contents() == listed
        await results.first.locator(".hit-body").wait_for(state="hidden")
        await wait_until(lambda: request in failed, timeout=WAIT_MS / 1000)  # stopped by Back
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_back_while_an_answer_streams_shows_ask_and_forward_shows_it_finished(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Back while an answer was still coming showed the view before with the button still
    # "Stop" (a tap on it stopped an answer no longer shown).
    reply = "Feed the starter twice a day [1]."
    fake_ollama.state.chat_reply = reply
    fake_ollama.state.stream_gate = asyncio.Event()  # closed, an answer stops after its first word
    fake_ollama.state.stream_gate.set()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto(daemon.url + "/")
        button = page.locator("#ask-button")
        await _type_into(page, "#question", "What is rye flour?")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        fake_ollama.state.stream_gate.clear()
        await page.fill("#question", QUESTION)
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=streaming]", has_text="Feed").wait_for()
        assert await button.text_content() == "Stop"

        await page.go_back()  # the first answer, complete: the button asks
        await page.locator("#answer[data-state=done]").wait_for()
        assert await page.input_value("#question") == "What is rye flour?"
        assert await button.text_content() == "Ask"
        fake_ollama.state.stream_gate.set()  # the answer left behind goes on in its view
        await page.go_forward()
        await page.locator("#answer[data-state=done]").wait_for()
        assert await page.text_content("#answer") == reply
        assert await page.input_value("#question") == QUESTION
        assert await button.text_content() == "Ask"

        fake_ollama.state.stream_gate.clear()  # Back to a view with an answer streaming: Stop
        await page.fill("#question", "Why does a starter smell sour?")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=streaming]", has_text="Feed").wait_for()
        await page.go_back()
        await page.locator("#answer[data-state=done]").wait_for()
        assert await button.text_content() == "Ask"
        await page.go_forward()
        await page.locator("#answer[data-state=streaming]").wait_for()
        assert await button.text_content() == "Stop"
        # and stops the answer shown. Off the centre, where the tap that asked landed: two
        # taps on one spot within the double-tap time are a double tap, which never stops.
        await page.tap("#ask-button", position={"x": 6, "y": 6})
        await page.locator("#answer[data-state=stopped]").wait_for()
        assert await button.text_content() == "Ask"
        fake_ollama.state.stream_gate.set()
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_back_to_a_view_before_any_question_empties_the_question_box(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Back to the results from before the question left that question in the box.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **SMALL_PHONE)
        await page.goto(daemon.url + "/")
        await _type_into(page, "#search-input", QUERY)
        await page.locator("#search-results > li").first.wait_for()
        await _type_into(page, "#question", QUESTION)
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        await page.go_back()  # the results, before the question
        await page.locator("#answer-box").wait_for(state="hidden")
        assert await page.input_value("#question") == ""
        await page.go_forward()
        await page.locator("#answer[data-state=done]").wait_for()
        assert await page.input_value("#question") == QUESTION
        watch.assert_clean()
    finally:
        daemon.stop()
