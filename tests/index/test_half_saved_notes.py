"""A note saved in place (truncated, then written) is never read half way: the half may
lack the private ``#+filetags`` line the whole has, and would be stored public until
read again. Real files written in two steps by this process (its descriptor open for
writing between them, as the saving program's is), real SQLite; the database's every
byte is searched."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess

import pytest
from arcology_oracle.index import note_io, regular_files
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes

BEFORE = "#+title: Plans\n* Garden\nhalfsaveturnips in March\n"
# The whole note is private: its #+filetags line (which counts anywhere) comes last.
FIRST_HALF = b"#+title: Plans\n* Lawyer\nhalfsavesecret: call on Monday\n"
SECOND_HALF = b"#+filetags: :private:\n"


async def test_a_note_half_saved_is_not_read_until_its_writer_is_done(tmp_path, make_settings):
    note_io.prepare_leases()  # as the daemon does at start (SIGIO ignored)
    roam = tmp_path / "notes"
    roam.mkdir()
    note = roam / "plans.org"
    note.write_text(BEFORE)
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        with open(note, "r+b") as saving:  # the other program's save, under way
            saving.truncate(0)
            saving.write(FIRST_HALF)
            saving.flush()
            report = await index.index_paths(["plans.org"])  # the watcher (or a reconcile) reads meanwhile
            assert report.indexed == 0 and list(report.failed) == ["plans.org"], report
            assert b"halfsavesecret" not in db_bytes(settings.db_path)
            assert await index.read(lambda s: sorted(s.file_states())) == ["plans.org"]  # as it was
            saving.write(SECOND_HALF)
        report = await index.index_paths(["plans.org"])  # the save done: read whole
        assert report.private == 1 and report.deleted == 1, report
        assert await index.read(lambda s: sorted(s.file_states())) == []
    finally:
        await index.close()
    raw = db_bytes(settings.db_path)
    assert b"halfsavesecret" not in raw and b"halfsaveturnips" not in raw


def test_the_file_system_type_is_the_kernels(tmp_path):
    """What the lease fallback is decided by: ``fstatfs``'s magic number, as ``stat -f``
    prints it (this machine's file system for the tests' temporary files)."""
    shown = subprocess.run(["stat", "-f", "-c", "%t", str(tmp_path)], capture_output=True, text=True, check=True)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert regular_files.filesystem_type(fd) == int(shown.stdout.strip(), 16)
    finally:
        os.close(fd)


def test_notes_on_nfs_are_read_though_it_refuses_every_lease(tmp_path, monkeypatch):
    """NFSv4 without a read delegation (and SMB without a read oplock) answers EAGAIN to
    every lease, as a local file system does only while a program writes the file: there,
    every note counted as being written, and none was ever indexed. The kernel's answers
    are played here (no NFS mount on the test machine); the read is then the one made
    where no lease can be had (size, mtime and ctime the same before and after)."""
    note_io.prepare_leases()
    note = tmp_path / "plans.org"
    note.write_text(BEFORE)
    real_fcntl = fcntl.fcntl

    def no_delegation(fd, command, *args):
        if command == fcntl.F_SETLEASE and args and args[0] == fcntl.F_RDLCK:
            raise OSError(errno.EAGAIN, "no delegation, no lease")
        return real_fcntl(fd, command, *args)

    monkeypatch.setattr(regular_files.fcntl, "fcntl", no_delegation)
    monkeypatch.setattr(regular_files, "_refusing_devices", {}, raising=False)
    monkeypatch.setattr(regular_files, "filesystem_type", lambda fd: 0x6969, raising=False)  # NFS_SUPER_MAGIC
    data, _ = regular_files.read_regular_file(os.path.realpath(tmp_path), note)
    assert data == BEFORE.encode()
    # The same refusal on a local file system still means a program is writing it.
    monkeypatch.setattr(regular_files, "_refusing_devices", {}, raising=False)
    monkeypatch.setattr(regular_files, "filesystem_type", lambda fd: 0xEF53)  # ext4
    monkeypatch.setattr(regular_files.time, "sleep", lambda seconds: None)
    with pytest.raises(BlockingIOError):
        regular_files.read_regular_file(os.path.realpath(tmp_path), note)
