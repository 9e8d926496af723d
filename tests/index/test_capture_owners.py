"""Who owns the daily (and the folders) a capture creates: a daemon run as root (in a
container, or a system service, over the user's notes) gives each the owner and group of
the folder it is made in, as an import run as root does, so the user's Emacs can save
the day's note. Real daemon, real files, real owners (the suite runs as root)."""

from __future__ import annotations

import datetime
import os
import stat

import pytest

from arcology_oracle.notes.disk import umask
from tests.index.test_write_attacks import post
from tests.runners import start_daemon

pytestmark = pytest.mark.timeout(180)
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user takes root")


def owners(root) -> dict[str, tuple[int, int, int]]:
    return {p.relative_to(root).as_posix(): (p.lstat().st_uid, p.lstat().st_gid, stat.S_IMODE(p.lstat().st_mode))
            for p in sorted(root.rglob("*"))}  # fmt: skip


@AS_ROOT
async def test_a_daily_and_folders_a_root_daemon_creates_are_the_notes_folders_owners(tmp_path, fake_ollama):
    # Before: daily/ and daily/<today>.org were root's, in a notes folder of 12345's.
    root = tmp_path / "roam"
    root.mkdir()
    (root / "a.org").write_text("* A heading\nText.\n")
    for path in (root, root / "a.org"):
        os.chown(path, 12345, 12346)
    os.chmod(root, 0o2775)
    daemon = await start_daemon(tmp_path, roam_dir=root, ollama_url=fake_ollama.url, embedded=True)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Rye starter likes 26 degrees",
                                                        "dailies_dir": "journal/days"})  # fmt: skip
        assert status == 200, body
        rel = f"journal/days/{datetime.date.today():%Y-%m-%d}.org"
        folder = (0o777 & ~umask()) | stat.S_ISGID  # the setgid of the notes folder kept
        assert owners(root) == {
            "a.org": (12345, 12346, 0o644), "journal": (12345, 12346, folder), "journal/days": (12345, 12346, folder),
            rel: (12345, 12346, 0o666 & ~umask()),
        }  # fmt: skip
        status, body = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 200, body
        assert owners(root) == {"a.org": (12345, 12346, 0o644)}
    finally:
        daemon.stop()
