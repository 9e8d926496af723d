"""The copies of forget records the daemon set aside (``.kept-*``, ``.damaged-*``, mode
0600 beside the database) hold a note's text, private text too: the daemon's start
removes those set aside ``KEEP_DAYS`` days ago or more, and nothing else. The real
daemon process, started on a database folder holding such copies."""

from __future__ import annotations

import ctypes
import hashlib
import os
import time

from arcology_oracle.index.forget_journal import KEEP_DAYS, Record, encode
from tests.index.test_filesystem import PR_CAPBSET_DROP, without_dac_override
from tests.runners import start_daemon

DAY = 86400


def copy(folder, name, *, age_days, text=b"my private line\n"):
    path = folder / name
    path.write_bytes(text)
    path.chmod(0o600)
    when = time.time() - age_days * DAY
    os.utime(path, (when, when))
    return path


async def test_the_start_removes_the_copies_set_aside_long_ago_and_nothing_else(tmp_path, fake_ollama):
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "walks.org").write_text("#+title: Walks\n* Ridge\nthe path above the lake\n")
    journal = "forget-journal.daemon.sqlite3"
    old = [copy(tmp_path, f"{journal}.kept-20250101T090000", age_days=KEEP_DAYS + 1),
           copy(tmp_path, f"{journal}.damaged-20250101T090000-2", age_days=KEEP_DAYS + 5)]  # fmt: skip
    recent = copy(tmp_path, f"{journal}.kept-20260101T090000", age_days=KEEP_DAYS - 1)
    others = [copy(tmp_path, "forget-journal.other.sqlite3.kept-20250101T090000", age_days=KEEP_DAYS + 1),
              copy(tmp_path, f"{journal}.kept", age_days=KEEP_DAYS + 1)]  # fmt: skip
    (tmp_path / f"{journal}.damaged-20250102T090000").mkdir()  # a directory was at the record's path
    os.utime(tmp_path / f"{journal}.damaged-20250102T090000", (0, 0))
    # A record of a forget in a note deleted since, written long ago: set aside at this start.
    rest = b"* the capture\nkeptnowsecretword\n"
    record = Record(os.path.realpath(roam), "gone.org", 1, 2, 0, len(rest), len(rest), hashlib.sha256(b"").hexdigest(), rest)
    copy(tmp_path, journal, age_days=KEEP_DAYS + 10, text=encode(record))

    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        assert [p.exists() for p in old] == [False, False]
        assert recent.exists() and all(p.exists() for p in others)
        assert (tmp_path / f"{journal}.damaged-20250102T090000").is_dir()
        (kept_now,) = [p for p in tmp_path.glob(f"{journal}.kept-*") if p != recent]  # set aside now, kept
        assert b"keptnowsecretword" in kept_now.read_bytes()
        log = daemon.log()
        assert all(f"removed {p}" in log for p in old)
        assert f"are kept in {kept_now} for {KEEP_DAYS} days" in log
    finally:
        daemon.stop()


CAP_FOWNER = 3


def without_owner_rights() -> None:
    """In the child before exec: root without the capabilities that let it set the times
    of (or write) a file it does not own (see test_filesystem.without_dac_override)."""
    without_dac_override()
    if ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_FOWNER, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


async def test_a_record_set_aside_whose_time_cannot_be_set_is_kept_its_days(tmp_path, fake_ollama):
    # Setting a record aside marks it modified now; for a record of another user's (the
    # daemon once run with sudo) that fails after the rename: the log said it could not
    # be moved aside, and the copy, its time that of the interrupted forget, was removed
    # at the same start.
    roam = tmp_path / "notes"
    roam.mkdir()
    journal = tmp_path / "forget-journal.daemon.sqlite3"
    copy(tmp_path, journal.name, age_days=KEEP_DAYS + 10, text=b"no record: my damagedsecretword\n")
    journal.chmod(0o644)
    root = os.geteuid() == 0  # (as another user the daemon owns the record: its time is set)
    if root:
        os.chown(journal, 12345, 12345)
        os.utime(journal, (time.time() - (KEEP_DAYS + 10) * DAY,) * 2)
    preexec = without_owner_rights if root else None
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url, preexec_fn=preexec)
    try:
        log = daemon.log()
        (aside,) = tmp_path.glob(f"{journal.name}.damaged-*")
        assert b"damagedsecretword" in aside.read_bytes()
        assert f"moved to {aside} (kept {KEEP_DAYS} days)" in log and "cannot be moved aside" not in log, log
    finally:
        daemon.stop()
