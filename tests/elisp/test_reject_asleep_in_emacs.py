"""``x`` in the link suggestions while the daemon does not answer (the computer it runs on
asleep: SIGSTOP): ``emacs -nw`` in tmux with the README's own configuration, the real
daemon and the fake Ollama.

Nothing was said for ``arcology-oracle-timeout`` seconds, then "no answer from the daemon
within 15 seconds", though the daemon, once awake, may record the rejection (``g`` then
showed the suggestion gone). ``x`` now says at once that it is rejecting, and the timeout
says that the daemon may still record it and that ``g`` shows the list as it is.
"""

from __future__ import annotations

import os
import signal

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_firstday_refusals_in_emacs import _started
from tests.elisp.walkthrough_driver import LINKS, Driver


@pytest.mark.timeout(180)
async def test_x_while_the_daemon_sleeps_says_what_may_still_happen(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 120, 40)
    emacs = driver.emacs
    try:
        await emacs.eval("(setq arcology-oracle-timeout 3)")
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected", timeout=15)
        await emacs.keys("M-<", "n")
        await emacs.wait(lambda: _point_on(driver, "Baker's percentages"), "point on Baker's percentages")
        since = await driver.mark()
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await emacs.keys("x")
            await driver.message("Rejecting Baker's percentages", since=since, timeout=2)
            said = await driver.message("no answer from the daemon", since=since, timeout=10)
            assert "may still" in said and "g shows" in said, said
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        # Whether the daemon, awake, recorded it depends on when it read the request: g
        # shows the list as it is.
        await emacs.keys("g")
        await emacs.wait(lambda: _listed(driver), "g: the list again", timeout=15)
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _point_on(driver: Driver, text: str) -> bool:
    return text in await driver.point_text()


async def _listed(driver: Driver) -> bool:
    text = await driver.buffer_text(LINKS)
    return "Looking" not in text and "Links to add to" in text and "\n0." in text
