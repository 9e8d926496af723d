"""Two captures written into one daily while another program held it open, forgotten
through the real daemon (with the fake Ollama). Without a write lease each capture
starts with a line ending (note_io), so each stands after an empty line of its own, and
in Org the first one's subtree ends with the empty line that is the second's separator.
Each must be forgotten on its own, in either order, with a save of the user's between
the two forgets; a line the user typed between the two is theirs, and both forgets are
then refused. An older version's capture written so, whose hash covered its separator
alone, never takes the line ending of a line the user typed above it. Every byte of the
notes is compared, and Emacs's Org reads the daily."""

from __future__ import annotations

import contextlib
import datetime
import os
from unittest import mock

import pytest

from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import file_eol, make_capture, new_file_head, plan_forget, render_capture

from tests.emacs_batch import emacs_env, run_emacs
from tests.index.test_write_attacks import post, roam, serve, today_rel, user_daily  # noqa: F401 (roam: a fixture)
from tests.index.test_write_refusals import tree

pytestmark = pytest.mark.timeout(300)

HEADINGS = ("(progn (find-file (car command-line-args-left))"
            " (princ (org-map-entries (lambda () (org-get-heading t t t t)))))")


async def capture_held_open(daemon, daily, text: str, title: str) -> dict:
    """``text`` captured while another program has ``daily`` open (no lease is granted)."""
    other = os.open(daily, os.O_RDONLY)
    try:
        status, body = await post(daemon, "/memorize", {"text": text, "title": title})
    finally:
        os.close(other)
    assert status == 200 and body["file"] == today_rel(), body
    return body


async def org_headings(tmp_path, daily) -> str:
    code, out = await run_emacs(["--eval", HEADINGS, str(daily)], env=emacs_env(tmp_path))
    assert code == 0, out
    return out.strip().splitlines()[-1]


async def two_captures(daemon, roam):  # noqa: F811
    """The daily, the user's bytes and the two captures' bodies and bytes."""
    daily = roam / today_rel()
    mine = user_daily().encode()
    daily.write_bytes(mine)
    ferns = await capture_held_open(daemon, daily, "Water the ferns", "ferns")
    newts = await capture_held_open(daemon, daily, "Feed the newts", "newts")
    data = daily.read_bytes()
    first = data[len(mine) + 1 : data.index(b"\n\n* newts") + 1]
    second = data[data.index(b"* newts") :]
    # Each after an empty line of its own: its separator, which the capture's hash covers.
    assert data == mine + b"\n" + first + b"\n" + second and first.startswith(b"* ferns\n"), data
    return daily, mine, (ferns, first), (newts, second)


@pytest.mark.parametrize("edit", [False, True], ids=["untouched", "the-user-saves-between-the-forgets"])
@pytest.mark.parametrize("order", ["first-then-second", "second-then-first"])
async def test_two_captures_written_without_a_lease_are_each_forgotten(
    tmp_path, roam, fake_ollama, order, edit  # noqa: F811
):
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        daily, mine, (ferns, first), (newts, second) = await two_captures(daemon, roam)
        others = tree(roam)
        del others[today_rel()]
        (gone, stays), left = (ferns, newts), b"\n" + second  # what the file keeps after the user's bytes
        if order == "second-then-first":
            (gone, stays), left = (newts, ferns), b"\n" + first
        status, body = await post(daemon, "/forget", {"id": gone["id"]})
        assert status == 200, body
        assert daily.read_bytes() == mine + left  # exactly the one capture's bytes went
        assert await org_headings(tmp_path, daily) == f"(Morning walk Plans Diary {stays['title']})"
        assert (await daemon.get_json(f"/nodes/{gone['id']}"))[0] == 404
        assert (await daemon.get_json(f"/nodes/{stays['id']}"))[0] == 200
        if edit:  # the user edits a line of their own and saves, between the two forgets
            elisp = (f'(with-current-buffer (find-file "{daily}") (search-forward "quinceberry jam")'
                     ' (insert " and scones") (save-buffer))')  # fmt: skip
            code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
            assert code == 0, out
            mine = mine.replace(b"quinceberry jam", b"quinceberry jam and scones")
            assert daily.read_bytes() == mine + left
        status, body = await post(daemon, "/forget", {"id": stays["id"]})
        assert status == 200, body
        assert daily.read_bytes() == mine  # the daily as the user wrote it, byte for byte
        assert tree(roam) == {**others, today_rel(): mine}
        assert await org_headings(tmp_path, daily) == "(Morning walk Plans Diary)"
    finally:
        daemon.stop()


async def test_a_line_the_user_typed_between_two_captures_keeps_both(tmp_path, roam, fake_ollama):  # noqa: F811
    # The empty line between the two is the second capture's separator; a line typed
    # into it is under the first capture in Org (its text now) and stands where the
    # second's separator was: neither forget can tell its bytes from the user's.
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        daily, mine, (ferns, first), (newts, second) = await two_captures(daemon, roam)
        elisp = (f'(with-current-buffer (find-file "{daily}") (search-forward "* newts") (forward-line -1)'
                 ' (insert "my own line") (save-buffer))')  # fmt: skip
        code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
        assert code == 0, out
        typed = mine + b"\n" + first + b"my own line\n" + second
        assert daily.read_bytes() == typed
        before = tree(roam)
        for captured in (ferns, newts):
            status, body = await post(daemon, "/forget", {"id": captured["id"]})
            assert status == 409, body
            assert tree(roam) == before
        assert await org_headings(tmp_path, daily) == "(Morning walk Plans Diary ferns newts)"
    finally:
        daemon.stop()



BOM, REL = b"\xef\xbb\xbf", "daily/d.org"
DAILIES = (None, "", "\n", "x", "x\n", "x\n\n", "* Mine\nx\n")


def append_held_open(root, title: str, head: bytes | None, leased: bool) -> str:
    """A capture appended by note_io (as /memorize does), with a write lease or without
    one (as when another program holds the daily open); its ID."""
    entry = make_capture(f"About the {title}", title=title, tags=(), now=datetime.datetime(2026, 3, 14, 9, 26))

    def build(eol: bytes, lead: bytes, real: str) -> bytes:
        return render_capture(entry, rel=real, eol=eol, lead=lead)

    with mock.patch.object(note_io, "take_lease", lambda fd, attempts: False) if not leased else contextlib.nullcontext():
        note_io.append_note(root, REL, build, head)
    return entry.id


@pytest.mark.parametrize("first_leased", [False, True], ids=["first-held-open", "first-leased"])
@pytest.mark.parametrize(
    "daily, crlf, bom",
    # No daily: the capture creates it, with LF and no BOM, so it has no other shape.
    [pytest.param(None, False, False, id="None")]
    + [
        pytest.param(d, crlf, bom, id=f"{d!r}-{name}")
        for d in DAILIES[1:]
        for name, crlf, bom in (("lf", False, False), ("crlf", True, False), ("bom", False, True))
    ],
)
def test_a_capture_before_one_written_without_a_lease_is_forgotten_after_any_daily(tmp_path, daily, crlf, bom, first_leased):
    # The same, in process, for each shape of daily (none, empty, text with or without a
    # final line ending): the second capture is written without a lease, the first
    # either way. Both forgets go through in either order, and what is left is the daily
    # as it was, or with the line ending the first capture's separator put after the
    # user's last line (forgotten before a later heading, it stays, as it always did),
    # or, where the first capture created the daily, its head or no file.
    eol = b"\r\n" if crlf else b"\n"
    before = None if daily is None else (BOM if bom else b"") + daily.encode().replace(b"\n", eol)
    head = new_file_head("2026-03-14").encode() if before is None else None
    eol = file_eol(before) if before else b"\n"  # a daily without a line ending gets LF
    if before is None:
        allowed = {b"", head}
    elif before.removeprefix(BOM).endswith(eol) or not before.removeprefix(BOM):
        allowed = {before}
    else:
        allowed = {before, before + eol}
    note_io.prepare_leases()
    for order in ("first-then-second", "second-then-first"):
        root = tmp_path / order
        (root / "daily").mkdir(parents=True)
        if before is not None:
            (root / REL).write_bytes(before)
        ids = [append_held_open(root, "ferns", head, first_leased), append_held_open(root, "newts", head, False)]
        data = (root / REL).read_bytes()
        for node_id in ids if order == "first-then-second" else ids[::-1]:
            removal = plan_forget(data, REL, node_id)  # first-then-second, on the code before: Changed (a 409)
            assert removal is not None
            assert not removal.whole_file or before is None
            data = b"" if removal.whole_file else data[: removal.start] + data[removal.end :]
        assert data in allowed, (order, data)


@pytest.mark.parametrize("mine, typed", [(b"", b"my line\n"), (b"* Mine\nmy text\n", b"")],
                         ids=["into-an-empty-daily", "after-a-final-line-ending"])  # fmt: skip
async def test_an_older_versions_capture_never_takes_the_line_ending_of_the_users_line_above(
    tmp_path, roam, fake_ollama, mine, typed  # noqa: F811
):
    # An older version, without a lease, wrote an empty line then the capture, and hashed
    # that line's ending alone (its 'separator'), after any daily. The user deletes the
    # empty line in Emacs (and types a line of their own above the heading): the line
    # ending above the capture is the user's now, the very bytes of an untouched capture
    # of that version after a last line without its ending. The forget took it, leaving
    # the user's line without one; now it leaves it (it cannot tell), and takes the rest.
    daily = roam / today_rel()
    entry = make_capture("Water the ferns", title="ferns", tags=(), now=datetime.datetime(2026, 3, 14, 9, 26))
    daily.write_bytes(mine + render_capture(entry, rel=today_rel(), eol=b"\n", lead=b"\n"))
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        elisp = (f'(with-current-buffer (find-file "{daily}") (search-forward "* ferns") (forward-line -1)'
                 f' (delete-char 1) (insert "{typed.decode().strip()}") (unless (bolp) (insert "\\n")) (save-buffer))')  # fmt: skip
        code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
        assert code == 0, out
        subtree = render_capture(entry, rel=today_rel(), eol=b"\n", lead=b"\n")[1:]
        assert daily.read_bytes() == mine + typed + subtree
        others = tree(roam)
        status, body = await post(daemon, "/forget", {"id": entry.id})
        assert status == 200, body
        assert daily.read_bytes() == mine + typed  # was: the user's last line without its line ending
        assert tree(roam) == {**others, today_rel(): mine + typed}
        assert await org_headings(tmp_path, daily) == ("(Mine)" if mine else "nil")
    finally:
        daemon.stop()


@pytest.mark.parametrize("daily", [d for d in DAILIES if d is None or d.endswith("\n") or not d], ids=repr)
async def test_a_capture_written_without_a_lease_then_one_with_leave_no_empty_line_once_forgotten(tmp_path, daily):
    # The first capture, written while another program held the daily open, made an
    # empty line before its heading; the second, leased, follows it directly. Forgotten
    # first, before the second's heading, it took its heading and text but left that
    # empty line, which the second's forget did not cover: every such pair and its
    # forgets left one more empty line in the daily. Now the first takes its empty line
    # (Org still reads the second as a heading after it) and three rounds give the daily
    # back byte for byte.
    before = None if daily is None else daily.encode()
    head = new_file_head("2026-03-14").encode() if before is None else None
    note_io.prepare_leases()
    (tmp_path / "daily").mkdir()
    if before is not None:
        (tmp_path / REL).write_bytes(before)
    for round_ in range(3):
        ids = [append_held_open(tmp_path, "ferns", head, False), append_held_open(tmp_path, "newts", head, True)]
        for node_id in ids:
            forget = note_io.remove_from_note(tmp_path, REL, lambda data, real, node_id=node_id: plan_forget(data, real, node_id))
            assert forget is not None
            if round_ == 0 and node_id == ids[0]:
                mine = "Mine " if daily and "* Mine" in daily else ""
                assert await org_headings(tmp_path, tmp_path / REL) == f"({mine}newts)"
        left = (tmp_path / REL).read_bytes() if (tmp_path / REL).exists() else None
        assert left in ({before} if before is not None else {None, head}), left
