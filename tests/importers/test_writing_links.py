"""The import's writer never renames over what the user has in a way that changes it: a
symlink, a hard-linked file, a read-only file, a link out of the roam directory, a file
written to between staging and the rename, a file that appears where a new one goes, a
file whose owner and group the import cannot keep.
Each is skipped with its reason in the summary; every byte of the notes (and of the file
outside) is compared before and after. Real files, in process; the CLI for the link out."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import struct
from pathlib import Path

import pytest

from arcology_oracle.importers import read_export
from arcology_oracle.importers.render import render
from arcology_oracle.importers.writing import ImportBatch
from tests.runners import run_cli

FIXTURES = Path(__file__).parent / "fixtures"


def rendered(tags=()):
    return [render(c, tags=tags) for c in read_export("claude", FIXTURES / "claude.json")]


def tree(root: Path) -> dict[str, object]:
    """Every file's bytes, mode and inode, every symlink's target, below ``root``."""
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_file():
            st = path.stat()
            found[rel] = (path.read_bytes(), stat.S_IMODE(st.st_mode), st.st_ino)
    return found


@pytest.fixture
def imported(tmp_path):
    """A roam dir with the fixture's two chats imported into ``chats/``: (root, paths)."""
    roam = tmp_path / "roam"
    roam.mkdir()
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered():
        batch.stage(r)
    assert len(batch.commit().added) == 2
    return roam, [roam / "chats" / r.filename for r in rendered()]


def reimport(roam: Path):
    """Import the same chats again, changed (a tag), so every file would be rewritten."""
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered(tags=["garden"]):
        batch.stage(r)
    return batch


def test_a_symlink_a_hard_link_and_a_read_only_file_are_skipped_unchanged(imported, tmp_path):
    roam, (one, two) = imported
    # one: a symlink to the chat, moved elsewhere in the notes.
    (roam / "kept").mkdir()
    moved = roam / "kept" / one.name
    os.rename(one, moved)
    os.symlink(Path("..") / "kept" / one.name, one)
    # two: hard-linked from a backup, then read-only (two reasons; either is enough).
    os.link(two, roam / "backup.org")
    before = tree(roam)
    summary = reimport(roam).commit()
    assert summary.updated == summary.added == []
    assert "symbolic link" in summary.skipped[f"chats/{one.name}"]
    assert "hard links" in summary.skipped[f"chats/{two.name}"]
    assert tree(roam) == before

    os.unlink(roam / "backup.org")
    os.chmod(two, 0o444)
    before = tree(roam)
    summary = reimport(roam).commit()
    assert "read-only" in summary.skipped[f"chats/{two.name}"] and summary.updated == []
    assert tree(roam) == before
    # Control: writable, one name, no link: updated.
    os.chmod(two, 0o644)
    summary = reimport(roam).commit()
    assert summary.updated == [f"chats/{two.name}"] and "#+filetags: :garden:" in two.read_text()


def test_a_symlink_out_of_the_roam_directory_is_skipped_not_a_traceback(imported, tmp_path):
    roam, (one, two) = imported
    outside = tmp_path / "synced"
    outside.mkdir()
    shutil.move(one, outside / one.name)
    os.symlink(outside / one.name, one)
    link = f"chats/{one.name}"
    before, outside_before = tree(roam)[link], tree(outside)
    summary = reimport(roam).commit()
    assert "symbolic link" in summary.skipped[link] and summary.updated == [f"chats/{two.name}"]
    assert tree(roam)[link] == before and tree(outside) == outside_before


async def test_the_cli_reports_a_symlink_out_of_the_roam_directory_as_skipped(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    env = {"TZ": "UTC"}
    args = ("import", "claude", str(FIXTURES / "claude.json"), "--into", "chats", "--roam-dir", str(roam))
    code, out, err = await run_cli(*args, env=env)
    assert code == 0, err
    one = next((roam / "chats").iterdir())
    outside = tmp_path / "synced"
    outside.mkdir()
    shutil.move(one, outside / one.name)
    # Changed outside, so the import would update it: it must not, nor fail.
    (outside / one.name).write_text((outside / one.name).read_text().replace("#+title:", "#+title: x"))
    os.symlink(outside / one.name, one)
    before, outside_before = tree(roam), tree(outside)
    code, out, err = await run_cli(*args, env=env)
    assert code == 0 and "Traceback" not in err, err
    assert f"skipped: chats/{one.name}: it is a symbolic link" in err
    assert tree(roam) == before and tree(outside) == outside_before


def test_a_line_appended_just_before_the_rename_is_kept(imported, monkeypatch):
    roam, (_, two) = imported
    batch = ImportBatch(roam, roam / "chats")
    batch.stage(rendered(tags=["garden"])[1])  # two only
    real_fchmod = os.fchmod

    def another_writer_appends(fd, mode):  # after the checks of old, before the rename
        with open(two, "ab") as fh:
            fh.write(b"- a line of mine\n")
        return real_fchmod(fd, mode)

    monkeypatch.setattr(os, "fchmod", another_writer_appends)
    summary = batch.commit()
    monkeypatch.undo()
    assert two.read_bytes().endswith(b"- a line of mine\n")
    assert "changed while importing" in summary.skipped[f"chats/{two.name}"]
    assert f"chats/{two.name}" not in summary.updated


def test_a_new_file_never_lands_on_one_that_appeared_meanwhile(tmp_path, monkeypatch):
    roam = tmp_path / "roam"
    roam.mkdir()
    target = roam / "chats"
    batch = ImportBatch(roam, target)
    for r in rendered():
        batch.stage(r)
    first = target / rendered()[0].filename
    real_fchmod = os.fchmod

    def user_saves_a_file_of_that_name(fd, mode):
        if not first.exists():
            first.write_bytes(b"* my own note that happens to have this name\n")
        return real_fchmod(fd, mode)

    monkeypatch.setattr(os, "fchmod", user_saves_a_file_of_that_name)
    summary = batch.commit()
    monkeypatch.undo()
    assert first.read_bytes() == b"* my own note that happens to have this name\n"
    assert "appeared while importing" in summary.skipped[f"chats/{first.name}"]
    assert summary.added == [f"chats/{rendered()[1].filename}"]
    assert not any(p.name.startswith(".arcology-import-") for p in roam.iterdir())


def test_every_file_is_on_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    # After a power loss, a note must be the old one or the new one, never empty: the
    # staged bytes are synced before the rename, and the directory after it.
    events: list[str] = []
    real_fsync, real_replace, real_link = os.fsync, os.replace, os.link

    def fsync(fd):
        events.append("fsync " + ("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", lambda *a, **k: (events.append("rename"), real_replace(*a, **k))[1])
    monkeypatch.setattr(os, "link", lambda *a, **k: (events.append("link"), real_link(*a, **k))[1])
    target = tmp_path / "chats"
    batch = ImportBatch(tmp_path, target)
    for r in rendered():
        batch.stage(r)
    batch.commit()
    placed = [i for i, e in enumerate(events) if e in ("rename", "link")]
    assert placed
    for i in placed:
        assert "fsync file" in events[:i] and events[i + 1] == "fsync dir", events


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX access ACL as the kernel stores it (``system.posix_acl_access``): version 2,
    then (tag, permissions, id) for each entry, sorted by tag."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


ANY = 0xFFFFFFFF  # the id of an entry that names no user or group
# rw- for the owner, nothing for user 4321 (say someone in the file's group), r-- for the
# group (and as the mask), nothing for the others: setfacl -m u:4321:--- on a 0640 file.
DENY_ONE_USER = _acl((0x01, 6, ANY), (0x02, 0, 4321), (0x04, 4, ANY), (0x10, 4, ANY), (0x20, 0, ANY))


def test_an_update_keeps_the_files_extended_attributes_and_acl(imported):
    # A chat's file whose ACL keeps one user of its group out, and which a desktop tagged
    # (user.xdg.tags): the update renamed a new file over it, which had neither, so that
    # user could read the chat again and the tags were gone.
    roam, paths = imported
    try:
        os.setxattr(paths[0], "user.xdg.tags", b"health,garden")
        os.setxattr(paths[0], "system.posix_acl_access", DENY_ONE_USER)
    except OSError as exc:
        pytest.skip(f"no extended attributes or ACLs here ({exc.strerror})")
    before = {name: os.getxattr(paths[0], name) for name in os.listxattr(paths[0])}
    mode = paths[0].stat().st_mode
    summary = reimport(roam).commit()
    assert sorted(summary.updated) == sorted(f"chats/{p.name}" for p in paths), summary
    assert "#+filetags: :garden:" in paths[0].read_text()
    assert {name: os.getxattr(paths[0], name) for name in os.listxattr(paths[0])} == before
    assert paths[0].stat().st_mode == mode
    assert os.listxattr(paths[1]) == []


def test_a_file_whose_acl_the_import_cannot_give_is_skipped_unchanged(imported, monkeypatch):
    roam, paths = imported
    try:
        os.setxattr(paths[0], "system.posix_acl_access", DENY_ONE_USER)
    except OSError as exc:
        pytest.skip(f"no ACLs here ({exc.strerror})")
    before = tree(roam)
    batch = reimport(roam)

    def not_permitted(*args, **kw):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "setxattr", not_permitted)
    summary = batch.commit()
    monkeypatch.undo()
    assert summary.updated == [f"chats/{paths[1].name}"], summary
    assert "system.posix_acl_access" in summary.skipped[f"chats/{paths[0].name}"]
    assert tree(roam)[f"chats/{paths[0].name}"] == before[f"chats/{paths[0].name}"]
    assert os.getxattr(paths[0], "system.posix_acl_access") == DENY_ONE_USER


def test_an_update_gives_no_acl_the_file_had_not(imported):
    # The roam directory's default ACL lets group 4321 read what is made in it; a chat the
    # user keeps from them has none (setfacl -b). The update's new version, made in the
    # import's staging folder there, got that ACL and kept it: group 4321 read the chat.
    roam, paths = imported
    os.chmod(paths[0], 0o640)
    reads_4321 = _acl((0x01, 7, ANY), (0x04, 5, ANY), (0x08, 4, 4321), (0x10, 5, ANY), (0x20, 0, ANY))
    try:
        os.setxattr(roam, "system.posix_acl_default", reads_4321)
    except OSError as exc:
        pytest.skip(f"no ACLs here ({exc.strerror})")
    assert os.listxattr(paths[0]) == []
    summary = reimport(roam).commit()
    assert f"chats/{paths[0].name}" in summary.updated, summary
    assert os.listxattr(paths[0]) == []
    assert paths[0].stat().st_mode & 0o7777 == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user takes root")
def test_an_update_keeps_the_files_owner_and_group(imported):
    # An import run as root (sudo) over notes that are the user's: each rewritten file
    # became root's, so the user's Emacs could no longer save it (and a file of a shared
    # group, its group lost, could no longer be written by the others).
    roam, paths = imported
    for path in paths:
        os.chown(path, 4321, 4322)
    summary = reimport(roam).commit()
    assert sorted(summary.updated) == sorted(f"chats/{p.name}" for p in paths), summary
    for path in paths:
        assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4322)
        assert "#+filetags: :garden:" in path.read_text()


def test_a_file_whose_owner_the_import_cannot_keep_is_skipped_unchanged(imported, monkeypatch):
    # Not root, and not in the file's group: the replacement would be the importer's,
    # in its own group, and the others of the file's group could not write it any more.
    roam, paths = imported
    before = tree(roam)
    st = paths[0].stat()

    def not_permitted(fd, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    def staged_in_the_importers_group(fd, real=os.fstat):  # the staged file is given its owner by descriptor
        found = real(fd)
        return _with_gid(found, st.st_gid + 1) if ".arcology-import-" in os.readlink(f"/proc/self/fd/{fd}") else found

    batch = reimport(roam)
    monkeypatch.setattr(os, "fchown", not_permitted)
    monkeypatch.setattr(os, "fstat", staged_in_the_importers_group)
    summary = batch.commit()
    assert summary.updated == [] and len(summary.skipped) == 2, summary
    assert all("cannot give a file" in why for why in summary.skipped.values())
    monkeypatch.undo()
    assert tree(roam) == before


def _with_gid(st: os.stat_result, gid: int) -> os.stat_result:
    fields = list(st)
    fields[stat.ST_GID] = gid
    return os.stat_result(fields)


def test_a_version_renamed_over_the_file_just_before_the_update_is_kept(imported, monkeypatch):
    # A sync tool renames the phone's version of an imported file over it after the
    # import's last check, just before its own rename: the rename replaced whatever held
    # the name, so the phone's version, every byte of it, was lost.
    from arcology_oracle.importers import placing

    roam, (_, two) = imported
    batch = ImportBatch(roam, roam / "chats")
    batch.stage(rendered(tags=["garden"])[1])  # two only
    phone = two.read_bytes() + b"- written on the phone\n"
    done = []

    def sync_tool_first(real):
        def move(src, dst, *args, **kwargs):
            if os.fspath(dst) == os.fspath(two) and not done:
                done.append(True)
                (two.parent / ".sync.tmp").write_bytes(phone)
                os.rename(two.parent / ".sync.tmp", two)
            return real(src, dst, *args, **kwargs)

        return move

    monkeypatch.setattr(os, "replace", sync_tool_first(os.replace))
    monkeypatch.setattr(placing, "exchange", sync_tool_first(placing.exchange))
    summary = batch.commit()
    monkeypatch.undo()
    assert done and two.read_bytes() == phone
    assert "changed while importing" in summary.skipped[f"chats/{two.name}"]
    assert sorted(p.name for p in roam.rglob("*") if p.is_file()) == sorted(p.name for p in imported[1])


def test_a_version_swapped_out_is_kept_when_the_name_is_gone_before_the_swap_back(imported, monkeypatch):
    # The update swapped the staged file with a version a sync tool had just renamed over
    # the name, and the name was deleted before the swap back (a sync tool that deletes,
    # then writes): the swap back failed, and the version, left in the staging folder,
    # was removed with it.
    from arcology_oracle.importers import placing

    roam, (_, two) = imported
    batch = ImportBatch(roam, roam / "chats")
    batch.stage(rendered(tags=["garden"])[1])
    phone = two.read_bytes() + b"- written on the phone\n"
    calls = []
    real = placing.exchange

    def racing(a, b):
        calls.append(True)
        if len(calls) == 1:
            (two.parent / ".sync.tmp").write_bytes(phone)
            os.rename(two.parent / ".sync.tmp", two)
        else:
            os.unlink(two)
        return real(a, b)

    monkeypatch.setattr(placing, "exchange", racing)
    summary = batch.commit()
    monkeypatch.undo()
    assert len(calls) == 2 and f"chats/{two.name}" in summary.skipped
    assert [p.read_bytes() for p in roam.rglob("*") if p.is_file() and p.read_bytes() == phone]


def test_an_update_where_a_sandbox_refuses_renameat2_is_still_made(imported, monkeypatch):
    # A seccomp filter that does not know renameat2 (older container runtimes and
    # sandboxes) answers EPERM, not ENOSYS: every update of an import was skipped, 'cannot
    # write it: Operation not permitted', where a rename works.
    import ctypes

    from arcology_oracle.notes import renames

    def refused(*args):
        ctypes.set_errno(errno.EPERM)
        return -1

    class Sandboxed:
        def __init__(self, *args, **kwargs):
            self.renameat2 = refused

    roam, (_, two) = imported
    batch = ImportBatch(roam, roam / "chats")
    batch.stage(rendered(tags=["garden"])[1])
    monkeypatch.setattr(renames.ctypes, "CDLL", Sandboxed)
    summary = batch.commit()
    monkeypatch.undo()
    assert summary.updated == [f"chats/{two.name}"], summary.skipped
    assert b"garden" in two.read_bytes()
