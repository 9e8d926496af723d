"""What the web page says when Ollama fails an answer: words a person can act on, never a
Python exception's text. Headless Chromium against the real daemon and a fake Ollama."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import BROWSER_LOOP, WAIT_MS, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import on_the_phone_page

pytestmark = BROWSER_LOOP

RAW = ("Error:", "Expecting", "delimiter", "char ", "chunked", "peer closed", "Traceback")


@pytest.mark.parametrize(
    "fault, says",
    [
        # Ollama (or what answers at its address) sent something that is not its JSON.
        ({"garbage": True, "fault_paths": {"/api/chat"}}, "is not Ollama's"),
        # The connection dropped in the middle of the answer (Ollama crashed or restarted).
        ({"chat_abort_midway": 2}, "broke off its answer"),
    ],
)
async def test_an_answer_ollama_breaks_says_so_in_words(browser, tmp_path, roam_dir, fake_ollama, fault, says):  # noqa: F811
    # The page said "Could not answer: invalid response from model 'llama3.2' at ...:
    # Expecting ',' delimiter: line 1 column 46 (char 45)" and "Ollama at ... failed
    # (RemoteProtocolError: peer closed connection without sending complete message body
    # (incomplete chunked read))".
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        for key, value in fault.items():
            setattr(fake_ollama.state, key, value)
        await page.fill("#question", "How do I feed the sourdough starter?")
        await page.tap("#ask-button")
        await page.locator("#answer[data-state=error]").wait_for(state="attached", timeout=WAIT_MS)
        state = page.locator("#ask-state")
        await expect(state).to_contain_text(says)
        text = await state.text_content()
        assert text.startswith("Could not answer: ") and fake_ollama.url in text, text
        assert not [raw for raw in RAW if raw in text], text
        await expect(page.locator("#ask-button")).to_have_text("Ask")
