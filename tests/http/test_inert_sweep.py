"""A sweep of Org constructs through ``/memorize`` and ``/converse`` (the real daemon, the
fake Ollama, real files read back by batch Emacs's Org): whatever a captured text or
title, or a model's answer, holds, the user's bytes stay as they were, the file's
keywords, TODO words and headings are the user's, a capture or an answer is one heading,
and Org reads nothing in it but paragraphs, lists and tables (and an answer's code
blocks, never run): no keyword, drawer, clock, footnote definition, target or code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arcology_oracle.notes.org_escape import ZWSP
from tests.emacs_batch import emacs, emacs_env
from tests.fakes import FakeModel
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of

pytestmark = pytest.mark.timeout(300)

USER = (
    "#+title: A day\n#+TODO: TODO | DONE\n* Plans\n:LOGBOOK:\nCLOCK: [2026-12-06 Sun 09:00]--[2026-12-06 Sun 10:00] =>  1:00\n"
    ":END:\nA quince tree.[fn:1]\n#+begin_src emacs-lisp\n(+ 1 2)\n#+end_src\n* Later\n"
)
# (text, title): every line a construct Org reads, alone or where the line breaks are not LF.
HOSTILE = [
    ("#+begin_src emacs-lisp :eval yes\n(message \"open\")", None),
    ("#+begin_example\nleft open", "Example"),
    ("#+begin_export html\n<script>alert(1)</script>\n#+end_export", None),
    (":PROPERTIES:\n:ID: forged\n:END:", None),
    (":LOGBOOK:\n  :logbook:\nCLOCK: [2026-12-07 Mon 08:00]--[2026-12-07 Mon 20:00] =>  12:00\n:END:", "Logbook"),
    ("started at CLOCK: [2026-12-07 Mon 08:00]", "Open clock"),
    ("#+INCLUDE: \"/etc/passwd\"\n#+SETUPFILE: ~/evil.setup\n#+STARTUP: hidestars\n#+TODO: Plans | X", None),
    ("#+title: Hijacked\n#+filetags: :work:\n#+call: f()\n#+name: x\n#+macro: m (eval (kill-emacs))", None),
    ("a\r* heading after a CR\r#+filetags: :cr:", None),
    ("a\u2028* after U+2028\u0085* after U+0085\u2029#+title: after U+2029", None),
    ("\ufeff* after a BOM\n\ufeff#+title: BOM", None),
    ("[fn:1] my definition\n[fn:2] another", None),
    ("<<Plans>> and <<<quince>>>", "<<Later>>"),
    ("%%(diary-float t 1 1)\n<%%(diary-float t 1 1)>", None),
    ("src_sh{ls} call_f() {{{title}}} @@html:<b>@@", "src_sh{ls} {{{title}}}"),
    ("\\begin{equation}\nleft open", None),
    ("*\tstar tab\n**\n*** three\n* ", None),
    ("SCHEDULED: <2026-12-08 Tue>\nDEADLINE: <2026-12-09 Wed>", None),
    ("- [ ] a list\n| a | table |", None),
]
# What a capture may be read as, and what a capture's words may make.
# (A footnote reference defines nothing; a LaTeX fragment or subscript is how Org shows words.)
ALLOWED = {"headline", "section", "property-drawer", "node-property", "paragraph", "plain-list", "item",
           "table", "table-row", "table-cell", "timestamp", "bold", "link", "footnote-reference",
           "latex-fragment", "subscript", "superscript", "entity"}  # fmt: skip

_ELISP = r"""
(progn
  (require 'org)
  (require 'org-clock)
  (require 'json)
  (set-language-environment "UTF-8")
  (let* ((path (car command-line-args-left))
         (start (string-to-number (cadr command-line-args-left)))
         (buf (find-file-noselect path t)))
    (with-current-buffer buf
      (org-mode)
      (let* ((tree (org-element-parse-buffer))
             (types nil) (headings nil))
        (org-element-map tree (append org-element-all-elements org-element-all-objects)
          (lambda (e)
            (when (>= (org-element-property :begin e) start)
              (cl-pushnew (symbol-name (org-element-type e)) types :test #'equal))))
        (org-element-map tree 'headline
          (lambda (h) (push (list (org-element-property :level h) (org-element-property :raw-value h)) headings)))
        (message "SWEEP %s"
                 (json-encode
                  (list (cons 'types (vconcat types))
                        (cons 'headings (vconcat (mapcar #'vconcat (nreverse headings))))
                        (cons 'todo (vconcat org-todo-keywords-1))
                        (cons 'filetags (vconcat org-file-tags))
                        (cons 'title (cadr (assoc "TITLE" (org-collect-keywords '("TITLE")))))
                        (cons 'open_clocks (length (org-find-open-clocks path))))))))))
"""


def sweep_reading(path: Path, start: int) -> dict:
    """Org's reading of ``path``: the element and object types from character ``start``
    (1-based) on, the headings, TODO words, file tags, title and open clocks."""
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", _ELISP, str(path), str(start)],
        env=emacs_env(path.parent), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = [line.split(" ", 1)[1] for line in done.stderr.splitlines() if line.startswith("SWEEP ")]
    assert len(lines) == 1, done.stderr
    return json.loads(lines[0])


async def test_no_org_construct_in_a_capture_is_read_as_more_than_text(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    user = sweep_reading(daily, len(USER) + 1)
    assert (user["types"], user["todo"], user["title"], user["open_clocks"]) == ([], ["TODO", "DONE"], "A day", 0)
    titles, ids = [], []
    for text, title in HOSTILE:
        before = daily.read_bytes()
        status, answer = await post(daemon, "/memorize", {"text": text, "title": title})
        assert status == 200, (text, answer)
        after = daily.read_bytes()
        assert after.startswith(before), text
        added = after[len(before) :].decode()
        body = added.split(":END:\n", 1)[1].replace(ZWSP, "")
        # The text as sent (each line break a line feed; an escape's comma in front).
        sent = text.replace("\r", "\n").split("\n")
        assert [line.removeprefix(",") for line in body.rstrip("\n").split("\n")] == [s.rstrip() for s in sent], body
        titles.append(answer["title"])
        ids.append(answer["id"])
    reading = sweep_reading(daily, len(USER) + 1)
    assert {"headline", "paragraph", "plain-list", "table"} <= set(reading["types"]), reading["types"]
    assert reading["open_clocks"] == 0, reading
    assert (extra := sorted(set(reading["types"]) - ALLOWED)) == [], extra
    assert reading["headings"] == [[1, "Plans"], [1, "Later"], *([1, t] for t in titles)], reading["headings"]
    assert (reading["todo"], reading["filetags"], reading["title"]) == (["TODO", "DONE"], [], "A day")
    # Each escape is in the capture's hash: forgetting them all gives the user's bytes back.
    for node_id in reversed(ids):
        status, answer = await post(daemon, "/forget", {"id": node_id})
        assert status == 200, answer
    assert daily.read_bytes() == USER.encode()


async def test_no_org_construct_in_an_answer_is_read_as_more_than_text(daemon, roam_dir, fake_ollama):
    talks, headings = "", []
    for i, reply in enumerate([*(text for text, _ in HOSTILE), "```sh\necho fenced\n```"]):
        fake_ollama.state.chat_reply = reply
        conversation = f"* Talk {i}\n** What next?\n"
        status, answer = await post(daemon, "/converse", {"org": conversation})
        assert status == 200, answer
        # As arcology-oracle-converse inserts it: the conversation's last child.
        talks += conversation + answer["org"]
        headings += [[1, f"Talk {i}"], [2, "What next?"], [2, "Oracle"]]
    path = roam_dir / "talk.org"
    path.write_text(USER + talks)
    reading = sweep_reading(path, len(USER) + 1)
    assert reading["open_clocks"] == 0, reading
    # The model's blocks are blocks (closed where it left them open), never run (:eval no).
    assert (extra := sorted(set(reading["types"]) - ALLOWED - {"src-block", "example-block"})) == [], extra
    assert [line for line in talks.split("\n") if line.startswith("#+begin_src")] == [
        "#+begin_src emacs-lisp :eval no :tangle no :noweb no", "#+begin_src sh :eval no :tangle no :noweb no",
    ]  # fmt: skip
    assert reading["headings"] == [[1, "Plans"], [1, "Later"], *headings], reading["headings"]
    assert (reading["todo"], reading["filetags"], reading["title"]) == (["TODO", "DONE"], [], "A day")


async def test_a_model_name_with_line_breaks_stays_one_property_line(daemon, roam_dir, fake_ollama):
    # The request names the model (an Ollama-compatible server lists any name it likes):
    # the one part of an answer's heading that was written as it came.
    name = "m1\n:END:\n#+filetags: :private:\n* Injected\f"
    fake_ollama.state.models.append(FakeModel(name, "chat"))
    conversation = "* Talk\n** What next?\n"
    status, answer = await post(daemon, "/converse", {"org": conversation, "model": name})
    assert status == 200, answer
    path = roam_dir / "talk.org"
    path.write_text(USER + conversation + answer["org"])
    reading = sweep_reading(path, len(USER) + 1)
    assert reading["headings"] == [[1, "Plans"], [1, "Later"], [1, "Talk"], [2, "What next?"], [2, "Oracle"]], reading
    assert (reading["todo"], reading["filetags"], reading["title"]) == (["TODO", "DONE"], [], "A day")
    assert (extra := sorted(set(reading["types"]) - ALLOWED)) == [], extra
    assert ":ORACLE_MODEL: m1 :END: #+filetags: :private: * Injected\ufffd\n" in answer["org"], answer["org"]
