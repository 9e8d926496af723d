"""The README's gptel snippets work with the gptel of today, read by batch Emacs from
README.org's own ``emacs-lisp`` blocks (gptel itself is not packaged for Debian).

A ``:header`` function is called by gptel 0.9.9.5 and later with the request's state
(one argument), by older gptel with none: the README's took none, and gptel 0.9.9.5
warned in a ``*Warnings*`` window over the chat at every request ("calling convention
has changed: Called with 1 arguments but accept 0").
"""

from __future__ import annotations

import re

from tests.emacs_batch import emacs_env, run_emacs
from tests.test_readme_org import README

# Prints "HEADER ARGS: RESULT" for each :header function of a gptel-make-* form in
# README's emacs-lisp blocks, called with no argument and with one.
CALL_HEADERS = """
(progn
  (require 'org-element)
  (defun my/arcology-oracle-token () "tok")
  (defun walk (form)
    (when (consp form)
      (if (memq (car form) '(gptel-make-ollama gptel-make-openai))
          (let ((header (plist-get (cddr form) :header)))
            (when header
              (let ((fn (eval header t)))
                (dolist (args '(() ((:data nil :backend nil))))
                  (message "HEADER %d: %S" (length args)
                           (condition-case err (apply fn args) (error err)))))))
        (while (consp form) (walk (car form)) (setq form (cdr form))))))
  (with-temp-buffer
    (insert-file-contents (getenv "ORG_FILE"))
    (org-mode)
    (org-element-map (org-element-parse-buffer) 'src-block
      (lambda (block)
        (when (equal (org-element-property :language block) "emacs-lisp")
          (let ((code (org-element-property :value block)) (pos 0))
            (condition-case nil
                (while t
                  (let ((read (read-from-string code pos)))
                    (setq pos (cdr read))
                    (walk (car read))))
              (end-of-file nil))))))))
"""


async def test_readme_gptel_header_functions_take_gptels_request_state(tmp_path):
    code, output = await run_emacs(["--eval", CALL_HEADERS], env={**emacs_env(tmp_path), "ORG_FILE": str(README)})
    assert code == 0, output
    calls = re.findall(r"^HEADER (\d): (.*)$", output, flags=re.M)
    assert len(calls) >= 4, output  # two snippets at least, each called twice
    assert all(result == '(("Authorization" . "Bearer tok"))' for _, result in calls), output


def test_readme_names_the_llm_release_with_the_authed_ollama_provider():
    """``make-llm-ollama-authed`` came with llm 0.25.0 (its NEWS): on 0.24 the README's
    ellama snippet fails with void-function."""
    text = README.read_text()
    assert "=make-llm-ollama-authed= is in =llm= 0.25 and later" in text
