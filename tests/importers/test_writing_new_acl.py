"""A chat an import writes for the first time gets the permissions a file written straight
into its folder gets there: the folder's default ACL (as the kernel gives it to a new
file), or none. The import makes it in its staging folder first, which takes the roam
directory's default ACL, not the chat folder's. Real files and the kernel's own ACLs,
compared with a file made in the same folder by ``open``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcology_oracle.importers.writing import ImportBatch
from tests.importers.test_writing_links import ANY, _acl, rendered

ACCESS, DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
# A default ACL letting group 4321 (say the family) read what is made in the folder.
FAMILY_READS = _acl((0x01, 7, ANY), (0x04, 5, ANY), (0x08, 4, 4321), (0x10, 5, ANY), (0x20, 0, ANY))
# A default ACL keeping the group and the others out of what is made in the folder.
OWNER_ONLY = _acl((0x01, 7, ANY), (0x04, 0, ANY), (0x20, 0, ANY))
# A default ACL letting user 4444 (a backup account) read, the group and the others not.
BACKUP_READS = _acl((0x01, 7, ANY), (0x02, 4, 4444), (0x04, 0, ANY), (0x10, 4, ANY), (0x20, 0, ANY))


def permissions(path: Path) -> tuple[int, bytes | None]:
    """The file's permission bits and its access ACL (None without one)."""
    try:
        acl = os.getxattr(path, ACCESS)
    except OSError:
        acl = None
    return path.stat().st_mode & 0o7777, acl


def as_written_there(folder: Path) -> tuple[int, bytes | None]:
    """The permissions a file written straight into ``folder`` gets (as Emacs writes one)."""
    probe = folder / "probe.org"
    probe.write_text("* probe\n")
    try:
        return permissions(probe)
    finally:
        probe.unlink()


def import_new(roam: Path) -> list[Path]:
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered():
        batch.stage(r)
    added = batch.commit().added
    assert len(added) == 2, added
    return [roam / rel for rel in added]


def set_default(folder: Path, acl: bytes) -> None:
    try:
        os.setxattr(folder, DEFAULT, acl)
    except OSError as exc:
        pytest.skip(f"no ACLs here ({exc.strerror})")


@pytest.mark.parametrize("chats_default", [OWNER_ONLY, BACKUP_READS, None], ids=["owner-only", "backup-reads", "none"])
def test_a_new_chat_gets_its_folders_acl_not_the_roam_directorys(tmp_path, chats_default):
    # The roam directory lets the family read what is made in it; the chats folder was
    # made before and keeps them out (or lets only a backup account in, or has no default
    # ACL). The new chats, made in the staging folder in the roam directory, took the
    # family's entry there, and kept it in the chats folder.
    roam = tmp_path / "roam"
    roam.mkdir()
    set_default(roam, FAMILY_READS)
    (roam / "chats").mkdir()
    if chats_default is None:
        os.removexattr(roam / "chats", DEFAULT)
        os.removexattr(roam / "chats", ACCESS)
    else:
        set_default(roam / "chats", chats_default)
    expected = as_written_there(roam / "chats")
    for path in import_new(roam):
        assert permissions(path) == expected, path


def test_a_new_chat_in_a_new_folder_gets_what_the_folder_inherits(tmp_path):
    # No chats folder yet: the import makes it in the roam directory, so it and the chats
    # in it take the roam directory's default ACL, as with a folder and a file made by hand.
    roam = tmp_path / "roam"
    roam.mkdir()
    set_default(roam, BACKUP_READS)
    paths = import_new(roam)
    expected = as_written_there(roam / "chats")
    assert expected[1] is not None  # the backup account's entry is there
    for path in paths:
        assert permissions(path) == expected, path


def test_a_new_chat_whose_folders_acl_cannot_be_given_is_not_written(tmp_path, monkeypatch):
    roam = tmp_path / "roam"
    roam.mkdir()
    set_default(roam, OWNER_ONLY)
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered():
        batch.stage(r)

    def not_permitted(*args, **kw):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "setxattr", not_permitted)
    summary = batch.commit()
    monkeypatch.undo()
    assert summary.added == [] and len(summary.skipped) == 2, summary
    assert all("permissions of its folder" in why for why in summary.skipped.values())
    assert not (roam / "chats").exists()  # the folder made for them is gone again
    assert sorted(p.name for p in roam.iterdir()) == []  # nor any staging folder left
