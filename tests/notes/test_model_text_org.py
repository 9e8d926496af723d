""":func:`quiet` against Org's own reading (batch Emacs, Org 9.5, ``org-element``): in
what it writes Org reads no link that runs code, and where Org read none it writes the
words and URLs as they were, byte for byte (``https://man:pass@host`` is an https link,
``powershell:`` a word).

The strings carry no LaTeX and no timestamps, which :func:`quiet` changes for other reasons."""

from __future__ import annotations

import json
import subprocess

import pytest

from arcology_oracle.notes.model_text import quiet
from tests.emacs_batch import emacs, emacs_env

pytestmark = pytest.mark.timeout(300)

# Words and URLs Org reads no link that runs code in: quiet leaves them as they are.
ORDINARY = [
    "https://man:pass@host",
    "see https://man:pass@host/x, then http://shell:secret@example.org/a.",
    "<https://man:pass@host> and [[https://eshell:pw@host/p][the host]]",
    "HTTPS://Man:pass@host and ftp://elisp:x@files.example.org/pub",
    "mailto:shell:x and file:shell:x and [[file:~/man:1.org][a file]]",
    "powershell:ls, Powershell: Get-Item, fooshell:x, iman:x, Batman:x, chairman: Sam",
    "https://x.org/?q=a,man:ls and https://a/(man:ls) and https://x.org/a.,man:ls",
    "Étienne's shell: bash, the man: page, eshell : a buffer",
    "naïveman:x déjàshell:y and 2man:1",
]
# Strings in which Org reads such a link: quiet must leave none.
ATTACKS = [
    "ssh://eshell:x@host",
    "my-shell:ls and a.shell:ls and x/man:ls and foo=man:ls and (man:ls) and \"man:ls\"",
    "https://a.b/c man:ls and https://a/(man:ls",
    "éhttps://x/man:ls and x_https://a/man:ls and $https://x/man:ls and 'https://x/man:ls",
    "id:abc/man:ls and foo:bar/man:ls and doi:10.1/man:ls",
    "\u0085https://x/man:ls and \u00a0shell:ls",
    "[[https://x][man:ls]] and [fn::https://x/ man:ls]",
    "shell:x/man:y and <shell:x man:y> and [[shell:x/man:y]]",
    # Org reads no ordinary link where something begun before takes its start or its end:
    # an unclosed bracket, a subscript or superscript, an emphasis closing in its path.
    "[[/man:_http:)][=",
    "(][_é,file:man:éeshell:,man:\\",
    "elisp:/)a^.https://elisp:中help: ",
    "/https://.elisp:help:]\\https://=]\thelp:",
    "*(/\\~https://:shell:shell:",
]
# Letters of other scripts start a word before a Latin one in Emacs: "中man:ls" is a link.
SCRIPTS = "中ɐªэαאعदก한あ\u0301\u200d\u2028·×÷¥_^~\\`|"


def _code_links(texts: list[str], tmp_path) -> list[list[str]]:
    """For each text, the links that run code Org reads in it (type:path)."""
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    elisp = """
(progn
  (require 'org) (require 'org-element) (require 'org-id) (require 'ol-eshell) (require 'ol-man) (require 'json)
  (let ((json-array-type 'list) (out nil))
    (dolist (text (json-read-file (car command-line-args-left)))
      (with-temp-buffer
        (org-mode)
        (insert text "\\n")
        (push (org-element-map (org-element-parse-buffer) 'link
                (lambda (l) (when (member (downcase (org-element-property :type l)) '("elisp" "shell" "eshell" "man"))
                              (concat (org-element-property :type l) ":" (org-element-property :path l)))))
              out)))
    (princ (json-encode (vconcat (mapcar #'vconcat (nreverse out)))))))
"""
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", elisp, str(tmp_path / "texts.json")],
        env=emacs_env(tmp_path), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_org_reads_no_code_link_in_quieted_text_and_ordinary_urls_stay_byte_for_byte(tmp_path):
    swept = [f"{c}{kind}" for c in SCRIPTS for kind in ("man:ls", "shell:ls", "https://x/man:ls", "[[https://x][y]]man:ls")]
    texts = ORDINARY + ATTACKS + swept
    before = _code_links(texts, tmp_path)
    after = _code_links([quiet(text) for text in texts], tmp_path)
    assert [(text, links) for text, links in zip(texts, after) if links] == []
    assert [quiet(text) for text in ORDINARY] == ORDINARY
    # The attacks are ones: Org read a link that runs code in each before quiet.
    assert [text for text, links in zip(ATTACKS, before[len(ORDINARY) :]) if not links] == []
