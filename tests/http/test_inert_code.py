"""No text the daemon writes runs as code when the user's file is exported or its blocks
are run, through the real daemon (with the fake Ollama) and batch Emacs's Org exporting
the real files: an inline source block (``src_LANG{...}``) or Babel call
(``call_NAME(...)``), one a macro makes (an export expands them first), or an export
snippet in a capture's text or title or in a model's answer, and a model's
own source block, are words, while the user's own code (trusted, ``org-confirm-babel-evaluate``
nil, results exported by the file's ``header-args``) still runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from arcology_oracle.notes.org_escape import ZWSP
from tests.emacs_batch import emacs, emacs_env
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of

_EXPORT = r"""
(progn
  (require 'org)
  (require 'ox-ascii)
  (setq org-confirm-babel-evaluate nil)
  (org-babel-do-load-languages 'org-babel-load-languages '((emacs-lisp . t)))
  (dolist (path command-line-args-left)
    (with-current-buffer (find-file-noselect path t)
      (message "CODE-OBJECTS %S"
               (org-element-map (org-element-parse-buffer)
                   '(inline-src-block inline-babel-call babel-call src-block macro export-snippet)
                 (lambda (e) (org-element-type e))))
      (org-export-to-buffer 'ascii "*out*")
      (org-babel-execute-buffer)))
  (setq command-line-args-left nil))
"""


def run_code(ran: Path, who: str) -> str:
    """Emacs Lisp that leaves the file ``ran/who`` when it runs, and returns a string."""
    return f'(progn (write-region "" nil "{ran / who}") "done")'


def user_file(ran: Path) -> str:
    """A user's note whose code the user trusts: results exported, a named block taking
    an argument, an inline block of their own."""
    return (
        "#+title: A day\n#+PROPERTY: header-args :exports both\n"
        f"#+name: mark\n#+begin_src emacs-lisp :var who=\"user-block\"\n(progn (write-region \"\" nil (concat \"{ran}/\" who)) who)\n#+end_src\n"
        f"* Plans\nMine: src_emacs-lisp{{{run_code(ran, 'user-inline')}}}, on {{{{{{title}}}}}}.\n"
    )


def export_and_run(*paths: Path) -> list[str]:
    """Export each file with Org and run its blocks (``org-babel-execute-buffer``); the
    code objects and elements Org read in it, as batch Emacs printed them."""
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", _EXPORT, *map(str, paths)],
        env=emacs_env(paths[0].parent), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [line.split(" ", 1)[1] for line in done.stderr.splitlines() if line.startswith("CODE-OBJECTS ")]


async def test_inline_code_in_a_capture_runs_nothing_on_export(daemon, roam_dir, tmp_path):
    ran = tmp_path / "ran"
    ran.mkdir()
    daily = daily_of(roam_dir)
    daily.write_text(user_file(ran))
    before = daily.read_bytes()
    text = (
        f"Try src_emacs-lisp{{{run_code(ran, 'capture-inline')}}} today\n"
        f"and src_emacs-lisp[:results raw]{{{run_code(ran, 'capture-args')}}}, then call_mark(who=\"capture-call\")\n"
        f"or call_mark[:results silent](who=\"capture-call-args\") again"
    )
    title = f"Plan src_emacs-lisp{{{run_code(ran, 'capture-title')}}}"
    status, answer = await post(daemon, "/memorize", {"text": text, "title": title})
    assert status == 200, answer
    after = daily.read_bytes()
    assert after.startswith(before)
    added = after[len(before) :].decode()
    assert added.replace(ZWSP, "").endswith(":END:\n" + text + "\n"), added  # only zero-width spaces added
    # The user's own block (named, and its result exported) and inline block are all Org sees.
    objects = export_and_run(daily)
    assert sorted(p.name for p in ran.iterdir()) == ["user-block", "user-inline"]
    assert objects == ["(src-block inline-src-block macro)"]
    assert f"* Plan src{ZWSP}_emacs-lisp{{" in added and f"call{ZWSP}_mark(" in added


async def test_macros_in_a_capture_make_no_code_on_export(daemon, roam_dir, tmp_path):
    # An export expands macros before it runs code, and {{{keyword(NONE)}}} expands to
    # nothing: around it, what the escapes left as words became code again.
    ran = tmp_path / "ran"
    ran.mkdir()
    daily = daily_of(roam_dir)
    daily.write_text(user_file(ran))
    before = daily.read_bytes()
    none = "{{{keyword(NONE)}}}"
    text = "\n".join([
        f"Try src{none}_emacs-lisp{{{run_code(ran, 'macro-inline')}}} and call{none}_mark(who=\"macro-call\")",
        f"{none}#+begin_src emacs-lisp :exports results", run_code(ran, "macro-block"), f"{none}#+end_src",
        f"{none}#+call: mark(who=\"macro-call-line\")",
        "and @@ascii:raw text for the exported file@@ here",
    ])  # fmt: skip
    status, answer = await post(daemon, "/memorize", {"text": text, "title": f"Plan {none}"})
    assert status == 200, answer
    after = daily.read_bytes()
    assert after.startswith(before)
    assert after[len(before) :].decode().replace(ZWSP, "").endswith(":END:\n" + text + "\n")
    objects = export_and_run(daily)
    assert sorted(p.name for p in ran.iterdir()) == ["user-block", "user-inline"]
    assert objects == ["(src-block inline-src-block macro)"]


async def test_code_in_an_answer_runs_nothing_on_export(daemon, roam_dir, tmp_path, fake_ollama):
    ran = tmp_path / "ran"
    ran.mkdir()
    fake_ollama.state.chat_reply = "\n".join([
        f"Run src_emacs-lisp{{{run_code(ran, 'answer-inline')}}} or call_mark(who=\"answer-call\").",
        "```emacs-lisp", run_code(ran, "answer-fenced"), "```",
        "#+begin_src emacs-lisp :eval yes :exports both", run_code(ran, "answer-block"), "#+end_src",
    ])  # fmt: skip
    conversation = "* Talk\n** What next?\n"
    status, answer = await post(daemon, "/converse", {"org": conversation})
    assert status == 200, answer
    # As arcology-oracle-converse inserts it: the conversation's last child.
    path = roam_dir / "talk.org"
    path.write_text(user_file(ran) + conversation + answer["org"])
    # The model's blocks stay blocks (shown as code), never evaluated.
    objects = export_and_run(path)
    assert sorted(p.name for p in ran.iterdir()) == ["user-block", "user-inline"]
    assert objects == ["(src-block inline-src-block macro src-block src-block)"]
    assert answer["org"].count("#+begin_src emacs-lisp :eval no :tangle no :noweb no\n") == 2, answer["org"]
