"""Why the U+FFFD rule (notes/privacy.py) is not narrowed to the codings the reader
guesses (notes/codings.py, GUESSES): Emacs may read a note in a coding none of them is
(its language environment decides: KOI8-R in the Russian one, ISO 8859-7 in the Greek
one, EUC-TW in Chinese-CNS, which Python cannot even decode), and a private tag written
in it reads in every guess as other letters. Only the rule, each run of U+FFFD standing
for any non-ASCII letters, keeps such a note out; dropping it for the notes whose
guesses read no private tag would serve these. Emacs (batch, ``-Q``) shows the tag."""

from __future__ import annotations

import subprocess

import pytest

from arcology_oracle.notes import reader
from arcology_oracle.notes.codings import emacs_may_read
from tests.emacs_batch import emacs, emacs_env

# The note's file tags as Emacs reads the file in the language environment ENV.
TAGS = """(progn (set-language-environment (getenv "ENV"))
  (with-temp-buffer (insert-file-contents (getenv "NOTE")) (goto-char (point-min))
    (re-search-forward "filetags: :\\\\(.*\\\\):")
    (princ (mapconcat (lambda (c) (format "%X" (encode-char c 'ucs))) (match-string 1) " "))))"""


@pytest.mark.parametrize(
    ("tag", "coding", "env"),
    [("личное", "koi8-r", "Russian"), ("личное", "cp1251", None), ("ιδιωτικό", "iso-8859-7", "Greek")],
)
def test_a_private_tag_in_a_coding_no_guess_reads_keeps_the_note_out(tmp_path, tag, coding, env):
    data = f"#+title: Notes\n#+filetags: :{tag}:\n* Morning\nunguessedsecretword\n".encode(coding)
    assert not any(f":{tag}:" in text for text in emacs_may_read(data))  # no guess reads it
    if env is not None:  # but Emacs does, in that language environment
        (tmp_path / "n.org").write_bytes(data)
        run = subprocess.run([emacs(), "-Q", "--batch", "--eval", TAGS], capture_output=True, text=True, timeout=120,
                             env=emacs_env(tmp_path, ENV=env, NOTE=str(tmp_path / "n.org")))  # fmt: skip
        assert run.stdout == " ".join(f"{ord(c):X}" for c in tag), run.stderr
    parsed = reader.read_org_bytes(data, "n.org", frozenset({"private", tag}), log_problems=False)
    assert parsed.private and parsed.headings == []
    heading = f"#+title: Notes\n* Morning :{tag}:\nunguessedsecretword\n* Evening\npublic words\n".encode(coding)
    parsed = reader.read_org_bytes(heading, "n.org", frozenset({"private", tag}), log_problems=False)
    assert [h.title for h in parsed.headings if h.level] == ["Evening"]
