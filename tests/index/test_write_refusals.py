"""POST /memorize and /forget where the write must refuse or adapt, against the app in
process (so that a second writer or a failing system call can be simulated exactly where
it hurts) and, for the read-only directory, the real daemon: a capture the user copied, a
capture appended without a write lease while another program appends, a daily its
directory will not let go, daily paths no file system holds, a capture saved by an Emacs
that deletes trailing whitespace or swaps tabs and spaces (whitespace-cleanup). Every byte
of the notes is compared before and after."""

from __future__ import annotations

import datetime
import errno
import os
import subprocess

import pytest

from arcology_oracle.index import note_io
from arcology_oracle.notes import capture
from arcology_oracle.notes.reader import read_org_bytes
from tests.emacs_batch import emacs_env, run_emacs
from tests.index.test_write_attacks import NO_DAC, post, serve, today_rel

THEIRS = b"their line without newline"


def tree(root) -> dict[str, bytes | str]:
    """Every file's bytes, every directory and every symlink below ``root``."""
    found: dict[str, bytes | str] = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                found[rel] = "-> " + os.readlink(path)
            elif os.path.isdir(path):
                found[rel] = "dir"
            else:
                with open(path, "rb") as fh:
                    found[rel] = fh.read()
    return found


async def call(client, path: str, body: dict) -> tuple[int, dict]:
    resp = await client.post(path, json=body)
    return resp.status, await resp.json()


def daily_of(roam_dir):
    daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(exist_ok=True)
    return daily


async def test_a_capture_copied_within_its_file_is_not_forgotten(client, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* A\n")
    status, body = await call(client, "/memorize", {"text": "Ask about the pangolin enclosure"})
    assert status == 200, body
    captured = daily.read_bytes()[len(b"* A\n") :]
    # The user pastes a copy of the capture above a heading of theirs.
    daily.write_bytes(b"* A\n" + captured + b"* B\n" + captured)
    before = tree(roam_dir)
    status, refused = await call(client, "/forget", {"id": body["id"]})
    assert status == 409, refused
    assert "copied" in refused["error"] and "by hand" in refused["error"] and body["id"] in refused["error"]
    assert tree(roam_dir) == before
    # Once the copy is gone, the capture is forgotten as usual.
    daily.write_bytes(b"* A\n* B\n" + captured)
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == b"* A\n* B\n"


async def test_a_private_id_on_two_headings_of_the_user_stays_unknown(client, roam_dir):
    daily = daily_of(roam_dir)
    drawer = b"* Diary :private:\n:PROPERTIES:\n:ID:       0000aaaa-0000-0000-0000-00000000beef\n:END:\nsecret\n"
    daily.write_bytes(drawer + drawer)
    before = tree(roam_dir)
    status, body = await call(client, "/forget", {"id": "0000aaaa-0000-0000-0000-00000000beef"})
    assert status == 404, body
    assert tree(roam_dir) == before


async def test_an_unleased_capture_is_not_glued_to_a_line_appended_meanwhile(client, roam_dir, monkeypatch):
    daily = daily_of(roam_dir)
    mine = b"* Morning\nCoffee.\n"
    daily.write_bytes(mine)
    render = capture.render_capture
    meanwhile = [True]

    def another_program_appends(*args, **kwargs):  # between the daemon's read and its write
        if meanwhile and meanwhile.pop():
            with open(daily, "ab") as fh:
                fh.write(THEIRS)
        return render(*args, **kwargs)

    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    monkeypatch.setattr(capture, "render_capture", another_program_appends)
    status, body = await call(client, "/memorize", {"text": "remember the kinkajou"})
    assert status == 200, body
    data = daily.read_bytes()
    assert data.startswith(mine + THEIRS + b"\n* remember the kinkajou\n"), data
    assert data.split(b"\n")[body["line"] - 1] == b"* remember the kinkajou"
    monkeypatch.undo()
    # The capture's hash covers the end of the line it landed after (index/unleased_lead.py),
    # so forgetting it leaves that line as the other program wrote it.
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == mine + THEIRS


async def test_an_unleased_capture_is_indexed_where_it_is(client, roam_dir, monkeypatch):
    # Unleased, the capture follows an empty line of its own: the index's lines must be
    # those of a whole read of the file (the appended-only reading counted them wrong).
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Morning\nCoffee.\n")
    rel = str(daily.relative_to(roam_dir))
    await client.index.index_paths([rel])  # indexed as it was: the capture is read alone
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    status, body = await call(client, "/memorize", {"text": "remember the kinkajou"})
    assert status == 200, body
    indexed = await client.index.read(lambda s: [(h["title"], h["start_line"], h["end_line"]) for h in s.file_headings(rel)])
    whole = read_org_bytes(daily.read_bytes(), rel)
    assert indexed == [(h.title, h.start_line, h.end_line) for h in whole.headings if h.level > 0]
    assert ("remember the kinkajou", body["line"]) in [(t, start) for t, start, _ in indexed]


async def add_to_line_two_and_save_trimming(daily, tmp_path) -> None:
    """The user types " and more" at the end of the daily's second line and saves it in
    batch Emacs with ``delete-trailing-whitespace`` on ``before-save-hook`` (a common
    setup)."""
    elisp = (
        f'(with-current-buffer (find-file "{daily}") (add-hook (quote before-save-hook) (quote delete-trailing-whitespace))'
        ' (goto-char (point-min)) (forward-line 1) (end-of-line) (insert " and more") (save-buffer))'
    )
    code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
    assert code == 0, out


def fails_after(n: int, err: int, real):
    """``note_io.write_all`` whose first call writes ``n`` bytes of what it is given,
    then fails; the next calls write (space freed, a passing I/O error)."""
    calls = []

    def write_all(fd, data, offset=None):
        calls.append(len(data))
        if len(calls) > 1:
            return real(fd, data, offset)
        real(fd, data[:n], offset)
        raise OSError(err, os.strerror(err))

    return write_all


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EIO])
async def test_a_capture_that_fails_part_way_is_taken_back(client, roam_dir, monkeypatch, err):
    # The disk full in the middle of the append: no half heading is left in the note.
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Morning\nCoffee.\n")
    monkeypatch.setattr(note_io, "write_all", fails_after(30, err, note_io.write_all))
    status, body = await call(client, "/memorize", {"text": "remember the kinkajou " * 20})
    assert status == 409 and "nothing was written" in body["error"] and os.strerror(err) in body["error"], body
    assert daily.read_bytes() == b"* Morning\nCoffee.\n"


async def test_a_first_capture_that_fails_leaves_no_empty_daily(client, roam_dir, monkeypatch):
    # The daily did not exist: a refused capture must not leave it empty, or the next
    # capture finds a file and writes no head (no file ID, no title: no dated note).
    daily = daily_of(roam_dir)
    assert not daily.exists()
    monkeypatch.setattr(note_io, "write_all", fails_after(30, errno.ENOSPC, note_io.write_all))
    status, body = await call(client, "/memorize", {"text": "first try okapi"})
    assert status == 409, body
    assert not daily.exists()
    monkeypatch.undo()
    status, body = await call(client, "/memorize", {"text": "second try okapi"})
    assert status == 200, body
    assert daily.read_text().startswith(":PROPERTIES:\n:ID:")


async def test_a_forget_that_fails_part_way_puts_the_note_back(client, roam_dir, monkeypatch):
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Morning\nCoffee.\n")
    status, body = await call(client, "/memorize", {"text": "remember the kinkajou"})
    assert status == 200, body
    with open(daily, "ab") as fh:  # the user goes on writing after the capture
        fh.write(b"* User heading after it\n" + b"a user line\n" * 40)
    before = daily.read_bytes()
    monkeypatch.setattr(note_io, "write_all", fails_after(100, errno.EIO, note_io.write_all))
    status, refused = await call(client, "/forget", {"id": body["id"]})
    assert status == 409 and "not changed" in refused["error"], refused
    assert daily.read_bytes() == before
    monkeypatch.undo()
    note_io.prepare_leases()
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone


async def test_a_daily_linked_to_a_note_emacs_has_unsaved_edits_in_sends_the_capture_to_the_inbox(client, roam_dir):
    # Emacs locks a file beside its true name: the daily, a symlink in the dailies folder,
    # is locked beside the note it leads to (visited through the link all the same).
    daily = daily_of(roam_dir)
    (roam_dir / "kept").mkdir()
    target = roam_dir / "kept" / "today.org"
    target.write_bytes(b"#+title: today\n* Being edited in Emacs\n")
    daily.symlink_to(os.path.join("..", "kept", "today.org"))
    os.symlink("user@elsewhere.4242:1700000000", roam_dir / "kept" / ".#today.org")
    before = tree(roam_dir)
    status, body = await call(client, "/memorize", {"text": "remember the okapi"})
    assert status == 200, body
    assert body["inbox"] is True and body["file"] == "inbox.org" and "locked" in body["note"], body
    after = tree(roam_dir)
    assert {rel for rel in after if after[rel] != before.get(rel)} == {"inbox.org"}  # the note untouched


async def test_a_capture_never_makes_the_notes_directory_anew(client, roam_dir):
    # The notes folder moved away (or a drive not mounted): restoring it must not find a
    # new folder in its place, nor a capture hidden under a mount point.
    moved = roam_dir.with_name("roam.bak")
    roam_dir.rename(moved)
    try:
        status, body = await call(client, "/memorize", {"text": "remember the kinkajou"})
        assert status == 409 and "does not exist" in body["error"], body
        assert not roam_dir.exists()
    finally:
        moved.rename(roam_dir)


async def test_a_capture_the_index_cannot_take_is_still_a_capture(client, roam_dir, monkeypatch):
    # The note is written; a broken index must not turn that into an error a client
    # retries (which wrote the capture twice).
    from arcology_oracle.store.db import DatabaseError

    async def broken(*args, **kwargs):
        raise DatabaseError("database disk image is malformed")

    monkeypatch.setattr(client.index, "index_paths", broken)
    monkeypatch.setattr(client.index, "index_appended", broken)
    status, body = await call(client, "/memorize", {"text": "remember the kinkajou"})
    assert status == 200 and body["indexed"] is False and "index could not take it" in body["note"], body
    assert b"remember the kinkajou" in daily_of(roam_dir).read_bytes()


async def test_a_created_daily_that_cannot_be_deleted_is_a_409_and_unchanged(client, roam_dir, monkeypatch):
    status, body = await call(client, "/memorize", {"text": "The only capture of the day, an okapi"})
    assert status == 200, body
    daily = roam_dir / body["file"]
    before = tree(roam_dir)
    for name in ("unlink", "rename"):  # the name can be neither deleted nor moved
        real = getattr(os, name)

        def read_only_directory(path, *args, real=real, **kwargs):
            if os.fspath(path) == os.fspath(daily):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, read_only_directory)
    status, refused = await call(client, "/forget", {"id": body["id"]})
    assert status == 409, refused
    assert "the directory daily" in refused["error"] and "not changed" in refused["error"]
    assert tree(roam_dir) == before


@pytest.mark.timeout(120)
async def test_forget_in_a_read_only_dailies_directory_is_a_409_with_the_real_daemon(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    (roam / "projects.org").write_text("#+title: Projects\n* Kitchen\nThe larder shelves.\n")
    daemon = await serve(tmp_path, roam, fake_ollama, preexec_fn=NO_DAC)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Feed the axolotl at noon"})
        assert status == 200 and body["file"] == today_rel(), body
        os.chmod(roam / "daily", 0o555)
        try:
            before = tree(roam)
            status, refused = await post(daemon, "/forget", {"id": body["id"]})
            assert status == 409, refused
            assert "the directory daily" in refused["error"], refused
            assert tree(roam) == before
        finally:
            os.chmod(roam / "daily", 0o755)
        status, gone = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 200, gone
        assert not (roam / today_rel()).exists()
    finally:
        daemon.stop()


@pytest.mark.parametrize("dailies_dir", [".git/refs/heads", ".git", "notes/.hg", ".svn/x", "a/.GIT/b"])
async def test_a_daily_in_a_version_controls_store_is_a_400_and_the_repository_stays_whole(client, roam_dir, dailies_dir):
    # Before: ".git/refs/heads" made .git/refs/heads/<today>.org, a branch of org text, and
    # "git log --all" in the notes printed "fatal: bad object refs/heads/<today>.org".
    subprocess.run(["git", "init", "-q"], cwd=roam_dir, check=True)
    before = tree(roam_dir)
    status, body = await call(client, "/memorize", {"text": "Into the repository?", "dailies_dir": dailies_dir})
    assert status == 400, body
    assert "nothing was written" in body["error"], body
    assert tree(roam_dir) == before
    log = subprocess.run(["git", "log", "--all"], cwd=roam_dir, capture_output=True, text=True)
    assert "bad object" not in log.stderr, log.stderr


@pytest.mark.parametrize(
    "dailies_dir",
    ["deep/" + "/".join(["d" * 200] * 20), "newdir/" + "x" * 300, "x" * 256],
    ids=["path-too-long", "name-too-long", "first-name-too-long"],
)
async def test_daily_paths_no_file_system_holds_are_a_400_creating_nothing(client, roam_dir, dailies_dir):
    before = tree(roam_dir)
    status, body = await call(client, "/memorize", {"text": "Nowhere to go", "dailies_dir": dailies_dir})
    assert status == 400, body
    assert "nothing was written" in body["error"]
    assert tree(roam_dir) == before


@pytest.mark.timeout(120)
async def test_a_capture_saved_by_an_emacs_that_deletes_trailing_whitespace_is_forgotten(client, roam_dir, tmp_path):
    # Text pasted with blanks at line ends, and a title ending like tags: the user edits
    # their own heading and saves the daily in an Emacs with delete-trailing-whitespace
    # on before-save-hook (a common setup). The capture, never edited, must still be
    # forgotten, and their edit kept.
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Mine\nmy text\n")
    status, body = await call(client, "/memorize", {"text": "pasted from a page   \nsecond line\t\n", "title": "see :work:"})
    assert status == 200, body
    await add_to_line_two_and_save_trimming(daily, tmp_path)
    assert daily.read_bytes().startswith(b"* Mine\nmy text and more\n* see :work")
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == b"* Mine\nmy text and more\n"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("indent_tabs_mode", ["nil", "t"])
async def test_a_capture_saved_by_an_emacs_whose_whitespace_cleanup_swaps_tabs_and_spaces_is_forgotten(
    client, roam_dir, tmp_path, indent_tabs_mode
):
    # Text with tabs (and an indented line of 8 spaces): the user edits their own heading
    # and saves the daily in an Emacs with whitespace-cleanup on before-save-hook, which
    # turns leading tabs into spaces (indent-tabs-mode nil) or 8 leading spaces into a tab
    # (t). The capture, never edited, answered 409 ("its text was edited"); the one whose
    # text the user did edit must still be refused, every byte of it kept.
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Mine\nmy text\n")
    text = "steps:\n\tfirst\tstep\n  \tsecond\n        third\n\u65e5\u672c \tCJK\n"
    status, body = await call(client, "/memorize", {"text": text, "title": "steps"})
    assert status == 200, body
    status, theirs = await call(client, "/memorize", {"text": "\tmy word\n        more", "title": "theirs"})
    assert status == 200, theirs
    written = daily.read_bytes()
    assert b"\n\tfirst\tstep\n  \tsecond\n        third\n" in written  # as sent
    elisp = (
        f'(with-current-buffer (find-file "{daily}") (setq indent-tabs-mode {indent_tabs_mode})'
        " (add-hook (quote before-save-hook) (quote whitespace-cleanup) nil t)"
        ' (goto-char (point-min)) (forward-line 1) (end-of-line) (insert " and more")'
        ' (search-forward "my word") (replace-match "my own word") (save-buffer))'
    )
    code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
    assert code == 0, out
    saved = daily.read_bytes()
    mine = b"* Mine\nmy text and more\n"
    ours, rest = saved[len(mine) :].split(b"* theirs", 1)
    assert saved.startswith(mine) and ours != written[len(b"* Mine\nmy text\n") : written.index(b"* theirs")]
    before = tree(roam_dir)
    status, refused = await call(client, "/forget", {"id": theirs["id"]})
    assert status == 409 and "edited" in refused["error"], refused
    assert tree(roam_dir) == before
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == mine + b"* theirs" + rest  # only the capture's bytes went
    before[os.path.relpath(daily, roam_dir)] = mine + b"* theirs" + rest
    assert tree(roam_dir) == before
    read = "(progn (find-file (car command-line-args-left)) (princ (org-map-entries (lambda () (org-get-heading t t t t)))))"
    code, out = await run_emacs(["--eval", read, str(daily)], env=emacs_env(tmp_path))
    assert code == 0 and out.strip().endswith("(Mine theirs)"), out


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "daily_bytes, leased",
    [(b"", False), (b"\xef\xbb\xbf", False), (b"\n", False), (b"\r\n", False), (b"  \t", True)],
    ids=["empty", "bom-only", "an-empty-line", "an-empty-crlf-line", "blanks-without-a-line-ending"],
)
async def test_a_capture_whose_separator_a_whitespace_cleanup_deleted_at_the_files_start_is_forgotten(
    client, roam_dir, tmp_path, monkeypatch, daily_bytes, leased
):
    # A daily holding no text (empty, or blank lines only): the capture's separator (and
    # the daily's own blank lines) stand at the top of the file, where a save by an Emacs
    # with whitespace-cleanup on before-save-hook deletes every empty line. The user types
    # a heading of theirs below the capture and saves; the capture, never edited, must
    # still be forgotten, and every byte of what Emacs saved but the capture's kept.
    daily = daily_of(roam_dir)
    daily.write_bytes(daily_bytes)
    if not leased:  # another program has the daily open: the capture starts with a line ending
        monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    status, body = await call(client, "/memorize", {"text": "Water the ferns\nand the moss", "title": "ferns"})
    assert status == 200, body
    monkeypatch.undo()
    note_io.prepare_leases()
    written = daily.read_bytes()
    eol = b"\r\n" if b"\r\n" in written else b"\n"
    subtree = written[written.index(b"* ferns") :]
    bom = b"\xef\xbb\xbf" if daily_bytes.startswith(b"\xef\xbb\xbf") else b""
    assert written[len(bom) : -len(subtree)].strip(b" \t\r\n") == b"" and written != bom + subtree  # a blank lead
    elisp = (
        f'(with-current-buffer (find-file "{daily}") (add-hook (quote before-save-hook) (quote whitespace-cleanup) nil t)'
        ' (goto-char (point-max)) (insert "* Mine\nmy text\n") (save-buffer))'
    )
    code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
    assert code == 0, out
    mine = b"* Mine" + eol + b"my text" + eol
    assert daily.read_bytes() == bom + subtree + mine  # the blank lines at the top are gone
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == bom + mine  # only the capture's bytes went
    read = "(progn (find-file (car command-line-args-left)) (princ (org-map-entries (lambda () (org-get-heading t t t t)))))"
    code, out = await run_emacs(["--eval", read, str(daily)], env=emacs_env(tmp_path))
    assert code == 0 and out.strip().endswith("(Mine)"), out


@pytest.mark.timeout(300)
@pytest.mark.parametrize("leased", [True, False], ids=["leased", "another-program-has-it-open"])
async def test_a_forget_never_puts_the_users_mode_line_first_in_the_file(tmp_path, fake_ollama, leased):
    # A capture into an empty daily is its first line: with a write lease it starts the
    # file; without one (another program has the daily open) after an empty line, which a
    # save through whitespace-cleanup deletes. The user writes a heading of their own
    # below it that holds a -*- ... -*- (inert there: Emacs reads a file's mode, coding
    # and variables only from its first line). Forgetting the capture would make that
    # heading the file's first line: the daily would open in text-mode, no longer Org.
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    (roam / "projects.org").write_text("#+title: Projects\n* Kitchen\nThe larder shelves.\n")
    daily = roam / today_rel()
    daily.write_bytes(b"")
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        other = None if leased else os.open(daily, os.O_RDONLY)  # the kernel grants no lease then
        try:
            status, body = await post(daemon, "/memorize", {"text": "Water the ferns", "title": "ferns"})
        finally:
            if other is not None:
                os.close(other)
        assert status == 200, body
        assert daily.read_bytes().startswith(b"* ferns\n" if leased else b"\n* ferns\n")
        elisp = (
            f'(with-current-buffer (find-file "{daily}") (add-hook (quote before-save-hook) (quote whitespace-cleanup) nil t)'
            ' (goto-char (point-max)) (insert "* Emacs -*- mode: text -*- sets the mode on line 1\nmy text\n") (save-buffer))'
        )
        code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
        assert code == 0, out
        saved = daily.read_bytes()
        assert saved.startswith(b"* ferns\n") and saved.endswith(b"\n* Emacs -*- mode: text -*- sets the mode on line 1\nmy text\n")
        before = tree(roam)
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409, refused
        assert "-*-" in refused["error"] and "your line 9" in refused["error"], refused
        assert tree(roam) == before
        mode = "(progn (find-file (car command-line-args-left)) (princ major-mode))"
        code, out = await run_emacs(["--eval", mode, str(daily)], env=emacs_env(tmp_path))
        assert code == 0 and out.strip().endswith("org-mode"), out
    finally:
        daemon.stop()


@pytest.mark.timeout(300)
async def test_a_line_typed_above_a_capture_once_the_blank_line_it_ended_was_deleted_is_the_users(tmp_path, fake_ollama):
    # A daily holding only blanks, without a line ending: the capture's separator ends
    # that line. The user deletes the line (with that separator: a save's whitespace-cleanup
    # does too) and types a line of their own above the heading: its line ending is the
    # user's, and the forget took it as the separator (leaving 'my line' without one).
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    daily = roam / today_rel()
    daily.write_bytes(b"  \t")
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Water the ferns", "title": "ferns"})
        assert status == 200, body
        written = daily.read_bytes()
        assert written.startswith(b"  \t\n* ferns\n")
        elisp = (f'(with-current-buffer (find-file "{daily}") (goto-char (point-min)) (kill-whole-line)'
                 ' (insert "my line\n") (save-buffer))')  # fmt: skip
        code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
        assert code == 0, out
        assert daily.read_bytes() == b"my line\n" + written[len(b"  \t\n") :]
        before = tree(roam)
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409 and "line above it" in refused["error"], refused  # was 200, b"my line" left
        assert tree(roam) == before
        read = "(progn (find-file (car command-line-args-left)) (princ (org-map-entries (lambda () (org-get-heading t t t t)))))"
        code, out = await run_emacs(["--eval", read, str(daily)], env=emacs_env(tmp_path))
        assert code == 0 and out.strip().endswith("(ferns)"), out
    finally:
        daemon.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("blanks", ["\u3000", "\u00a0", "\t\u3000 "], ids=["ideographic-space", "no-break-space", "mixed"])
async def test_a_capture_after_a_last_line_of_blanks_emacs_deletes_is_forgotten_once_saved(client, roam_dir, tmp_path, blanks):
    # The daily's last line holds blanks only, without a line ending: an ideographic or
    # no-break space, which Emacs's delete-trailing-whitespace (a common before-save-hook)
    # deletes at a line's end as it does spaces and tabs. The capture's separator ends that
    # line; the save leaves it empty. The capture, never edited, answered 409 ('the line
    # above it was deleted or written on'): the line was counted as text when captured.
    daily = daily_of(roam_dir)
    mine = f"* Mine\nmy text\n{blanks}".encode()
    daily.write_bytes(mine)
    status, body = await call(client, "/memorize", {"text": "Water the ferns", "title": "ferns"})
    assert status == 200, body
    assert daily.read_bytes().startswith(mine + b"\n* ferns\n")
    await add_to_line_two_and_save_trimming(daily, tmp_path)
    assert daily.read_bytes().startswith(b"* Mine\nmy text and more\n\n* ferns\n")
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    # The user's bytes, their blanks deleted by their save; the separator that ended that
    # line stays (after a line of blanks left empty, it may be the user's).
    assert daily.read_bytes() == b"* Mine\nmy text and more\n\n"


@pytest.mark.timeout(120)
async def test_a_line_of_blanks_killed_above_a_capture_never_takes_the_users_empty_line(client, roam_dir, tmp_path):
    # The daily ends with an empty line, then a line of blanks without a line ending (as
    # an indented RET leaves it). The capture's separator ends that line. The user kills
    # the line of blanks, its line ending with it (kill-whole-line): the line ending left
    # above the capture is the one of the user's empty line. The forget took it, as it
    # takes the separator of a line of blanks a save emptied (the same bytes); the user's
    # empty line was lost ('* Mine\nmy text\n'). It stays now: after a line of blanks left
    # empty, the line ending above the capture may be the user's.
    daily = daily_of(roam_dir)
    daily.write_bytes(b"* Mine\nmy text\n\n  ")
    status, body = await call(client, "/memorize", {"text": "Water the ferns", "title": "ferns"})
    assert status == 200, body
    assert daily.read_bytes().startswith(b"* Mine\nmy text\n\n  \n* ferns\n")
    elisp = (f'(with-current-buffer (find-file "{daily}") (goto-char (point-min)) (forward-line 3)'
             ' (kill-whole-line) (save-buffer))')  # fmt: skip
    code, out = await run_emacs(["--eval", elisp], env=emacs_env(tmp_path))
    assert code == 0, out
    assert daily.read_bytes().startswith(b"* Mine\nmy text\n\n* ferns\n")
    status, gone = await call(client, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.read_bytes() == b"* Mine\nmy text\n\n"  # the user's bytes, their line of blanks killed
