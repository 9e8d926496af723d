"""The org file walker, its filter and the root confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcology_oracle.notes.files import is_indexable_path, iter_org_files, resolve_inside, unread_reason
from tests.org_samples import VAULT


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("* x\n")


def rels(root: Path, globs=()) -> list[str]:
    result = list(iter_org_files(root, globs))
    for rel, abs_path in result:
        assert abs_path == root.resolve() / rel and abs_path.is_file()
    return [rel for rel, _ in result]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "roam"
    touch(
        root,
        "b.org", "a.org", "sub/c.org", "sub/deeper/d.org", "日本語.org",
        "skip.org.gpg", "skip.org~", "#skip.org#", ".#skip.org", "notes.txt", ".hidden.org",
        ".git/e.org", "sub/.cache/f.org", "archive/old.org", "sub/archive/older.org",
        "draft.org", "sub/draft.org", "x.sync-conflict-1.org",
    )  # fmt: skip
    return root


def test_walks_sorted_and_filters(root):
    assert rels(root) == [
        "a.org", "archive/old.org", "b.org", "draft.org", "sub/archive/older.org", "sub/c.org",
        "sub/deeper/d.org", "sub/draft.org", "x.sync-conflict-1.org", "日本語.org",
    ]  # fmt: skip


def test_the_walk_resolves_each_directory_once_not_each_file(root, monkeypatch):
    """The real path of a plain file is its directory's joined with its name: resolving
    every file (an lstat per component) was 80% of a walk of 119,000 files."""
    from arcology_oracle.notes import files

    resolved: list[str] = []
    real = os.path.realpath
    directories = [p for p in [root, *root.rglob("*")] if p.is_dir()]
    monkeypatch.setattr(files.os.path, "realpath", lambda p, **kw: resolved.append(p) or real(p, **kw))
    assert len(list(iter_org_files(root))) == 10
    assert len(resolved) <= len(directories) + 1, resolved  # and the root's own resolve()


@pytest.mark.parametrize(
    ("globs", "gone"),
    [
        (["draft.org"], {"draft.org", "sub/draft.org"}),  # no slash: any component
        (["**/draft.org"], {"draft.org", "sub/draft.org"}),  # **/ also matches zero dirs
        (["sub/draft.org"], {"sub/draft.org"}),
        (["archive/"], {"archive/old.org"}),  # with slash: from the root
        (["archive"], {"archive/old.org", "sub/archive/older.org"}),
        (["*.sync-conflict*"], {"x.sync-conflict-1.org"}),
        (["sub/*"], {"sub/archive/older.org", "sub/c.org", "sub/deeper/d.org", "sub/draft.org"}),
    ],
)
def test_exclude_globs(root, globs, gone):
    everything = set(rels(root))
    assert set(rels(root, globs)) == everything - gone
    for rel in everything:
        assert is_indexable_path(rel, globs) == (rel not in gone)


def test_is_indexable_path():
    assert is_indexable_path("a.org")
    assert is_indexable_path("journal/2024-03-01.org")
    for bad in ["a.org.gpg", "a.org~", "#a.org#", ".#a.org", ".git/a.org", "x/.hidden/a.org", "a.txt",
                "../a.org", "/abs/a.org", "", ".org", "dir/"]:  # fmt: skip
        assert not is_indexable_path(bad), bad


def test_symlinks_inside_followed_outside_not(tmp_path, root):
    outside = tmp_path / "outside"
    touch(outside, "secret.org")
    (root / "out-dir").symlink_to(outside)
    (root / "out-file.org").symlink_to(outside / "secret.org")
    (root / "sub" / "loop").symlink_to(root)  # a cycle
    (root / "sub" / "self").symlink_to(root / "sub")  # another
    (root / "alias.org").symlink_to(root / "a.org")  # duplicate of a real file
    touch(root, ".store/kept.org")
    (root / "linked-store").symlink_to(root / ".store")  # hidden real dir reached by a link
    (root / "dangling.org").symlink_to(root / "nowhere.org")
    found = rels(root)
    assert not any("secret" in r or r.startswith("out-") for r in found)
    assert "alias.org" not in found and found.count("a.org") == 1  # real path wins
    assert "linked-store/kept.org" in found
    assert not any(r.startswith("sub/loop") or r.startswith("sub/self") for r in found)
    assert "dangling.org" not in found


def test_unreadable_directory_is_skipped(root, monkeypatch):
    """A directory the walker may not list is passed over and the rest is still found.

    Tests run as root, which reads through any permission bits, so the refusal is made
    where the walker meets the operating system: ``os.scandir`` raises as it would for
    an unprivileged user on a mode-000 directory.
    """
    touch(root, "locked/x.org")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = rels(root)
    assert "locked/x.org" not in found and "a.org" in found


def test_vault_files():
    found = rels(VAULT)
    assert "journal/2024-03-01.org" in found and "日本語ノート.org" in found and "empty.org" in found
    assert found == sorted(found)


def test_resolve_inside(tmp_path, root):
    assert resolve_inside(root, "sub/c.org") == root.resolve() / "sub" / "c.org"
    assert resolve_inside(root, "new/not-yet.org") == root.resolve() / "new" / "not-yet.org"
    (root / "escape").symlink_to(tmp_path)
    (root / "inner").symlink_to(root / "sub")
    assert resolve_inside(root, "inner/c.org") == root.resolve() / "inner" / "c.org"
    for bad in ["../x.org", "sub/../../x.org", "/etc/passwd", str(tmp_path / "x.org"), "escape/x.org",
                "", "a\x00b.org", "sub/../a.org"]:  # fmt: skip
        with pytest.raises(ValueError):
            resolve_inside(root, bad)


def test_why_a_path_is_not_read():
    # "../etc/passwd" was said to be in a hidden folder (".." starts with a dot).
    assert unread_reason("../etc/passwd.org") == "it is not inside the notes directory"
    assert unread_reason("/etc/notes.org") == "it is not inside the notes directory"
    assert unread_reason("a/.hidden/b.org") == "hidden folders and files are not read"
    assert unread_reason("drafts/x.org", ["drafts/"]) == "it matches exclude_globs"
    assert unread_reason("notes/x.org") is None
