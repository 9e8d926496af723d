"""``arcology-oracle import`` failing on the way: a write into the notes directory (a
full disk) is reported as a write error, a read of the export as a read error, and
nothing is imported either way."""

from __future__ import annotations

import asyncio
import errno
import os
import resource
import shutil
import signal
import sys
from pathlib import Path

from arcology_oracle.cli import main
from tests.runners import REPO, run_cli

FIXTURES = Path(__file__).resolve().parent.parent / "importers" / "fixtures"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def setup(tmp_path: Path) -> tuple[Path, Path]:
    roam = tmp_path / "roam"
    roam.mkdir()
    (roam / "kept.org").write_text("#+title: Kept\n* Mine\n")
    export = tmp_path / "conversations.json"
    shutil.copy(FIXTURES / "chatgpt.json", export)
    return roam, export


def small_files_only() -> None:
    """In the child: no file may grow past 200 bytes, and a write past it fails (EFBIG)
    instead of killing the process."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


async def test_a_write_that_fails_in_the_notes_directory_is_a_write_error(tmp_path):
    """A real write error from the kernel, without a file name (as ENOSPC is)."""
    roam, export = setup(tmp_path)
    before = snapshot(roam)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", "import", "chatgpt", str(export), "--roam-dir", str(roam),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO,
        env={**os.environ, "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}, preexec_fn=small_files_only,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    err = err.decode()
    assert proc.returncode == 1, err
    assert err.strip() == f"arcology-oracle: cannot write into {roam}: File too large; nothing was imported"
    assert "cannot read" not in err
    assert snapshot(roam) == before and sorted(p.name for p in roam.iterdir()) == ["kept.org"]  # no staging left


def test_a_full_disk_is_said_as_such(tmp_path, monkeypatch, capsys):
    roam, export = setup(tmp_path)
    before = snapshot(roam)

    def full(fd):  # a full disk, as the staged file's sync reports it
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    code = main(["import", "chatgpt", str(export), "--roam-dir", str(roam)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip() == f"arcology-oracle: cannot write into {roam}: No space left on device; nothing was imported"
    assert snapshot(roam) == before and sorted(p.name for p in roam.iterdir()) == ["kept.org"]


async def test_an_export_that_cannot_be_read_is_still_a_read_error(tmp_path):
    roam, _ = setup(tmp_path)
    before = snapshot(roam)
    folder = tmp_path / "export-folder"
    folder.mkdir()
    code, _, err = await run_cli("import", "chatgpt", str(folder), "--roam-dir", str(roam))
    assert code == 2 and f"arcology-oracle: cannot read {folder}" in err and "nothing was imported" in err, err
    assert "cannot write" not in err
    assert snapshot(roam) == before
