"""The web page's Remember box in headless Chromium against the real daemon: a capture
lands in today's daily (JSON POST), is searchable at once, and a locked daily sends it
to the inbox, which the page says."""

from __future__ import annotations

import datetime
import json
import os
import re

from playwright.async_api import expect

from tests.browser import WAIT_MS
from tests.http.test_web_page import browser, on_the_phone_page  # noqa: F401 (fixture)


async def test_remember_box_captures_to_the_daily_then_the_inbox(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        await page.fill("#remember-text", "The heron nests by the old mill pond")
        await page.fill("#remember-tags", "birds walk")
        await page.tap("#remember-button")
        state = page.locator("#remember-state")
        await expect(state).to_have_text(re.compile(r"^Saved"), timeout=WAIT_MS)
        daily = f"daily/{datetime.date.today():%Y-%m-%d}.org"
        assert (await state.text_content()).startswith(f"Saved to {daily}:")
        assert await page.input_value("#remember-text") == ""
        text = (roam_dir / daily).read_text()
        assert "* The heron nests by the old mill pond :birds:walk:" in text
        node_id = await state.get_attribute("data-id")
        _, found = await daemon.get_json("/search", q="heron mill pond")
        assert found["results"][0]["heading_id"] == node_id
        posts = [r for r in watch.requests if r.url.endswith("/memorize")]
        assert posts and posts[0].method == "POST" and posts[0].headers["content-type"] == "application/json"
        assert json.loads(posts[0].post_data) == {"text": "The heron nests by the old mill pond", "tags": ["birds", "walk"]}

        # Emacs holds today's daily: the page says the note went to the inbox.
        os.symlink("me@elsewhere.99:1700000000", roam_dir / "daily" / f".#{datetime.date.today():%Y-%m-%d}.org")
        await page.fill("#remember-text", "Kingfisher seen at dusk")
        await page.tap("#remember-button")
        await expect(state).to_have_text(re.compile(r"inbox\.org"), timeout=WAIT_MS)
        assert "locked" in await state.text_content()
        assert "Kingfisher seen at dusk" in (roam_dir / "inbox.org").read_text()
        assert "Kingfisher" not in (roam_dir / daily).read_text()

        # A bad tag is the daemon's 400, shown, and the text is kept for another try.
        await page.fill("#remember-text", "keep me")
        await page.fill("#remember-tags", "bad-tag")
        await page.tap("#remember-button")
        await expect(state).to_have_text(re.compile(r"^Not saved"), timeout=WAIT_MS)
        assert "invalid tag" in await state.text_content()
        assert await page.input_value("#remember-text") == "keep me"
        # Chromium logs the refused request itself; nothing else went wrong.
        watch.errors = [e for e in watch.errors if "status of 400" not in e]
        watch.assert_clean()
