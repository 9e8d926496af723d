"""/forget's ``unsaved`` (the notes the client's editor holds with unsaved edits, as
/memorize takes it): the capture's note among them, by any of its names, is a 409 that
says to try again and changes nothing; once saved (not named), the forget goes through
and the note is as before the capture, byte for byte. A private capture's note named
there is refused alike; a private heading of the user's stays a 404 whatever is named.
The real daemon and real files."""

from __future__ import annotations

import os

from tests.index.test_memory_left_out import snapshot
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of

USER = b"#+title: Today\n* Mine\nwritten by hand\n"


async def test_a_forget_of_a_capture_in_a_note_named_unsaved_is_refused_and_changes_nothing(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_bytes(USER)
    rel = daily.relative_to(roam_dir).as_posix()
    os.link(daily, roam_dir / "today-too.org")  # Emacs visits either name as the same file
    (roam_dir / "today-link.org").symlink_to(rel)
    status, captured = await post(daemon, "/memorize", {"text": "Oil the hinges of the shed"})
    assert status == 200 and captured["file"] == rel, captured
    before = snapshot(roam_dir)
    for unsaved in ([rel], ["inbox.org", "today-too.org"], ["today-link.org"], [f"./{rel}"]):
        status, refused = await post(daemon, "/forget", {"id": captured["id"], "unsaved": unsaved})
        assert status == 409 and refused["retry"] is True, (unsaved, status, refused)
        assert "unsaved edits in the editor" in refused["error"], refused
        assert snapshot(roam_dir) == before, unsaved
    # Other notes unsaved, or none: forgotten, the daily as the user left it.
    status, forgotten = await post(daemon, "/forget", {"id": captured["id"], "unsaved": ["inbox.org", "daily/other.org"]})
    assert status == 200 and forgotten["file"] == rel, forgotten
    assert daily.read_bytes() == USER


async def test_a_private_capture_named_unsaved_is_refused_and_a_private_heading_stays_unknown(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_bytes(USER)
    rel = daily.relative_to(roam_dir).as_posix()
    status, captured = await post(daemon, "/memorize", {"text": "The safe's code is on the card", "tags": ["private"]})
    assert status == 200 and captured["indexed"] is False, captured
    secret = roam_dir / "secret.org"
    secret.write_bytes(b"* Bank :private:\n:PROPERTIES:\n:ID: user-private-1\n:END:\nmine\n")
    before = snapshot(roam_dir)
    status, refused = await post(daemon, "/forget", {"id": captured["id"], "unsaved": [rel]})
    assert status == 409 and refused["retry"] is True, refused
    status, unknown = await post(daemon, "/forget", {"id": "user-private-1", "unsaved": ["secret.org"]})
    assert status == 404 and "secret" not in unknown["error"], unknown
    assert snapshot(roam_dir) == before
    status, forgotten = await post(daemon, "/forget", {"id": captured["id"], "unsaved": ["secret.org"]})
    assert status == 200, forgotten
    assert daily.read_bytes() == USER


async def test_a_private_note_whose_text_looks_like_a_capture_only_at_unicode_line_breaks_stays_unknown(daemon, roam_dir):
    # Emacs breaks lines at line feeds only: U+2028 and U+0085 are text, so no heading of
    # this private note has the ID fake-1, and a forget of it tells nothing of the note,
    # however it is held (not "daily/...org has unsaved edits", which names it).
    daily = daily_of(roam_dir)
    fake = "\u2028".join(["notes", "* fake", ":PROPERTIES:", ":ID: fake-1", ":CAPTURED_BY: arcology-oracle", ":END:"])
    daily.write_text(f"#+filetags: :private:\n* Mine\n{fake}\n* Also\u0085:PROPERTIES:\u0085:ID: fake-2\u0085:CAPTURED_BY: arcology-oracle\u0085:END:\n")
    rel = daily.relative_to(roam_dir).as_posix()
    before = snapshot(roam_dir)
    for node_id in ("fake-1", "fake-2"):
        status, unknown = await post(daemon, "/forget", {"id": node_id, "unsaved": [rel]})
        assert status == 404 and "daily" not in unknown["error"], (node_id, status, unknown)
    assert snapshot(roam_dir) == before


async def test_a_private_note_whose_drawer_org_does_not_read_stays_unknown(daemon, roam_dir):
    # Org reads no property drawer after a planning line set off by a no-break space, in
    # one set off by a form feed, or one spelt with a dotless i (Python's upper() folds it
    # to I, Emacs does not); nor a key spelt so: these headings have no ID, so a forget of
    # one tells nothing of the private note, named unsaved or not.
    daily = daily_of(roam_dir)
    captured = ":CAPTURED_BY: arcology-oracle\n:END:\n"
    daily.write_text(
        "#+filetags: :private:\n"
        f"* A\n\u00a0SCHEDULED: <2026-01-01 Thu>\n:PROPERTIES:\n:ID: fake-a\n{captured}"
        f"* B\n\x0c:PROPERTIES:\n:ID: fake-b\n{captured}"
        f"* C\n:PROPERT\u0131ES:\n:ID: fake-c\n{captured}"
        f"* D\n:PROPERTIES:\n:\u0131D: fake-d\n{captured}"
    )
    rel = daily.relative_to(roam_dir).as_posix()
    before = snapshot(roam_dir)
    for node_id in ("fake-a", "fake-b", "fake-c", "fake-d"):
        status, unknown = await post(daemon, "/forget", {"id": node_id, "unsaved": [rel]})
        assert status == 404 and "daily" not in unknown["error"], (node_id, status, unknown)
    assert snapshot(roam_dir) == before
