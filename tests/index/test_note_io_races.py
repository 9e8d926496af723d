"""index/note_io.py where it cannot rely on a write lease or on the directory: a capture
appended without a lease after the user's edits (another program appending meanwhile:
test_unleased_lead.py), a daily the daemon created that
its read-only directory will not let go, a directory that cannot all be created, a note
and folders created for a capture that is then refused (a umask, a full disk), a note
another program holds a lease on (an NFS or Samba server). Real
files; every byte is compared before and after."""

from __future__ import annotations

import datetime
import errno
import os

import pytest

from arcology_oracle.errors import Conflict
from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import Changed, make_capture, plan_forget, render_capture
from arcology_oracle.notes.disk import emacs_holds_lock
from tests.index.test_write_refusals import tree

NOW = datetime.datetime(2026, 3, 14, 9, 26)
REL = "daily/d.org"


@pytest.fixture(autouse=True)
def leases():
    note_io.prepare_leases()


@pytest.fixture
def root(tmp_path):
    (tmp_path / "daily").mkdir()
    return tmp_path


def append(root, *, meanwhile=None, head=None, rel=REL):
    """Append a capture; ``meanwhile()`` runs once between the read of the note and the write
    (where another program's append would land without a lease)."""
    entry = make_capture("remember the milk", title=None, tags=(), now=NOW, node_id="c-1")
    waiting = [meanwhile] if meanwhile else []

    def build(eol, lead, real):
        if waiting:
            waiting.pop()()
        return render_capture(entry, rel=real, eol=eol, lead=lead)

    return note_io.append_note(root, rel, build, head)


def forget(root, rel=REL):
    return note_io.remove_from_note(root, rel, lambda data, real: plan_forget(data, real, "c-1"))


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_a_forget_after_the_empty_line_before_the_capture_was_deleted_keeps_the_users_line_ending(root, monkeypatch, eol):
    """Without a lease, a capture after a final line ending starts with an empty line; the
    user deletes it. The line ending left before the capture is the user's: a forget
    took it as the capture's separator and left the user's last line without one."""
    path = root / REL
    mine = b"* Mine" + eol + b"text" + eol
    path.write_bytes(mine)
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    append(root)
    assert path.read_bytes().startswith(mine + eol + b"* remember the milk")
    path.write_bytes(path.read_bytes().replace(mine + eol, mine, 1))  # the empty line deleted
    edited = path.read_bytes()
    monkeypatch.undo()
    note_io.prepare_leases()
    with pytest.raises(Changed, match="the empty line above it was deleted"):
        forget(root)
    assert path.read_bytes() == edited


@pytest.mark.parametrize("before", [b"", b"\xef\xbb\xbf"], ids=["empty", "bom"])
def test_a_forget_after_the_first_line_of_an_empty_daily_was_typed_on_keeps_what_the_user_typed(root, monkeypatch, before):
    """Without a lease, a capture into an empty daily starts with an empty line, the
    file's first. The user deletes it and types a line of their own above the heading
    (or types on it): the line ending above the capture may be theirs, which a forget
    took as the capture's separator, leaving their line without its ending."""
    path = root / REL
    path.write_bytes(before)
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    append(root)
    written = path.read_bytes()
    assert written.startswith(before + b"\n* remember the milk\n")
    untouched = plan_forget(written, REL, "c-1")  # nobody touched it: forgotten byte for byte
    assert written[: untouched.start] + written[untouched.end :] == before
    path.write_bytes(written.replace(before + b"\n", before + b"my own line\n", 1))
    edited = path.read_bytes()
    monkeypatch.undo()
    note_io.prepare_leases()
    with pytest.raises(Changed, match="the empty line above it was deleted .or text written there."):
        forget(root)
    assert path.read_bytes() == edited


def test_without_a_lease_and_nobody_meanwhile_forget_restores_every_byte(root, monkeypatch):
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    done = append(root)
    assert path.read_bytes().startswith(mine + b"\n* remember the milk\n") and done.line == 4
    assert done.after is None  # the empty line grew the heading above: the file is indexed whole
    monkeypatch.undo()
    note_io.prepare_leases()
    forget(root)
    assert path.read_bytes() == mine


def test_a_created_daily_its_directory_will_not_let_go_is_refused_unchanged(root, monkeypatch):
    append(root, head=b"#+title: New\n")
    before = tree(root)
    for name in ("unlink", "rename"):  # the name can be neither deleted nor moved
        real = getattr(os, name)

        def read_only_directory(path, *args, real=real, **kwargs):
            if os.fspath(path) == os.fspath(root / REL):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, read_only_directory)
    with pytest.raises(Conflict, match="cannot be deleted from the directory daily .Permission denied.: not changed"):
        forget(root)
    assert tree(root) == before
    monkeypatch.undo()
    forget(root)
    assert not (root / REL).exists()


def test_directories_created_for_a_note_go_again_when_one_cannot_be(root, monkeypatch):
    before = tree(root)
    real_mkdir = os.mkdir

    def full_disk(path, *args, **kwargs):
        if os.path.basename(path) == "sub":
            raise OSError(errno.ENOSPC, "No space left on device", os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", full_disk)
    with pytest.raises(Conflict, match="cannot create the directory newdir/sub: No space left on device: nothing was written$"):
        append(root, rel="newdir/sub/d.org", head=b"#+title: New\n")
    assert tree(root) == before


def test_a_note_that_cannot_be_created_says_nothing_was_written(root, monkeypatch):
    before = tree(root)
    real_open = os.open

    def full_disk(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.ENOSPC, "No space left on device", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", full_disk)
    with pytest.raises(Conflict, match="^cannot create newdir/d.org: No space left on device: nothing was written$"):
        append(root, rel="newdir/d.org", head=b"#+title: New\n")
    assert tree(root) == before  # the folder made for it is gone again


def test_a_lock_name_no_file_system_holds_is_no_lock(tmp_path):
    deep = tmp_path.joinpath(*["d" * 200] * 20, "2026-03-14.org")
    assert emacs_holds_lock(deep) is False
    assert emacs_holds_lock(tmp_path / ("x" * 254 + ".org")) is False


def test_a_note_renamed_over_while_a_capture_is_written_gets_the_capture(root):
    # A sync tool (or an editor's first save with backups) puts a new version in place by
    # renaming it over the note, between the daemon's open and its write: a lease does
    # not stop that. The capture must land in the note the name holds, and the file that
    # lost the name (kept here by a second link, as an editor's backup) must be as it was.
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    old = root / "old-version"
    os.link(path, old)
    theirs = mine + b"- added on the phone\n"
    renamed = []

    def sync_tool_replaces_the_note():
        if not renamed:
            (root / "daily" / ".sync.tmp").write_bytes(theirs)
            os.rename(root / "daily" / ".sync.tmp", path)
            renamed.append(True)

    done = append(root, meanwhile=sync_tool_replaces_the_note)
    assert renamed and old.read_bytes() == mine
    data = path.read_bytes()
    assert data.startswith(theirs + b"* remember the milk\n"), data
    assert data.splitlines()[done.line - 1] == b"* remember the milk"
    forget(root)
    assert path.read_bytes() == theirs


def test_a_capture_is_taken_back_from_a_replaced_note_only_when_nobody_else_can_write_it(root, monkeypatch):
    # The note is renamed over while the capture is written, and the file that lost the
    # name is still held open by another program (so no lease), which appends to it just
    # as the daemon has checked that nothing follows its capture: cutting the capture off
    # then would cut that program's line too. The capture must stay there instead.
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    old = root / "old-version"
    os.link(path, old)
    other = os.open(old, os.O_WRONLY | os.O_APPEND)
    theirs = b"- a line the other program appends\n"
    done = {"renamed": False, "appended": False}
    pread = os.pread

    def sync_tool_replaces_the_note():
        if not done["renamed"]:
            (root / "daily" / ".sync.tmp").write_bytes(mine + b"- phone\n")
            os.rename(root / "daily" / ".sync.tmp", path)
            done["renamed"] = True

    def pread_then_the_other_program_appends(fd, n, offset):
        data = pread(fd, n, offset)
        if done["renamed"] and not done["appended"] and data.startswith(b"\n* remember the milk"):
            os.write(other, theirs)
            done["appended"] = True
        return data

    monkeypatch.setattr(os, "pread", pread_then_the_other_program_appends)
    try:
        append(root, meanwhile=sync_tool_replaces_the_note)
    finally:
        os.close(other)
    assert done["renamed"]
    left = old.read_bytes()
    if done["appended"]:  # the cut was tried: the other program's line must be there still
        assert left.endswith(theirs), left
    else:  # not tried: the capture stays in the replaced file, after every byte it had
        assert left.startswith(mine + b"\n* remember the milk\n"), left
    assert path.read_bytes().startswith(mine + b"- phone\n"), path.read_bytes()
    assert path.read_bytes().count(b"* remember the milk") == 1


@pytest.mark.parametrize("umask", [0o222, 0o277])
def test_a_capture_refused_for_the_umask_leaves_no_file_nor_folder(root, umask):
    # With a umask that takes the write bits away, the note the capture creates is born
    # read-only and refused as one: the empty file and the folders made for it must go
    # again, or every later capture finds a read-only daily (and no head is ever written).
    before = tree(root)
    old = os.umask(umask)
    try:
        with pytest.raises(Conflict, match="read-only"):
            append(root, rel="newdir/sub/d.org", head=b"#+title: New\n")
    finally:
        os.umask(old)
    assert tree(root) == before


def test_a_first_capture_that_fails_leaves_no_folder_made_for_it(root, monkeypatch):
    # The disk is full when the capture is written into the daily it created, in folders
    # it created: the daily goes again (as before), and so do those folders.
    before = tree(root)
    real = note_io.write_all

    def full_disk(fd, data, offset=None):
        real(fd, data[:10], offset)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(note_io, "write_all", full_disk)
    with pytest.raises(Conflict, match="nothing was written"):
        append(root, rel="newdir/sub/d.org", head=b"#+title: New\n")
    assert tree(root) == before


def test_a_note_renamed_over_just_before_a_created_daily_is_deleted_stays(root, monkeypatch):
    # A forget takes away a daily the capture created (nothing else in it). A sync tool
    # renames the phone's version over it just after the daemon checked that the name
    # still holds its file, before the delete: deleting by name then deleted the phone's
    # version, every byte of it. It must stay, and the forget be refused.
    append(root, head=b"#+title: New\n")
    path = root / REL
    phone = b"#+title: New\n* Written on the phone\n"
    done = []
    for name in ("unlink", "rename"):  # the daemon's first deletion or move of the name
        real = getattr(os, name)

        def sync_tool_renames_first(p, *args, real=real, **kwargs):
            if os.fspath(p) == os.fspath(path) and not done:
                done.append(True)
                (root / "daily" / ".sync.tmp").write_bytes(phone)
                os.rename(root / "daily" / ".sync.tmp", path)
            return real(p, *args, **kwargs)

        monkeypatch.setattr(os, name, sync_tool_renames_first)
    with pytest.raises(Conflict, match="replaced by another program"):
        forget(root)
    assert done and path.read_bytes() == phone
    assert sorted(os.listdir(root / "daily")) == ["d.org"]


def test_a_created_daily_moved_aside_but_not_deleted_gets_its_name_back(root, monkeypatch):
    # The delete moves the name aside first: when the delete itself then fails, the
    # daily is back under its name, and nothing else is left in its folder.
    append(root, head=b"#+title: New\n")
    before = tree(root)
    real, failed = os.unlink, []

    def io_error_on_the_moved_name(path, *args, **kwargs):  # once: a passing I/O error
        if "arcology-oracle" in os.path.basename(path) and not failed:
            failed.append(path)
            raise OSError(errno.EIO, "Input/output error", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", io_error_on_the_moved_name)
    with pytest.raises(Conflict, match="cannot be deleted .*Input/output error.*not changed"):
        forget(root)
    monkeypatch.undo()
    assert failed and tree(root) == before


def test_a_daily_that_is_a_link_to_nothing_is_refused_saying_so(root):
    # A symbolic link whose file does not exist (it leads onto a drive not mounted): a
    # new daily is created without following links, so it can never be written; the
    # refusal said the daily "kept appearing and disappearing".
    os.symlink("../journal/d.org", root / REL)
    with pytest.raises(Conflict, match=r"daily/d.org is a symbolic link to \.\./journal/d.org, which does not exist"):
        append(root, head=b"#+title: New\n")
    assert sorted(os.listdir(root)) == ["daily"] and os.listdir(root / "daily") == ["d.org"]
    assert os.readlink(root / REL) == "../journal/d.org"


def hold_lease(path):
    """A descriptor of ``path`` holding a lease, as an NFS server's delegation or a Samba
    oplock lent to a client does (the kernel asks for it back when the note is opened)."""
    import fcntl

    fd = os.open(path, os.O_RDWR)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    return fd


def test_a_capture_waits_for_a_lease_on_the_note_to_be_given_back(root):
    # The notes are shared over NFS (or Samba), and the server has lent the daily to a
    # client (a delegation: a lease): opening it asks for it back, which takes
    # milliseconds, but opened without blocking the daily could not be opened at all,
    # and the capture was a 409 'Resource temporarily unavailable'.
    import threading

    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    other = hold_lease(path)
    threading.Timer(0.05, os.close, (other,)).start()  # the client gives it back
    append(root)
    assert path.read_bytes().startswith(mine + b"* remember the milk\n")


def test_a_note_whose_lease_is_not_given_back_is_refused_saying_so(root):
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    other = hold_lease(path)
    try:
        with pytest.raises(Conflict, match="daily/d.org is held by another program.*not changed; try again"):
            append(root)
        with pytest.raises(Conflict, match="daily/d.org is held by another program"):
            forget(root)
    finally:
        os.close(other)
    assert path.read_bytes() == mine


def test_a_forget_in_a_note_of_another_user_says_why_it_cannot_lock_it(root, monkeypatch):
    # The daemon runs as another user than the notes' owner (the daily is writable by
    # its group): only a file's owner may take a lease, so every forget is refused. The
    # refusal said the note was open in another program, and to try again: forever.
    (root / REL).write_bytes(b"* Mine\n")
    append(root)
    before = tree(root)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(root / REL).st_uid + 1)
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)  # as the kernel answers (EACCES)
    with pytest.raises(Conflict, match=r"daily/d.org belongs to another user \(uid \d+\) than the daemon's"):
        forget(root)
    assert tree(root) == before
