"""Text typed at ``C-c o M``'s prompt while visiting a private note or one in a hidden
folder: ``emacs -nw`` in tmux with the README's own configuration, the real daemon and
the fake Ollama (as tests/elisp/test_walkthrough.py runs them).

The typed text is the user's, not the note's, so it is remembered; but its ``:SOURCE:``
link named the private note and heading ("Diary › Monday", a hidden note's title) in
today's daily note, which is not private. The capture now has no ``:SOURCE:`` from
there, and keeps it from an ordinary note.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import Driver, readme_session

HIDDEN = "#+title: Secret plans\n\n* Surprise party for Ana\nBook the bakery.\n"


async def _type_capture(driver: Driver, text: str) -> None:
    mark = await driver.mark()
    await driver.emacs.keys("C-c", "o", "M")
    await driver.emacs.wait_text("Remember:")
    await driver.emacs.type(text)
    await driver.emacs.keys("Enter")
    await driver.message("Remembered in", since=mark, timeout=15)


def _daily(driver: Driver) -> str:
    return "\n".join(p.read_text() for p in driver.notes() if p.parent.name == "journal" and "2024" not in p.name)


@pytest.mark.timeout(180)
async def test_typed_text_names_no_private_or_hidden_note(tmp_path, roam_dir, fake_ollama):
    (roam_dir / ".hidden").mkdir()
    (roam_dir / ".hidden" / "plans.org").write_text(HIDDEN)
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs

        await driver.open("private-diary.org", "privatefiletag again")
        await _type_capture(driver, "Buy oat milk")
        await driver.open(".hidden/plans.org", "Book the bakery")
        await _type_capture(driver, "Call the florist")
        await driver.open("sourdough-baking.org", "** Reviving a sluggish starter")
        await _type_capture(driver, "Try a warmer spot")

        daily = _daily(driver)
        assert "Buy oat milk" in daily and "Call the florist" in daily, daily
        for secret in ("Diary", "Monday", "private-diary", "plans.org", "Secret plans", "Surprise party"):
            assert secret not in daily, daily
        assert daily.count(":SOURCE:") == 1, daily
        assert "[Sourdough Baking › Starter maintenance › Reviving a sluggish starter]]" in daily, daily
        assert not (await emacs.state())["errors"]
