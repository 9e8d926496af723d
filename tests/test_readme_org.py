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
