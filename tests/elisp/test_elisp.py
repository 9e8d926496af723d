"""The Emacs package (elisp/arcology-oracle.el): its ERT suite against the real daemon
and a fake Ollama, byte-compilation with warnings as errors, and checkdoc.

Needs ``emacs`` (Debian: emacs-nox) with the org-roam and magit-section packages
(elpa-org-roam, elpa-magit-section); ``.ci/run`` installs them. Nothing is skipped: a
missing Emacs fails with a message saying what to install.

Emacs runs as an asyncio subprocess so that the fake Ollama, which lives on this test's
event loop, keeps answering while Emacs talks to the daemon.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from tests.runners import REPO, start_daemon, wait_until

ELISP = REPO / "elisp"
PACKAGE = ELISP / "arcology-oracle.el"
ERT_FILE = ELISP / "test" / "arcology-oracle-test.el"
# Debian installs ELPA packages here; under `emacs -Q` package.el must be told.
DEBIAN_ELPA = Path("/usr/share/emacs/site-lisp/elpa")
WITH_PACKAGES = (
    f'(progn (add-to-list (quote package-directory-list) "{DEBIAN_ELPA}") (package-initialize))'
)
TOKEN = "elisp-test-token"
EMACS_TIMEOUT = 300


def emacs() -> str:
    path = shutil.which("emacs")
    if path is None:
        pytest.fail("emacs is not installed: install emacs-nox, elpa-org-roam and elpa-magit-section (.ci/run does)")
    return path


def require_packages() -> None:
    missing = [
        name
        for name in ("org-roam", "magit-section")
        if not any(p.name.startswith(name + "-") for p in DEBIAN_ELPA.glob("*"))
    ]
    if missing:
        debs = " ".join(f"elpa-{name}" for name in missing)
        pytest.fail(f"Emacs packages missing from {DEBIAN_ELPA}: install {debs} (.ci/run does)")


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


async def test_ert_suite_against_real_daemon(tmp_path, roam_dir, fake_ollama):
    """The whole ERT suite, against ``arcology-oracle serve`` with a token."""
    emacs()
    require_packages()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN)
    try:

        async def embedded():
            status, body = await daemon.get_json("/status")
            return status == 200 and body["pending"] == 0 and body["embedded"] > 0 and not body["indexing"]["running"]

        await wait_until(embedded, timeout=60, interval=0.1)
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        env = emacs_env(
            tmp_path,
            ARCOLOGY_ORACLE_TEST_URL=daemon.url,
            ARCOLOGY_ORACLE_TEST_TOKEN=TOKEN,
            ARCOLOGY_ORACLE_TEST_ROAM=str(roam_dir),
            ARCOLOGY_ORACLE_TEST_OLLAMA=fake_ollama.url,
            ARCOLOGY_ORACLE_TEST_TMP=str(scratch),
        )
        code, output = await run_emacs(
            ["--eval", WITH_PACKAGES, "-L", str(ELISP), "-l", "ert", "-l", str(ERT_FILE),
             "-f", "ert-run-tests-batch-and-exit"],
            env=env,
        )  # fmt: skip
    finally:
        daemon.stop()
    assert code == 0, f"ERT failed (exit {code}):\n{output}\n--- daemon log ---\n{daemon.log()}"
    assert "0 unexpected" in output, output


COMPILE = """
(progn
  (setq byte-compile-error-on-warn t
        byte-compile-dest-file-function
        (lambda (_source) (expand-file-name "arcology-oracle.elc" (getenv "ELC_DIR"))))
  (kill-emacs (if (byte-compile-file (getenv "SOURCE")) 0 1)))
"""


@pytest.mark.parametrize("packages", ["with-org-roam", "without-optional-packages"])
async def test_byte_compiles_without_warnings(tmp_path, packages):
    """No warning, with org-roam and magit-section loadable or without them (they are
    optional: the org-roam section then expands magit-section's macros at run time)."""
    if packages == "with-org-roam":
        require_packages()
    args = (["--eval", WITH_PACKAGES] if packages == "with-org-roam" else []) + ["--eval", COMPILE]
    env = emacs_env(tmp_path, ELC_DIR=str(tmp_path), SOURCE=str(PACKAGE))
    code, output = await run_emacs(args, env=env)
    assert code == 0, f"byte-compilation failed or warned:\n{output}"
    assert (tmp_path / "arcology-oracle.elc").exists()
    assert not (ELISP / "arcology-oracle.elc").exists(), "compiled into the source tree"


CHECKDOC = """
(progn
  (require 'checkdoc)
  (let ((problems nil))
    (setq checkdoc-create-error-function
          (lambda (text start _end &optional _unfixable)
            (push (format "%s:%d: %s" (buffer-file-name) (line-number-at-pos start) text) problems)
            nil))
    (checkdoc-file (getenv "SOURCE"))
    (dolist (p (reverse problems)) (message "%s" p))
    (kill-emacs (if problems 1 0))))
"""


async def test_checkdoc_is_clean(tmp_path):
    env = emacs_env(tmp_path, SOURCE=str(PACKAGE))
    code, output = await run_emacs(["--eval", CHECKDOC], env=env)
    assert code == 0, f"checkdoc found problems:\n{output}"
