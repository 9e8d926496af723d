"""An Emacs that makes no lock files (``create-lockfiles`` nil) still auto-saves a buffer
with unsaved edits to ``#NAME#`` beside the note. A capture into a daily whose auto-save
file is newer than it would be dropped at Emacs's next save of that buffer, so the daily
counts as held, as a locked one does: the capture goes to the inbox. Real Emacs makes the
auto-save file, the real daemon writes, real files."""

from __future__ import annotations

import os

from tests.emacs_batch import emacs_env, run_emacs
from tests.index.test_memory import post, today_daily


def _edit(daily, text: str, *, save: bool) -> str:
    """Emacs without lock files: visit ``daily``, type ``text``, auto-save, maybe save."""
    then = "(save-buffer)" if save else ""
    return (
        f'(progn (setq create-lockfiles nil) (find-file "{daily}") (goto-char (point-max))'
        f' (insert "{text}") (auto-save-mode 1) (do-auto-save t) {then})'
    )


async def test_a_daily_auto_saved_since_its_last_save_sends_the_capture_to_the_inbox(daemon, roam_dir, tmp_path):
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text("#+title: today\n* Being edited\n")
    os.utime(daily, ns=(daily.stat().st_atime_ns, daily.stat().st_mtime_ns - 60 * 10**9))  # saved a minute ago
    before = daily.read_bytes()
    status, out = await run_emacs(["--eval", _edit(daily, "* typed, not saved\\n", save=False)], env=emacs_env(tmp_path))
    auto_save = daily.with_name(f"#{daily.name}#")
    assert status == 0 and auto_save.exists(), out
    assert not daily.with_name(".#" + daily.name).exists()  # no lock to see
    status, body = await post(daemon, "/memorize", {"text": "Feed the axolotl at noon"})
    assert status == 200, body
    assert body["inbox"] is True and body["file"] == "inbox.org" and "auto-saved" in body["note"], body
    assert daily.read_bytes() == before
    assert "* Feed the axolotl at noon" in (roam_dir / "inbox.org").read_text()
    # Saved in Emacs (the save deletes the auto-save file): the daily takes captures again.
    status, out = await run_emacs(["--eval", _edit(daily, "* typed and saved\\n", save=True)], env=emacs_env(tmp_path))
    assert status == 0 and not auto_save.exists(), out
    status, body = await post(daemon, "/memorize", {"text": "Clean the filter"})
    assert status == 200 and body["inbox"] is False and body["file"] == f"daily/{daily.name}", body
    assert daily.read_text().startswith("#+title: today\n* Being edited\n* typed and saved\n")


async def test_a_forget_in_a_note_auto_saved_since_is_refused(daemon, roam_dir):
    status, body = await post(daemon, "/memorize", {"text": "Water the ferns"})
    assert status == 200, body
    note = roam_dir / body["file"]
    before = note.read_bytes()
    auto_save = note.with_name(f"#{note.name}#")
    auto_save.write_bytes(before + b"* typed in Emacs\n")
    os.utime(note, ns=(note.stat().st_atime_ns, auto_save.stat().st_mtime_ns - 10**9))
    status, refused = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 409 and "auto-saved" in refused["error"], refused
    assert note.read_bytes() == before
    auto_save.unlink()
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, gone
