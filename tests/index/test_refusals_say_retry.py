"""Every 409 of /memorize and /forget says, in ``retry``, whether sending the same request
again in a moment can succeed: against the real daemon and real files, a refusal that
passes (another program has the daily open, Emacs holds it unsaved) says ``true`` and
the same request succeeds once it has passed; one that never will (the capture or the
line above it edited, the user's own heading) says ``false``. A client (the web page's
"Take it back") can only tell them apart by this field: both are 409s in words."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from tests.index.test_write_attacks import U1, post, serve, today_rel, user_daily

PACKAGE = Path(__file__).resolve().parents[2] / "daemon" / "arcology_oracle"


async def test_a_forget_refused_for_a_moment_says_retry_and_one_refused_for_good_does_not(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    daily = roam / today_rel()
    daily.write_text(user_daily())
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, kept = await post(daemon, "/memorize", {"text": "Return the library books", "title": "books"})
        assert status == 200, kept
        status, edited = await post(daemon, "/memorize", {"text": "Water the ferns", "title": "ferns"})
        assert status == 200, edited

        # Another program has the daily open (a sync tool, a second editor): no write lease.
        other = os.open(daily, os.O_RDONLY)
        try:
            before = daily.read_bytes()
            status, refused = await post(daemon, "/forget", {"id": kept["id"]})
        finally:
            os.close(other)
        assert status == 409 and refused["retry"] is True, refused
        assert "open in another program" in refused["error"], refused
        assert daily.read_bytes() == before

        # Emacs holds it with unsaved edits: saved, it can go.
        lock = daily.parent / f".#{daily.name}"
        os.symlink("me@elsewhere.99:1700000000", lock)
        status, refused = await post(daemon, "/forget", {"id": kept["id"]})
        assert status == 409 and refused["retry"] is True, refused
        os.unlink(lock)
        # Passed: the same request succeeds.
        status, done = await post(daemon, "/forget", {"id": kept["id"]})
        assert status == 200, done

        # The user edited the capture's text: it is theirs now, for good.
        daily.write_bytes(daily.read_bytes().replace(b"Water the ferns", b"Water the ferns and the basil"))
        before = daily.read_bytes()
        status, refused = await post(daemon, "/forget", {"id": edited["id"]})
        assert status == 409 and refused["retry"] is False, refused
        assert "edit" in refused["error"], refused
        # The user's own heading.
        status, refused = await post(daemon, "/forget", {"id": U1})
        assert status == 409 and refused["retry"] is False, refused
        assert daily.read_bytes() == before
    finally:
        daemon.stop()


async def test_a_capture_refused_while_both_notes_are_held_says_retry(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    daily = roam / today_rel()
    daily.write_text(user_daily())
    (roam / "inbox.org").write_text("#+title: Inbox\n")
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        for note in (daily, roam / "inbox.org"):
            os.symlink("me@elsewhere.99:1700000000", note.parent / f".#{note.name}")
        status, refused = await post(daemon, "/memorize", {"text": "Call the plumber"})
        assert status == 409 and refused["retry"] is True, refused
        # A note that is not UTF-8 never takes a capture.
        os.unlink(roam / ".#inbox.org")
        (roam / "inbox.org").write_bytes(b"#+title: Inbox\n\xe9t\xe9\n")
        status, refused = await post(daemon, "/memorize", {"text": "Call the plumber"})
        assert status == 409 and refused["retry"] is False and "UTF-8" in refused["error"], refused
    finally:
        daemon.stop()


def test_every_conflict_raised_says_whether_to_retry():
    # A new refusal must decide: Conflict has no default, and this finds a call that
    # would only fail (TypeError, a 500) the day it is raised.
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Conflict":
                if not any(k.arg == "retry" for k in node.keywords):
                    missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert missing == []
