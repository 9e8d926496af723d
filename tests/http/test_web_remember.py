"""The web page's Remember box in headless Chromium against the real daemon: a capture
lands in today's daily (JSON POST), is searchable at once, and a locked daily sends it
to the inbox, which the page says."""

from __future__ import annotations

import datetime
import json
import os
import re

from playwright.async_api import expect

from tests.browser import BROWSER_LOOP, WAIT_MS, browser, chromium, fake_ollama  # noqa: F401 (fixtures)
from tests.http.test_web_page import on_the_phone_page

pytestmark = BROWSER_LOOP


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


async def test_take_it_back_stays_offered_only_while_trying_again_can_work(browser, tmp_path, roam_dir, fake_ollama):  # noqa: F811
    # Both refusals of "Take it back" read "Not taken back: ..." under a button still
    # there: tapping it again after the daily was open in another program works a moment
    # later, but after the capture was edited it never will, and the page kept offering it.
    daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text("#+title: Today\n* Morning\nA walk by the river.\n")
    async with on_the_phone_page(browser, tmp_path, roam_dir, fake_ollama) as (daemon, page, watch):
        state = page.locator("#remember-state")
        button = page.locator("#forget-capture")
        await page.fill("#remember-text", "Return the library books")
        await page.tap("#remember-button")
        await state.get_by_text("Saved to daily/").wait_for()

        other = os.open(daily, os.O_RDONLY)  # a sync tool has the daily open: no write lease
        try:
            before = daily.read_bytes()
            await button.tap()
            await expect(state).to_have_text(re.compile(r"^Not taken back yet: .*open in another program"), timeout=WAIT_MS)
            assert "again in a moment" in await state.text_content()
            assert await button.is_visible()
            assert daily.read_bytes() == before
        finally:
            os.close(other)
        await button.tap()  # closed again: the same button now works
        await expect(state).to_have_text(re.compile(r"^Taken back"), timeout=WAIT_MS)
        assert daily.read_bytes() == b"#+title: Today\n* Morning\nA walk by the river.\n"

        await page.fill("#remember-text", "Water the ferns")
        await page.tap("#remember-button")
        await state.get_by_text("Saved to daily/").wait_for()
        daily.write_bytes(daily.read_bytes().replace(b"Water the ferns", b"Water the ferns and the basil"))
        edited = daily.read_bytes()
        await button.tap()
        await expect(state).to_have_text(re.compile(r"^Cannot be taken back: .*edit"), timeout=WAIT_MS)
        assert await button.is_hidden()
        assert daily.read_bytes() == edited
        # Chromium logs the refused requests itself; nothing else went wrong.
        watch.errors = [e for e in watch.errors if "status of 409" not in e]
        watch.assert_clean()
