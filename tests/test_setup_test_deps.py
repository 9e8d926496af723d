"""``scripts/setup-test-deps``, the first step of the README's second command: on
Debian/Ubuntu it installs exactly the missing system packages with apt-get (through sudo
when not root), elsewhere it says what to install and lets the Python tests run.

The script runs for real under bash with ``PATH`` set to a directory of stand-ins: the
commands it looks for (present or not), ``id`` (root or not), and ``apt-get`` and
``sudo``, which only record how they were called. Nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.runners import REPO

SCRIPT = REPO / "scripts" / "setup-test-deps"
EVERY_PACKAGE = ["python3-venv", "curl", "tmux", "emacs-nox", "elpa-org-roam", "elpa-magit-section", "elpa-package-lint",
                 "chromium"]  # fmt: skip


def stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!{shutil.which('bash')}\n{body}\n")
    path.chmod(0o755)


def run_setup(tmp_path: Path, *, have: set[str], uid: int = 1000, sudo: bool = True, apt: bool = True,
              env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:  # fmt: skip
    """Run the script; ``have``: the commands and ELPA packages present. Returns the run
    and the recorded ``sudo``/``apt-get`` calls, one line each."""
    bin_dir, elpa, calls = tmp_path / "bin", tmp_path / "elpa", tmp_path / "calls"
    bin_dir.mkdir()
    elpa.mkdir()
    for tool in ("cat", "env"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    stub(bin_dir, "id", f"echo {uid}")
    stub(bin_dir, "python3", "exit 0" if "python3-venv" in have else "exit 1")
    for command in ("curl", "tmux", "emacs", "chromium"):
        if command in have:
            stub(bin_dir, command, "exit 0")
    for package in ("org-roam", "magit-section", "package-lint"):
        if package in have:
            (elpa / f"{package}-1.0").mkdir()
    if sudo:
        stub(bin_dir, "sudo", f'echo "sudo $*" >> {calls}\nexec "$@"')
    if apt:
        stub(bin_dir, "apt-get", f'echo "apt-get $*" >> {calls}')
    proc = subprocess.run(
        [shutil.which("bash"), str(SCRIPT)], capture_output=True, text=True, timeout=60, cwd=REPO,
        env={"PATH": str(bin_dir), "HOME": str(tmp_path), "ARCOLOGY_ORACLE_ELPA_DIR": str(elpa), **(env or {})},
    )  # fmt: skip
    return proc, calls.read_text().splitlines() if calls.exists() else []


ALL = {"python3-venv", "curl", "tmux", "emacs", "chromium", "org-roam", "magit-section", "package-lint"}


def test_nothing_missing_installs_nothing(tmp_path):
    proc, calls = run_setup(tmp_path, have=ALL)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "" and calls == [], proc


@pytest.mark.parametrize("uid,prefix", [(1000, "sudo env"), (0, "env")])
def test_debian_installs_exactly_the_missing_packages(tmp_path, uid, prefix):
    proc, calls = run_setup(tmp_path, have={"python3-venv", "emacs", "magit-section"}, uid=uid)
    assert proc.returncode == 0, proc
    missing = "curl tmux elpa-org-roam elpa-package-lint chromium"
    assert f"installing {missing}" in proc.stdout
    apt = [c for c in calls if c.startswith("apt-get")]
    assert apt == [
        "apt-get update -qq",
        f"apt-get install -y -qq --no-install-recommends {missing}",
    ], calls
    assert [c for c in calls if c.startswith("sudo")] == (
        [f"sudo env DEBIAN_FRONTEND=noninteractive {c}" for c in apt] if uid else []
    )


def test_everything_missing_on_a_bare_debian(tmp_path):
    proc, calls = run_setup(tmp_path, have=set())
    assert calls[-1] == "apt-get install -y -qq --no-install-recommends " + " ".join(EVERY_PACKAGE), calls


def test_chromium_named_by_the_environment_counts(tmp_path):
    chromium = tmp_path / "Chromium"
    stub(tmp_path, "Chromium", "exit 0")
    proc, calls = run_setup(tmp_path, have=ALL - {"chromium"}, env={"ARCOLOGY_ORACLE_CHROMIUM": str(chromium)})
    assert proc.returncode == 0 and calls == [], proc


def test_not_root_without_sudo_says_what_to_run_and_lets_the_tests_run(tmp_path):
    proc, calls = run_setup(tmp_path, have=ALL - {"curl"}, sudo=False)
    assert proc.returncode == 0 and calls == []
    assert "apt-get update && apt-get install -y --no-install-recommends curl" in proc.stderr
    assert "the Python tests run anyway" in proc.stderr


def test_without_apt_get_it_says_what_to_install_and_lets_the_tests_run(tmp_path):
    proc, calls = run_setup(tmp_path, have={"python3-venv", "curl", "tmux"}, apt=False)
    assert proc.returncode == 0 and calls == [], proc
    err = proc.stderr
    assert "not a Debian/Ubuntu system" in err and "emacs-nox elpa-org-roam elpa-magit-section" in err
    assert "ARCOLOGY_ORACLE_CHROMIUM" in err and "The Python tests run anyway." in err


def test_the_script_is_executable():
    assert os.access(SCRIPT, os.X_OK)
