"""``C-c o a`` with the daemon down, in ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

The answers buffer got the question's heading and ``[Failed: daemon not reachable at
… (connection refused)]`` under it, and the echo area said no more: nothing said how to
get an answer. Nothing was asked, so the entry keeps the question (typed, not to be lost)
and says it was not asked, that the daemon is to be started and that ``g`` there asks
again; the echo area says the same, in the same words as every other key that asks the
daemon (``C-c o l`` and ``C-c o s`` said nothing of how to start it). Once the daemon is
back, ``g`` on that entry adds the answer as an entry of its own, after it.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough_driver import ANSWERS, Driver, readme_session

FIRST = "What flour for the starter?"
SECOND = "How long is the overnight proof?"


@pytest.mark.timeout(240)
async def test_asking_with_the_daemon_down_says_so_and_asks_again(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(120, 40)) as driver:
        emacs = driver.emacs
        daemon = driver.daemon
        await driver.open("inbox.org", "* Buy rye flour")
        await _ask(driver, FIRST)
        await emacs.wait(lambda: _count(driver, "** Sources", 1), "the first answer", timeout=20)
        before = await driver.buffer_text(ANSWERS)

        daemon.stop()
        # Asked twice while the daemon is down: one entry, the second try's.
        for _ in range(2):
            await _ask(driver, SECOND)
            screen = await emacs.wait_screen(
                lambda s: "not reachable" in _echo(s) and "Ask about" not in _echo(s), "the echo area to say", timeout=20
            )
        said = _echo(screen)
        assert said.endswith(": start it (arcology-oracle serve)"), screen
        # Every other key that asks the daemon says so in the same words.
        await driver.select("inbox.org")
        for key in ("l", "s"):
            await emacs.keys("C-g")
            await emacs.wait_screen(lambda s: "not reachable" not in _echo(s), "C-g to clear the echo area")
            await emacs.keys("C-c", "o", key)
            heard = await emacs.wait_screen(lambda s: "not reachable" in _echo(s), f"C-c o {key} to say", timeout=20)
            assert _echo(heard) == said, (key, heard)
        text = await driver.buffer_text(ANSWERS)
        assert text.startswith(before), text
        added = text[len(before) :]
        assert "[Failed" not in added, added
        assert re.fullmatch(
            rf"\n\* {re.escape(SECOND)}\nNot asked: daemon not reachable at [^\n]+: start it "
            r"\(arcology-oracle serve\), then g here asks again\.\n",
            added,
        ), added

        await driver.restart_daemon()
        await driver.select(ANSWERS)
        await emacs.keys("M-<")
        await driver.goto("Not asked:")
        await emacs.keys("g")
        await emacs.wait(lambda: _count(driver, "** Sources", 2), "the answer asked again", timeout=30)
        # The answer takes the place of the entry that said it was not asked.
        again = await driver.buffer_text(ANSWERS)
        assert again.startswith(before), again
        entries = re.split(r"^\* ", again[len(before) :], flags=re.M)
        assert entries[0] == "\n" and len(entries) == 2 and entries[1].startswith(SECOND + "\n"), entries
        assert "Not asked" not in again and "** Sources" in entries[1], entries


async def _ask(driver: Driver, question: str) -> None:
    await driver.emacs.keys("C-c", "o", "a")
    await driver.emacs.wait_text("Ask about this buffer:")
    await driver.emacs.type(question)
    await driver.emacs.keys("Enter")


def _echo(screen: str) -> str:
    """The echo area: the lines below the last mode line, a wrapped message joined."""
    lines = screen.rstrip("\n").split("\n")
    last_mode_line = max(i for i, line in enumerate(lines) if re.match(r"^-.*-{8,}$", line))
    return "".join(line.removesuffix("\\") for line in lines[last_mode_line + 1 :])


async def _count(driver: Driver, text: str, n: int) -> bool:
    return (await driver.buffer_text(ANSWERS)).count(text) >= n
