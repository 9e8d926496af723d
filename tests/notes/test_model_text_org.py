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
    "mailto:shell:x and file:notes/shell:x.org and [[file:~/man:1.org][a file]]",
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


CODE_TYPES = ("elisp", "shell", "eshell", "man")


def _code_links(texts: list[str], tmp_path, types: tuple[str, ...] = CODE_TYPES) -> list[list[str]]:
    """For each text, the links of ``types`` (those that run code) Org reads in it (type:path)."""
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    elisp = """
(progn
  (require 'org) (require 'org-element) (require 'org-id) (require 'ol-eshell) (require 'ol-man) (require 'json)
  (require 'org-attach) (require 'ol-docview)
  (let ((json-array-type 'list) (out nil))
    (dolist (text (json-read-file (car command-line-args-left)))
      (with-temp-buffer
        (org-mode)
        (insert text "\\n")
        (push (org-element-map (org-element-parse-buffer) 'link
                (lambda (l) (when (member (downcase (org-element-property :type l)) (cdr command-line-args-left))
                              (concat (org-element-property :type l) ":" (org-element-property :path l)))))
              out)))
    (princ (json-encode (vconcat (mapcar #'vconcat (nreverse out)))))))
"""
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", elisp, str(tmp_path / "texts.json"), *types],
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


# A model's file links Org may hand to the system's program (file+sys: always; a file:
# whose name Emacs does not visit itself: "open" on macOS, ShellExecute on Windows run an
# executable) or to another machine (TRAMP), and those to a local .org file, which stay.
FILE_TYPES = ("file", "file+sys", "file+emacs", "attachment", "docview")
FILE_ATTACKS = [
    "[[file+sys:/tmp/notes.org][my notes]]",
    "[[file:/tmp/run][the plan]] and file:/Applications/Calculator.app/Contents/MacOS/Calculator",
    "<file:/tmp/x.org\n /../run> (Org drops the line break: /tmp/x.org/../run)",
    "attachment:run.sh, docview:a.pdf and <FILE:run.command>",
    "[[file+emacs:/ssh:evil.example:/x.org]] and file:~/../../ssh:evil.example:/x.org",
    "[[file:///ssh:evil.example:/x.org][x]] and file:x//ssh:evil.example:/y.org",
]
FILE_KEPT = ["[[file:notes/bread.org::12][Bread]]", "file:~/man:1.org and <file:../x.org>", "[[file:x.org::*Heading]]"]


def test_org_reads_no_file_link_a_model_wrote_but_to_a_local_org_file(tmp_path):
    before = _code_links(FILE_ATTACKS + FILE_KEPT, tmp_path, FILE_TYPES)
    after = _code_links([quiet(text) for text in FILE_ATTACKS + FILE_KEPT], tmp_path, FILE_TYPES)
    assert [text for text, links in zip(FILE_ATTACKS, before) if not links] == []  # each is an attack
    assert after[: len(FILE_ATTACKS)] == [[]] * len(FILE_ATTACKS), after
    assert [quiet(text) for text in FILE_KEPT] == FILE_KEPT and after[len(FILE_ATTACKS) :] == before[len(FILE_ATTACKS) :]
