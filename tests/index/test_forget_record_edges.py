"""The forget record (index/forget_journal.py) where a review found it unsafe, on real
files, in process: the start never "finishes" a note the user changed with bytes of the
same length; a capture into a note whose forget is unfinished finishes it first or is
refused; a note that cannot be had now (read-only, its drive not mounted, a read-only
file system) keeps its record for later; a drive back with another device number is
still finished; whatever sits at the record's path is set aside without blocking; and
deleting the database (``rm index.sqlite3*``) leaves the record."""

from __future__ import annotations

import dataclasses
import datetime
import errno
import logging
import os
import socket
import threading

import pytest

from arcology_oracle.errors import Conflict
from arcology_oracle.index import forget_journal, note_io
from arcology_oracle.index.forget_journal import decode, encode, journal_path, settle, settle_at_start
from arcology_oracle.notes.capture import make_capture, plan_forget, render_capture
from tests.index.journal_fixtures import db, leases, root  # noqa: F401  (fixtures)

REL = "daily/d.org"
NOW = datetime.datetime(2026, 3, 14, 9, 26)
AFTER = b"* Mine after it\n" + b"my line\n" * 12


def capture(root, text, node_id, rel=REL):
    entry = make_capture(text, title=None, tags=(), now=NOW, node_id=node_id)
    return note_io.append_note(root, rel, lambda e, lead, real: render_capture(entry, rel=real, eol=e, lead=lead), None)


def note_with_capture(root) -> tuple[bytes, bytes]:
    """The user's text, capture c-1, the user's text after it; its bytes and the forget's result."""
    (root / REL).write_bytes(b"* Morning\nCoffee.\n")
    capture(root, "remember the kinkajou", "c-1")
    with open(root / REL, "ab") as fh:
        fh.write(AFTER)
    data = (root / REL).read_bytes()
    removal = plan_forget(data, REL, "c-1")
    return data, data[: removal.start] + data[removal.end :]


def killed_at(root, db, j: int, node_id="c-1") -> bytes:
    """What a forget killed after the record and ``j`` bytes of its rewrite leaves; the note's bytes."""
    data = (root / REL).read_bytes()
    removal = plan_forget(data, REL, node_id)
    fd = os.open(root / REL, os.O_RDWR)
    try:
        forget_journal.Journal(journal_path(db), root).write(REL, fd, data, removal.start, removal.end)
        os.pwrite(fd, data[removal.end :][:j], removal.start)
    finally:
        os.close(fd)
    return (root / REL).read_bytes()


def asides(tmp_path, kind: str) -> list:
    return sorted(tmp_path.glob(f"forget-journal.index.sqlite3.{kind}-*"))


# 1. A deletion of the capture's length is not a state of the rewrite.


def test_a_block_of_the_captures_length_deleted_after_the_kill_is_left_deleted(root, db, tmp_path):
    (root / REL).write_bytes(b"* Morning\nCoffee.\n")
    capture(root, "remember the kinkajou", "c-1")
    with open(root / REL, "ab") as fh:
        fh.write(b"* My own notes\nline\n")
    capture(root, "remember the aardvark", "c-2")  # the same length as c-1
    with open(root / REL, "ab") as fh:
        fh.write(b"* Evening\nmine\n")
    left = killed_at(root, db, 0)  # killed right after the record was synced
    second = plan_forget(left, REL, "c-2")
    first = plan_forget(left, REL, "c-1")
    assert second.end - second.start == first.end - first.start
    users = left[: second.start] + left[second.end :]  # the user deletes c-2 in an editor (in place)
    with open(root / REL, "r+b") as fh:
        fh.write(users)
        fh.truncate()
    assert settle_at_start(db, root) == "kept"
    assert (root / REL).read_bytes() == users  # c-2 stays deleted, c-1 stays: not one byte changed
    assert len(asides(tmp_path, "kept")) == 1 and not journal_path(db).exists()


# 2. A capture into the note first settles the record, or is refused.


def test_a_capture_into_the_note_finishes_the_forget_first(root, db):
    data, forgotten = note_with_capture(root)
    left = killed_at(root, db, 40)
    held = os.open(root / REL, os.O_RDONLY)  # a pager has it open at the start: no lease
    try:
        assert settle_at_start(db, root) == "busy"
        with pytest.raises(Conflict, match=r"an earlier forget in daily/d\.org is unfinished.*try again"):
            capture(root, "a capture while it is open", "c-8")
        assert (root / REL).read_bytes() == left  # nothing written
        (root / "daily" / "other.org").write_bytes(b"* Another day\n")
        capture(root, "into another note meanwhile", "c-7", rel="daily/other.org")  # other notes are not held up
    finally:
        os.close(held)
    written = capture(root, "a new capture after the restart", "c-9")
    got = (root / REL).read_bytes()
    assert got == forgotten + written.added and got.count(b"my line\n") == 12  # the forget first, then the capture
    assert not journal_path(db).exists()


# 3. A note that cannot be had now keeps its record.


def readonly(root, tmp_path, monkeypatch):
    os.chmod(root / REL, 0o444)
    return lambda: os.chmod(root / REL, 0o644)


def unmounted(root, tmp_path, monkeypatch):
    os.rename(root, tmp_path / "away")  # the drive is not mounted yet: an empty mount point
    os.mkdir(root)

    def back():
        os.rmdir(root)
        os.rename(tmp_path / "away", root)

    return back


def folder_gone(root, tmp_path, monkeypatch):
    (root / "keep.org").write_bytes(b"* Another note\n")
    os.rename(root / "daily", tmp_path / "daily")
    return lambda: os.rename(tmp_path / "daily", root / "daily")


def notes_dir_gone(root, tmp_path, monkeypatch):
    os.rename(root, tmp_path / "away")
    return lambda: os.rename(tmp_path / "away", root)


def failing_open(code):
    def setup(root, tmp_path, monkeypatch):
        real, note = os.open, os.path.realpath(root / REL)

        def opening(path, flags, *args, **kwargs):
            if os.path.realpath(path) == note and flags & (os.O_WRONLY | os.O_RDWR):
                raise OSError(code, os.strerror(code), str(path))
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", opening)
        return monkeypatch.undo

    return setup


@pytest.mark.parametrize("condition", [readonly, unmounted, folder_gone, notes_dir_gone, failing_open(errno.EROFS),
                                       failing_open(errno.EACCES), failing_open(errno.EIO)],
                         ids=["read-only", "not-mounted", "folder-gone", "notes-dir-gone", "EROFS", "EACCES", "EIO"])  # fmt: skip
def test_a_note_that_cannot_be_had_now_keeps_its_record_for_later(root, db, tmp_path, monkeypatch, caplog, condition):
    data, forgotten = note_with_capture(root)
    killed_at(root, db, 40)
    undo = condition(root, tmp_path, monkeypatch)
    with caplog.at_level(logging.WARNING):
        assert settle_at_start(db, root) in ("busy", "error")
    assert journal_path(db).exists() and asides(tmp_path, "kept") == []
    assert "may hold part of its text twice" in caplog.text, caplog.text
    undo()
    note_io.prepare_leases()
    assert settle(journal_path(db), root) == "repaired"
    assert (root / REL).read_bytes() == forgotten and not journal_path(db).exists()


# 4. The device number is no part of the note's identity.


def test_a_note_back_with_another_device_number_is_finished(root, db):
    data, forgotten = note_with_capture(root)
    killed_at(root, db, 40)
    record = decode(journal_path(db).read_bytes())
    journal_path(db).write_bytes(encode(dataclasses.replace(record, dev=record.dev + 1)))  # a reboot, another loop slot
    assert settle_at_start(db, root) == "repaired" and (root / REL).read_bytes() == forgotten


# 7. Whatever is at the record's path is set aside, never followed, never waited on.


def a_fifo(path):
    os.mkfifo(path)


def a_dangling_link(path):
    os.symlink(path.parent / "gone", path)


def a_link_to_a_record(path):
    os.rename(path, path.parent / "elsewhere")
    os.symlink(path.parent / "elsewhere", path)


def a_directory(path):
    os.mkdir(path)


def a_socket(path):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))


@pytest.mark.parametrize("make", [a_fifo, a_dangling_link, a_link_to_a_record, a_directory, a_socket])
def test_anything_but_a_regular_file_at_the_records_path_is_set_aside(root, db, tmp_path, make):
    data, forgotten = note_with_capture(root)
    if make is a_link_to_a_record:
        killed_at(root, db, 40)
        data = (root / REL).read_bytes()
    path = journal_path(db)
    make(path)
    answer: list[str] = []
    thread = threading.Thread(target=lambda: answer.append(settle_at_start(db, root)), daemon=True)
    thread.start()
    thread.join(10)
    assert answer == ["damaged"], answer or "the start blocked on the record's path"
    (aside,) = asides(tmp_path, "damaged")
    assert not os.path.lexists(path) and (root / REL).read_bytes() == data  # the note is not touched
    if make in (a_dangling_link, a_link_to_a_record):
        assert aside.is_symlink()  # the link itself was moved, not what it leads to
    if make is a_link_to_a_record:
        assert decode((tmp_path / "elsewhere").read_bytes()) is not None
    else:
        removal, new, _ = note_io.remove_from_note(root, REL, lambda d, real: plan_forget(d, real, "c-1"))
        assert new == forgotten and not os.path.lexists(path)  # forgets work again


# 8. The record is no part of the database's files.


def test_deleting_the_database_leaves_the_record(root, db, tmp_path):
    note_with_capture(root)
    killed_at(root, db, 40)
    assert journal_path(db).parent == tmp_path and journal_path(db).name == "forget-journal.index.sqlite3"
    (root / REL).write_bytes(b"changed")
    assert settle_at_start(db, root) == "kept"
    journal_path(db).write_bytes(b"damaged")
    assert settle_at_start(db, root) == "damaged"
    killed = list(tmp_path.glob("*forget-journal*"))
    assert len(killed) == 2 and not [p for p in killed if p.match("index.sqlite3*")]  # rm index.sqlite3* keeps them
