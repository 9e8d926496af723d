"""Running batch Emacs from the tests: finding it, the Debian ELPA packages, a private HOME.

Emacs runs as an asyncio subprocess so that servers living on the test's event loop (the
fake Ollama) keep answering while Emacs talks to them. Nothing is skipped: a missing
Emacs or package fails with a message saying what to install (``scripts/setup-test-deps`` does).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ELISP = REPO / "elisp"
MAIN_FILE = ELISP / "arcology-oracle.el"
# The package: the main file and its parts (a new part is picked up by every check).
ELISP_FILES = sorted(ELISP.glob("arcology-oracle*.el"))
# Debian installs ELPA packages here; under `emacs -Q` package.el must be told.
DEBIAN_ELPA = Path("/usr/share/emacs/site-lisp/elpa")
WITH_PACKAGES = (
    f'(progn (add-to-list (quote package-directory-list) "{DEBIAN_ELPA}") (package-initialize))'
)
EMACS_TIMEOUT = 300


def emacs() -> str:
    """Return the path of ``emacs``; fail the test when it is not installed."""
    path = shutil.which("emacs")
    if path is None:
        pytest.fail("emacs is not installed: install emacs-nox, elpa-org-roam and elpa-magit-section (scripts/setup-test-deps does)")
    return path


def require_packages(*names: str) -> None:
    """Fail the test unless the Debian ELPA packages NAMES are installed."""
    missing = [
        name
        for name in names or ("org-roam", "magit-section")
        if not any(p.name.startswith(name + "-") for p in DEBIAN_ELPA.glob("*"))
    ]
    if missing:
        debs = " ".join(f"elpa-{name}" for name in missing)
        pytest.fail(f"Emacs packages missing from {DEBIAN_ELPA}: install {debs} (scripts/setup-test-deps does)")


async def run_emacs(args: list[str], *, env: dict[str, str], cwd: Path = REPO) -> tuple[int, str]:
    """Run ``emacs -Q --batch ARGS``; return its exit status and combined output."""
    proc = await asyncio.create_subprocess_exec(
        emacs(), "-Q", "--batch", *args,
        cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), EMACS_TIMEOUT)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        return -1, out.decode(errors="replace") + f"\n[emacs killed after {EMACS_TIMEOUT} s]"
    return proc.returncode, out.decode(errors="replace")


def emacs_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a test Emacs: its own HOME, so no user init, authinfo or
    org-id file is read or written."""
    home = tmp_path / "emacs-home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), **extra}
