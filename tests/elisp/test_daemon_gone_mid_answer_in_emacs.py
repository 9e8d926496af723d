"""The daemon going away while it answers (killed, or restarted), in ``emacs -nw`` in tmux
with the README's own configuration, the real daemon and the fake Ollama streaming slowly.

Killed mid-``C-c o a``, the answer's entry read "[Failed: the daemon closed the connection
mid-answer]", with nothing on what was left or what to do; killed mid-``C-c o c`` (the
conversation's answer is one JSON response, so nothing of it had come), the echo area said
"daemon not reachable ... start it", as if nothing had been sent; stopped (SIGTERM, a
restart), they said "the daemon is stopping" and no more. Now both say that the daemon
went away (or is stopping), what came is kept (the answer so far stays in its buffer;
the conversation got nothing) and which key asks again.
"""

from __future__ import annotations

import signal

import pytest

from tests.elisp.walkthrough_driver import ANSWERS, readme_session

REPLY = " ".join(["Feed the starter twice a day with rye flour."] * 8)


# What the daemon said when it went: nothing (killed), or that it is stopping (SIGTERM, as
# systemd restarts it).
GONE = {
    signal.SIGKILL: ("the daemon went away mid-answer (it closed the connection)",
                     "the daemon went away before answering (it closed the connection)"),
    signal.SIGTERM: ("the daemon is stopping", "the daemon is stopping (HTTP 503)"),
}  # fmt: skip


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", GONE, ids=lambda s: s.name)
async def test_an_answer_cut_short_by_a_killed_daemon_says_what_is_kept(tmp_path, roam_dir, fake_ollama, sig):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.configure({"chat_reply": REPLY, "delay_per_piece": 0.4})
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.ask("How do I revive it?")
        await emacs.wait_text("Feed the starter", timeout=20)
        driver.daemon.proc.send_signal(sig)
        why = GONE[sig][0]

        said = await driver.message(why, since=mark, timeout=20)
        assert said == f"arcology-oracle: {why}: what came is kept in {ANSWERS}, g there asks again", said
        text = await driver.buffer_text(ANSWERS)
        assert "Feed the starter" in text, text
        assert f"\n[Failed: {why}; what came is kept above, g asks again]\n" in text, text
        # The answer's window shows it, wrapped to the 80 columns.
        await emacs.wait_screen(lambda s: "is kept above, g asks again]" in s, "the failure on screen")
        assert "not reachable" not in (await emacs.state())["messages"]
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_an_answer_cut_short_before_its_first_words_says_none_came(tmp_path, roam_dir, fake_ollama):
    """The model's first piece blank: the sources line came, and no words under it. Cut
    short then, the answer said "what came is kept above" of nothing but blank lines."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        # The stream holds after its first piece, the blank line.
        fake_ollama.state.configure({"chat_reply": "\n\n" + REPLY, "stream_gate": True})
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        mark = await driver.ask("How do I revive it?")
        # The sources line came: the entry's line naming the model.
        await emacs.wait(lambda: driver._count_in(ANSWERS, " · llama3.2", 1), "the answer begun", timeout=20)
        driver.daemon.proc.send_signal(signal.SIGKILL)
        why = GONE[signal.SIGKILL][0]

        said = await driver.message(why, since=mark, timeout=20)
        assert said == f"arcology-oracle: {why}: no words of the answer had come, g in {ANSWERS} asks again", said
        text = await driver.buffer_text(ANSWERS)
        assert f"[Failed: {why}; no words of the answer had come, g asks again]\n" in text, text
        assert "kept" not in text and "Feed the starter" not in text, text
        assert "\n** Sources\n- [1] " in text, text
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", GONE, ids=lambda s: s.name)
async def test_a_conversation_whose_daemon_is_killed_says_nothing_was_added(tmp_path, roam_dir, fake_ollama, sig):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.configure({"chat_reply": REPLY, "delay_per_piece": 0.4})
        mark, before = await driver.converse("How do I feed it in winter?")
        await driver.message("thinking", since=mark, timeout=20)
        # The model is answering: the daemon has the conversation.
        await emacs.wait(lambda: fake_ollama.state.chats, "the model asked", timeout=20)
        driver.daemon.proc.send_signal(sig)
        why = GONE[sig][1]

        said = await driver.message(why, since=mark, timeout=20)
        assert said == f"arcology-oracle: {why}: nothing was added to the conversation, C-c o c in it asks again", said
        assert "not reachable" not in (await emacs.state())["messages"]
        assert (driver.roam / "inbox.org").read_bytes() == before

        # As it says: the daemon started again, C-c o c in the conversation asks again.
        fake_ollama.state.configure({"delay_per_piece": 0})
        driver.daemon.proc.wait()  # gone, its port free
        await driver.restart_daemon()
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "c")
        said = await driver.message("answered", since=mark, timeout=20)
        # The key the README binds, not M-x.
        assert said == "arcology-oracle: answered (undo or C-c o d to drop it)", said
        assert "** Oracle" in await driver.buffer_text("inbox.org")
        assert not (await emacs.state())["errors"]
