"""A daemon restarted quickly on other notes, on the same port, in ``emacs -nw`` in tmux
with the README's own configuration and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

Emacs read the first daemon's roam directory from ``/status`` and kept it: with no
request failing in between, nothing told it the notes had moved, and every note was sent
by a path relative to the old directory. Here the new daemon serves the folder around
the old one: the similar list said "no indexed heading at sourdough-baking.org:33 (HTTP
404)". Now every request names the notes Emacs was told of, and a daemon serving others
refuses it (409, nothing done) saying it was restarted; Emacs reads ``/status`` again,
and the next ``g`` lists the notes.

With ``arcology-oracle-roam-directory`` set, Emacs never read ``/status``, so sent no
notes and the new daemon took the old paths as its own: the same 404 (or, with a note
of the same name there, the wrong note's list). Now ``/status`` is read either way; the
setting names where the first daemon's notes are, so a daemon restarted on others is
refused, saying the setting is to be set again, and nothing is sent.
"""

from __future__ import annotations

import shutil

import pytest

from tests.elisp.test_excluded_in_emacs import set_roam_directory
from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import SIMILAR, TOKEN, Driver, readme_emacs
from tests.emacs_batch import require_packages
from tests.runners import spawn_daemon, wait_indexed


async def _listed(driver: Driver) -> str:
    return " ".join((await driver.buffer_text(SIMILAR)).split())


@pytest.mark.timeout(240)
async def test_a_daemon_restarted_on_other_notes_is_followed(tmp_path, roam_dir, fake_ollama):
    seen = await _listed_after_a_restart(tmp_path, roam_dir, fake_ollama, roam_set=False)
    assert "Bread Hydration" in seen[-1], seen
    assert not any("no indexed heading" in s for s in seen), seen


@pytest.mark.timeout(240)
async def test_a_daemon_restarted_on_other_notes_is_refused_with_the_directory_set(
    tmp_path, roam_dir, fake_ollama
):
    seen = await _listed_after_a_restart(tmp_path, roam_dir, fake_ollama, roam_set=True)
    assert "restarted on other notes" in seen[-1] and "arcology-oracle-roam-directory" in seen[-1], seen
    assert not any("no indexed heading" in s or "Bread Hydration" in s for s in seen), seen


async def _listed_after_a_restart(tmp_path, roam_dir, fake_ollama, *, roam_set: bool) -> list[str]:
    """The similar list of a note, listed by a first daemon on a copy of ROAM_DIR, then
    after ``g`` (twice, unless the first lists it again) once another daemon on the same
    port serves the folder around it (``arcology-oracle-roam-directory`` set when
    ROAM_SET): what each ``g`` listed."""
    require_packages()
    everything = tmp_path / "all"
    notes = everything / "roam"  # the first daemon's notes, inside the second's
    shutil.copytree(roam_dir, notes, symlinks=True)
    daemon, emacs, _ = await readme_emacs(tmp_path, notes, fake_ollama)
    if roam_set:
        set_roam_directory(emacs, notes)
    emacs.columns, emacs.lines = 120, 40
    driver = Driver(emacs, Walk(emacs, {}), notes, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _has(driver, "Bread Hydration"), "the first daemon's list")
        await driver.select(SIMILAR)
        await emacs.wait(lambda: _quiet(emacs, status=not roam_set), "Emacs to have nothing left to ask")

        daemon.stop()  # and at once another on the same port: Emacs asks nothing meanwhile
        driver.daemon = daemon = spawn_daemon(
            roam_dir=everything, db_path=tmp_path / "second.sqlite3", ollama_url=fake_ollama.url,
            log_path=tmp_path / "second.log", port=driver.port, token=TOKEN,
            env={"ARCOLOGY_ORACLE_DEBOUNCE_SECONDS": "0.1", "ARCOLOGY_ORACLE_RETRY_MAX_SECONDS": "0.5"},
        )  # fmt: skip
        await emacs.wait(driver._healthy, "the second daemon to answer", timeout=30)
        await wait_indexed(daemon, timeout=60)

        await driver.select(SIMILAR)
        seen = []
        for _ in range(2):  # the first g may be the one that finds out
            await emacs.eval(f'(with-current-buffer "{SIMILAR}" (let ((inhibit-read-only t)) (erase-buffer)))')
            await emacs.keys("g")
            await emacs.wait(lambda: _answered(driver), "the list answered")
            seen.append(await _listed(driver))
            if "Bread Hydration" in seen[-1]:
                break
        return seen
    finally:
        await emacs.stop()
        daemon.stop()


async def _has(driver: Driver, text: str) -> bool:
    listed = await _listed(driver)
    return "Looking for" not in listed and "Asking about" not in listed and text in listed


async def _answered(driver: Driver) -> bool:
    listed = await _listed(driver)
    return "Looking for" not in listed and "Asking about" not in listed and "Similar to" in listed


async def _quiet(emacs, *, status: bool = True) -> bool:
    """No request open, none waiting for Emacs to be idle; with STATUS, /status read."""
    return await emacs.eval(
        "(and (null (seq-filter (lambda (p) (string-prefix-p \"arcology-oracle\" (process-name p))) (process-list)))"
        " (null (seq-filter (lambda (tm) (eq (timer--function tm) 'arcology-oracle--similar-timer-fn)) timer-idle-list))"
        f" {'(assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)' if status else ''} t)"
    ) == "t"
