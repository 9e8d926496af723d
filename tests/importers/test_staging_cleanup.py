"""The staging folders of imports (copies of chats, private ones too) on real files with
real processes: one a killed import left is removed when the daemon starts; one a running
import holds (its flock) is not, by the daemon's start nor by another import however old
it is, and that import still lands its files; an empty one is left (an import may be
about to lock it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from arcology_oracle.importers.writing import STAGING_PREFIX, ImportBatch, remove_stale_staging
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
    left = killed_import(roam)
    proc, running = staging_import(roam)
    try:
        empty = roam / (STAGING_PREFIX + "empty")
        empty.mkdir()  # made, not yet locked (or a killed import's, before it staged anything)
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
            os.utime(path, (0, 0))  # an hour old and more: a long import
        ImportBatch(roam, roam / "other").discard()
        assert not left.exists() and running.is_dir()
        assert committed(proc) == 2
    finally:
        ended(proc)


async def test_the_daemon_removes_a_killed_imports_staging_when_it_starts(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    roam.mkdir()
    (roam / "note.org").write_text("* A note\nSome text.\n")
    left = killed_import(roam)
    proc, running = staging_import(roam)
    try:
        daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
        daemon.stop()
        assert not left.exists() and running.is_dir() and any(running.iterdir())
        assert f"removed {left.resolve()}, the staging folder of an import killed before it finished" in daemon.log()
        assert committed(proc) == 2
    finally:
        ended(proc)
