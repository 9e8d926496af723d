"""Text the daemon writes into the user's files stays inert (notes/org_escape.py, used by
notes/capture.py and notes/conversations.py): no ``Local Variables`` block, ``-*-``
cookie, form feed, NUL, ``<<target>>`` or ``#+`` keyword in captured text or in a model's
answer changes how Emacs or Org reads the user's file. The bytes are appended to real
files and batch Emacs (Org 9.5) visits them as a user would (:func:`emacs_reading`)."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest

from arcology_oracle.answers.sources import Source, sources_plain_block
from arcology_oracle.errors import BadRequest
from arcology_oracle.notes.capture import make_capture, render_capture
from arcology_oracle.notes.conversations import org_safe, render_answer
from arcology_oracle.notes.org_escape import LOCAL_VARIABLES_REACH, ZWSP, escape_line, hides_local_variables
from tests.emacs_batch import emacs, emacs_env

NOW = datetime.datetime(2026, 3, 14, 9, 26)
# A user's file: UTF-8 text, a heading a [[Plans]] link resolves to, a word a radio
# target could take; and the same with the user's own Local Variables block.
USER = "#+title: A day\n* Plans\nA quince tree, café au lait. See [[Plans]].\n* Later\n"
USER_BLOCK = USER + "# Local Variables:\n# fill-column: 42\n# End:\n"
USER_READING = {
    "mode": "org-mode", "utf8": True, "fill_column": 70, "filetags": [], "todo": ["TODO", "DONE"],
    "targets": [], "radio_links": 0, "plans_line": 2, "footnotes": [],
}  # fmt: skip

_ELISP = r"""
(progn
  (require 'org)
  (require 'json)
  (set-language-environment "UTF-8")
  (dolist (path command-line-args-left)
    (let ((buf (find-file-noselect path t)))
      (with-current-buffer buf
        (let ((mode major-mode) (fc fill-column))
          (org-mode)
          (let ((tree (org-element-parse-buffer)))
            (message "ESCAPE-READING %s"
                     (json-encode
                      (list (cons 'mode (symbol-name mode))
                            (cons 'coding (symbol-name buffer-file-coding-system))
                            (cons 'utf8 (if (save-excursion (goto-char (point-min)) (search-forward "café" nil t)) t :json-false))
                            (cons 'fill_column fc)
                            (cons 'filetags (vconcat (mapcar #'substring-no-properties org-file-tags)))
                            (cons 'todo (vconcat org-todo-keywords-1))
                            (cons 'targets (vconcat (org-element-map tree '(target radio-target)
                                                      (lambda (e) (org-element-property :value e)))))
                            (cons 'radio_links (length (org-element-map tree 'link
                                                         (lambda (l) (and (equal (org-element-property :type l) "radio") l)))))
                            (cons 'footnotes (vconcat (org-element-map tree '(footnote-definition footnote-reference)
                                                        (lambda (e) (and (or (eq (org-element-type e) 'footnote-definition)
                                                                             (eq (org-element-property :type e) 'inline))
                                                                         (org-element-property :label e))))))
                            (cons 'plans_line (save-excursion
                                                (goto-char (point-max))
                                                (ignore-errors (org-link-search "Plans"))
                                                (line-number-at-pos)))))))))
      (kill-buffer buf)))
  (setq command-line-args-left nil))
"""


def emacs_reading(*paths: Path) -> list[dict]:
    """How batch Emacs reads each file (visited as a user visits it, local variables and
    coding cookies obeyed): the major mode it picked, whether the UTF-8 ``café`` decodes,
    ``fill-column``, then in Org: file tags, TODO keywords, targets, radio links, the
    line a ``[[Plans]]`` link leads to, and the labels the file defines footnotes for
    (definitions and inline definitions). ``coding`` is informative only."""
    run = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", _ELISP, *map(str, paths)],
        env=emacs_env(paths[0].parent), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = [json.loads(line.split(" ", 1)[1]) for line in run.stderr.splitlines() if line.startswith("ESCAPE-READING ")]
    assert len(out) == len(paths), run.stderr
    for reading in out:
        reading.pop("coding")
    return out


def capture_bytes(text: str, title: str | None = None, source: str | None = None) -> bytes:
    entry = make_capture(text, title=title, tags=(), now=NOW, node_id="c-1", source=source)
    return render_capture(entry, rel="daily/d.org", eol=b"\n")


def test_the_user_files_read_as_expected(tmp_path):
    (tmp_path / "a.org").write_text(USER)
    (tmp_path / "b.org").write_text(USER_BLOCK)
    assert emacs_reading(tmp_path / "a.org", tmp_path / "b.org") == [USER_READING, {**USER_READING, "fill_column": 42}]


# -- 1. file-local variables, pages and the -*- cookie -----------------------------------


@pytest.mark.parametrize(
    "text",
    ["Local Variables:\nmode: text\nfill-column: 7\nEnd:", "Local Variables:\ncoding: latin-1\nEnd:",
     "# LOCAL VARIABLES: #\n# mode: text #\n# End: #", "see: local variables: here\nsee: mode: text here\nsee: End: here"],
)  # fmt: skip
def test_a_local_variables_block_in_a_capture_sets_nothing(tmp_path, text):
    (tmp_path / "a.org").write_bytes(USER.encode() + capture_bytes(text, title="Call notes"))
    # The user's own block comes first (Emacs takes the first in the last page), and stays.
    (tmp_path / "b.org").write_bytes(USER_BLOCK.encode() + capture_bytes(text, title="Call notes"))
    assert emacs_reading(tmp_path / "a.org", tmp_path / "b.org") == [USER_READING, {**USER_READING, "fill_column": 42}]
    assert b"ocal" + ZWSP.encode() + b" " in (tmp_path / "a.org").read_bytes().replace(b"OCAL", b"ocal")


def test_local_variables_in_a_title_or_source_are_broken_too():
    entry = make_capture("x", title="Local Variables: y", tags=(), now=NOW, source="[[file:a.org][LOCAL VARIABLES:]]")
    assert entry.lines[0] == f"* Local{ZWSP} Variables: y"
    assert f":SOURCE:   [[file:a.org][LOCAL{ZWSP} VARIABLES:]]" in entry.lines


@pytest.mark.parametrize("title", ["Plan -*- coding: latin-1 -*-", "-*- mode: text; fill-column: 7 -*-"])
def test_a_title_on_the_first_line_of_an_empty_file_is_no_mode_cookie(tmp_path, title):
    path = tmp_path / "d.org"
    path.write_bytes(capture_bytes("café au lait\n* Plans\n[[Plans]]", title=title))  # the file was empty
    reading = emacs_reading(path)[0]
    assert (reading["mode"], reading["utf8"], reading["fill_column"]) == ("org-mode", True, 70)
    assert b"-*-" not in path.read_bytes()


@pytest.mark.parametrize("field", ["text", "title", "source"])
@pytest.mark.parametrize("char", ["\f", "\x00", "\x1b", "\x0b", "\x01", "\x1f"])
def test_control_characters_are_refused(field, char):
    parts = {"text": "remember", "title": None, "source": None, field: f"a{char}b"}
    with pytest.raises(BadRequest, match=f"{field} holds a .*U\\+{ord(char):04X}"):
        make_capture(parts["text"], title=parts["title"], tags=(), now=NOW, source=parts["source"])


def test_tabs_and_every_line_ending_are_still_taken():
    entry = make_capture("a\tb\r\nc\rd\ne", title="t\tx", tags=(), now=NOW, source="s\tx")
    assert entry.lines[-4:] == ("a\tb", "c", "d", "e")
    assert entry.lines[0] == "* t x" and ":SOURCE:   s x" in entry.lines


# -- 3. targets ------------------------------------------------------------------------------


def test_targets_in_a_capture_take_no_link_of_the_user(tmp_path):
    path = tmp_path / "d.org"
    data = USER.encode() + capture_bytes("see <<Plans>> and <<<quince>>> here", title="About <<Plans>>")
    path.write_bytes(data)
    assert emacs_reading(path) == [USER_READING]
    assert f"<{ZWSP}<Plans>>".encode() in data and f"<{ZWSP}<{ZWSP}<quince>>>".encode() in data


# -- 4. footnotes ------------------------------------------------------------------------------


# The user's references wait for definitions not written yet: a [fn:1] line or a
# [fn:soak:...] of the daemon's would become them (what Org shows, exports and jumps to).
USER_FOOTNOTES = USER.replace("* Later\n", "Soaked overnight[fn:1], see also[fn:soak] and[fn:4].\n* Later\n")


def test_footnotes_in_a_capture_define_none_of_the_users_labels(tmp_path):
    path = tmp_path / "d.org"
    user = USER_FOOTNOTES
    # Org reads footnotes in any letter case: [FN:4] defines the user's [fn:4].
    text = "[fn:1] captured by the oracle\nsoak it[fn:soak: an inline one] and [fn:: anonymous]\n[FN:4] upper\n[fn:2]"
    data = user.encode() + capture_bytes(text, title="Beans[fn:3: in a title]")
    path.write_bytes(data)
    assert emacs_reading(path) == [{**USER_READING, "plans_line": 2}]
    # Inert, not rewritten: the words stay, each label behind a zero-width space or a comma.
    written = data.decode()
    assert f"[{ZWSP}fn:soak: an inline one] and [fn:: anonymous]" in written and f"* Beans[{ZWSP}fn:3: in a title]" in written
    assert "\n,[fn:1] captured by the oracle\n" in written and written.endswith("\n,[fn:2]\n")
    assert "\n,[FN:4] upper\n" in written


def test_footnotes_in_an_answer_define_none_of_the_users_labels(tmp_path):
    path = tmp_path / "d.org"
    answer = "Beans soften faster in salted water.\n\n[fn:1] Kenji, 2019.\nAs said before[Fn:soak: overnight].\n[FN:4] x"
    heading = render_answer(answer, "- [1] A note", level=2, model="m", when=NOW)
    path.write_text(USER_FOOTNOTES.replace("* Later\n", "* Talk\n** Why salt?\n" + heading + "* Later\n"))
    assert emacs_reading(path) == [USER_READING]


# -- 5. the model's answer (/converse) ---------------------------------------------------------

HOSTILE_ANSWER = "\n".join([
    "Put this line at the top of the file:",
    "#+filetags: :private:",
    "#+TODO: WAIT | FIN",
    "  #+startup: overview",
    ":PROPERTIES:",
    ":END:",
    "It is <<Plans>>, a <<<quince>>>.",
    "Local Variables:",
    "mode: text",
    "End:",
    "```python",
    "print('<<noweb>>')  # Local Variables:",
    "#+end_src",
    "```",
    "#+BEGIN_SRC sh :tangle ~/.bashrc",
    "echo hi",
    "#+end_src",
    "#+begin_example",
    "#+filetags: :inside:",
])  # fmt: skip


def test_keywords_targets_and_local_variables_in_an_answer_change_nothing(tmp_path):
    path = tmp_path / "d.org"
    heading = render_answer(HOSTILE_ANSWER, "- [1] A note", level=2, model="m", when=NOW)
    conversation = "* Talk\n** What next?\n" + heading
    path.write_text(USER.replace("* Later\n", conversation + "* Later\n"))
    assert emacs_reading(path) == [USER_READING]
    lines = org_safe(HOSTILE_ANSWER).split("\n")
    assert lines[1:6] == [",#+filetags: :private:", ",#+TODO: WAIT | FIN", ",  #+startup: overview", ",:PROPERTIES:", ",:END:"]
    # The model's blocks stay blocks: Org's escapes inside, header arguments dropped, closed.
    assert lines[10:] == [
        "#+begin_src python :eval no :tangle no :noweb no", f"print('<<noweb>>')  # Local{ZWSP} Variables:", ",#+end_src", "#+end_src",
        "#+begin_src sh :eval no :tangle no :noweb no", "echo hi", "#+end_src", "#+begin_example", ",#+filetags: :inside:", "#+end_example",
    ]  # fmt: skip


def test_a_sources_title_with_targets_takes_no_link_of_the_user(tmp_path):
    # A note's title is the user's text too, or an imported chat's: in the answer's
    # sources list, its <<<quince>>> made every quince of the file a radio link.
    source = Source(1, "n-1", "Notes on <<<quince>>> and <<Plans>>", "Notes on <<<quince>>> and <<Plans>>", "n.org", 1, 0.9)
    heading = render_answer("Prune in late winter [1].", sources_plain_block([source]), level=2, model="m", when=NOW)
    path = tmp_path / "d.org"
    path.write_text(USER.replace("* Later\n", "* Talk\n** When to prune?\n" + heading + "* Later\n"))
    assert emacs_reading(path) == [USER_READING]
    assert f"Notes on <{ZWSP}<{ZWSP}<quince>>> and <{ZWSP}<Plans>>" in heading


def test_control_characters_in_an_answer_are_never_written(tmp_path):
    # A NUL makes Emacs open the whole file as binary; a form feed starts a page.
    answer = org_safe("Here is \x00 a NUL, a page\x0cbreak, and ESC\x1b$B, with a\ttab.")
    assert answer == "Here is \ufffd a NUL, a page\ufffdbreak, and ESC\ufffd$B, with a\ttab."
    path = tmp_path / "d.org"
    path.write_text(USER.replace("* Later\n", "* Talk\n** What next?\n" + render_answer(
        "A NUL \x00 here", "- [1] A note", level=2, model="m", when=NOW) + "* Later\n"))  # fmt: skip
    assert emacs_reading(path) == [USER_READING]


def test_the_reach_of_emacs_s_local_variables_search_is_counted_in_its_characters():
    # Emacs reads a file with any lone LF as LF: a CRLF there is two characters (the CR
    # shows as ^M). Counted as one, a capture could push the block out of reach.
    block = "# Local Variables:\n# fill-column: 42\n# End:\n"
    tail = "x\n" + block + "filler\r\n" * 40
    from_block = len(tail) - tail.index("Local Variables:")  # the characters of an LF buffer
    assert hides_local_variables(tail, "y" * (LOCAL_VARIABLES_REACH - from_block + 1), "\n")
    assert not hides_local_variables(tail, "y" * (LOCAL_VARIABLES_REACH - from_block), "\n")
    # In a CRLF file each CRLF is one newline; in a CR file each CR.
    for eol in ("\r\n", "\r"):
        other = ("x\n" + block + "filler\n" * 40).replace("\n", eol)
        assert hides_local_variables(other, "y" * (LOCAL_VARIABLES_REACH - from_block + 41), eol)
        assert not hides_local_variables(other, "y" * (LOCAL_VARIABLES_REACH - from_block + 40), eol)


def test_escape_line_is_the_one_rule():
    assert escape_line("#+title: x") == ",#+title: x"
    assert escape_line(":END:") == ",:END:"
    assert escape_line("[fn:1] a definition") == ",[fn:1] a definition"
    assert escape_line(" [fn:1] indented: a reference") == " [fn:1] indented: a reference"
    assert escape_line("a[fn:x-1:inline] b[fn:1] c[fn::anonymous]") == f"a[{ZWSP}fn:x-1:inline] b[fn:1] c[fn::anonymous]"
    # Org's labels take more than \w in an org buffer: ', %, $, combining marks.
    assert escape_line("[fn:it's] a definition") == ",[fn:it's] a definition"
    assert escape_line("see [fn:50%:inline] and [fn:e\u0301t\u00e9:x]") == f"see [{ZWSP}fn:50%:inline] and [{ZWSP}fn:e\u0301t\u00e9:x]"
    assert escape_line("a <<b>> c") == f"a <{ZWSP}<b>> c"
    # A file with CR line endings is one "first line" to Emacs's search for -*- cookies.
    assert escape_line("plain text, -*- coding: latin-1 -*-") == f"plain text, -{ZWSP}*- coding: latin-1 -{ZWSP}*-"


@pytest.mark.parametrize("space", ["\u0085", "\u1680", "\u2028", "\u2029", "\u00a0"])
def test_a_footnote_label_with_a_space_org_reads_as_a_letter_is_escaped_too(tmp_path, space):
    # In an org buffer these are word characters: "[fn:a<space>b]" is one label there.
    user = USER.replace("* Later\n", f"Soaked[fn:a{space}b].\n* Later\n")
    path = tmp_path / "d.org"
    data = user.encode() + capture_bytes(f"[fn:a{space}b] the oracle's\nand [fn:a{space}b: inline]", title="Beans")
    path.write_bytes(data)
    assert emacs_reading(path)[0]["footnotes"] == []


# -- 6. code Org would run on export ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "inert_text"),
    [("src_sh{ls}", f"src{ZWSP}_sh{{ls}}"), ("src_sh[:x 1]{ls}", f"src{ZWSP}_sh[:x 1]{{ls}}"),
     ("call_f(a=1)", f"call{ZWSP}_f(a=1)"), ("{{{keyword(NONE)}}}", f"{{{ZWSP}{{{{keyword(NONE)}}}}}}"),
     ("{{{{x}}}}", f"{{{{{ZWSP}{{{{x}}}}}}}}"), ("@@html:<b>@@", f"@{ZWSP}@html:<b>@@"),
     # What Org reads as none of them stays as it is.
     ("src_ {ls}", "src_ {ls}"), ("call_me maybe", "call_me maybe"), ("{{ a }}", "{{ a }}"),
     ("me@@example.com: hi", "me@@example.com: hi"), ("SRC_sh{ls}", "SRC_sh{ls}"),
     # A clock line, and a clock left running (a timestamp ending the line), in any case.
     ("  clock: [2026-12-07 Mon 08:00]--[x]", f"  clock{ZWSP}: [2026-12-07 Mon 08:00]--[x]"),
     ("since CLOCK: [2026-12-07 Mon 08:00]", f"since CLOCK{ZWSP}: [2026-12-07 Mon 08:00]"),
     ("at 5 o'clock: tea", "at 5 o'clock: tea"), ("CLOCK: [a] then", f"CLOCK{ZWSP}: [a] then")],
)  # fmt: skip
def test_inline_code_macros_export_snippets_and_clocks_are_broken(text, inert_text):
    assert escape_line(text) == inert_text
    assert org_safe(text) == inert_text.strip()
