"""The forget journal (index/forget_journal.py) on real files, in process: a torn or
damaged record is known and set aside; every state a killed rewrite can leave is finished
byte for byte, anything else left alone; a note open elsewhere waits; a forget that goes
well, or is put back, leaves no record. The real daemon killed mid-forget is in
test_forget_kill.py."""

from __future__ import annotations

import datetime
import errno
import hashlib
import os

import pytest

from arcology_oracle.errors import Conflict
from arcology_oracle.index import forget_journal, note_io
from arcology_oracle.index.forget_journal import Journal, Record, decode, encode, settle, settle_at_start, state_of
from arcology_oracle.notes.capture import make_capture, plan_forget, render_capture
from tests.index.journal_fixtures import db, leases, root  # noqa: F401  (fixtures)

REL = "daily/d.org"
NOW = datetime.datetime(2026, 3, 14, 9, 26)


def record_of(db) -> object:
    return forget_journal.journal_path(db)


def with_capture(root, eol=b"\n", before=b"* Morning\nCoffee.\n", after=b"* Mine after it\n" + b"my line\n" * 12,
                 node_id="c-1"):  # fmt: skip
    """The note: ``before``, a capture, ``after`` (line endings ``eol``). Returns its
    bytes and the forget's result."""
    path = root / REL
    path.write_bytes(before.replace(b"\n", eol))
    entry = make_capture("remember the kinkajou", title=None, tags=(), now=NOW, node_id=node_id)
    note_io.append_note(root, REL, lambda e, lead, real: render_capture(entry, rel=real, eol=e, lead=lead), None)
    with open(path, "ab") as fh:
        fh.write(after.replace(b"\n", eol))
    data = path.read_bytes()
    removal = plan_forget(data, REL, node_id)
    return data, data[: removal.start] + data[removal.end :]


def forget(root, node_id="c-1"):
    return note_io.remove_from_note(root, REL, lambda data, real: plan_forget(data, real, node_id))


def killed_at(root, db, j: int | None, *, truncated: bool = False, node_id="c-1") -> bytes:
    """What a forget killed after writing ``j`` bytes of the tail (None: all of it, and
    cut when ``truncated``) leaves: the record on disk, the note part way. Returns the
    note's bytes."""
    path = root / REL
    data = path.read_bytes()
    removal = plan_forget(data, REL, node_id)
    tail = data[removal.end :]
    fd = os.open(path, os.O_RDWR)
    try:
        Journal(record_of(db), root).write(REL, fd, data, removal.start, removal.end)
        os.pwrite(fd, tail if j is None else tail[:j], removal.start)
        if truncated:
            os.ftruncate(fd, removal.start + len(tail))
    finally:
        os.close(fd)
    return path.read_bytes()


def a_record(rest=b"capture\n* after\n", start=10):
    return Record("/notes", "daily/d.org", 1, 2, start, start + 8, start + len(rest), hashlib.sha256(b"x").hexdigest(), rest)


def test_a_record_reads_back_and_a_torn_or_damaged_one_is_known():
    record = a_record()
    data = encode(record)
    assert decode(data) == record and record.tail == b"* after\n"
    assert all(decode(data[:n]) is None for n in range(len(data)))  # cut anywhere by a kill
    for i in range(len(data)):  # any byte changed
        assert decode(data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1 :]) is None, i
    assert decode(b"") is None and decode(b"not a record at all") is None
    assert decode(data + b"more") is None


def test_every_state_of_the_rewrite_is_known_and_nothing_else():
    before, capture, after = b"* Mine\n", b"* Captured\n:PROPERTIES:\n:END:\n", b"* After it\nsome text\n"
    data = before + capture + after
    start, end = len(before), len(before) + len(capture)
    rest, tail = data[start:], data[end:]
    record = Record("/n", REL, 1, 2, start, end, len(data), hashlib.sha256(before).hexdigest(), rest)
    for j in range(len(tail) + 1):  # killed after j bytes of the tail, before the cut
        assert state_of(before + tail[:j] + rest[j:], record) == "unfinished", j
    assert state_of(before + tail, record) == "finished"
    # Anything else is someone's edit, even one made of the same bytes: a block of the
    # capture's length deleted after it (the note cut to the forget's length, or the tail's
    # bytes mixed with the old ones) is never "finished" by writing the tail back over it.
    mixed = bytes(t if i % 2 else r for i, (t, r) in enumerate(zip(tail, rest)))
    for other in (b"* Mine!\n" + rest, before + rest + b"x", before + tail + b"x", before + rest[:-1] + b"?",
                  b"* Mind\n" + tail, before + tail[:-1], b"", before + mixed + rest[len(tail) :],
                  before + rest[: len(tail)], before + tail[:3] + rest[4:] + b"!"):  # fmt: skip
        assert state_of(other, record) == "other", other
    at_end = Record("/n", REL, 1, 2, start, end, end, hashlib.sha256(before).hexdigest(), capture)
    assert state_of(before + capture, at_end) == "unfinished" and state_of(before, at_end) == "finished"


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
def test_every_point_of_a_killed_rewrite_is_finished_byte_for_byte(root, db, eol):
    data, forgotten = with_capture(root, eol)
    tail_length = len(forgotten) - plan_forget(data, REL, "c-1").start
    for j in [*range(0, tail_length + 1, 7), tail_length, None]:
        (root / REL).write_bytes(data)
        left = killed_at(root, db, j, truncated=j is None)
        assert forget_journal.decode(record_of(db).read_bytes()) is not None
        assert settle(record_of(db), root) == ("finished" if j is None else "repaired"), j
        assert (root / REL).read_bytes() == forgotten, (j, left)
        assert not record_of(db).exists()


def test_the_note_keeps_its_inode_mode_and_links(root, db):
    data, forgotten = with_capture(root)
    os.chmod(root / REL, 0o640)
    os.link(root / REL, root / "hard.org")
    inode = (root / REL).stat().st_ino
    killed_at(root, db, 5)
    assert settle_at_start(db, root) == "repaired"
    assert (root / REL).stat().st_ino == inode and (root / REL).stat().st_mode & 0o777 == 0o640
    assert (root / "hard.org").read_bytes() == forgotten


def test_a_forget_leaves_no_record_and_one_put_back_neither(root, db, monkeypatch):
    data, forgotten = with_capture(root)
    removal, new, _ = forget(root)
    assert (root / REL).read_bytes() == new == forgotten and not record_of(db).exists()
    (root / REL).write_bytes(data)
    real = note_io.write_all
    calls = []

    def failing(fd, payload, offset=None):  # the disk fails half way through the rewrite
        calls.append(1)
        if len(calls) == 1:
            real(fd, payload[:10], offset)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd, payload, offset)

    monkeypatch.setattr(note_io, "write_all", failing)
    with pytest.raises(Conflict, match="not changed"):
        forget(root)
    assert (root / REL).read_bytes() == data and not record_of(db).exists()


def test_a_forget_whose_put_back_fails_is_finished_at_the_next_start(root, db, monkeypatch):
    data, forgotten = with_capture(root)

    calls = []

    def failing(fd, payload, offset=None):  # 10 bytes of the rewrite, then nothing: the put-back fails
        calls.append(1)
        if len(calls) == 1:
            os.pwrite(fd, payload[:10], offset)
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(note_io, "write_all", failing)
    with pytest.raises(Conflict, match="could not be put back"):
        forget(root)
    assert (root / REL).read_bytes() not in (data, forgotten) and record_of(db).exists()
    monkeypatch.undo()
    note_io.prepare_leases()
    assert settle_at_start(db, root) == "repaired"
    assert (root / REL).read_bytes() == forgotten and not record_of(db).exists()


def test_an_unfinished_forget_is_finished_before_the_next_one(root, db):
    data, forgotten = with_capture(root, after=b"* Mine after it\nmine\n")
    entry = make_capture("and the okapi", title=None, tags=(), now=NOW, node_id="c-2")
    note_io.append_note(root, REL, lambda e, lead, real: render_capture(entry, rel=real, eol=e, lead=lead), None)
    killed_at(root, db, 3)
    removal, new, _ = forget(root, "c-2")  # settles c-1's record first, then forgets c-2
    assert (root / REL).read_bytes() == new == forgotten and not record_of(db).exists()


def test_a_note_open_elsewhere_waits_and_no_forget_runs_meanwhile(root, db):
    data, forgotten = with_capture(root)
    left = killed_at(root, db, 9)
    held = os.open(root / REL, os.O_RDONLY)  # another program has it open: no lease
    try:
        assert settle_at_start(db, root) == "busy"
        assert record_of(db).exists()
        with pytest.raises(Conflict, match="an earlier forget was interrupted and cannot be finished now"):
            forget(root)
    finally:
        os.close(held)
    assert (root / REL).read_bytes() == left  # untouched while it was open
    assert settle_at_start(db, root) == "repaired" and (root / REL).read_bytes() == forgotten


def test_a_changed_replaced_or_deleted_note_is_left_alone_and_the_bytes_kept(root, db, tmp_path):
    data, _ = with_capture(root)
    start = plan_forget(data, REL, "c-1").start
    killed_at(root, db, 4)
    replaced = root / "daily" / "new.org"
    replaced.write_bytes(b"* Saved by an editor\n")
    os.replace(replaced, root / REL)  # an editor's save renames a new file over the note
    assert settle_at_start(db, root) == "kept" and (root / REL).read_bytes() == b"* Saved by an editor\n"
    (kept,) = tmp_path.glob("forget-journal.index.sqlite3.kept-*")
    assert decode(kept.read_bytes()).rest == data[start:] and not record_of(db).exists()
    (root / REL).write_bytes(data)
    killed_at(root, db, 4)
    (root / REL).unlink()  # deleted; its folder and the other notes are there
    (root / "other.org").write_bytes(b"* Another note\n")
    assert settle_at_start(db, root) == "kept" and not (root / REL).exists()
    assert len(list(tmp_path.glob("forget-journal.index.sqlite3.kept-*"))) == 2


def test_a_record_of_another_notes_directory_is_set_aside(root, db, tmp_path):
    with_capture(root)
    killed_at(root, db, 4)
    left = (root / REL).read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    assert settle_at_start(db, other) == "kept" and (root / REL).read_bytes() == left


@pytest.mark.parametrize("junk", [b"", b"\x00" * 100, b"arcology-oracle forget record 1\n{\"rel\": 3}\n"])
def test_a_damaged_record_is_set_aside_and_never_raises(root, db, tmp_path, junk):
    with_capture(root)
    before = (root / REL).read_bytes()
    record_of(db).write_bytes(junk)
    assert settle_at_start(db, root) == "damaged"
    assert not record_of(db).exists() and len(list(tmp_path.glob("forget-journal.index.sqlite3.damaged-*"))) == 1
    assert (root / REL).read_bytes() == before
    assert forget(root)[1] != before  # forgets work again


def test_start_never_raises(root, db, tmp_path):
    record_of(db).mkdir()  # not even a file: set aside as damaged
    assert settle_at_start(db, root) == "damaged" and not record_of(db).exists()
    assert settle_at_start(":memory:", root) == "none"
    assert settle_at_start(tmp_path / "nothing" / "here.sqlite3", root) == "none"


def test_a_record_that_cannot_be_written_refuses_the_forget(root, tmp_path):
    data, _ = with_capture(root)
    forget_journal.register(root, tmp_path / "missing" / "index.sqlite3")  # its folder does not exist
    with pytest.raises(Conflict, match="cannot write the record that lets a forget be finished after a crash"):
        forget(root)
    assert (root / REL).read_bytes() == data
