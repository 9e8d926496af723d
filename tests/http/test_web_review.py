"""The web page as a person on a phone meets it when things go wrong: the daemon going away
and coming back, long words, empty input. Headless Chromium against the real daemon and a
fake Ollama, as in test_web_page.py."""

from __future__ import annotations

import asyncio

from tests.browser import BROWSER_LOOP, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import PHONE, new_page, on_the_phone_page
from tests.runners import spawn_daemon, start_daemon, wait_indexed, wait_until

pytestmark = BROWSER_LOOP


async def _healthy(daemon) -> bool:
    try:
        return (await daemon.get_json("/health"))[0] == 200
    except Exception:
        return False


async def test_the_status_chips_follow_the_daemon_going_away_and_coming_back(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The daemon stopped mid-answer: the answer said "Could not answer: the daemon is
    # stopping" and a search "the daemon cannot be reached", while the chips above still
    # said "70 headings", "embedder reachable" until the next look, 15 s later; and once the
    # daemon was back they said "cannot be reached" for up to 15 s more.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]. It doubles within six hours."
    fake_ollama.state.stream_gate = asyncio.Event()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    again = None
    try:
        page, _ = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        status = page.locator("#status")
        await status.get_by_text("embedder reachable").wait_for()
        await page.fill("#question", "How do I feed a sourdough starter?")
        await page.tap("#ask-button")
        await page.locator("#answer", has_text="Feed").wait_for()
        daemon.stop()
        await page.locator("#answer[data-state=error]").wait_for()
        await status.locator(".chip.bad", has_text="cannot be reached").wait_for(timeout=9_000)
        assert await status.get_by_text("embedder reachable").count() == 0

        fake_ollama.state.stream_gate.set()
        port = int(daemon.url.rsplit(":", 1)[1])
        again = spawn_daemon(
            roam_dir=roam_dir, db_path=tmp_path / "daemon.sqlite3", ollama_url=fake_ollama.url,
            log_path=tmp_path / "again.log", port=port,
        )  # fmt: skip
        await wait_until(lambda: _healthy(again), timeout=30)
        body = await wait_indexed(again)
        await status.get_by_text(f"{body['headings']} headings").wait_for(timeout=10_000)
    finally:
        daemon.stop()
        if again:
            again.stop()


LONG_WORD = "Supercalifragilisticexpialidocious" * 5
LONG_NOTE = f"""\
:PROPERTIES:
:ID:       0d6c51b2-3a7e-4f43-9a51-70e0c0ffee01
:END:
#+title: Long words

* Pasted hash
{LONG_WORD} and https://example.com/{"a" * 160} in one line.
"""


async def test_a_snippet_of_one_long_word_wraps_instead_of_being_cut(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A snippet holding a long unbroken word (a hash, a URL) was cut at the card's right
    # edge mid-word, with no ellipsis, on a phone: what followed it was never shown.
    (roam_dir / "long-words.org").write_text(LONG_NOTE, encoding="utf-8")
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#search-input", "pasted hash")
        snippet = page.locator("#search-results .hit-snippet").first
        await snippet.wait_for()
        widths = await snippet.evaluate("(node) => [node.scrollWidth, node.clientWidth]")
        assert widths[0] <= widths[1], f"the snippet is {widths[0]} px wide in a {widths[1]} px box"
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        watch.assert_clean()


async def test_remembering_only_spaces_says_there_is_nothing_to_remember(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The box held only spaces or newlines (a stray tap of the space bar): the browser's
    # "required" let it through, the page sent nothing and said nothing, so Remember looked
    # broken.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.fill("#remember-text", "   \n  ")
        await page.tap("#remember-button")
        await page.locator("#remember-state", has_text="Nothing to remember").wait_for(timeout=5_000)
        assert await page.evaluate("document.activeElement.id") == "remember-text"
        assert not [r for r in watch.requests if r.url.endswith("/memorize")]
        # A capture tagged private is written and never indexed: the page says so.
        await page.fill("#remember-text", "A secret pelican")
        await page.fill("#remember-tags", "private")
        await page.tap("#remember-button")
        await page.locator("#remember-state", has_text="private: search will not find it").wait_for()
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_note_remembered_from_the_phone_can_be_taken_back_once(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A typo sent from the phone stayed in the daily: the page offered no way to take a
    # capture back (the daemon's /forget, Emacs's C-c o K), short of going to the computer.
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        state = page.locator("#remember-state")
        await page.fill("#remember-text", "The heron nests by the old mill pond")
        await page.tap("#remember-button")
        await state.get_by_text("Saved to daily/").wait_for()
        daily = roam_dir / (await state.text_content()).removeprefix("Saved to ").split(":")[0]
        before = daily.read_bytes()

        await page.fill("#remember-text", "Kingfsher seen at dusk")
        await page.tap("#remember-button")
        await state.get_by_text("Saved to daily/").wait_for()
        assert b"Kingfsher" in daily.read_bytes()
        # A finger's target, as the page's other buttons (it was its text's height, ~20 px).
        box = await page.locator("#forget-capture").bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
        await page.dblclick("#forget-capture")  # a double tap takes it back once
        await state.get_by_text("Taken back").wait_for()
        assert daily.read_bytes() == before
        assert await page.input_value("#remember-text") == "Kingfsher seen at dusk"
        assert await page.locator("#forget-capture").is_hidden()
        forgets = [r for r in watch.requests if r.url.endswith("/forget")]
        assert len(forgets) == 1, [r.post_data for r in forgets]
        _, found = await daemon.get_json("/search", q="Kingfsher")
        assert found["results"] == []
        watch.assert_clean()


async def test_enter_on_a_marker_takes_the_keyboard_to_its_source(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # With the keyboard alone, Enter on an answer's [1] opened source 1 below, but the focus
    # stayed on the [1]: Tab went on to [2] and the rest of the answer, not into the source
    # just opened.
    fake_ollama.state.chat_reply = "Feed the starter twice a day [1]. Keep it cool [2]."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, viewport={"width": 1280, "height": 800})
        await page.goto(daemon.url + "/")
        await page.focus("#question")
        await page.keyboard.type("How do I feed a sourdough starter?")
        await page.keyboard.press("Control+Enter")
        await page.locator("#answer[data-state=done]").wait_for()
        await page.keyboard.press("Tab")
        await page.keyboard.press("Tab")
        assert await page.evaluate("document.activeElement.textContent") == "[1]"
        await page.keyboard.press("Enter")
        source = page.locator("#source-1")
        await source.locator(".note-text").wait_for()
        focused = await page.evaluate("document.activeElement.closest('li') && document.activeElement.closest('li').id")
        assert focused == "source-1"
        await page.keyboard.press("Tab")  # on into its text's "Similar notes", not to [2]
        assert await page.evaluate("document.activeElement.textContent") == "Similar notes"
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_long_status_message_wraps_on_a_phone(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Behind tailscale serve with the daemon stopped, the status chip said "the daemon cannot
    # be reached (the proxy in front of it answered HTTP 502)" on one unbreakable line: the
    # page scrolled sideways on a phone and the end of the message was off screen.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.route("**/status", lambda route: route.fulfill(status=502, body=""))
        await page.goto(daemon.url + "/")
        chip = page.locator("#status .chip.bad", has_text="answered HTTP 502")
        await chip.wait_for()
        box = await chip.bounding_box()
        assert box["x"] + box["width"] <= 390, box
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        daemon.stop()


async def test_a_phone_without_network_is_told_so_not_that_the_daemon_is_down(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # In a tunnel (no network at all) every box said "the daemon cannot be reached", which
    # sends the person to restart a daemon that is running fine at home.
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, _):
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        await page.context.set_offline(True)
        await page.fill("#search-input", "sourdough starter")
        await page.locator("#search-state", has_text="Search failed").wait_for()
        assert await page.text_content("#search-state") == "Search failed: this device is offline"
        await page.fill("#remember-text", "Heron by the mill pond")
        await page.tap("#remember-button")
        await page.locator("#remember-state", has_text="Not saved").wait_for()
        assert await page.text_content("#remember-state") == "Not saved: this device is offline"
        assert await page.input_value("#remember-text") == "Heron by the mill pond"
        await page.locator("#status .chip.bad", has_text="offline").wait_for()
        # Back online: the chips say so at once.
        await page.context.set_offline(False)
        await page.locator("#status").get_by_text("embedder reachable").wait_for(timeout=2_000)


async def test_a_capture_whose_answer_was_lost_is_not_said_to_be_unsaved(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The connection dropped after the daemon wrote the capture but before its answer came
    # back: the page said "Not saved: the daemon cannot be reached", so the person tapped
    # Remember again, and the daily held the thought twice.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, _ = await new_page(browser, **PHONE)

        async def lost_answer(route):
            await route.fetch()  # the daemon gets it and writes
            await route.abort("connectionreset")

        await page.route("**/memorize", lost_answer)
        await page.goto(daemon.url + "/")
        await page.fill("#remember-text", "Heron by the mill pond")
        await page.tap("#remember-button")
        state = page.locator("#remember-state")
        await state.get_by_text("the daemon cannot be reached").wait_for()
        said = await state.text_content()
        assert not said.startswith("Not saved"), said
        assert "may have been saved" in said
        _, found = await daemon.get_json("/search", q="heron mill pond")
        assert found["results"] and found["results"][0]["title"] == "Heron by the mill pond"
    finally:
        daemon.stop()


async def test_a_marker_citing_two_sources_links_both(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Small models cite two notes at once, "[1, 2]": the page linked only markers of one
    # number, so "[1, 2]" stayed plain text and tapping it did nothing.
    reply = "Feed the starter twice a day [1, 2]. Keep it cool [2]."
    fake_ollama.state.chat_reply = reply
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#question", "How do I feed a sourdough starter?")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        assert await page.text_content("#answer") == reply
        cites = page.locator("#answer a.cite")
        assert [await c.get_attribute("href") for c in await cites.all()] == ["#source-1", "#source-2", "#source-2"]
        await cites.nth(1).tap()
        await page.locator("#source-2 .note-text").wait_for()
        watch.assert_clean()


async def test_a_look_up_that_never_answers_fails_instead_of_spinning(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The computer went to sleep (the lid closed) with the phone on the page: packets to it
    # vanish, so a connection neither opens nor fails for minutes. The page said
    # "Searching…" and its chips "embedder reachable" all that while.
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, _):
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        never = asyncio.Event()

        async def asleep(route):
            await never.wait()

        await page.route("**/search?*", asleep)
        await page.route("**/status", asleep)
        # The page's own clock, moved on rather than waited for: its timers are setTimeout's.
        await page.clock.install()
        await page.fill("#search-input", "sourdough starter")
        await page.clock.run_for(1_000)  # the search starts (after its 250 ms of typing)
        await page.clock.run_for(19_000)  # 20 s on the clock: the look-up began at 0.25 s
        assert "did not answer" not in (await page.locator("#search-state").text_content() or "")
        await page.clock.run_for(1_000)
        state = page.locator("#search-state", has_text="did not answer")
        await state.wait_for()
        assert await state.text_content() == (
            "Search failed: the daemon did not answer within 20 s (is the computer it runs on asleep?)"
        )
        await page.clock.run_for(40_000)  # the next look at /status, and its 20 s
        await page.locator("#status .chip.bad", has_text="did not answer").wait_for()
        never.set()


async def test_a_double_tap_on_a_result_opens_it(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # A double tap on a search result (or a source) opened it and closed it again at once:
    # the person saw it flicker and stay shut.
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#search-input", "sourdough starter")
        first = page.locator("#search-results > li").first
        await first.wait_for()
        await first.locator(".hit-head").dblclick()
        await first.locator(".note-text").wait_for()
        assert await first.locator(".hit-head").get_attribute("aria-expanded") == "true"
        assert await first.locator(".hit-body").is_visible()
        # A single tap still closes it, and Enter still opens it.
        await page.wait_for_timeout(800)  # (a tap right after a double tap is its third tap)
        await first.locator(".hit-head").tap()
        assert await first.locator(".hit-head").get_attribute("aria-expanded") == "false"
        await first.locator(".hit-head").press("Enter")
        assert await first.locator(".hit-head").get_attribute("aria-expanded") == "true"
        watch.assert_clean()


async def test_after_the_token_the_keyboard_is_back_where_it_was(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # With the keyboard alone: Ctrl+Enter in the question, the page asks for the token and
    # takes the focus there; after Enter on the token the focus was nowhere (the page's
    # body), so the next key went nowhere.
    fake_ollama.state.chat_reply = "Feed it twice a day."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token="tok-en")
    try:
        page, _ = await new_page(browser, viewport={"width": 1280, "height": 800})
        await page.goto(daemon.url + "/")
        await page.locator("#auth").wait_for()
        await page.fill("#token-input", "tok-en")
        await page.press("#token-input", "Enter")
        await page.locator("#status").get_by_text("embedder").wait_for()
        await page.evaluate("localStorage.setItem('arcology-oracle.token', 'not-the-token')")
        await page.focus("#question")
        await page.keyboard.type("How do I feed a sourdough starter?")
        await page.keyboard.press("Control+Enter")
        await page.locator("#auth").wait_for()
        assert await page.evaluate("document.activeElement.id") == "token-input"
        await page.keyboard.type("tok-en")
        await page.keyboard.press("Enter")
        await page.locator("#answer[data-state=done]").wait_for()
        assert await page.evaluate("document.activeElement.id") == "question"
    finally:
        daemon.stop()


async def test_a_capture_the_index_leaves_out_says_so(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The dailies folder is left out of the index (exclude_globs): the daemon wrote the
    # capture and said it would never be indexed, but the page showed only "Saved to
    # daily/...:5.", so the person later searched for it in vain.
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "daily/**"}
    )
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.fill("#remember-text", "The heron nests by the old mill pond")
        await page.tap("#remember-button")
        state = page.locator("#remember-state")
        await state.get_by_text("Saved to daily/").wait_for()
        said = await state.text_content()
        _, found = await daemon.get_json("/search", q="heron mill pond")
        assert found["results"] == []  # never indexed
        assert said.startswith("Saved to daily/") and "index" in said.removeprefix("Saved to daily/"), said
        watch.assert_clean()
    finally:
        daemon.stop()
