"""README.org is valid org: ``org-lint`` finds nothing in it, and every block Org parses
is one that the text opens (a line starting with ``*`` inside a block is read as a
heading and cuts the block short; escape it with a comma, as Org does).
"""

from __future__ import annotations

import re

from tests.emacs_batch import REPO, emacs_env, run_emacs

README = REPO / "README.org"

# Prints each org-lint report as "LINT LINE: TRUST: MESSAGE", then the number of blocks
# Org parsed, as "BLOCKS N".
ORG_LINT = """
(progn
  (require 'org)
  (require 'org-lint)
  (require 'org-element)
  (let ((file (getenv "ORG_FILE")))
    (with-temp-buffer
      (insert-file-contents file t)
      (let ((default-directory (file-name-directory file)))
        (org-mode)
        (dolist (report (org-lint))
          (let ((v (cadr report)))
            (message "LINT %s: %s: %s" (aref v 0) (aref v 1) (aref v 2))))
        (message "BLOCKS %d"
                 (length (org-element-map (org-element-parse-buffer)
                             '(src-block example-block quote-block verse-block
                               center-block export-block special-block comment-block)
                           #'identity)))))))
"""

# org-lint reports that are right about README.org's text but wrong about its meaning,
# each with the reason. None so far.
JUSTIFIED: dict[str, str] = {}


async def test_readme_passes_org_lint(tmp_path):
    code, output = await run_emacs(["--eval", ORG_LINT], env=emacs_env(tmp_path, ORG_FILE=str(README)))
    assert code == 0, output
    reports = [line.removeprefix("LINT ") for line in output.splitlines() if line.startswith("LINT ")]
    unjustified = [r for r in reports if r.split(": ", 2)[-1] not in JUSTIFIED]
    assert not unjustified, "org-lint on README.org:\n" + "\n".join(reports)
    opened = len(re.findall(r"^[ \t]*#\+begin_\S+", README.read_text(), re.MULTILINE | re.IGNORECASE))
    parsed = re.search(r"^BLOCKS (\d+)$", output, re.MULTILINE)
    assert parsed, output
    assert int(parsed.group(1)) == opened, "a block in README.org is cut short (a line starting with * inside it?)"


def quick_start_commands() -> list[str]:
    """The shell blocks of the README's "Quick start", in order."""
    section = README.read_text().split("\n* Quick start\n", 1)[1].split("\n* ", 1)[0]
    return [block.strip() for block in re.findall(r"^[ \t]*#\+begin_src sh\n(.*?)^[ \t]*#\+end_src", section, re.M | re.S)]


def test_ci_runs_the_readmes_second_command_verbatim():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in command for command in commands), commands
    first, second = commands
    assert first.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e . && ") and first.endswith(
        ".venv/bin/arcology-oracle serve --roam-dir examples/roam --db .example.sqlite3"
    )
    # The system packages first (tests/test_setup_test_deps.py), then the venv and the suite.
    assert second.startswith("bash scripts/setup-test-deps && python3 -m venv .venv && ")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert second in ci, ".ci/run must run the README's second command verbatim, on a line of its own"
    assert sum(1 for line in ci if "pytest" in line and not line.lstrip().startswith("#")) == 1
