"""Who owns what an import creates: an import run as root (sudo) into the user's notes
gives each new note, and each folder it makes, the owner and group of the folder it is
made in, so the user's Emacs can save them; run as that owner, nothing changes; where the
owner cannot be given, the file is written as before; a folder made for a file that is
then not placed is removed again. Real files and real owners (the suite runs as root)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from arcology_oracle.importers import read_export
from arcology_oracle.importers.render import render
from arcology_oracle.importers.writing import ImportBatch
from arcology_oracle.notes.disk import umask

FIXTURES = Path(__file__).parent / "fixtures"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user takes root")


def rendered(tags=()):
    return [render(c, tags=tags) for c in read_export("claude", FIXTURES / "claude.json")]


def import_into(roam: Path, target: Path):
    batch = ImportBatch(roam, target)
    for r in rendered():
        batch.stage(r)
    return batch.commit()


def owners(root: Path) -> dict[str, tuple[int, int, int]]:
    """Owner, group and permission bits of everything below ``root``."""
    found = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        found[path.relative_to(root).as_posix()] = (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
    return found


@AS_ROOT
@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_new_notes_and_folders_of_an_import_run_as_root_are_the_notes_folders_owners(tmp_path, monkeypatch, links):
    # The user's notes folder (12345:12345, group-shared with setgid); sudo arcology-oracle
    # import made chats/2026/*.org root's, in folders of root's: their Emacs could not save them.
    if not links:  # a file system without hard links: the new note is a copy

        def no_hard_links(*args, **kwargs):
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_hard_links)
    roam = tmp_path / "roam"
    roam.mkdir()
    os.chown(roam, 12345, 12345)
    os.chmod(roam, 0o2775)
    summary = import_into(roam, roam / "chats" / "2026")
    assert len(summary.added) == 2 and not summary.skipped, summary
    new_file = 0o666 & ~umask()
    folder = (0o777 & ~umask()) | stat.S_ISGID  # the setgid of the notes folder kept
    expected = {"chats": (12345, 12345, folder), "chats/2026": (12345, 12345, folder)}
    expected |= {f"chats/2026/{r.filename}": (12345, 12345, new_file) for r in rendered()}
    assert owners(roam) == expected
    for r in rendered():
        assert (roam / "chats" / "2026" / r.filename).read_text() == r.text


@AS_ROOT
def test_a_new_note_gets_its_folders_owner_where_the_import_can_give_it(tmp_path, monkeypatch):
    # Into an existing folder of another user and group than the notes folder's: theirs.
    roam = tmp_path / "roam"
    (roam / "shared").mkdir(parents=True)
    os.chown(roam / "shared", 23456, 23457)
    summary = import_into(roam, roam / "shared")
    assert len(summary.added) == 2 and not summary.skipped, summary
    assert {owners(roam)[f"shared/{r.filename}"] for r in rendered()} == {(23456, 23457, 0o666 & ~umask())}

    # Not root, into a folder of another user: the system's owner, nothing skipped.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 12345, 12345)

    def not_permitted(fd, uid, gid):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", not_permitted)
    summary = import_into(theirs, theirs / "chats")
    monkeypatch.undo()
    assert len(summary.added) == 2 and not summary.skipped, summary
    me = (os.geteuid(), os.getegid())
    assert {v[:2] for v in owners(theirs).values()} == {me}
    # And run as the folder's owner (root here), exactly as before.
    plain = tmp_path / "plain"
    plain.mkdir()
    summary = import_into(plain, plain / "chats")
    assert len(summary.added) == 2
    assert set(owners(plain).values()) == {(*me, 0o777 & ~umask()), (*me, 0o666 & ~umask())}


def test_a_folder_made_for_a_file_that_is_not_placed_is_removed(tmp_path, monkeypatch):
    # The disk fails as the new note is linked into place: the import said it was not
    # written, yet left the empty folders it made for it in the notes.
    roam = tmp_path / "roam"
    roam.mkdir()
    (roam / "mine.org").write_bytes(b"* Mine\n")

    def disk_fails(*args, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "link", disk_fails)
    summary = import_into(roam, roam / "chats" / "2026")
    monkeypatch.undo()
    assert summary.added == [] and len(summary.skipped) == 2, summary
    assert all("Input/output error" in why for why in summary.skipped.values())
    assert sorted(p.name for p in roam.iterdir()) == ["mine.org"]


def swap_staging_for_a_link(batch: ImportBatch, tmp_path: Path, victim: Path) -> None:
    """What anyone who may write the notes folder can do between stage and commit: rename
    the import's staging folder (root's, but in their folder) and put a symlink in its
    place, to a folder whose staged names lead to ``victim``, a file outside the notes."""
    staging = batch._staging
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    for i in range(len(batch._pending)):
        (decoy / f"{i}.tmp").symlink_to(victim)
    staging.rename(staging.with_name("moved-away"))
    staging.symlink_to(decoy)


@AS_ROOT
@pytest.mark.parametrize("update", [False, True], ids=["new", "update"])
def test_a_staging_folder_swapped_for_a_symlink_changes_nothing_outside_the_notes(tmp_path, update):
    # Root chmod'ed (new note) or chown'ed to the note's owner (update) the file a staged
    # name led to once its folder was a symlink: /etc/shadow made readable, or the user's.
    roam = tmp_path / "roam"
    roam.mkdir()
    os.chown(roam, 12345, 12345)
    if update:
        import_into(roam, roam / "chats")
        for r in rendered():
            os.chown(roam / "chats" / r.filename, 12345, 12345)
    victim = tmp_path / "shadow"
    victim.write_bytes(b"root:secret\n")
    victim.chmod(0o600)
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered(tags=["garden"]) if update else rendered():
        batch.stage(r)
    swap_staging_for_a_link(batch, tmp_path, victim)
    summary = batch.commit()
    st = victim.lstat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o600)
    assert victim.read_bytes() == b"root:secret\n"
    assert summary.added == summary.updated == [] and len(summary.skipped) == 2, summary


@AS_ROOT
def test_a_folder_swapped_for_a_symlink_as_the_import_makes_folders_changes_nothing_outside(tmp_path, monkeypatch):
    # chats/2026 made, then chats (the user's now) renamed away and a symlink put in its
    # place, to a folder outside holding a 2026 of root's: root gave that one to the user
    # and linked the new notes into it (or, a note not placed, removed it as its own).
    roam = tmp_path / "roam"
    roam.mkdir()
    os.chown(roam, 12345, 12345)
    outside = tmp_path / "outside"
    (outside / "2026").mkdir(parents=True)
    (outside / "2026").chmod(0o700)
    real_mkdir = os.mkdir

    def swapped_after_the_mkdir(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if os.fspath(path).endswith("2026") and not (roam / "chats").is_symlink():
            (roam / "chats").rename(roam / "away")
            (roam / "chats").symlink_to(outside)

    monkeypatch.setattr(os, "mkdir", swapped_after_the_mkdir)
    batch = ImportBatch(roam, roam / "chats" / "2026")
    for r in rendered():
        batch.stage(r)
    summary = batch.commit()
    monkeypatch.undo()
    assert summary.added == [] and all("leads out" in why for why in summary.skipped.values()), summary
    st = (outside / "2026").lstat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o700)
    assert list((outside / "2026").iterdir()) == []
