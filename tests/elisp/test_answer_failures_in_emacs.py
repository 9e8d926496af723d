"""What a failed answer says it left and what helps, in ``emacs -nw`` in tmux (80x24) with
the README's own configuration, the real daemon and the fake Ollama.

Killed after it had found the notes but before the model's first words, the daemon's
answer read "[Failed: the daemon went away mid-answer (it closed the connection); g asks
again]": no answer had begun, only the notes had been found. It now says that the daemon
went away before answering, after finding the notes.

Every failed answer ended "g asks again", also when asking again cannot help: the chat
model missing in Ollama (pulling it is the remedy, and asking again before that fails the
same), likewise "C-c o c in it asks again" for a conversation. The remedy now comes
first: "pull it, then g asks again". A refusal (a 4xx: the request as it is will be
refused again) offers no key to ask again.
"""

from __future__ import annotations

import signal

import pytest

from tests.elisp.walkthrough_driver import ANSWERS, SUMMARY, readme_session


@pytest.mark.timeout(180)
async def test_a_daemon_killed_before_the_first_words_says_it_went_before_answering(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        # The model loading: the daemon has found the notes and waits for its first words.
        fake_ollama.state.configure({"fault_paths": ["/api/chat"], "hang": True, "hang_max": 3600})
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.ask("How do I revive it?")
        await emacs.wait_screen(lambda s: "waiting for the model" in s, "the notes found", timeout=20)
        driver.daemon.proc.send_signal(signal.SIGKILL)

        why = "the daemon went away before answering (it closed the connection after finding the notes)"
        said = await driver.message("the daemon went away", since=mark, timeout=20)
        assert said == f"arcology-oracle: {why}: g in {ANSWERS} asks again", said
        text = await driver.buffer_text(ANSWERS)
        assert f"\n[Failed: {why}; g asks again]\n" in text, text
        assert "mid-answer" not in text, text
        await emacs.wait_screen(lambda s: "finding the notes); g asks again]" in s, "the failure on screen")
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_an_answer_without_its_chat_model_says_to_pull_it_first(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.remove_model("llama3.2")
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.ask("How do I revive it?")
        said = await driver.message("has no model", since=mark, timeout=20)
        assert said.endswith(f"try `ollama pull llama3.2`, then g in {ANSWERS} asks again"), said
        text = await driver.buffer_text(ANSWERS)
        assert "try `ollama pull llama3.2`, then g asks again]\n" in text, text
        assert "; g asks again" not in text, text

        # As it says: pulled, g asks again and is answered.
        fake_ollama.state.add_model("llama3.2", kind="chat")
        await driver.select(ANSWERS)
        await emacs.keys("g")
        await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 1), "the answer", timeout=20)
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_a_summary_without_its_chat_model_says_to_pull_it_first(tmp_path, roam_dir, fake_ollama):
    """/summarize answers a missing model with a 503 (no ``found`` line first): the
    summary showed the daemon's words alone, with no key to summarize again."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.remove_model("llama3.2")
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        said = await driver.message("has no model", since=mark, timeout=20)
        assert said.endswith(f"(HTTP 503); try `ollama pull llama3.2`, then g in {SUMMARY} asks again"), said
        assert said.count("ollama pull") == 1, said
        text = await driver.buffer_text(SUMMARY)
        assert "(HTTP 503); try `ollama pull llama3.2`, then g asks again]\n" in text, text

        # As it says: pulled, g summarizes again.
        fake_ollama.state.add_model("llama3.2", kind="chat")
        await driver.select(SUMMARY)
        await emacs.keys("g")
        await emacs.wait(lambda: driver._count_in(SUMMARY, "** Sources", 1), "the summary", timeout=20)
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_a_conversation_without_its_chat_model_says_to_pull_it_first(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.remove_model("llama3.2")
        mark, before = await driver.converse("How do I feed it in winter?")
        said = await driver.message("has no model", since=mark, timeout=20)
        assert said.endswith(
            "nothing was added to the conversation; try `ollama pull llama3.2`, then C-c o c in it asks again"
        ), said
        assert (driver.roam / "inbox.org").read_bytes() == before
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_a_refused_question_does_not_offer_to_ask_again(tmp_path, roam_dir, fake_ollama):
    """A 4xx is the daemon's refusal of the request as it is: asked again, the same."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await emacs.eval("(setq arcology-oracle-model (make-string 201 ?x))")  # over the daemon's 200
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.ask("How do I revive it?")
        said = await driver.message("(HTTP 400)", since=mark, timeout=20)
        assert said.endswith("(HTTP 400)") and "asks again" not in said, said
        text = await driver.buffer_text(ANSWERS)
        assert "(HTTP 400)]\n" in text and "asks again" not in text, text
        assert not (await emacs.state())["errors"]


# A model named as Ollama's library names models pulled from Hugging Face: with the host,
# the daemon's message is over 160 characters.
LONG_MODEL = "hf.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"


@pytest.mark.timeout(180)
async def test_a_long_missing_model_name_is_said_whole_and_once(tmp_path, roam_dir, fake_ollama):
    """Emacs cut the daemon's error message at 160 characters: with this model's name, Ollama's
    own words ('... (model "hf.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:… (HTTP 503)');
    with a longer one the daemon's "try `ollama pull MODEL`" too, the remedy then added
    again, said twice, once broken. The message naming the missing model is said whole."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await emacs.eval(f'(setq arcology-oracle-model "{LONG_MODEL}")')
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        said = await driver.message("has no model", since=mark, timeout=20)
        assert said.endswith(f"(HTTP 503); try `ollama pull {LONG_MODEL}`, then g in {SUMMARY} asks again"), said
        assert said.count("ollama pull") == 1 and "…" not in said, said
        text = await driver.buffer_text(SUMMARY)
        assert f"(HTTP 503); try `ollama pull {LONG_MODEL}`, then g asks again]\n" in text, text
        assert text.count("ollama pull") == 1, text
        assert not (await emacs.state())["errors"]
