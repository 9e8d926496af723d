"""The README's gptel snippets work with the gptel of today, read by batch Emacs from
README.org's own ``emacs-lisp`` blocks (gptel itself is not packaged for Debian).

A ``:header`` function is called by gptel 0.9.9.5 and later with the request's state
(one argument), by older gptel with none: the README's took none, and gptel 0.9.9.5
warned in a ``*Warnings*`` window over the chat at every request ("calling convention
has changed: Called with 1 arguments but accept 0").

Their token lookups read the ~/.authinfo line the package reads (README's "The token"),
checked by a real Emacs reading an authinfo file.
"""

from __future__ import annotations

import re

from tests.emacs_batch import ELISP, emacs_env, run_emacs
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


# With auth-sources the one file AUTHINFO, prints "LOOKUP FORM => RESULT" for each
# auth-source-pick-first-password form of README's emacs-lisp blocks, evaluated, and
# "PACKAGE => TOKEN" for the package's own lookup at its default URL.
AUTHINFO_LOOKUPS = """
(progn
  (require 'org-element)
  (require 'arcology-oracle-token)
  (setq auth-sources (list (getenv "AUTHINFO")))
  (defun walk (form)
    (when (consp form)
      (if (eq (car form) 'auth-source-pick-first-password)
          (message "LOOKUP %S => %S" form (eval form t))
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
              (end-of-file nil)))))))
  (message "PACKAGE => %S" (arcology-oracle-auth-token)))
"""


async def test_readme_compatible_api_reads_the_packages_authinfo_line(tmp_path):
    """One ~/.authinfo line serves the package and the README's gptel and ellama set-ups:
    the line "The token" gives (the one the package's "unauthorized" names). The gptel
    section said ``machine arcology-oracle password TOKEN`` and looked it up by that host,
    which the package never reads: with the package's line, the README's lookups found no
    token, and the daemon answered 401."""
    text = README.read_text()
    token_section = text[text.index("\n** The token\n") :]
    line = re.search(r"#\+begin_example\n(machine [^\n]+)\n#\+end_example", token_section).group(1)
    assert line == "machine 127.0.0.1 port 7348 password the-daemon-token", line
    said = re.findall(r"=(machine [^=\n]+ password TOKEN)=", text)
    assert said and set(said) == {line.replace("the-daemon-token", "TOKEN")}, said
    authinfo = tmp_path / "authinfo"
    authinfo.write_text(line + "\n")
    authinfo.chmod(0o600)
    code, output = await run_emacs(
        ["-L", str(ELISP), "--eval", AUTHINFO_LOOKUPS],
        env={**emacs_env(tmp_path), "ORG_FILE": str(README), "AUTHINFO": str(authinfo)},
    )
    assert code == 0, output
    lookups = re.findall(r"^LOOKUP (.*) => (.*)$", output, flags=re.M)
    assert len(lookups) >= 3, output  # gptel's token function, ellama's two providers
    assert all(result == '"the-daemon-token"' for _, result in lookups), lookups
    assert re.search(r'^PACKAGE => "the-daemon-token"$', output, flags=re.M), output
