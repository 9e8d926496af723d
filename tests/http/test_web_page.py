"""The web page end to end: headless Chromium against the real daemon and a fake Ollama.

Needs Debian's ``chromium`` (apt) and the Python ``playwright`` package (PyPI; its bundled
driver is used with ``executable_path``, no browser download). When either is missing the
tests fail and say what to install; they never skip. ``ARCOLOGY_ORACLE_CHROMIUM`` overrides
the browser's path.

Screenshots are kept in tests/artifacts/ (git-ignored); their paths are printed.
"""

from __future__ import annotations

import asyncio
import re
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from tests.answers.test_dialogue_windows import CHATS
from tests.browser import BROWSER_LOOP, WAIT_MS, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.runners import REPO, start_daemon, wait_indexed

ARTIFACTS = REPO / "tests" / "artifacts"
TOKEN_KEY = "arcology-oracle.token"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
MARKUP_NOTE = """\
:PROPERTIES:
:ID:       5c1d7a2e-9f0b-4c3e-8d21-0000b0b0cafe
:END:
#+title: Pasted <b>markup</b>

Copied from a web page: <script>alert(1)</script> and <img src=x onerror="alert(2)"> stay text.
"""
pytestmark = BROWSER_LOOP
MARKUP_LITERAL = '<script>alert(1)</script> and <img src=x onerror="alert(2)"> stay text.'


class PageWatch:
    """Everything a page did that a test asserts never happens: dialogs, script errors, CSP reports."""

    def __init__(self, page):
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list = []

        async def on_dialog(dialog):
            self.dialogs.append(dialog.message)
            await dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))
        page.on("request", lambda request: self.requests.append(request))

    def assert_clean(self):
        assert self.dialogs == [], "the page opened a dialog: note text ran as script"
        assert self.errors == [], f"script errors or CSP violations: {self.errors}"


async def new_page(browser, **context_options):
    context = await browser.new_context(**context_options)
    context.set_default_timeout(WAIT_MS)
    page = await context.new_page()
    return page, PageWatch(page)


@asynccontextmanager
async def on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama):
    """``(daemon, page, watch)``: the real daemon over ``roam_dir``, embedded, and its page
    open in a phone-sized browser context (:func:`new_page`); the daemon stopped after."""
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        yield daemon, page, watch
    finally:
        daemon.stop()


def save_screenshot_path(name: str, capsys) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    with capsys.disabled():
        print(f"\nscreenshot: {path}")
    return path


def org_display_text(body: str) -> str:
    """What the page shows of a heading's body, whitespace-normalised: links by their
    description, without the file's leading ``#+title:``-style keyword lines."""
    text = re.sub(r"\A(?:\s*#\+(?!begin_)\w+:.*\n)+", "", body, flags=re.IGNORECASE)
    text = re.sub(r"\[\[([^\]]+)\](?:\[([^\]]*)\])?\]", lambda m: m[2] or m[1], text)
    return " ".join(text.split())


@pytest.fixture
def markup_roam_dir(roam_dir) -> Path:
    (roam_dir / "pasted-markup.org").write_text(MARKUP_NOTE, encoding="utf-8")
    return roam_dir


async def test_ask_streams_the_answer_then_a_source_opens_on_a_phone(
    browser, tmp_path, markup_roam_dir, fake_ollama, capsys
):
    reply = "Feed the starter twice a day at room temperature [1]. It doubles within six hours."
    fake_ollama.state.chat_reply = reply
    fake_ollama.state.stream_gate = asyncio.Event()  # closed: the answer stops after its first word
    daemon = await start_daemon(tmp_path, roam_dir=markup_roam_dir, ollama_url=fake_ollama.url)
    try:
        status = await wait_indexed(daemon)
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#status").get_by_text(f"{status['headings']} headings").wait_for()
        await page.locator("#status").get_by_text("embedder reachable").wait_for()

        await page.fill("#question", "How do I revive a sluggish sourdough starter?")
        await page.tap("#ask-button")

        # Sources arrive before the answer; the answer's first word shows while the gate is shut.
        sources = page.locator("#sources > li")
        await sources.first.wait_for()
        answer = page.locator("#answer")
        await page.wait_for_function(
            "document.querySelector('#answer').textContent.startsWith('Feed')", timeout=WAIT_MS
        )
        assert await answer.get_attribute("data-state") == "streaming"
        partial = await answer.text_content()
        assert "six hours" not in partial
        assert await page.locator("#ask-button").text_content() == "Stop"

        fake_ollama.state.stream_gate.set()
        await page.locator("#answer[data-state=done]").wait_for()
        assert await answer.text_content() == reply
        assert await page.locator("#ask-button").text_content() == "Ask"
        # The [1] marker links to source 1.
        await page.locator("#answer a.cite").first.wait_for()

        first = sources.first
        title = (await first.locator(".hit-title").text_content()).strip()
        assert title
        file, line = await first.get_attribute("data-file"), await first.get_attribute("data-line")
        code, heading = await daemon.get_json("/heading", file=file, line=line)
        assert code == 200 and heading["title"] == title
        await first.locator(".hit-head").tap()
        body = first.locator(".hit-body")
        await body.locator(".note-text").wait_for()
        shown = " ".join((await body.locator(".note-text").inner_text()).split())
        expected = org_display_text(heading["body"])
        assert shown.startswith(expected[:80]), (shown, expected)
        assert await first.locator(".hit-head").get_attribute("aria-expanded") == "true"

        await page.screenshot(path=save_screenshot_path("web-phone.png", capsys), full_page=True)
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_double_tap_or_a_second_ctrl_enter_does_not_stop_the_question(browser, tmp_path, roam_dir, fake_ollama):
    # Ask turns into Stop where it stands: the second tap of a double tap (or Ctrl+Enter
    # pressed twice) stopped the question the first one asked, and showed "Stopped.".
    reply = "Feed the starter twice a day [1]."
    fake_ollama.state.chat_reply = reply
    fake_ollama.state.stream_gate = asyncio.Event()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        answer = page.locator("#answer")
        for send in ("double tap", "ctrl+enter twice"):
            fake_ollama.state.stream_gate.clear()
            await page.fill("#question", "How do I feed a sourdough starter?")
            if send == "double tap":
                await page.dblclick("#ask-button")
            else:
                await page.press("#question", "Control+Enter")
                await page.locator("#ask-button", has_text="Stop").wait_for()
                await page.press("#question", "Control+Enter")
            await page.locator("#answer", has_text="Feed").wait_for()
            assert await answer.get_attribute("data-state") == "streaming", send
            fake_ollama.state.stream_gate.set()
            await page.locator("#answer[data-state=done]").wait_for()
            assert await answer.text_content() == reply, send
        # A single tap on Stop still stops.
        fake_ollama.state.stream_gate.clear()
        await page.fill("#question", "How do I feed a sourdough starter?")
        await page.press("#question", "Control+Enter")
        await page.locator("#answer", has_text="Feed").wait_for()
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=stopped]").wait_for()
        fake_ollama.state.stream_gate.set()
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_question_waiting_for_the_token_stops_and_the_chip_follows_the_token(
    browser, tmp_path, roam_dir, fake_ollama
):
    token = "page-token"
    fake_ollama.state.chat_reply = "Feed it twice a day."
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=token)
    try:
        status = await wait_indexed(daemon)
        page, _ = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#auth").wait_for()
        # Stop while the token is asked for: the question gives up (it waited on the prompt).
        await page.fill("#question", "How do I feed a sourdough starter?")
        await page.press("#question", "Control+Enter")  # (a tap right after a tap is a double tap)
        await page.locator("#ask-button", has_text="Stop").wait_for()
        await page.tap("#ask-button")
        await page.locator("#ask-state", has_text="Stopped.").wait_for()
        assert await page.locator("#auth").is_visible()  # the token is still asked for
        await page.fill("#token-input", token)
        await page.press("#token-input", "Enter")
        await page.locator("#status").get_by_text(f"{status['headings']} headings").wait_for()

        # A token that stops working while a question is asked: once the right one is
        # given, the chip says so at once, not at the next look 15 s later.
        await page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', 'not-the-token')")
        await page.fill("#question", "How do I feed a sourdough starter?")
        await page.tap("#ask-button")
        await page.locator("#status").get_by_text("token needed").wait_for()
        await page.fill("#token-input", token)
        await page.press("#token-input", "Enter")
        await page.locator("#answer[data-state=done]").wait_for()
        await page.locator("#status").get_by_text(f"{status['headings']} headings").wait_for(timeout=5_000)
    finally:
        daemon.stop()


async def test_note_markup_shows_as_text_and_never_runs(browser, tmp_path, markup_roam_dir, fake_ollama, capsys):
    daemon = await start_daemon(tmp_path, roam_dir=markup_roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, watch = await new_page(browser, **DESKTOP)
        await page.goto(daemon.url + "/")
        await page.fill("#search-input", "copied web page alert")
        hit = page.locator("#search-results > li", has_text="Pasted <b>markup</b>")
        await hit.wait_for()
        await hit.locator(".hit-head").click()
        text = hit.locator(".note-text")
        await text.get_by_text(MARKUP_LITERAL).wait_for()
        assert MARKUP_LITERAL in await text.inner_text()
        # Nothing from the note became an element.
        assert await page.locator("#search-results script, #search-results img, #search-results b").count() == 0
        await page.screenshot(path=save_screenshot_path("web-desktop.png", capsys), full_page=True)
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_token_is_asked_once_kept_in_local_storage_and_never_in_a_url(
    browser, tmp_path, roam_dir, fake_ollama
):
    token = "page-t0ken/with+odd=chars"
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=token)
    try:
        status = await wait_indexed(daemon)
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        auth = page.locator("#auth")
        await auth.wait_for()
        await page.locator("#status").get_by_text("token needed").wait_for()

        await page.fill("#token-input", "not-the-token")
        await page.press("#token-input", "Enter")
        await page.locator("#auth-message").get_by_text("did not accept").wait_for()

        # A character no browser sends in a header (a typographic ellipsis): asked again,
        # not "the daemon cannot be reached", and nothing kept.
        await page.fill("#token-input", token + "\u2026")
        await page.press("#token-input", "Enter")
        await page.locator("#auth-message").get_by_text("cannot send").wait_for()
        assert await page.evaluate(f"localStorage.getItem('{TOKEN_KEY}')") is None

        await page.fill("#token-input", token)
        await page.press("#token-input", "Enter")
        await page.locator("#status").get_by_text(f"{status['headings']} headings").wait_for()
        assert await auth.is_hidden()
        assert await page.evaluate(f"localStorage.getItem('{TOKEN_KEY}')") == token

        # Kept: a reload asks for nothing and loads the status with the stored token.
        await page.reload()
        await page.locator("#status").get_by_text(f"{status['headings']} headings").wait_for()
        assert await auth.is_hidden()

        authorized = [r for r in watch.requests if r.url.endswith("/status") and r.headers.get("authorization")]
        assert authorized and all(r.headers["authorization"] == f"Bearer {token}" for r in authorized[-2:])
        leaked = [r.url for r in watch.requests if token in r.url or "token" in r.url.lower()]
        assert leaked == []
        assert token not in page.url
        assert watch.dialogs == []
        # The 401s the page handled show up as console errors in Chromium; nothing else may.
        assert all("401" in e for e in watch.errors), watch.errors
    finally:
        daemon.stop()


async def test_similar_notes_of_a_heading_copy_an_org_link(browser, tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, watch = await new_page(browser, **DESKTOP, permissions=["clipboard-read", "clipboard-write"])
        await page.goto(daemon.url + "/")
        await page.fill("#search-input", "covering index")
        hit = page.locator("#search-results > li").first
        await hit.wait_for()
        file, line = await hit.get_attribute("data-file"), await hit.get_attribute("data-line")
        await hit.locator(".hit-head").click()
        await hit.locator(".similar-toggle").click()
        item = hit.locator(".similar-item").first
        await item.wait_for()

        code, similar = await daemon.get_json("/similar", file=file, line=line, k="8")
        assert code == 200
        first = next(r for r in similar["results"] if r["node_id"])
        assert await item.get_attribute("data-node") == first["node_id"]
        # The daemon's order, with no number beside it: nothing that could go up down the list.
        items = hit.locator(".similar-item")
        assert [await items.nth(i).get_attribute("data-node") for i in range(await items.count())] == [
            r["node_id"] for r in similar["results"] if r["node_id"]
        ]
        assert not re.search(r"\b[01]\.\d", " ".join(await items.all_inner_texts()))
        await item.locator(".copy-link").click()
        await item.get_by_text("Copied").wait_for()
        copied = await page.evaluate("navigator.clipboard.readText()")
        assert copied == f"[[id:{first['node_id']}][{first['title']}]]"
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_a_window_of_dialogue_shows_its_speakers_and_date(browser, tmp_path, roam_dir, fake_ollama, capsys):
    (roam_dir / "ana.org").write_text(CHATS, encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.fill("#question", "whippet Pepper shelter")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        window = page.locator("#sources > li", has_text="Catching up")
        speakers = (await window.locator(".hit-speakers").text_content()).strip()
        assert speakers in ("Me, Ana · 2024-03-02", "Ana, Me · 2024-03-02"), speakers
        # A note that is no dialogue has no speakers line.
        others = page.locator("#sources > li", has_not_text="Catching up")
        for i in range(await others.count()):
            assert await others.nth(i).locator(".hit-speakers").count() == 0
        await page.screenshot(path=save_screenshot_path("web-dialogue.png", capsys), full_page=True)
        watch.assert_clean()
    finally:
        daemon.stop()


async def test_the_oracles_answers_and_conversations_are_marked(browser, tmp_path, roam_dir, fake_ollama):
    # The roles /search and /similar give, shown as the Emacs client shows them.
    from tests.http.test_oracle_words import CONVERSATION, TALK_FILE

    (roam_dir / TALK_FILE).write_text(CONVERSATION, encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, watch = await new_page(browser, **DESKTOP)
        await page.goto(daemon.url + "/")
        await page.fill("#search-input", "sluggish sourdough starter")
        _, found = await daemon.get_json("/search", q="sluggish sourdough starter", k="12")  # as the page asks

        def hit(result):
            return page.locator(f'#search-results > li[data-file="{result["file"]}"][data-line="{result["line"]}"]')

        await hit(found["results"][-1]).wait_for()
        assert {"oracle", "conversation", None} <= {r["role"] for r in found["results"]}
        for result in found["results"]:
            marks = await hit(result).locator(".hit-role").all_text_contents()
            assert marks == ([result["role"]] if result["role"] else []), result
        mine = next(r for r in found["results"] if r["role"] is None)
        note = hit(mine)
        # Similar notes of that note: the conversation's turns are marked there too.
        await note.locator(".hit-head").click()
        await note.locator(".similar-toggle").click()
        await note.locator(".similar-item").first.wait_for()
        _, similar = await daemon.get_json("/similar", file=mine["file"], line=str(mine["line"]), k="8")
        shown = [r for r in similar["results"] if r["node_id"]]
        assert any(r["role"] == "conversation" for r in shown), "the test needs a conversation among them"
        marks = await note.locator(".similar-item").evaluate_all(
            "items => items.map(i => (i.querySelector('.hit-role') || {}).textContent || null)"
        )
        assert marks == [r["role"] for r in shown]
        watch.assert_clean()
    finally:
        daemon.stop()


WINDOW_CONVERSATION = """\
:PROPERTIES:
:ID:       44444444-2222-3333-4444-555555555555
:END:
#+title: Baking chats

* Sourdough :conversation:
** Me
How often should I feed a starter kept in the fridge?
** Oracle
:PROPERTIES:
:ROLE:     oracle
:END:
Once a week, with equal weights of rye flour and water.
** Me
And in winter, at room temperature?
"""


async def test_a_window_of_an_org_conversation_opens_on_its_turns(browser, tmp_path, roam_dir, fake_ollama):
    # A window of dialogue from an org conversation is cited at the conversation's root,
    # whose own text is empty: tapping the source showed "(no text under this heading)",
    # so the words the answer cited could not be read on the phone. Its turns show now,
    # the oracle's marked as everywhere else.
    (roam_dir / "baking-chats.org").write_text(WINDOW_CONVERSATION, encoding="utf-8")
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#question", "How often should I feed a starter kept in the fridge?")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for()
        window = page.locator('#sources > li[data-file="baking-chats.org"]').filter(has=page.locator(".hit-speakers"))
        assert await window.count() >= 1, "the test needs the conversation's window among the sources"
        window = window.first
        assert await window.get_attribute("data-line") == "6"  # the root: no text of its own
        await window.locator(".hit-head").tap()
        text = window.locator(".hit-body .note-text")
        await text.locator(".org-para").first.wait_for()
        shown = " ".join((await text.inner_text()).split())
        assert "no text under this heading" not in shown
        assert "And in winter, at room temperature?" in shown
        turns = await text.locator(".note-turn").evaluate_all(
            "ps => ps.map(p => [p.firstChild.textContent, (p.querySelector('.hit-role') || {}).textContent || null])"
        )
        assert ["Oracle", "oracle"] in turns, turns
        watch.assert_clean()


async def test_a_failed_search_leaves_no_results_of_the_query_before(browser, tmp_path, roam_dir, fake_ollama):
    # With the daemon gone, searching "rye" said "Search failed: the daemon cannot be
    # reached" above the results of the search before ("starter"), as if they were rye's.
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        page, _ = await new_page(browser, **PHONE)  # the page logs the failed fetch
        await page.goto(daemon.url + "/")
        await page.fill("#search-input", "sourdough starter")
        await page.locator("#search-results > li").first.wait_for()
    finally:
        daemon.stop()
    await page.fill("#search-input", "rye flour")
    await page.locator("#search-state", has_text="Search failed").wait_for()
    assert "the daemon cannot be reached" in await page.locator("#search-state").text_content()
    assert await page.locator("#search-results > li").count() == 0


async def test_a_snippet_saying_the_title_again_is_left_out_and_a_proxy_s_502_says_what_it_means(
    browser, tmp_path, roam_dir, fake_ollama
):
    # A captured line is its own title and its snippet: the page showed it twice. Behind
    # tailscale serve, a stopped daemon is a 502 without a body: the page said "HTTP 502".
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        async with aiohttp.ClientSession(headers=daemon.headers) as session:
            async with session.post(daemon.url + "/memorize", json={"text": "Zephyrine loaves"}) as resp:
                assert resp.status == 200
        page, _ = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.fill("#search-input", "zephyrine loaves")
        first = page.locator("#search-results > li").first
        await first.wait_for()
        assert (await first.locator(".hit-title").text_content()).startswith("Zephyrine loaves")
        assert await first.locator(".hit-snippet").count() == 0
        # Another result keeps its snippet: only a repeat is left out.
        await page.fill("#search-input", "sourdough starter")
        await page.locator("#search-results .hit-snippet").first.wait_for()

        await page.route("**/search?*", lambda route: route.fulfill(status=502, body=""))
        await page.fill("#search-input", "rye flour")
        await page.locator("#search-state", has_text="Search failed").wait_for()
        said = await page.locator("#search-state").text_content()
        assert "the daemon cannot be reached (the proxy in front of it answered HTTP 502)" in said, said
    finally:
        daemon.stop()


async def test_a_reply_kept_in_a_heading_of_the_users_is_marked_as_the_oracles(browser, tmp_path, roam_dir, fake_ollama):
    # A heading of the user's holding a grounded gptel reply (text typed under it) is the
    # user's note, but the reply's lines are the oracle's words: opened on the phone, they
    # showed among the user's lines with nothing to tell them apart (/heading gave neither
    # role nor replies). They show in a box marked "oracle" now; the user's lines do not.
    from tests.http.test_oracle_words_own_lines import GPTEL, GPTEL_REPLY

    (roam_dir / "tenmoku-gptel.org").write_text(GPTEL, encoding="utf-8")
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (_, page, watch):
        await page.fill("#search-input", "MYTYPED twenty minute hold")
        hit = page.locator('#search-results > li[data-file="tenmoku-gptel.org"]').first
        await hit.wait_for()
        await hit.locator(".hit-head").tap()
        text = hit.locator(".note-text")
        await text.locator(".org-para").first.wait_for()
        reply = text.locator(".note-reply")
        assert await reply.count() == 1, await text.inner_html()
        assert " ".join((await reply.inner_text()).split()) == "oracle " + GPTEL_REPLY
        assert await reply.locator(".hit-role.role-oracle").count() == 1
        mine = await text.evaluate("t => [...t.children].filter(c => !c.matches('.note-reply')).map(c => c.textContent)")
        assert any("MYTYPED" in line for line in mine) and not any("GPTELREPLY" in line for line in mine), mine
        watch.assert_clean()
