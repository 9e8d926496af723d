"""A note the daemon's ``exclude_globs`` leave out, in Emacs: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

A node of an excluded note (``attic/**``) is asked about by its ID (``C-c o u``,
``C-c o l``, the similar list, the org-roam section): the daemon never read it, so it
answered "no node with ID '...' in the index (HTTP 404)", the ID on screen and nothing
said of why. Emacs knows the globs from ``/status`` and says the note is excluded,
sending nothing about it; with ``arcology-oracle-roam-directory`` set too (Emacs read
``/status`` only when it was not set, and the refusals were the bare 404 again).
"""

from __future__ import annotations

import json

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _wait_similar
from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import LINKS, SUMMARY, Driver, readme_emacs
from tests.emacs_batch import require_packages

OLD_ID = "17000000-0000-4000-8000-00000000a771"
OLD = f":PROPERTIES:\n:ID: {OLD_ID}\n:END:\n#+title: Old starter\n\n* Feeding the old starter\nRye flour, twice a day.\n"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("roam_set", [False, True], ids=["asked", "roam-directory-set"])
async def test_an_excluded_note_is_refused_as_excluded(tmp_path, roam_dir, fake_ollama, roam_set):
    require_packages()
    (roam_dir / "attic").mkdir()
    (roam_dir / "attic" / "old-starter.org").write_text(OLD)
    daemon, emacs, _ = await readme_emacs(
        tmp_path, roam_dir, fake_ollama, env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "attic/**"}
    )
    if roam_set:
        set_roam_directory(emacs, roam_dir)
    emacs.columns, emacs.lines = 100, 30
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        await driver.open("attic/old-starter.org", "Rye flour")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        said = await _said(driver, "exclude_globs", mark)
        assert said.startswith("arcology-oracle: old-starter.org is not among the daemon's notes"), said
        await emacs.keys("C-c", "o", "l")
        said = await _said(driver, "no link suggestions", mark)
        assert "exclude_globs" in said, said
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "exclude_globs", "the similar list's refusal")

        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: driver._count_in("*org-roam*", "Similar notes", 1), "the org-roam section")
        roam_buffer = await driver.buffer_text("*org-roam*")
        assert "exclude_globs" in roam_buffer and "HTTP" not in roam_buffer, roam_buffer

        state = await emacs.state()
        after = "\n".join(state["messages"].split("\n")[mark:])
        assert OLD_ID not in after and "HTTP 404" not in after, after
        assert "Summary of" not in await driver.buffer_text(SUMMARY)
        assert await driver.window_of(LINKS) is None, await driver.windows()
    finally:
        await emacs.stop()
        daemon.stop()


def set_roam_directory(emacs, directory) -> None:
    """The user's init.el sets ``arcology-oracle-roam-directory`` after the README's lines."""
    init = emacs.home / ".emacs.d" / "init.el"
    init.write_text(init.read_text() + f"(setq arcology-oracle-roam-directory {json.dumps(str(directory))})\n")


async def _said(driver: Driver, text: str, mark: int) -> str:
    """The message holding TEXT since MARK; the failure shows the messages."""
    try:
        return await driver.message(text, since=mark)
    except AssertionError as e:
        messages = (await driver.emacs.state())["messages"].split("\n")[mark:]
        raise AssertionError(f"{e}; the messages were:\n" + "\n".join(messages)) from None


GLOBS = ["attic/**", "**/*.draft.org", "archive/", "old-*", "[!a-m]*.org", "notes/?.org", "x[ab].org", "a[.org"]
PATHS = [
    "attic/old.org", "attic/deep/er.org", "x.draft.org", "notes/y.draft.org", "archive/a.org", "b/archive/c.org",
    "old-bread.org", "b/old-x/c.org", "zebra.org", "apple.org", "notes/z.org", "notes/zz.org", "xa.org", "xc.org",
    "a[.org", "Attic/old.org",
]


async def test_emacs_matches_exclude_globs_as_the_daemon_does(tmp_path):
    """Emacs refuses what the daemon's notes/files.py leaves out, and nothing else."""
    from arcology_oracle.notes.files import is_excluded

    from tests.emacs_batch import MAIN_FILE, emacs_env, run_emacs

    form = (
        f"(progn (load {json.dumps(str(MAIN_FILE))} nil t) (require 'arcology-oracle-notes)"
        f" (dolist (glob '({' '.join(json.dumps(g) for g in GLOBS)}))"
        f" (dolist (rel '({' '.join(json.dumps(p) for p in PATHS)}))"
        ' (princ (format "%s %s %s\\n" glob rel (if (arcology-oracle--glob-matches-p glob rel) 1 0))))))'
    )
    code, output = await run_emacs(["--eval", f"(add-to-list 'load-path {json.dumps(str(MAIN_FILE.parent))})",
                                    "--eval", form], env=emacs_env(tmp_path))  # fmt: skip
    assert code == 0, output
    seen = [line.rsplit(" ", 1) for line in output.splitlines() if line.count(" ") == 2]
    expected = [f"{g} {p}" for g in GLOBS for p in PATHS]
    assert [s[0] for s in seen] == expected, output
    assert {s[1] for s in seen} == {"0", "1"}, output
    wrong = [s[0] for s in seen if (s[1] == "1") != is_excluded(s[0].split(" ")[1], [s[0].split(" ")[0]])]
    assert wrong == [], wrong
