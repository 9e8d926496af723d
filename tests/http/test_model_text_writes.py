"""Text the user did not type, written into an org file by the real daemon (a model's
answer from ``/converse``, the oracle's words kept by ``/memorize`` with ``role``, a chat
log written by ``arcology-oracle import``), read back by batch Emacs's Org: no link in it
runs code when clicked (``elisp:``, ``shell:``, ``eshell:``, ``man:``; a description no
longer hides one), no timestamp in it lands on the user's agenda, and its LaTeX export
holds no ``\\write18`` or ``\\input`` of the model's, while ``id:``, ``file:`` and
``https:`` links, inactive dates and ordinary math stay. What the user types into a
capture is kept as typed: their own ``elisp:`` link and appointment work."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arcology_oracle.notes.org_escape import ZWSP
from tests.emacs_batch import emacs, emacs_env
from tests.importers.test_import_emacs import heading_states
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of
from tests.runners import run_cli, wait_indexed

pytestmark = pytest.mark.timeout(300)

USER = "#+title: A day\n* Dentist\n<2026-12-07 Mon 09:00> at [[elisp:(find-file \"~/dentist.org\")][the plan]]\n"
NOTE_ID = "36fb47dd-e96a-4b44-80ce-b246a771f11d"  # bread-hydration.org's: a /converse answer's id: links to no note are quieted
MODEL = (
    'See [[elisp:(delete-file "notes.org")][the note]], [[shell:rm -rf ~][this one]], [[ELISP:(kill-emacs)]],\n'
    "elisp:kill-emacs, <shell:touch pwned> and eshell:ls.\n"
    f"Keep [[id:{NOTE_ID}][a note]], [[file:x.org][a file]] and [[https://orgmode.org][Org]].\n"
    "Meet on <2026-12-08 Tue 10:00>, weekly from <2026-12-09 Wed +1w>, away <2026-12-10 Thu>--<2026-12-11 Fri>.\n"
    "Nested: <1-1-1 <2026-12-13 Sun>>, <2026-12-14 Mon <2026-12-15 Tue>> and <0-0-0<2026-12-16 Wed 10:00>>.\n"
    "Math $\\frac{a}{b} + \\alpha^2$ stays; \\write18{touch pwned} \\(\\input{/etc/passwd}\\) $^^5cinput{x}$ do not.\n"
    "```sh\necho <2026-12-12 Sat>\n```"
)
# Org's reading of a file: its links (type and path), the days its agenda lists, its
# LaTeX export's body.
_ELISP = r"""
(progn
  (require 'org)
  (require 'org-agenda)
  (require 'ox-latex)
  (require 'org-id)
  (require 'ol-eshell)
  (require 'ol-man)
  (require 'json)
  (set-language-environment "UTF-8")
  (let* ((path (car command-line-args-left)) (links nil) (days nil) (latex nil))
    (with-current-buffer (find-file-noselect path t)
      (org-mode)
      (org-element-map (org-element-parse-buffer) 'link
        (lambda (l) (push (vector (org-element-property :type l) (org-element-property :path l)) links)))
      (let ((org-export-use-babel nil) (org-export-with-broken-links 'mark))
        (setq latex (org-export-as 'latex nil nil t))))
    (setq org-agenda-files (list path) org-agenda-start-on-weekday nil)
    (org-agenda-list nil (cadr command-line-args-left) 14)
    (with-current-buffer org-agenda-buffer-name
      (goto-char (point-min))
      (while (not (eobp))
        (when-let ((marker (get-text-property (point) 'org-marker)))
          (push (format "%s %s" (pcase-let ((`(,m ,d ,y) (calendar-gregorian-from-absolute (get-text-property (point) 'day))))
                                 (format "%04d-%02d-%02d" y m d))
                        (buffer-substring-no-properties (line-beginning-position) (line-end-position)))
                days))
        (forward-line 1)))
    (message "READING %s" (json-encode (list (cons 'links (vconcat (nreverse links)))
                                             (cons 'agenda (vconcat (nreverse days)))
                                             (cons 'latex latex))))))
"""


def org_reading(path: Path, agenda_from: str = "2026-12-06") -> dict:
    """What Org makes of ``path``: ``links`` ([type, path], in order), ``agenda`` (the
    entries its agenda lists from ``agenda_from`` for 14 days, each its day and line), ``latex``
    (the body of its LaTeX export)."""
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", _ELISP, str(path), agenda_from],
        env=emacs_env(path.parent), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    lines = [line.split(" ", 1)[1] for line in done.stderr.splitlines() if line.startswith("READING ")]
    assert len(lines) == 1, done.stderr
    return json.loads(lines[0])


def assert_quiet(reading: dict) -> None:
    """Only the user's links and appointment are live; the model's words stay words."""
    assert [link for link in reading["links"] if link[0].lower() in ("elisp", "shell", "eshell", "man")] == [
        ["elisp", '(find-file "~/dentist.org")']
    ], reading["links"]  # the user's own
    assert {("id", NOTE_ID), ("file", "x.org"), ("https", "//orgmode.org")} <= {tuple(link) for link in reading["links"]}
    assert [entry.split(" ", 1)[0] for entry in reading["agenda"]] == ["2026-12-07"], reading
    # (the user's dentist: nothing of the model's)
    latex = reading["latex"]
    assert "\\frac{a}{b}" in latex and "\\alpha" in latex, latex
    for command in ("\\write18", "\\input{", "^^5c"):
        assert command not in latex.replace("\\textbackslash{}", "\\"), (command, latex)


async def test_a_models_answer_in_a_conversation_runs_nothing_and_schedules_nothing(daemon, roam_dir, fake_ollama):
    # The cited note below must be found: a question asked while the start's indexing
    # still embeds waits for its own embedding behind it, and past search_embed_wait
    # goes on by keywords alone (on a loaded machine, "no notes were relevant enough").
    await wait_indexed(daemon)
    fake_ollama.state.chat_reply = MODEL
    conversation = "* Talk\n** When did I meet Sam?\n"
    status, answer = await post(daemon, "/converse", {"org": conversation})
    assert status == 200, answer
    path = roam_dir / "talk.org"
    path.write_text(USER + conversation + answer["org"])  # as arcology-oracle-converse inserts it
    assert_quiet(org_reading(path))
    # A cited note's title, "Meeting with Sam <2024-03-01 Fri 14:00>", is listed under
    # Sources: the meeting is on the agenda once, from the user's note, not from the answer.
    assert "Meeting with Sam" in answer["org"].split("\nSources:\n")[1], answer["org"]
    assert org_reading(path, "2024-02-28")["agenda"] == [], answer["org"]
    assert "Meet on [2026-12-08 Tue 10:00]" in answer["org"]  # a date still, inactive
    assert "#+begin_src sh :eval no :tangle no :noweb no\necho <" + ZWSP + "2026-12-12 Sat>\n" in answer["org"]  # the code as written


async def test_the_oracles_words_kept_are_quiet_and_the_users_typing_is_kept_as_typed(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    await wait_indexed(daemon)  # its id: link is to an indexed note (one no note has is quieted)
    # A title sent with the oracle's words is theirs too (another client than Emacs's).
    title = "Kept [[shell:touch x][answer]] shell:ls <2026-12-09 Wed 10:00>"
    status, answer = await post(daemon, "/memorize", {"text": MODEL, "role": "oracle", "title": title})
    assert status == 200, answer
    assert daily.read_bytes().startswith(USER.encode())
    assert_quiet(org_reading(daily))
    typed = "Dentist again <2026-12-14 Mon 09:00>, see [[elisp:(org-agenda)][my agenda]]"
    status, answer = await post(daemon, "/memorize", {"text": typed})
    assert status == 200, answer
    assert daily.read_text().endswith(":END:\n" + typed + "\n")  # as typed
    reading = org_reading(daily)
    assert ["elisp", "(org-agenda)"] in reading["links"], reading
    assert [entry.split(" ", 1)[0] for entry in reading["agenda"]] == ["2026-12-07", "2026-12-14"], reading


async def test_an_imported_chat_runs_nothing_and_schedules_nothing(tmp_path, roam_dir):
    chat = tmp_path / "plans.md"
    chat.write_text("# Plans\n\n## User\n\nWhat now?\n\n## Assistant\n\n" + MODEL.replace("```sh\n", "```\n") + "\n")
    before = {p: p.read_bytes() for p in roam_dir.rglob("*.org")}
    code, out, err = await run_cli("import", "markdown", str(chat), "--roam-dir", str(roam_dir), "--date", "2026-12-01")
    assert code == 0, err
    assert {p: p.read_bytes() for p in before} == before  # no note of the user's touched
    [path] = (roam_dir / "imported/markdown").glob("*.org")
    path.write_text(USER + path.read_text().split("\n\n", 1)[1])  # the user's day, then the chat's heading
    assert_quiet(org_reading(path))


async def test_the_oracles_words_keep_a_url_whose_user_looks_like_a_code_link(daemon, roam_dir):
    # https://man:pass@host is one https link to Org: a zero-width space after "man" sent
    # the user's click to another host; "эshell:ls" (a Cyrillic letter, then a word
    # start to Emacs) is a shell link, quieted.
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    urls = "Log in at https://man:pass@host/a or [[https://eshell:pw@example.org/p][there]]; powershell:ls"
    status, answer = await post(daemon, "/memorize", {"text": urls + " эshell:ls", "role": "oracle"})
    assert status == 200, answer
    assert (urls + f" эshell{ZWSP}:ls\n").encode() in daily.read_bytes()
    links = org_reading(daily)["links"]
    assert ["https", "//man:pass@host/a"] in links and ["https", "//eshell:pw@example.org/p"] in links, links
    assert not [link for link in links if link[0] == "shell"], links


async def test_the_oracles_words_kept_start_no_task_and_the_users_typing_does(daemon, roam_dir):
    # Kept with role "oracle", "TODO [#A] Wire 5000 EUR ..." was a task of priority A in
    # the user's daily (the agenda's TODO list, at the top), "COMMENT ..." a heading left
    # out of exports and the agenda, whether the title came with the words or from them.
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    for body in ({"text": "TODO [#A] Wire 5000 EUR to the account in the mail"},
                 {"text": "The plan.", "title": "COMMENT the plan"},
                 {"text": "Ask about the rent.", "title": "NEXT call the bank"}):  # fmt: skip
        status, answer = await post(daemon, "/memorize", {**body, "role": "oracle"})
        assert status == 200, answer
    status, answer = await post(daemon, "/memorize", {"text": "TODO call mum"})  # typed: a task, as meant
    assert status == 200, answer
    assert daily.read_bytes().startswith(USER.encode())
    assert await heading_states(daily) == [
        "nil nil nil Dentist",
        f"nil nil nil {ZWSP}TODO [#A] Wire 5000 EUR to the account in the mail",
        f"nil nil nil {ZWSP}COMMENT the plan",
        f"nil nil nil {ZWSP}NEXT call the bank",
        '"TODO" nil nil call mum',
    ]


async def test_the_oracles_words_start_no_task_of_a_keyword_the_daily_declares(daemon, roam_dir):
    # A daily declaring its own keywords (#+TODO: Plans Doing | Done, and a lower-case
    # one through its setup file): the oracle's "Plans for May..." became a task in state
    # Plans, its "later ask the bank" one in state later. The user's typing still is one.
    daily = daily_of(roam_dir)
    (daily.parent / "states.setup").write_text("#+SEQ_TODO: later(l) | Maybe\n")
    head = "#+SETUPFILE: states.setup\n#+TODO: Plans Doing(d!) | Done\n" + USER
    daily.write_text(head)
    for body in ({"text": "Plans for May: the garden."}, {"text": "Call.", "title": "later ask the bank"},
                 {"text": "Sunny.", "title": "plans are lower-case here"}):  # fmt: skip
        status, answer = await post(daemon, "/memorize", {**body, "role": "oracle"})
        assert status == 200, answer
    status, answer = await post(daemon, "/memorize", {"text": "Doing the taxes"})  # typed: a task, as meant
    assert status == 200, answer
    assert daily.read_bytes().startswith(head.encode())
    assert await heading_states(daily) == [
        "nil nil nil Dentist",
        f"nil nil nil {ZWSP}Plans for May: the garden.",
        f"nil nil nil {ZWSP}later ask the bank",
        "nil nil nil plans are lower-case here",
        '"Doing" nil nil the taxes',
    ]


async def test_the_oracles_words_kept_link_no_id_no_note_has(daemon, roam_dir):
    # The oracle's words kept with a mangled ID made every export of the daily fail
    # ("Unable to resolve link"); a note's ID stays a link, and the user's typing is theirs.
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    await wait_indexed(daemon)
    bad = NOTE_ID[:-1] + "e"
    words = f"See [[id:{NOTE_ID}][hydration]], [[id:{bad}][this]] and id:{bad}."
    for body in ({"text": words, "role": "oracle"}, {"text": words}):
        status, answer = await post(daemon, "/memorize", body)
        assert status == 200, answer
    written = daily.read_text()
    assert written.startswith(USER)
    assert f"See [[id:{NOTE_ID}][hydration]], [{ZWSP}[id{ZWSP}:{bad}][this]] and id{ZWSP}:{bad}.\n" in written, written
    assert written.endswith(f"\n{words}\n"), written  # typed: as typed


BIDI = "Pay \u202eRUE 0005\u202c to \u2067Sam\u2069 \u202a\u202b\u202d\u2066\u2068 ok"  # shows as "Pay 5000 EUR to ..."
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BIDI_SHOWN = "Pay \ufffdRUE 0005\ufffd to \ufffdSam\ufffd \ufffd\ufffd\ufffd\ufffd\ufffd ok"


async def test_bidi_controls_in_the_oracles_words_are_shown_and_the_users_are_kept(daemon, roam_dir, fake_ollama):
    # An override, embedding or isolate makes Emacs show a line in another order than Org
    # reads it ("Trojan Source"): the model's "Pay \u202eRUE 0005" showed as "Pay 5000 EUR".
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    await wait_indexed(daemon)
    typed = {"text": "Typed \u202eBIDI\u202c \u200f"}
    for body in ({"text": BIDI, "role": "oracle", "title": "Kept \u202eeltit"}, typed):
        status, answer = await post(daemon, "/memorize", body)
        assert status == 200, answer
    written = daily.read_text()
    assert written.startswith(USER) and written.endswith(f":END:\n{typed['text']}\n"), written  # as typed
    assert f"\n{BIDI_SHOWN}\n" in written and "Kept \ufffdeltit" in written, written
    fake_ollama.state.chat_reply = BIDI
    status, answer = await post(daemon, "/converse", {"org": "* Talk\n** \u202eWho\u202c?\n"})
    assert status == 200, answer
    assert BIDI_SHOWN in answer["org"] and not set(answer["org"]) & BIDI_CONTROLS, answer["org"]
