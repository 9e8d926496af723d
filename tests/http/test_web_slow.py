"""The web page when Ollama is slow or busy (the daemon itself answers at once, so the
page's look-ups must not fail as if the computer had gone to sleep), when the daemon is
away for a moment, and when a note changes under a list of results."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import expect

from tests.browser import BROWSER_LOOP, WAIT_MS, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import PHONE, new_page, on_the_phone_page
from tests.runners import start_daemon, wait_until

pytestmark = BROWSER_LOOP


async def test_a_search_while_the_embedder_hangs_answers_by_keywords(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Ollama busy (a long answer of the chat model ahead in its queue, a model loading):
    # the query's embedding does not come. The page said "Search failed: the daemon did
    # not answer within 20 s (is the computer it runs on asleep?)" under green chips, though
    # the words alone found the heading at once.
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5"},
    )  # fmt: skip
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        fake_ollama.state.fault_paths = {"/api/embed"}
        fake_ollama.state.hang = True
        await page.fill("#search-input", "tomato blight")
        state = page.locator("#search-state")
        await expect(state).to_have_text(re.compile(r"^\d+ headings? \(keyword match only\)$"), timeout=WAIT_MS)
        titles = await page.locator("#search-results .hit-title").all_text_contents()
        assert any("Blight" in t for t in titles), titles
        await page.locator("#status").get_by_text("embedder reachable").wait_for()

        # The embedding came after all: the same words, searched again, use it.
        fake_ollama.state.hang = False
        fake_ollama.state.release()
        await fake_ollama.state.wait_for("/api/embed")
        await page.press("#search-input", "Enter")
        await expect(state).to_have_text(re.compile(r"^\d+ headings?$"), timeout=WAIT_MS)
        watch.assert_clean()
    finally:
        fake_ollama.state.release()
        daemon.stop()


async def test_a_question_while_the_embedder_hangs_is_answered_from_the_keyword_matches(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # As for a search: the page's ask waited the embedder's whole timeout (60 s) with
    # "Finding notes…" for the question's vector, though its words found the notes at once.
    fake_ollama.state.chat_reply = "Remove the lower leaves [1]."
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": "600"},
    )  # fmt: skip
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        fake_ollama.state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})
        await page.fill("#question", "tomato blight")
        await page.click("#ask-button")
        await page.locator("#answer[data-state=done]").wait_for(timeout=WAIT_MS)
        assert not fake_ollama.state.hang_release.is_set()  # answered while the embedding hung
        await expect(page.locator("#answer")).to_have_text("Remove the lower leaves [1].")
        await expect(page.locator("#sources-box h3")).to_have_text("Sources (keyword match only)")
        assert "Blight" in await page.locator("#sources").inner_text()
        watch.assert_clean()
    finally:
        fake_ollama.state.release()
        daemon.stop()


@pytest.mark.parametrize(
    ("hung", "says"),
    [
        (["/api/chat"], r"^Found \d+ notes?; waiting for the model…$"),
        (["/api/chat", "/api/embed"], r"^Found \d+ notes? by keywords; waiting for the model…$"),
    ],
    ids=["by-meaning", "keyword-fallback"],
)
async def test_a_question_says_it_waits_for_the_model_once_the_notes_are_found(browser, tmp_path, roam_dir, fake_ollama, hung, says):  # noqa: F811, E501
    # The chat model loading (or busy with another answer): the notes were found at once,
    # but the page said "Finding notes…" until the model's first words, however long.
    fake_ollama.state.chat_reply = "Remove the lower leaves [1]."
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": "600",
             "ARCOLOGY_ORACLE_CHAT_TIMEOUT": "600"},
    )  # fmt: skip
    try:
        page, watch = await new_page(browser, **PHONE)
        await page.goto(daemon.url + "/")
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        fake_ollama.state.configure({"fault_paths": hung, "hang": True, "hang_max": 3600})
        chats = fake_ollama.state.count("/api/chat")
        await page.fill("#question", "tomato blight")
        await page.click("#ask-button")
        await asyncio.wait_for(fake_ollama.state.wait_for("/api/chat", chats + 1), WAIT_MS / 1000)
        # The daemon is waiting for the model now, and the page says so.
        state = page.locator("#ask-state")
        await expect(state).to_have_text(re.compile(says), timeout=WAIT_MS)
        assert await page.locator("#answer").get_attribute("data-state") == "streaming"
        fake_ollama.state.hang = False
        fake_ollama.state.release()
        await page.locator("#answer[data-state=done]").wait_for(timeout=WAIT_MS)
        await expect(page.locator("#answer")).to_have_text("Remove the lower leaves [1].")
        await expect(state).to_have_text("")
        assert "Blight" in await page.locator("#sources").inner_text()
        watch.assert_clean()
    finally:
        fake_ollama.state.release()
        daemon.stop()


async def test_a_search_that_failed_while_the_daemon_was_away_runs_again_when_it_is_back(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The daemon restarted (an upgrade, the laptop woke up) while the phone searched: the
    # chips said it was back a few seconds later, but the search went on saying "Search
    # failed: the daemon cannot be reached" until the words were typed again.
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        away = lambda route: route.abort("connectionrefused")  # noqa: E731
        await page.route("**/search?*", away)
        await page.route("**/status", away)
        await page.fill("#search-input", "sourdough starter")
        state = page.locator("#search-state")
        await expect(state).to_have_text("Search failed: the daemon cannot be reached", timeout=WAIT_MS)
        await page.locator("#status .chip.bad", has_text="cannot be reached").wait_for()

        await page.unroute("**/search?*", away)
        await page.unroute("**/status", away)
        await page.locator("#status").get_by_text("embedder reachable").wait_for()
        await expect(state).to_have_text(re.compile(r"^\d+ headings?$"), timeout=WAIT_MS)
        assert "Sourdough" in " ".join(await page.locator("#search-results .hit-title").all_text_contents())
        assert page.url.endswith("#q=sourdough+starter")
        watch.errors = [e for e in watch.errors if "ERR_CONNECTION_REFUSED" not in e]  # Chromium's own log of the refusals
        watch.assert_clean()


async def test_a_result_whose_note_was_edited_since_opens_its_own_heading(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # The list was made, then the note was edited in Emacs (a heading added above the
    # result): tapping "Grinder settings" opened the heading now at its old line, "Kettle",
    # its text and its "Similar notes", under the label "Grinder settings".
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#search-input", "grinder settings")
        first = page.locator("#search-results > li").first
        await expect(first.locator(".hit-path")).to_have_text("Grinder settings")
        _, before = await daemon.get_json("/search", q="grinder settings")
        note = roam_dir / "coffee-brewing.org"
        text = note.read_text()
        note.write_text(text.replace("* Grinder settings", "* Kettle\nA gooseneck kettle pours slowly.\n\n* Grinder settings", 1))

        async def moved():
            _, found = await daemon.get_json("/search", q="grinder settings")
            return found["results"][0]["line"] != before["results"][0]["line"]

        await wait_until(moved, timeout=30)
        await first.locator(".hit-head").tap()
        opened = page.locator("#search-results .note-text").first
        await expect(opened).to_contain_text("Medium-fine grind", timeout=WAIT_MS)
        assert "gooseneck" not in await page.locator("#search-results").inner_text()
        await expect(page.locator("#search-results > li").first.locator(".hit-path")).to_have_text("Grinder settings")
        watch.assert_clean()
