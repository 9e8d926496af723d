"""index/note_io.py taking back a capture it could not write whole (a full disk), and a
forget's delete of a daily the capture created killed half-way, while another program
writes the note, renames a file over it, or holds a lease on it. Real files; every byte
is compared."""

from __future__ import annotations

import errno
import resource
import subprocess
import os
from contextlib import asynccontextmanager

import pytest

from arcology_oracle.config import load_settings
from arcology_oracle.errors import Conflict
from arcology_oracle.index import note_io, room
from arcology_oracle.index.memory import Memory
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.capture import plan_forget
from tests.index.test_note_io_races import NOW, REL, append, leases, root  # noqa: F401 (leases, root: fixtures)

THEIRS = b"- their line, appended meanwhile\n"


@asynccontextmanager
async def started_index(tmp_path, **overrides):
    """``(roam, index)``: a started index over an empty notes folder holding ``daily/``
    (no Ollama), closed after; ``overrides``: settings besides."""
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    settings = load_settings(overrides={"roam_dir": roam, "db_path": tmp_path / "index.sqlite3",
                                        "ollama_host": "http://127.0.0.1:9", **overrides}, environ={})  # fmt: skip
    index = OracleIndex(settings)
    await index.start()
    try:
        yield roam, index
    finally:
        await index.close()


def full_disk_after(monkeypatch, n):
    real = note_io.write_all

    def full_disk(fd, data, offset=None):
        real(fd, data[:n], offset)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(note_io, "write_all", full_disk)


@pytest.mark.parametrize("head", [None, b"#+title: New\n"], ids=["existing", "created"])
def test_a_failed_capture_without_a_lease_never_cuts_what_another_program_appended(root, monkeypatch, head):
    # No write lease (NFS, a note of another user): the capture's first bytes are written,
    # then the disk is full. Another program appends to the note before the daemon cuts
    # its part off again (or, for a daily it created, deletes it): cut back to the size
    # before, or deleted, the note lost that program's line.
    path = root / REL
    mine = b"* Mine\ntext\n"
    if head is None:
        path.write_bytes(mine)
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    full_disk_after(monkeypatch, 10)
    real_truncate, appended = os.ftruncate, []

    def other_program_appends_first(fd, size):
        if not appended:
            appended.append(True)
            with open(path, "ab") as fh:
                fh.write(THEIRS)
        return real_truncate(fd, size)

    monkeypatch.setattr(os, "ftruncate", other_program_appends_first)
    with pytest.raises(Conflict) as refused:
        append(root, head=head)
    monkeypatch.undo()
    assert path.exists()
    data = path.read_bytes()
    before = b"" if head else mine
    assert data.startswith(before)
    if appended:  # the cut was tried: never over their line
        assert data.endswith(THEIRS), data
    else:  # left as it is, the part of the capture written at the end, as the refusal says
        assert len(data) == len(before) + 10, data
        assert "could not be taken back" in str(refused.value)



@pytest.mark.parametrize("head", [None, b"#+title: New\n"], ids=["existing", "created"])
def test_a_capture_a_full_disk_cannot_hold_without_a_lease_writes_nothing(root, monkeypatch, head):
    # No write lease (``tail -f`` or a sync tool holds the note open) and a disk with 10
    # bytes free: the first 10 bytes of the capture were written, then ENOSPC, and that
    # part could not be taken back: half a heading stayed at the end of the note. The
    # disk is simulated whole: the room asked for beforehand (fallocate) and the write
    # both see those 10 bytes. (By hand, on a full tmpfs with the note held open by
    # another process, the real daemon answers the same 409 and the note is unchanged.)
    path = root / REL
    mine = b"* Mine\ntext\n"
    if head is None:
        path.write_bytes(mine)
    free = 10
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: False)
    full_disk_after(monkeypatch, free)

    def full_disk_room(fd, offset, length):
        if length > free:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(room, "fallocate_keep_size", full_disk_room)
    with pytest.raises(Conflict) as refused:
        append(root, head=head)
    monkeypatch.undo()
    assert "nothing was written" in str(refused.value)
    if head is None:
        assert path.read_bytes() == mine
    else:  # the daily this capture created is gone again, as its folder would be
        assert not path.exists()


def test_room_asked_for_on_a_real_file_changes_no_byte_of_it(tmp_path):
    # The reservation itself (a real fallocate where the file system has it): the file's
    # size and bytes stay as they were, and the append after it lands as usual.
    path = tmp_path / "note.org"
    path.write_bytes(b"* Mine\n")
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        room.reserve(fd, 7, 4096, "note.org")
        assert os.fstat(fd).st_size == 7 and path.read_bytes() == b"* Mine\n"
        os.write(fd, b"* Yours\n")
    finally:
        os.close(fd)
    assert path.read_bytes() == b"* Mine\n* Yours\n"


def test_a_lease_granted_only_after_the_failed_write_never_cuts_what_another_program_appended(root, monkeypatch):
    # No write lease when the capture was written (another program had the note open),
    # one granted once the write failed: that program had appended an empty line between
    # the daemon's read and its write, which wrote nothing (a full disk). The late lease
    # covers nothing before it: the cut back took their line ending for the capture's
    # own first byte (its separator) and cut it off.
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    grants = iter([False, True])
    monkeypatch.setattr(note_io, "take_lease", lambda fd, attempts: next(grants, False))

    def other_program_first_then_full(fd, data, offset=None):
        with open(path, "ab") as fh:
            fh.write(b"\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(note_io, "write_all", other_program_first_then_full)
    with pytest.raises(Conflict):
        append(root)
    monkeypatch.undo()
    assert path.read_bytes() == mine + b"\n"


class Killed(BaseException):
    """The daemon killed (SIGKILL, a power loss) at that instant: nothing after runs."""


async def test_a_note_a_killed_forget_left_aside_gets_its_name_back_at_the_next_start(tmp_path, monkeypatch):
    # A forget deletes a daily the capture created by renaming it aside first, then
    # deleting it if it is the one read, else giving it its name back. A sync tool renames
    # the phone's version over the daily just before; the daemon is killed after the
    # rename aside, before the name is given back: the phone's version stayed hidden
    # under a dot-name, the daily gone, for good.
    async with started_index(tmp_path) as (roam, index):
        captured = await Memory(index).memorize("remember the milk", now=NOW)
        path = roam / captured.file
        phone = b"#+title: 2026-03-14\n* Written on the phone\n"
        real_rename = os.rename

        def sync_tool_renames_first(src, dst, *args, **kwargs):
            if os.fspath(src) == os.fspath(path):
                (path.parent / ".sync.tmp").write_bytes(phone)
                real_rename(path.parent / ".sync.tmp", path)
            return real_rename(src, dst, *args, **kwargs)

        def killed(*args, **kwargs):
            raise Killed

        monkeypatch.setattr(os, "rename", sync_tool_renames_first)
        monkeypatch.setattr(os, "link", killed)
        with pytest.raises(Killed):
            await Memory(index).forget(captured.id)
        monkeypatch.undo()
        assert not path.exists()  # killed with the phone's version aside
        await Memory(index).clean_up()  # the next start
        assert path.read_bytes() == phone
        assert os.listdir(path.parent) == [path.name]


def test_a_note_given_its_name_back_without_hard_links_never_replaces_one_written_meanwhile(root, monkeypatch):
    # On a file system without hard links (FAT, exFAT), a forget gave the file it had
    # moved aside (a phone's version a sync tool renamed over the daily) its name back by
    # checking the name was free, then renaming: a second version the sync tool wrote in
    # between was replaced, every byte of it.
    append(root, head=b"#+title: New\n")
    path = root / REL
    first, second = b"#+title: New\n* phone, first\n", b"#+title: New\n* phone, second\n"
    real_rename, real_lexists = os.rename, os.path.lexists

    def sync_tool_renames_first(src, dst, *args, **kwargs):
        if os.fspath(src) == os.fspath(path) and not (root / "daily" / ".sync").exists():
            (root / "daily" / ".sync").write_bytes(first)
            real_rename(root / "daily" / ".sync", path)
        return real_rename(src, dst, *args, **kwargs)

    def no_hard_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    written = []

    def then_the_second_version(p):
        free = real_lexists(p)
        if os.fspath(p) == os.fspath(path) and not written:
            written.append(True)
            path.write_bytes(second)
        return free

    monkeypatch.setattr(os, "rename", sync_tool_renames_first)
    monkeypatch.setattr(os, "link", no_hard_links)
    monkeypatch.setattr(os.path, "lexists", then_the_second_version)
    with pytest.raises(Conflict, match="replaced by another program"):
        note_io.remove_from_note(root, REL, lambda data, real: plan_forget(data, real, "c-1"))
    monkeypatch.undo()
    kept = sorted((root / "daily" / name).read_bytes() for name in os.listdir(root / "daily"))
    assert first in kept and (second in kept or not written), kept


def test_a_note_given_its_name_back_by_a_killed_forget_loses_its_second_name_at_the_next_start(root, monkeypatch):
    # Killed after the file moved aside had its name back (a hard link), before the name
    # aside was deleted: the next start found the name taken (by that very file) and kept
    # a hidden second name of the note for good, a hard link the user never made.
    from arcology_oracle.index.aside import give_back_left_aside

    path = root / REL
    path.write_bytes(b"#+title: New\n* mine\n")
    aside = path.with_name(f".{path.name}.arcology-oracle-forgotten-0123abcd")
    os.link(path, aside)
    give_back_left_aside([path.parent])
    assert os.listdir(path.parent) == [path.name] and path.read_bytes() == b"#+title: New\n* mine\n"
    assert os.stat(path).st_nlink == 1


async def test_a_private_capture_in_a_note_another_program_holds_a_lease_on_is_forgotten(tmp_path):
    # A private capture is in no index: a forget reads the notes to find it. The daily is
    # lent to an NFS or Samba client (a lease), which gives it back in milliseconds when
    # asked; read without blocking, it could not be opened at all and the capture was
    # "not found" (404), where a capture into it, or a forget of an indexed one, waits.
    import fcntl
    import threading

    from arcology_oracle.errors import NotFound

    async with started_index(tmp_path) as (roam, index):
        memory = Memory(index)
        (roam / "daily" / "2026-03-14.org").write_bytes(b"#+title: 2026-03-14\n* mine\n")
        captured = await memory.memorize("my secret plan", tags=["private"], now=NOW)
        path = roam / captured.file
        assert await index.read(lambda s: s.node(captured.id)) is None  # private: in no index
        other = os.open(path, os.O_RDWR)
        fcntl.fcntl(other, fcntl.F_SETLEASE, fcntl.F_WRLCK)  # as the server holds it for its client
        threading.Timer(0.05, os.close, (other,)).start()  # the client gives it back
        try:
            await memory.forget(captured.id)
        except NotFound:
            pytest.fail("the private capture was not found while the note was lent")
        assert path.read_bytes() == b"#+title: 2026-03-14\n* mine\n"


@pytest.mark.parametrize("where", ["nested format", "Emacs's dailies folder"])
async def test_a_daily_in_a_folder_of_its_own_left_aside_by_a_killed_forget_gets_its_name_back(tmp_path, monkeypatch, where):
    # The next start looked for files left aside only in the configured dailies folder
    # (and the notes folder, the inbox's, the recorded ones): a daily in a folder of its
    # own (daily_file_format "%Y/%m-%d.org", or the org-roam-dailies-directory Emacs
    # sends) left aside by a killed forget stayed hidden for good, the daily gone.
    fmt = {"daily_file_format": "%Y/%m-%d.org"} if where == "nested format" else {}
    async with started_index(tmp_path, **fmt) as (roam, index):
        dailies = None if fmt else "journal"
        captured = await Memory(index).memorize("remember the milk", now=NOW, dailies_dir=dailies)
        path = roam / captured.file
        before = path.read_bytes()

        def killed(*args, **kwargs):
            raise Killed

        monkeypatch.setattr(os, "unlink", killed)
        with pytest.raises(Killed):
            await Memory(index).forget(captured.id)
        monkeypatch.undo()
        assert not path.exists()  # killed with the daily aside
        await Memory(index).clean_up()  # the next start
        assert path.read_bytes() == before
        assert os.listdir(path.parent) == [path.name]


def test_the_next_start_never_renames_a_file_in_another_programs_hidden_folder(tmp_path):
    # A sync tool's old versions (Syncthing's .stversions puts '~<time>' before the last
    # dot) of a file left aside have names of that pattern: the walk of every folder gave
    # them a name of their own in that tool's folder.
    from arcology_oracle.index.aside import folders_below, give_back_left_aside

    versions = tmp_path / ".stversions" / "daily"
    versions.mkdir(parents=True)
    old = versions / ".d.org~20261206-010203.arcology-oracle-forgotten-0123abcd"
    old.write_bytes(b"* Old\n")
    give_back_left_aside(folders_below(tmp_path))
    assert os.listdir(versions) == [old.name]


async def test_a_forget_the_index_cannot_take_is_answered_as_done(tmp_path, monkeypatch):
    # The capture created its daily, so the forget deletes it; the database's disk is
    # full, so the index cannot drop its rows. The note was changed: the answer was a 500
    # ("internal error"), and a retry found nothing (404), though the forget was done.
    from arcology_oracle.store.db import OperationalError

    async with started_index(tmp_path) as (roam, index):
        memory = Memory(index)
        captured = await memory.memorize("remember the milk", now=NOW)
        path = roam / captured.file

        def full_disk(*args, **kwargs):
            raise OperationalError("database or disk is full")

        monkeypatch.setattr(index.indexer.store, "delete_file", full_disk)
        gone = await memory.forget(captured.id)
        assert not path.exists()
        assert gone["ok"] and gone["file"] == captured.file and "could not take it" in gone["note"]


def test_an_unleased_capture_whose_room_another_program_took_writes_nothing(root, monkeypatch):
    # Another program holds the note open (a real descriptor: no write lease) and appends
    # a line just after the daemon reserved room for the capture: that line took the room.
    # The disk is the daemon's real file size limit (RLIMIT_FSIZE), exactly the room
    # asked for: the capture's write crossed it, the kernel wrote a part (then EFBIG),
    # and half a heading stayed in the note. The room is asked for again from the note's
    # new end, which refuses the capture before a byte is written.
    path = root / REL
    mine = b"* Mine\ntext\n"
    path.write_bytes(mine)
    real, limit = room.fallocate_keep_size, resource.getrlimit(resource.RLIMIT_FSIZE)
    once = []

    def other_program_appends_after_the_room(fd, offset, length):
        real(fd, offset, length)
        resource.setrlimit(resource.RLIMIT_FSIZE, (offset + length, limit[1]))  # no byte more on this disk
        if not once:
            once.append(True)
            subprocess.run(["sh", "-c", 'printf "%s" "$1" >> "$2"', "sh", THEIRS.decode(), str(path)], check=True)

    monkeypatch.setattr(room, "fallocate_keep_size", other_program_appends_after_the_room)
    holder = open(path, "rb")  # (a tail -f, a sync tool)
    try:
        with pytest.raises(Conflict) as refused:
            append(root)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        holder.close()
    assert once and path.read_bytes() == mine + THEIRS, path.read_bytes()
    assert "nothing was written" in str(refused.value), refused.value
