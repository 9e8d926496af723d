"""The Emacs package's parts require one another without a cycle, and each loads alone.

A part that requires another while it loads (before its own ``provide``) needs that one
loaded first; two parts doing so of each other (directly or through others) load each
other again and again until Emacs stops with "Recursive `require' for feature". The one
require allowed to go back is the main file's list of parts, run after its ``provide``
(arcology-oracle.el, "Parts"): a part's ``(require 'arcology-oracle)`` then finds the
main file loaded.

- :func:`test_no_require_cycle_among_the_parts`: the requires each file runs while it
  loads, read by Emacs from its top-level forms (not those inside a function, run when it
  is called), form a graph without a cycle; the failure names the cycle.
- :func:`test_each_part_loads_alone`: ``(require 'PART)`` in a fresh ``emacs -Q``
  (without the optional packages) loads it, and what it needs, without an error or a
  message from Emacs, and every file once: the main file's list of parts waits for the
  part being required, so that no file on the way from it to the main file is loaded
  again, nested (their top-level forms would run twice).

Each runs over every ``elisp/arcology-oracle*.el``: a new part is checked without
touching this file.
"""

from __future__ import annotations

import asyncio
import re

from tests.emacs_batch import ELISP, ELISP_FILES, MAIN_FILE, emacs_env, run_emacs

# Prints "REQUIRE FILE FEATURE before|after" for each require of a package feature that
# FILE runs while it loads: in a top-level form, at any depth, except inside the body of
# a function, macro or lambda (run when called); "after" for those after FILE's provide.
REQUIRES = """
(progn
  (defun walk (form emit)
    (when (consp form)
      (cond ((memq (car form) '(defun defmacro defsubst cl-defun cl-defmacro lambda function
                                define-derived-mode define-minor-mode))
             nil)
            ((and (eq (car form) 'require) (eq (car-safe (cadr form)) 'quote)
                  (string-prefix-p "arcology-oracle" (symbol-name (cadr (cadr form)))))
             (funcall emit (cadr (cadr form))))
            (t (while (consp form) (walk (car form) emit) (setq form (cdr form)))))))
  (dolist (file command-line-args-left)
    (let ((provided nil) (name (file-name-base file)))
      (with-temp-buffer
        (insert-file-contents file)
        (condition-case nil
            (while t
              (let ((form (read (current-buffer))))
                (if (and (eq (car-safe form) 'provide) (equal (cadr form) (list 'quote (intern name))))
                    (setq provided t)
                  (walk form (lambda (feature)
                               (princ (format "REQUIRE %s %s %s\\n" name feature
                                              (if provided "after" "before"))))))))
          (end-of-file nil)))))
  (setq command-line-args-left nil))
"""


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of EDGES (a path whose first and last names are the same), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


async def test_no_require_cycle_among_the_parts(tmp_path):
    code, output = await run_emacs(["--eval", REQUIRES, *map(str, ELISP_FILES)], env=emacs_env(tmp_path))
    assert code == 0, output
    found = re.findall(r"^REQUIRE (\S+) (\S+) (before|after)$", output, flags=re.M)
    names = {p.stem for p in ELISP_FILES}
    before: dict[str, set[str]] = {}
    for name, feature, when in found:
        assert feature in names, f"{name} requires {feature}, which no elisp/ file provides"
        if when == "before":
            before.setdefault(name, set()).add(feature)
        else:
            assert name == MAIN_FILE.stem, f"{name} requires {feature} after its provide: only the main file's parts may"
    # The walk saw the requires: the main file's parts (after) and a part's own (before).
    assert ("arcology-oracle", "arcology-oracle-memory", "after") in found, output
    assert "arcology-oracle" in before.get("arcology-oracle-memory", set()), output
    cycle = _cycle(before)
    assert cycle is None, "the parts require one another in a cycle while loading: " + " -> ".join(cycle or [])


LOAD_ALONE = """
(let ((loaded nil))
  (add-hook 'after-load-functions
            (lambda (file) (when (string-prefix-p "arcology-oracle" (file-name-nondirectory file))
                             (push (file-name-base file) loaded))))
  (require (intern (getenv "PART")))
  (princ (format "LOADED %s\\n" (mapconcat #'identity (reverse loaded) " ")))
  (unless (featurep (intern (getenv "PART")))
    (princ "NOT-PROVIDED\\n")))
"""


async def test_each_part_loads_alone(tmp_path):
    running = asyncio.Semaphore(2)

    async def load(part: str) -> tuple[str, int, str]:
        async with running:
            env = emacs_env(tmp_path, PART=part)
            code, output = await run_emacs(["-L", str(ELISP), "--eval", LOAD_ALONE], env=env)
            return part, code, output

    failed = {}
    for part, code, output in await asyncio.gather(*(load(p.stem) for p in ELISP_FILES)):
        loaded = re.search(r"^LOADED (.*)$", output, flags=re.M)
        rest = re.sub(r"^(LOADED .*|NOT-PROVIDED)\n?", "", output, flags=re.M).strip()
        if code or not loaded or "NOT-PROVIDED" in output or rest:
            failed[part] = output
            continue
        # Each once: the files on the way from the part to the main file are not
        # loaded again by the main file's list of parts.
        names = loaded.group(1).split()
        if twice := sorted({n for n in names if names.count(n) > 1}):
            failed[part] = f"{twice} loaded more than once: {names}"
        elif MAIN_FILE.stem in names and sorted(names) != sorted(p.stem for p in ELISP_FILES):
            failed[part] = f"not the whole package: {sorted(set(p.stem for p in ELISP_FILES) - set(names))} not loaded"
    assert not failed, "\n\n".join(f"(require '{part}):\n{out}" for part, out in failed.items())
