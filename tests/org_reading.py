"""How Emacs's Org reads a file, for tests that compare the daemon's reading with it.

One batch Emacs (``emacs -Q --batch``, Org as shipped with Emacs) runs for as long as the
test wants it and answers requests on a pipe, so a property test can ask after every step
for the price of a few milliseconds instead of starting Emacs each time. Emacs visits each
file as a user would (``find-file-noselect``: its own detection of the coding system, the
byte order mark and the line endings) and reports, for the file and every heading, what
the reader's privacy rule depends on: the ID, the tags (inherited ones and ``#+filetags``
included, as ``org-get-tags`` gives them), ``ROAM_EXCLUDE`` and whether the heading's own
text holds a PGP block. :func:`private_lines` applies the reader's rule
(:mod:`arcology_oracle.notes.privacy`) to that, so both readings are judged the same way.

Emacs also parses an Org link (``link``): what ``org-element-context`` makes of the string,
and saves a file through ``whitespace-cleanup`` (``cleanup``), as a common
``before-save-hook`` does.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.emacs_batch import emacs

_ELISP = r"""
(progn
  (require 'org)
  (require 'org-element)
  (require 'org-id)
  (require 'json)
  (require 'whitespace)
  (set-language-environment "UTF-8")
  (defun ao-bool (x) (if x t :json-false))
  (defun ao-str (s) (and s (substring-no-properties s)))
  (defun ao-file (path)
    (let ((buf (find-file-noselect path t)) out)
      (with-current-buffer buf
        (org-mode)
        (org-with-wide-buffer
         (goto-char (point-min))
         ;; The file's own properties are those before the first heading (at point-min
         ;; when the file starts with one, org-entry-get answers for that heading).
         (push (list (cons 'line 0) (cons 'level 0)
                     (cons 'id (unless (org-at-heading-p) (ao-str (org-entry-get (point-min) "ID"))))
                     (cons 'tags (vconcat (mapcar #'ao-str org-file-tags)))
                     (cons 'exclude (unless (org-at-heading-p) (ao-str (org-entry-get (point-min) "ROAM_EXCLUDE"))))
                     (cons 'eol (coding-system-eol-type buffer-file-coding-system))
                     (cons 'coding (symbol-name buffer-file-coding-system))
                     (cons 'title (mapconcat #'identity (cdr (assoc "TITLE" (org-collect-keywords '("TITLE")))) " ")))
               out)
         (org-map-entries
          (lambda ()
            (push (list (cons 'line (line-number-at-pos)) (cons 'level (org-outline-level))
                        (cons 'title (ao-str (org-get-heading t t t t)))
                        (cons 'id (ao-str (org-entry-get nil "ID")))
                        (cons 'tags (vconcat (mapcar #'ao-str (org-get-tags))))
                        (cons 'own_tags (vconcat (mapcar #'ao-str (org-get-tags nil t))))
                        (cons 'exclude (ao-str (org-entry-get nil "ROAM_EXCLUDE")))
                        (cons 'pgp (ao-bool (save-excursion
                                              (let ((end (save-excursion (outline-next-heading) (point))))
                                                (search-forward "-----BEGIN PGP MESSAGE-----" end t))))))
                  out)))))
      (kill-buffer buf)
      (vconcat (nreverse out))))
  (defun ao-link (text)
    (with-temp-buffer
      (org-mode)
      (insert text)
      (goto-char (point-min))
      (let* ((ctx (org-element-context))
             (cb (org-element-property :contents-begin ctx))
             (ce (org-element-property :contents-end ctx)))
        (list (cons 'element (symbol-name (org-element-type ctx)))
              (cons 'type (org-element-property :type ctx))
              (cons 'path (org-element-property :path ctx))
              (cons 'begin (org-element-property :begin ctx))
              (cons 'end (org-element-property :end ctx))
              (cons 'size (point-max))
              (cons 'description (and cb ce (buffer-substring-no-properties cb ce)))))))
  (defun ao-cleanup (path)
    (let ((buf (find-file-noselect path t)))
      (with-current-buffer buf
        (whitespace-cleanup)
        (let ((make-backup-files nil) (require-final-newline nil)) (save-buffer)))
      (kill-buffer buf)
      t))
  (let (line)
    (while (setq line (ignore-errors (read-from-minibuffer "")))
      (let* ((req (json-read-from-string line))
             (answer (condition-case err
                         (cond ((assq 'file req) (ao-file (cdr (assq 'file req))))
                               ((assq 'cleanup req) (ao-cleanup (cdr (assq 'cleanup req))))
                               ((assq 'link req) (ao-link (cdr (assq 'link req)))))
                       (error (list (cons 'error (format "%S" err)))))))
        (message "ORG-ANSWER %s" (json-encode answer))))))
"""


@dataclass(frozen=True)
class OrgEntry:
    """The file (``level`` 0, ``line`` 0) or one heading, as Org reads it."""

    line: int
    level: int
    title: str
    id: str | None
    tags: frozenset[str]
    own_tags: tuple[str, ...]
    exclude: str | None
    pgp: bool

    @classmethod
    def from_json(cls, d: dict) -> OrgEntry:
        return cls(
            line=d["line"], level=d["level"], title=d.get("title") or "", id=d.get("id"),
            tags=frozenset(d.get("tags") or ()), own_tags=tuple(d.get("own_tags") or ()),
            exclude=d.get("exclude"), pgp=bool(d.get("pgp")),
        )  # fmt: skip


@dataclass(frozen=True)
class OrgFile:
    """A file as Org reads it: its level-0 entry, its headings, its line-ending type
    (0 LF, 1 CRLF, 2 CR) and coding system."""

    top: OrgEntry
    headings: tuple[OrgEntry, ...]
    eol: int
    coding: str

    def private_lines(self, hidden: Iterable[str] = ("private",)) -> set[int]:
        """Lines of the headings the reader's rule makes private (see the module docstring)."""
        return private_lines(self, hidden)

    def by_line(self) -> dict[int, OrgEntry]:
        return {h.line: h for h in self.headings}


def _excluded(entry: OrgEntry, hidden: frozenset[str]) -> bool:
    return (
        any(t.casefold() in hidden for t in entry.tags)
        or (entry.exclude is not None and entry.exclude.strip() != "nil")
        or entry.pgp
    )


def private_lines(org: OrgFile, hidden: Iterable[str] = ("private",)) -> set[int]:
    """The headings (by line) the reader must leave out: tagged (``crypt`` or ``hidden``,
    inherited and file tags included), ``ROAM_EXCLUDE`` but for ``nil``, a PGP block in
    their own text, or under such a heading; every heading when the file is."""
    rule = frozenset(t.casefold() for t in hidden) | {"crypt"}
    top_tags_private = any(t.casefold() in rule for t in org.top.tags)
    file_out = top_tags_private or (org.top.exclude is not None and org.top.exclude.strip() != "nil")
    out: set[int] = set()
    stack: list[tuple[int, bool]] = []
    for h in org.headings:
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        excluded = file_out or (bool(stack) and stack[-1][1]) or _excluded(h, rule)
        stack.append((h.level, excluded))
        if excluded:
            out.add(h.line)
    return out


class OrgProcess:
    """A batch Emacs answering on a pipe; use as a context manager."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> OrgProcess:
        self.proc = subprocess.Popen(
            [emacs(), "-Q", "--batch", "--eval", _ELISP],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=self.env, text=True, encoding="utf-8", bufsize=1,
        )  # fmt: skip
        return self

    def __exit__(self, *exc) -> None:
        assert self.proc is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()

    def _ask(self, request: dict):
        assert self.proc is not None and self.proc.poll() is None, "the Org process has exited"
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        other = []
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise AssertionError("Emacs exited:\n" + "".join(other))
            if line.startswith("ORG-ANSWER "):
                answer = json.loads(line[len("ORG-ANSWER ") :])
                if isinstance(answer, dict) and "error" in answer:
                    raise AssertionError(f"Emacs failed on {request}: {answer['error']}")
                return answer
            other.append(line)

    def read(self, path: Path) -> OrgFile:
        """How Org reads the file at ``path`` now."""
        raw = self._ask({"file": str(path)})
        entries = [OrgEntry.from_json(e) for e in raw]
        return OrgFile(entries[0], tuple(entries[1:]), raw[0]["eol"], raw[0]["coding"])

    def cleanup(self, path: Path) -> None:
        """Visit ``path`` in Org, run ``whitespace-cleanup`` and save, as a save does with
        it on ``before-save-hook`` (no backup, no final newline added: its changes only)."""
        self._ask({"cleanup": str(path)})

    def link(self, text: str) -> dict:
        """What ``org-element-context`` makes of ``text`` at its start: ``element``,
        ``type``, ``path``, ``begin``, ``end``, ``size`` (point-max), ``description``."""
        return self._ask({"link": text})


def is_one_id_link(parsed: dict, node_id: str) -> bool:
    """Whether Org read a whole string as one ``id:`` link to ``node_id``."""
    return (
        parsed["element"] == "link" and parsed["type"] == "id" and parsed["path"] == node_id
        and parsed["begin"] == 1 and parsed["end"] == parsed["size"]
    )  # fmt: skip


def index_view(rows: Sequence[dict]) -> set[tuple[int, str | None, frozenset[str]]]:
    """The heading rows of one file in the index (``Store.file_headings``), as
    ``(line, own ID, tags)`` of each heading (level 0 left out)."""
    return {(r["start_line"], r["own_id"], frozenset(r["tags"])) for r in rows if r["level"] > 0}


def org_view(org: OrgFile, hidden: Iterable[str] = ("private",)) -> set[tuple[int, str | None, frozenset[str]]]:
    """The headings Org reads that the reader's rule keeps, as :func:`index_view` shows them."""
    private = org.private_lines(hidden)
    return {(h.line, h.id, h.tags) for h in org.headings if h.line not in private}
