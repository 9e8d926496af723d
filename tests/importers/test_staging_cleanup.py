"""The staging folders of imports (copies of chats, private ones too) on real files with
real processes: one a killed import left is removed when the daemon starts; one a running
import holds (its flock) is not, by the daemon's start nor by another import however old
it is, and that import still lands its files; an empty one is left (an import may be
about to lock it); one changed in the last ten minutes is left (an import of an older
version, which takes no lock, may be writing it); and a folder of the user's that only
looks like one (its name, or what it holds) is never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arcology_oracle.importers.writing import STAGING_PREFIX, ImportBatch, remove_stale_staging
from tests.importers.test_writing_links import rendered
from tests.runners import REPO, start_daemon

FIXTURES = Path(__file__).parent / "fixtures"

# An import that stages the fixture's chats, says where, then commits when told to (a
# line on stdin) or waits to be killed.
IMPORT = """
import sys
from pathlib import Path
from arcology_oracle.importers import read_export
from arcology_oracle.importers.render import render
from arcology_oracle.importers.writing import ImportBatch
roam = Path(sys.argv[1])
batch = ImportBatch(roam, roam / "chats")
for conversation in read_export("claude", Path(sys.argv[2])):
    batch.stage(render(conversation, tags=["private"]))
print(batch._staging, flush=True)
if sys.stdin.readline().strip() == "commit":
    print(len(batch.commit().added), flush=True)
"""


def staging_import(roam: Path) -> tuple[subprocess.Popen, Path]:
    """A running import, its chats staged (and not yet committed), and its staging folder."""
    proc = subprocess.Popen([sys.executable, "-c", IMPORT, str(roam), str(FIXTURES / "claude.json")], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    staging = Path(proc.stdout.readline().strip())
    assert staging.parent == roam.resolve() and staging.name.startswith(STAGING_PREFIX), staging
    assert any(staging.iterdir())  # copies of the chats are in it
    return proc, staging


def killed_import(roam: Path) -> Path:
    """The staging folder an import killed (SIGKILL) before its commit left."""
    proc, staging = staging_import(roam)
    proc.send_signal(signal.SIGKILL)
    ended(proc)
    assert staging.is_dir()
    return staging


def aged(staging: Path, seconds: float = 11 * 60) -> Path:
    """``staging`` and what it holds last changed ``seconds`` ago."""
    when = time.time() - seconds
    for path in [*staging.iterdir(), staging]:
        os.utime(path, (when, when), follow_symlinks=False)
    return staging


def ended(proc: subprocess.Popen) -> None:
    """The import killed if it still runs, its pipes closed."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        pipe.close()


def committed(proc: subprocess.Popen) -> int:
    """Tell the running import to commit; the number of files it added."""
    out, _ = proc.communicate("commit\n", timeout=60)
    assert proc.returncode == 0
    return int(out.strip())


def test_the_start_removes_a_killed_imports_staging_and_never_a_running_ones(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    left = aged(killed_import(roam))
    proc, running = staging_import(roam)
    try:
        empty = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=roam))  # made, not yet locked
        assert remove_stale_staging(roam, any_age=True) == [left.resolve()]
        assert not left.exists() and running.is_dir() and any(running.iterdir()) and empty.is_dir()
        assert committed(proc) == 2  # the running import lands its files as if nothing happened
    finally:
        ended(proc)
    assert len(list((roam / "chats").glob("*.org"))) == 2 and not running.exists()


def test_another_import_never_removes_a_running_ones_staging_however_old(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    left = killed_import(roam)
    proc, running = staging_import(roam)
    try:
        for path in (left, running):
            aged(path, 2 * 3600)  # an hour old and more: a long import
        ImportBatch(roam, roam / "other").discard()
        assert not left.exists() and running.is_dir()
        assert committed(proc) == 2
    finally:
        ended(proc)


async def test_the_daemon_removes_a_killed_imports_staging_when_it_starts(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    roam.mkdir()
    (roam / "note.org").write_text("* A note\nSome text.\n")
    left = aged(killed_import(roam))
    proc, running = staging_import(roam)
    try:
        daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
        daemon.stop()
        assert not left.exists() and running.is_dir() and any(running.iterdir())
        assert f"removed {left.resolve()}, the staging folder of an import killed before it finished" in daemon.log()
        assert committed(proc) == 2
    finally:
        ended(proc)


def lockless_staging(roam: Path, files: dict[str, bytes]) -> Path:
    """A staging folder as an import made it (mkdtemp's name), holding ``files``, locked by none."""
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=roam))
    for name, data in files.items():
        (staging / name).write_bytes(data)
    return staging


def test_a_staging_folder_changed_in_the_last_ten_minutes_is_left_at_start(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    chats = [r.text.encode() for r in rendered()]
    writing = lockless_staging(roam, {"0.tmp": chats[0], "1.tmp": chats[1]})  # an older import, no flock
    assert remove_stale_staging(roam, any_age=True) == []
    assert sorted(p.name for p in writing.iterdir()) == ["0.tmp", "1.tmp"]
    aged(writing, 9 * 60)  # it made a file nine minutes ago
    assert remove_stale_staging(roam, any_age=True) == [] and writing.is_dir()
    aged(writing)
    assert remove_stale_staging(roam, any_age=True) == [writing.resolve()] and not writing.exists()


@pytest.mark.parametrize("any_age", [True, False])
def test_a_folder_of_the_users_that_looks_like_staging_is_never_removed(tmp_path, any_age):
    roam = tmp_path / "roam"
    roam.mkdir()
    theirs = [roam / ".arcology-import-archive", roam / (STAGING_PREFIX + "abcd1234x"), roam / (STAGING_PREFIX + "ABCD1234")]
    for folder in theirs:  # their own names: not mkdtemp's
        folder.mkdir()
        (folder / "0.tmp").write_bytes(b"precious")
    theirs += [lockless_staging(roam, {"chatgpt-export.zip": b"PK precious"}),
               lockless_staging(roam, {"0.tmp": b"x", "notes.org": b"* mine\n"}),
               lockless_staging(roam, {"0.tmp": b"x", "1.tmp.bak": b"mine"})]  # fmt: skip
    linked = lockless_staging(roam, {"0.tmp": b"x"})
    os.symlink(tmp_path / "mine.org", linked / "1.tmp")
    nested = lockless_staging(roam, {"0.tmp": b"x"})
    (nested / "2.tmp").mkdir()
    (nested / "2.tmp" / "mine.org").write_bytes(b"* mine\n")
    theirs += [linked, nested]
    killed = lockless_staging(roam, {"0.tmp": rendered()[0].text.encode(), "17.tmp": rendered()[1].text.encode()})
    for folder in [*theirs, killed]:
        aged(folder, 2 * 3600)
    assert remove_stale_staging(roam, any_age=any_age) == [killed.resolve()]
    assert all(folder.is_dir() and any(folder.iterdir()) for folder in theirs)
    assert (roam / ".arcology-import-archive" / "0.tmp").read_bytes() == b"precious"


def test_a_version_an_interrupted_update_swapped_into_staging_is_never_removed_as_stale(tmp_path, monkeypatch):
    # An update swaps its staged file with the note in one step; a sync tool had just
    # renamed the phone's version over the note, and the import was interrupted (Ctrl-C)
    # before the swap back: the phone's version, the only copy of its bytes, is left in
    # the staging folder. The discard leaves it (not a file it wrote); the stale-staging
    # clean-up an hour later deleted it, as a regular file named N.tmp.
    from arcology_oracle.importers import placing

    roam = tmp_path / "roam"
    roam.mkdir()
    batch = ImportBatch(roam, roam / "chats")
    for r in rendered():
        batch.stage(r)
    assert len(batch.commit().added) == 2
    two = roam / "chats" / rendered()[1].filename
    batch = ImportBatch(roam, roam / "chats")
    batch.stage(rendered(tags=["garden"])[1])
    phone = two.read_bytes() + b"- written on the phone\n"
    real = placing.exchange

    def interrupted(a, b):
        (two.parent / ".sync.tmp").write_bytes(phone)
        os.rename(two.parent / ".sync.tmp", two)
        real(a, b)
        raise KeyboardInterrupt  # before the swap back

    monkeypatch.setattr(placing, "exchange", interrupted)
    with pytest.raises(KeyboardInterrupt):
        batch.commit()
    monkeypatch.undo()
    (staging,) = roam.glob(STAGING_PREFIX + "*")
    assert [p.read_bytes() for p in staging.iterdir()] == [phone]  # left by the discard
    aged(staging, 2 * 3600)
    for any_age in (True, False):
        remove_stale_staging(roam, any_age=any_age)
        ImportBatch(roam, roam / "chats").discard()  # the next import's clean-up
    kept = [p for p in roam.rglob("*") if p.is_file() and p.read_bytes() == phone]
    assert kept and all(p.parent == staging for p in kept), kept


@pytest.mark.parametrize("any_age", [True, False])
def test_an_older_versions_staging_holding_the_users_version_as_n_tmp_is_left_and_its_own_removed(tmp_path, any_age):
    # Versions before N.swap swapped N.tmp itself with the note: interrupted before the swap
    # back, the phone's version (the only copy of its bytes) was left as 0.tmp, alone. A
    # folder whose every N.tmp is an import's rendering as written is removed; that one stays.
    roam = tmp_path / "roam"
    roam.mkdir()
    chat = rendered()[1].text.encode()
    phone = chat + b"- written on the phone\n"
    theirs = aged(lockless_staging(roam, {"0.tmp": phone}), 2 * 3600)
    mixed = aged(lockless_staging(roam, {"0.tmp": rendered()[0].text.encode(), "1.tmp": phone}), 2 * 3600)
    own = aged(lockless_staging(roam, {"0.tmp": chat}), 2 * 3600)
    assert remove_stale_staging(roam, any_age=any_age) == [own.resolve()]
    assert (theirs / "0.tmp").read_bytes() == phone and (mixed / "1.tmp").read_bytes() == phone
    assert not own.exists()
