"""A model's link that runs code, in the answers buffer (``emacs -nw`` in tmux, the
README's own configuration, the real daemon and the fake Ollama): the answer is Org, so
``[[elisp:(...)][the note]]`` showed as "the note", and ``RET`` (or ``C-c C-o``) on it ran
the model's code in an Emacs whose ``org-link-elisp-confirm-function`` is nil (a user's
setting for their own links). It is refused with a message (``shell:``, ``eshell:``,
``man:`` alike)."""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import ANSWERS, readme_session

REPLY = 'Your notes say to feed it twice a day: see [[elisp:(message "RAN-THE-MODELS-CODE")][the note]].'


@pytest.mark.timeout(180)
async def test_a_models_elisp_link_in_the_answers_is_never_run(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await emacs.eval("(setq org-link-elisp-confirm-function nil)")  # the user trusts their own links
        fake_ollama.state.configure({"chat_reply": REPLY})
        await driver.open("sourdough-baking.org", "** Reviving a sluggish starter")
        await emacs.keys("C-c", "o", "a")
        await emacs.wait_text("Ask about this buffer:")
        await emacs.type("How do I revive my starter?")
        await emacs.keys("Enter")
        await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 1), "the answer", timeout=20)
        await driver.select(ANSWERS)
        mark = await driver.mark()
        await emacs.keys("M-<", "C-s")
        await emacs.type("the no")
        await emacs.keys("Enter")
        await emacs.wait(lambda: driver._cursor_has("the note"), "point on the link")
        await emacs.keys("Enter")  # RET: follow the link at point


        async def outcome():  # the refusal, or the model's code having run
            lines = (await emacs.state())["messages"].split("\n")[mark:]
            return next((line for line in lines if "not followed" in line or "RAN-THE-MODELS-CODE" in line), None)

        said = await emacs.wait(outcome, "the link refused or run")
        assert "This elisp: link is a model" in said and "not followed" in said, said
        assert "RAN-THE-MODELS-CODE" not in (await emacs.state())["messages"]
