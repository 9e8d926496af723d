"""An answer in markdown, as chat models write them: ``emacs -nw`` in tmux with the
README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

The answers buffer is Org: a model's bullet ``* item`` was a heading there, so the answer
ended at its first bullet (``n`` went to the bullet, not to the next question) and its
``** Sources`` were filed under the last bullet; ``**bold**`` showed its stars. The lines
are made Org as they stream in, as the daemon does for a conversation's answer.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough_driver import ANSWERS, readme_session

MARKDOWN = (
    "Here is what your notes say:\n\n"
    "* **Feed it twice a day** at room temperature [1].\n"
    "* Switch to *whole rye* flour.\n"
    "  * keep it at `24` degrees\n\n"
    "## Why it works\n\n"
    "```sh\n* not a bullet\nrye 50 g\n```\n"
    "That is all."
)


@pytest.mark.timeout(180)
async def test_a_markdown_answer_is_one_entry_of_org(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        fake_ollama.state.configure({"chat_reply": MARKDOWN})
        await driver.open("sourdough-baking.org", "** Reviving a sluggish starter")
        await driver.ask("How do I revive my starter?")
        await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 1), "the first answer", timeout=20)
        await driver.ask("And in winter?")
        await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 2), "the second answer", timeout=20)

        text = await driver.buffer_text(ANSWERS)
        headings = re.findall(r"^\*+ .*", text, flags=re.M)
        assert headings == ["* How do I revive my starter?", "** Sources", "* And in winter?", "** Sources"], text
        assert "- Switch to *whole rye* flour.\n  - keep it at ~24~ degrees\n" in text, text
        assert "*Why it works*\n" in text, text
        assert "#+begin_src sh\n,* not a bullet\nrye 50 g\n#+end_src\nThat is all." in text, text

        # A person reading the first answer goes to the next question with n.
        await driver.select(ANSWERS)
        await emacs.keys("M-<")
        await emacs.wait(lambda: driver._cursor_has("How do I revive my starter?"), "point on the first question")
        await emacs.keys("n")
        await emacs.wait(lambda: driver._cursor_has("And in winter?"), "n on the second question")
        await emacs.wait_screen(lambda s: "- *Feed it twice a day* at room temperature [1]." in s, "the bullet")
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_a_markdown_answer_in_a_conversation_reads_as_org(tmp_path, roam_dir, fake_ollama):
    """``C-c o c``: the daemon writes the answer into the note; its bullets were already
    list items, but ``**bold**`` and backquoted code came in as markdown, unlike the
    answers buffer's."""
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        fake_ollama.state.configure({"chat_reply": MARKDOWN})
        mark, _ = await driver.converse("How do I feed it in winter?", save=False)
        await driver.message("answered", since=mark, timeout=20)
        text = await driver.buffer_text("inbox.org")
        answer = text[text.index("** Oracle") :]
        assert "- *Feed it twice a day* at room temperature [1].\n" in answer, answer
        assert "  - keep it at ~24~ degrees\n" in answer, answer
        assert "**" not in answer.replace("** Oracle", ""), answer
        assert not (await emacs.state())["errors"]
