"""The Emacs package is clean for MELPA: every file byte-compiles with warnings as
errors (with the optional org-roam and magit-section installed and without them), passes
``checkdoc`` and ``check-declare``, the package passes ``package-lint`` (Debian:
elpa-package-lint), and package.el installs it from its files as MELPA would.

Each check runs over every ``elisp/arcology-oracle*.el``, so a new part is checked
without touching this file.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.emacs_batch import (
    ELISP, ELISP_FILES, EMACS_TIMEOUT, MAIN_FILE, REPO, WITH_PACKAGES, emacs, emacs_env, require_packages, run_emacs,
)  # fmt: skip

PARTS = ("http", "notes", "similar", "ask", "gptel", "memory")


def test_the_package_has_its_parts():
    """The checks below cover the main file and every part (no empty glob passes them)."""
    names = {p.name for p in ELISP_FILES}
    assert {"arcology-oracle.el", *(f"arcology-oracle-{part}.el" for part in PARTS)} <= names


COMPILE = """
(progn
  (setq byte-compile-error-on-warn t
        byte-compile-dest-file-function
        (lambda (source)
          (expand-file-name (concat (file-name-base source) ".elc") (getenv "ELC_DIR"))))
  (kill-emacs (if (byte-compile-file (getenv "SOURCE")) 0 1)))
"""


# With org-roam and magit-section loadable, every part compiles with the whole package
# loaded: each part requires the main file, whose list of parts loads every other one. So
# one Emacs does it for all files: the main file first, before anything of the package is
# loaded (as in a fresh Emacs), then, with the package loaded, each part in turn. A part
# that needs the main file's list to compile is test_each_part_requires_what_it_uses's.
COMPILE_ALL = """
(progn
  (setq byte-compile-error-on-warn t)
  (let ((out (getenv "ELC_DIR")))
    (setq byte-compile-dest-file-function
          (lambda (source) (expand-file-name (concat (file-name-base source) ".elc") out))))
  (let ((main (car command-line-args-left))
        (parts (cdr command-line-args-left)))
    (setq command-line-args-left nil)
    (dolist (source (cons main parts))
      (when (eq source (car parts))
        (require 'arcology-oracle))
      (message "COMPILE-START %s" (file-name-nondirectory source))
      (let ((ok (ignore-errors (byte-compile-file source))))
        (message "COMPILE-END %s %s" (file-name-nondirectory source) (if ok "ok" "failed"))))
    (kill-emacs 0)))
"""


@pytest.fixture(scope="module")
def compiled_with_org_roam(tmp_path_factory) -> tuple[dict[str, tuple[bool, str]], str]:
    """``({file name: (compiled without a warning, its output)}, the whole output)`` of
    :data:`COMPILE_ALL` over every file, with org-roam and magit-section loadable; the
    ``.elc`` files go to a directory of their own."""
    require_packages()
    tmp = tmp_path_factory.mktemp("compiled-with-org-roam")
    parts = [p for p in ELISP_FILES if p != MAIN_FILE]
    result = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", WITH_PACKAGES, "-L", str(ELISP), "--eval", COMPILE_ALL,
         str(MAIN_FILE), *map(str, parts)],
        cwd=REPO, env=emacs_env(tmp, ELC_DIR=str(tmp)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        timeout=EMACS_TIMEOUT,
    )  # fmt: skip
    output = result.stdout.decode(errors="replace")
    assert result.returncode == 0, output
    files: dict[str, tuple[bool, str]] = {}
    for match in re.finditer(r"^COMPILE-START (\S+)\n(.*?)^COMPILE-END \1 (ok|failed)$", output, re.M | re.S):
        name, said, outcome = match.groups()
        files[name] = (outcome == "ok" and (tmp / (Path(name).stem + ".elc")).exists(), said)
    return files, output


@pytest.mark.parametrize("packages", ["with-org-roam", "without-optional-packages"])
@pytest.mark.parametrize("source", ELISP_FILES, ids=lambda p: p.name)
async def test_byte_compiles_without_warnings(tmp_path, source, packages, request):
    """No warning, with org-roam and magit-section loadable (all files in one Emacs:
    :func:`compiled_with_org_roam`) or without them, each file in a fresh Emacs (they
    are optional: the org-roam section then expands magit-section's macros at run time)."""
    if packages == "with-org-roam":
        files, output = request.getfixturevalue("compiled_with_org_roam")
        assert source.name in files, f"{source.name} was not compiled:\n{output}"
        compiled, said = files[source.name]
        assert compiled, f"byte-compiling {source.name} failed or warned:\n{said}"
    else:
        env = emacs_env(tmp_path, ELC_DIR=str(tmp_path), SOURCE=str(source))
        code, output = await run_emacs(["-L", str(ELISP), "--eval", COMPILE], env=env)
        assert code == 0, f"byte-compiling {source.name} failed or warned:\n{output}"
        assert (tmp_path / (source.stem + ".elc")).exists()
    assert not list(ELISP.glob("*.elc")), "compiled into the source tree"


PARTS_BLOCK = re.compile(
    r"^\(cl-eval-when \(load eval\)\n  \(arcology-oracle--after-the-part-being-loaded\n(?:    \(require '[a-z-]+\)\)*\n)+",
    re.M,
)


async def test_each_part_requires_what_it_uses(tmp_path):
    """Each part byte-compiles without warnings when requiring the main file does not load
    every other part (the list at the end of ``arcology-oracle.el``, which the test above
    runs at compile time too): a part that uses another's functions, variables or macros
    requires it, or declares them. One fresh Emacs a part, two at a time."""
    require_packages()
    copy = tmp_path / "elisp"
    shutil.copytree(ELISP, copy)
    main = copy / MAIN_FILE.name
    text, count = PARTS_BLOCK.subn("", main.read_text())
    assert count == 1, "the list of parts at the end of arcology-oracle.el was not found"
    main.write_text(text)
    parts = [copy / p.name for p in ELISP_FILES if p != MAIN_FILE]
    running = asyncio.Semaphore(2)

    async def compile_one(source):
        async with running:
            out = tmp_path / source.stem
            out.mkdir()
            env = emacs_env(tmp_path, ELC_DIR=str(out), SOURCE=str(source))
            return source.name, await run_emacs(["--eval", WITH_PACKAGES, "-L", str(copy), "--eval", COMPILE], env=env)

    failed = {name: output for name, (code, output) in await asyncio.gather(*map(compile_one, parts)) if code}
    assert not failed, "\n\n".join(f"{name}:\n{output}" for name, output in failed.items())


CHECKDOC = """
(progn
  (require 'checkdoc)
  (let ((problems nil))
    (setq checkdoc-create-error-function
          (lambda (text start _end &optional _unfixable)
            (push (format "%s:%d: %s" (file-name-nondirectory (buffer-file-name))
                          (line-number-at-pos start) text)
                  problems)
            nil))
    (dolist (file command-line-args-left) (checkdoc-file file))
    (setq command-line-args-left nil)
    (dolist (p (reverse problems)) (message "%s" p))
    (kill-emacs (if problems 1 0))))
"""


async def test_checkdoc_is_clean(tmp_path):
    code, output = await run_emacs(
        ["--eval", CHECKDOC, *map(str, ELISP_FILES)], env=emacs_env(tmp_path)
    )
    assert code == 0, f"checkdoc found problems:\n{output}"


# Every complaint of package-lint, one per line, as FILE:LINE:COL: TYPE: MESSAGE. The
# parts are linted as parts of the main file's package (`package-lint-main-file`): the
# prefix and dependencies come from there.
PACKAGE_LINT = """
(progn
  (require 'package-lint)
  (let ((main (expand-file-name (car command-line-args-left)))
        (files command-line-args-left))
    (setq command-line-args-left nil)
    (dolist (file files)
      (with-temp-buffer
        (insert-file-contents file t)
        (emacs-lisp-mode)
        (let ((package-lint-main-file (unless (equal (expand-file-name file) main) main)))
          (pcase-dolist (`(,line ,col ,type ,message) (package-lint-buffer))
            (message "COMPLAINT %s:%d:%d: %s: %s"
                     (file-name-nondirectory file) line col type message)))))
    (message "LINTED %d" (length files))
    (kill-emacs 0)))
"""

# package-lint 0.16 (Debian 12) was released before Emacs 28.1 and warns that any
# dependency on Emacs 28 "makes the package uninstallable in all released Emacs
# versions". Emacs 28.1 came out in April 2022 and this package needs it
# (`string-search`), so that one warning, on the main file's Package-Requires line, is
# the linter's age, not the package's fault.
STALE_EMACS_28_WARNING = (
    "arcology-oracle.el:7:23: warning: "
    "This makes the package uninstallable in all released Emacs versions."
)


async def test_package_lint_is_clean(tmp_path):
    require_packages("package-lint")
    files = [MAIN_FILE, *(p for p in ELISP_FILES if p != MAIN_FILE)]
    code, output = await run_emacs(
        ["--eval", WITH_PACKAGES, "--eval", PACKAGE_LINT, *map(str, files)],
        env=emacs_env(tmp_path),
    )
    assert code == 0, output
    assert f"LINTED {len(files)}" in output, output
    complaints = [
        line.removeprefix("COMPLAINT ") for line in output.splitlines() if line.startswith("COMPLAINT ")
    ]
    assert '(emacs "28.1")' in MAIN_FILE.read_text().splitlines()[6]
    unexplained = [c for c in complaints if c != STALE_EMACS_28_WARNING]
    assert not unexplained, "package-lint complains:\n" + "\n".join(complaints)


CHECK_DECLARE = """
(progn
  (require 'check-declare)
  (let ((problems (apply #'check-declare-files command-line-args-left)))
    (setq command-line-args-left nil)
    (message "PROBLEMS %S" problems)
    (kill-emacs (if problems 1 0))))
"""


async def test_declared_functions_are_where_they_are_said_to_be(tmp_path):
    """Every `declare-function' naming a part of the package (the main file's key map
    binds commands defined in the parts) names the file that defines it, with its
    arguments. Declarations of optional libraries ("ext:") are checked when installed."""
    code, output = await run_emacs(
        ["--eval", WITH_PACKAGES, "-L", str(ELISP), "--eval", CHECK_DECLARE, *map(str, ELISP_FILES)],
        env=emacs_env(tmp_path),
    )
    assert code == 0, f"check-declare found problems:\n{output}"


INSTALL = """
(progn
  (require 'package)
  (setq package-user-dir (getenv "ELPA_DIR"))
  (package-initialize)
  (package-install-file (getenv "PACKAGE_DIR"))
  (message "INSTALLED %S" (package-installed-p 'arcology-oracle)))
"""

AUTOLOADS = """
(progn
  (setq package-user-dir (getenv "ELPA_DIR"))
  (package-initialize)
  (message "BEFORE-LOAD %S %S %S %S"
           (featurep 'arcology-oracle)
           (autoloadp (symbol-function 'arcology-oracle-similar-mode))
           (autoloadp (symbol-function 'arcology-oracle-gptel-add-tools))
           (keymapp arcology-oracle-command-map))
  (require 'arcology-oracle)
  (message "AFTER-LOAD %S"
           (mapcar (lambda (f) (and (featurep f) t))
                   '(arcology-oracle-http arcology-oracle-notes arcology-oracle-similar
                     arcology-oracle-ask arcology-oracle-gptel)))
  (message "COMPILED %S" (byte-code-function-p (symbol-function 'arcology-oracle--http-feed))))
"""


async def test_installs_with_package_el(tmp_path):
    """package.el installs the files as one multi-file package (as from MELPA): it
    compiles them, the autoloads of commands defined in the parts and of the key map
    work before anything is loaded, and loading the main file loads every part."""
    package_dir = tmp_path / "src" / "arcology-oracle"
    package_dir.mkdir(parents=True)
    for source in ELISP_FILES:
        shutil.copy(source, package_dir)
    env = emacs_env(tmp_path, ELPA_DIR=str(tmp_path / "elpa"), PACKAGE_DIR=str(package_dir) + "/")
    code, output = await run_emacs(["--eval", INSTALL], env=env)
    assert code == 0 and "INSTALLED t" in output, output
    code, output = await run_emacs(["--eval", AUTOLOADS], env=env)
    assert code == 0, output
    assert "BEFORE-LOAD nil t t t" in output, output
    assert "AFTER-LOAD (t t t t t)" in output, output
    assert "COMPILED t" in output, output


README = ELISP.parent / "README.org"
AUTOLOADED = re.compile(r"^;;;###autoload\n\((?:defun|define-minor-mode|define-globalized-minor-mode|defvar) (\S+)", re.M)

SETUP_CHECK = """
(progn
  (message "LOADED-AT-START %S" (featurep 'arcology-oracle))
  (message "NOT-AUTOLOADED %S"
           (seq-remove (lambda (s) (and (fboundp s) (autoloadp (symbol-function s))))
                       (mapcar #'intern (split-string (getenv "AUTOLOADED")))))
  (message "KEY %S" (key-binding (kbd "C-c o M")))
  (message "LOADED-BY-KEY %S" (featurep 'arcology-oracle))
  (message "NOT-DEFINED %S"
           (seq-remove (lambda (s) (and (fboundp s) (not (autoloadp (symbol-function s)))))
                       (mapcar #'intern (split-string (getenv "AUTOLOADED"))))))
"""


def readme_block(name: str) -> str:
    """The source block of README.org named NAME (``#+name: NAME``)."""
    match = re.search(rf"^#\+name: {name}\n#\+begin_src emacs-lisp\n(.*?)^#\+end_src", README.read_text(), re.M | re.S)
    assert match, f"README.org has no source block named {name}"
    return match.group(1)


async def test_readme_setup_works_in_a_bare_emacs_28(tmp_path):
    """The README's set-up for a bare Emacs 28.1 (no use-package, no keymap-set) needs
    nothing installed, loads nothing at start-up, autoloads every command and function
    the package marks for autoloading, and its key loads the package when pressed."""
    setup = readme_block("emacs-28-setup").replace("~/src/arcology-oracle/elisp", str(ELISP))
    autoloaded = sorted(
        {name for path in ELISP_FILES for name in AUTOLOADED.findall(path.read_text())} - {"arcology-oracle-command-map"}
    )
    assert "arcology-oracle-memorize" in autoloaded and "arcology-oracle-similar-section" in autoloaded
    code, output = await run_emacs(
        ["--eval", f"(progn {setup})", "--eval", SETUP_CHECK], env=emacs_env(tmp_path, AUTOLOADED=" ".join(autoloaded))
    )
    assert code == 0, output
    assert "LOADED-AT-START nil" in output, output
    assert "NOT-AUTOLOADED nil" in output, output
    assert "KEY arcology-oracle-memorize" in output, output
    assert "LOADED-BY-KEY t" in output and "NOT-DEFINED nil" in output, output
    assert "use-package" not in setup and "keymap-set" not in setup and "require" not in setup


def test_readme_use_package_setup_defers_the_same_commands():
    """The use-package set-up (Emacs 29) names in ``:commands`` the commands the Emacs 28
    set-up autoloads: one it left out (``arcology-oracle-global-similar-mode``,
    ``arcology-oracle-forget-token``...) was "[No match]" at M-x until something else
    loaded the package, and void in an ``:init``."""
    text = README.read_text()
    start = text.index("(use-package arcology-oracle\n")
    block = text[start : text.index("#+end_src", start)]
    commands = re.search(r":commands \(([^)]*)\)", block)
    assert commands, block
    in_28 = re.search(r"\(dolist \(command '\(([^)]*)\)\)", readme_block("emacs-28-setup"))
    assert in_28, "the Emacs 28 set-up's list of commands was not found"
    assert sorted(commands.group(1).split()) == sorted(in_28.group(1).split())
