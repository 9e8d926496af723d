"""Org itself (batch Emacs) reads an imported file as the importer means it: the dated
headings with their IDs, the file's ID and tags, and no structure out of the text (the
escaped heading, keyword, drawer and block lines of the fixture stay paragraph text)."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

from arcology_oracle.importers.model import Conversation, Message
from arcology_oracle.importers.render import begins_alike, continues, render, turn_lines, unchanged_since_import
from arcology_oracle.notes.org_escape import ZWSP
from tests.emacs_batch import emacs_env, run_emacs
from tests.notes.test_org_escape import emacs_reading
from tests.runners import run_cli

FIXTURES = Path(__file__).parent / "fixtures"

READ_BACK = r"""
(progn
  (require 'org)
  (require 'org-element)
  (with-temp-buffer
    (insert-file-contents (getenv "ORG_FILE"))
    (org-mode)
    (message "FILE-ID %s" (org-entry-get (point-min) "ID"))
    (message "FILETAGS %s" (mapconcat #'identity (cdr (assoc "FILETAGS" (org-collect-keywords '("FILETAGS")))) " "))
    (org-map-entries
     (lambda () (message "HEADING %d|%s|%s" (org-current-level) (org-get-heading t t t t) (org-entry-get nil "ID"))))
    (let ((tree (org-element-parse-buffer)))
      (message "KEYWORDS %d" (length (org-element-map tree 'keyword #'identity)))
      (message "DRAWERS %d" (length (org-element-map tree '(drawer property-drawer) #'identity)))
      (message "BLOCKS %d" (length (org-element-map tree '(src-block example-block quote-block verse-block
                                                          special-block latex-environment) #'identity)))
      (org-element-map tree 'paragraph
        (lambda (p)
          (message "PARAGRAPH %s"
                   (car (split-string (buffer-substring-no-properties
                                       (org-element-property :contents-begin p)
                                       (org-element-property :contents-end p)) "\n"))))))))
"""


async def test_org_reads_the_headings_ids_and_turns(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    code, _, err = await run_cli(
        "import", "chatgpt", str(FIXTURES / "chatgpt.json"), "--roam-dir", str(roam), "--tag", "private", env={"TZ": "UTC"}
    )
    assert code == 0, err
    path = roam / "imported" / "chatgpt" / "2024-03-05-rye-starter-32ed2cdc.org"
    code, output = await run_emacs(["--eval", READ_BACK], env=emacs_env(tmp_path, ORG_FILE=str(path)))
    assert code == 0, output
    got = [line for line in output.splitlines() if re.match(r"^(FILE-ID|FILETAGS|HEADING|KEYWORDS|DRAWERS|BLOCKS|PARAGRAPH) ", line)]
    assert got == [
        "FILE-ID 32ed2cdc-b37b-5223-be7e-a73c8d3ca16e",
        "FILETAGS :private:",  # not the :secret: of the escaped #+filetags line in the answer
        "HEADING 1|[2024-03-05 Tue 09:00] Rye starter|e8e0d94b-b770-542f-b5f5-754dc04593b6",
        "HEADING 1|[2024-03-05 Tue 11:00] Rye starter|673feff0-3a86-54e2-b01f-07d0a83294a0",
        "KEYWORDS 2",  # the title and the filetags
        "DRAWERS 3",  # the file's and each session's property drawer
        "BLOCKS 0",
        "PARAGRAPH Me: My rye starter smells of nail polish.",
        "PARAGRAPH ChatGPT: Feed it at a ratio of 1:1:1.",  # the whole answer: one paragraph
        "PARAGRAPH Me: How often should I feed it?",
        "PARAGRAPH ChatGPT: Twice a day, at 8 and 20.",
    ]


FOOTNOTES_AND_PARAGRAPHS = r"""
(progn
  (require 'org)
  (with-temp-buffer
    (insert-file-contents (getenv "ORG_FILE"))
    (org-mode)
    (let ((tree (org-element-parse-buffer)))
      (message "FOOTNOTE-DEFINITIONS %d" (length (org-element-map tree 'footnote-definition #'identity)))
      (org-element-map tree 'paragraph
        (lambda (p)
          (message "PARAGRAPH %s" (car (split-string (buffer-substring-no-properties
                                                      (org-element-property :contents-begin p)
                                                      (org-element-property :contents-end p)) "\n"))))))))
"""


async def test_a_footnote_line_in_a_turn_keeps_the_turns_after_it_out_of_a_footnote(tmp_path):
    # Unescaped, Org reads "[fn:1] ..." at column 0 as a footnote definition running on
    # over the next turns, which an export would then move into the footnotes.
    path = tmp_path / "chat.org"
    turns = [turn_lines("Ana", "the recipe\n[fn:1] from my grandmother\n[FN:2] in any letter case"), turn_lines("Bo", "thanks")]
    path.write_text("* Chat\n" + "\n\n".join("\n".join(lines) for lines in turns) + "\n")
    code, output = await run_emacs(["--eval", FOOTNOTES_AND_PARAGRAPHS], env=emacs_env(tmp_path, ORG_FILE=str(path)))
    assert code == 0, output
    got = [line for line in output.splitlines() if re.match(r"^(FOOTNOTE-DEFINITIONS|PARAGRAPH) ", line)]
    assert got == ["FOOTNOTE-DEFINITIONS 0", "PARAGRAPH Ana: the recipe", "PARAGRAPH Bo: thanks"]


async def test_a_hostile_chat_sets_nothing_in_emacs_and_writes_no_control_character(tmp_path):
    # An answer explaining file variables, with a NUL and an ESC in it, and a title with a
    # radio target: written as they were, Emacs opened the note in fundamental-mode as
    # latin-1 (or as binary, for the NUL), and "kiln" became a link everywhere in it.
    answer = (
        "Put this at the end of the file:\n# Local Variables:\n# fill-column: 40\n# coding: latin-1\n"
        "# mode: fundamental\n# End:\nand -*- mode: text -*- works too, as does <<here>>[fn:x: a footnote].\x00\x1b$B"
    )
    chat = Conversation("chatgpt", "c-1", "Firing the <<<kiln>>> -*- coding: latin-1 -*-", [
        Message("m-1", "user", "café au lait, then the kiln <<first>>", datetime.datetime(2024, 3, 5, 9, 0)),
        Message("m-2", "assistant", answer, datetime.datetime(2024, 3, 5, 9, 1)),
    ])  # fmt: skip
    path = tmp_path / "chat.org"
    path.write_text(render(chat).text)
    assert b"\x00" not in path.read_bytes() and b"\x1b" not in path.read_bytes()
    [reading] = emacs_reading(path)
    assert (reading["mode"], reading["utf8"], reading["fill_column"]) == ("org-mode", True, 70), reading
    assert (reading["targets"], reading["radio_links"], reading["footnotes"]) == ([], 0, []), reading
    text = path.read_text()
    assert "# fill-column: 40\n# coding: latin-1\n" in text and "works too" in text  # the words stay


async def imported_transcript(tmp_path: Path, lines: str) -> Path:
    """The org file ``arcology-oracle import transcript`` writes for a log of a turn of
    Ana's, then ``lines``."""
    roam = tmp_path / "roam"
    roam.mkdir()
    log = tmp_path / "2026-12-01-chat.txt"
    log.write_text("[10:00] Ana: hello\n" + lines)
    code, _, err = await run_cli("import", "transcript", str(log), "--roam-dir", str(roam))
    assert code == 0, err
    [path] = roam.rglob("*.org")
    return path


async def test_a_speaker_named_local_variables_sets_nothing_in_emacs(tmp_path):
    # A chat log's nicknames are anyone's: "[10:01] Local Variables: z" was written as the
    # turn's line "Local Variables: z", and the chat's next lines, which need no comma
    # ("mode :fundamental z", "End:z"), completed the block: the note opened in
    # fundamental-mode with a fill-column of 40.
    path = await imported_transcript(tmp_path, "[10:01] Local Variables: z\nmode :fundamental z\nfill-column :40 z\nEnd:z\n")
    [reading] = emacs_reading(path)
    assert (reading["mode"], reading["fill_column"]) == ("org-mode", 70), reading
    assert "\nLocal-Variables: z\nmode :fundamental z\n" in path.read_text()  # the words stay


async def test_a_speaker_named_clock_adds_no_clock_line(tmp_path):
    # "[10:01] CLOCK: [...]--[...] =>  8:00" was written as the turn's line, a clock line
    # to Org: eight hours in the user's clock tables.
    path = await imported_transcript(tmp_path, "[10:01] CLOCK: [2026-12-07 Mon 10:00]--[2026-12-07 Mon 18:00] =>  8:00\n")
    count = """(progn (require 'org) (find-file (getenv "ORG_FILE"))
                 (message "CLOCKS %d" (length (org-element-map (org-element-parse-buffer) 'clock #'identity))))"""
    code, output = await run_emacs(["--eval", count], env=emacs_env(tmp_path, ORG_FILE=str(path)))
    assert code == 0 and "CLOCKS 0" in output.splitlines(), output
    assert "\nCLOCK.: [2026-12-07 Mon 10:00]--" in path.read_text()  # the words stay


HEADING_STATES = r"""
(progn
  (require 'org)
  (with-temp-buffer
    (insert-file-contents (getenv "ORG_FILE"))
    (org-mode)
    (org-map-entries
     (lambda () (message "STATE %S %S %S %s" (let ((todo (org-get-todo-state))) (and todo (substring-no-properties todo)))
                         (org-element-property :priority (org-element-at-point))
                         (and (org-in-commented-heading-p) t) (org-get-heading t t t t))))))
"""


async def heading_states(path: Path) -> list[str]:
    """Each heading of ``path`` as Org reads it: its TODO keyword, priority, whether it is
    commented, then its title."""
    code, output = await run_emacs(["--eval", HEADING_STATES], env=emacs_env(path.parent, ORG_FILE=str(path)))
    assert code == 0, output
    return [line.split(" ", 1)[1] for line in output.splitlines() if line.startswith("STATE ")]


async def test_a_chat_title_with_no_time_before_it_is_no_todo_priority_or_comment(tmp_path):
    # A ChatGPT export that dates nothing: its title began the heading line, and Org read
    # "TODO [#A] Pay the rent" as a task of priority A (the agenda's TODO list, at the top)
    # and "COMMENT the plan" as a heading left out of exports and the agenda.
    def chat(key: str, title: str) -> dict:
        message = {"id": "u1", "author": {"role": "user"}, "create_time": None, "recipient": "all", "metadata": {},
                   "content": {"content_type": "text", "parts": ["hello"]}}  # fmt: skip
        return {"id": key, "title": title, "create_time": None, "current_node": "u1",
                "mapping": {"u1": {"id": "u1", "parent": None, "children": [], "message": message}}}  # fmt: skip

    roam = tmp_path / "roam"
    roam.mkdir()
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chat("c-1", "TODO [#A] Pay the rent"), chat("c-2", "COMMENT the plan")]))
    code, _, err = await run_cli("import", "chatgpt", str(export), "--roam-dir", str(roam))
    assert code == 0, err
    states = [state for path in sorted(roam.rglob("*.org")) for state in await heading_states(path)]
    assert states == [f"nil nil nil {ZWSP}COMMENT the plan", f"nil nil nil {ZWSP}TODO [#A] Pay the rent"], states


def test_a_file_written_before_the_escapes_reads_as_the_same_conversation():
    # Re-imported after an escape was added, a transcript imported before was taken for
    # another conversation (its turns no longer matched) and imported a second time.
    chat = Conversation("markdown", "talk", "Talk", [
        Message("m-1", "Alice", "Keep the <<glossary>> out.", datetime.datetime(2024, 3, 5, 10, 0)),
        Message("m-2", "Bob", "Agreed, see [fn:n:note]\n[fn:1] and Local Variables: here",
                datetime.datetime(2024, 3, 5, 10, 1)),
        Message("m-3", "Alice", "Pay \u202eRUE 0005\u202c now.", datetime.datetime(2024, 3, 5, 10, 2)),
    ])  # fmt: skip
    new = render(chat).text
    assert "Pay \ufffdRUE 0005\ufffd now." in new and "\u202e" not in new  # a bidi override shown
    # As the importer wrote it before:
    old = new.replace(ZWSP, "").replace("\n,[fn:1]", "\n[fn:1]").replace("\ufffdRUE 0005\ufffd", "\u202eRUE 0005\u202c")
    assert old != new
    assert continues(old, new) and begins_alike(old, new)
    longer = render(Conversation("markdown", "talk", "Talk", [*chat.messages, Message("m-4", "Alice", "Done.")])).text
    assert continues(old, longer) and not continues(longer, old)


SAVE_DELETING_TRAILING_WHITESPACE = r"""
(progn
  (require 'org)
  (find-file (getenv "ORG_FILE"))
  (add-hook 'before-save-hook #'delete-trailing-whitespace nil t)
  (set-buffer-modified-p t)
  (save-buffer))
"""


async def test_an_imported_file_saved_by_an_emacs_that_deletes_trailing_whitespace_is_still_as_imported(tmp_path):
    # Emacs's delete-trailing-whitespace (a common before-save-hook) deletes a zero-width
    # space ending a line (U+200B is whitespace to Emacs; Python's rstrip keeps it): a
    # title or a turn ending in one, merely saved, was "edited since it was imported", and
    # no later import of the conversation (grown) ever updated the file again.
    chat = Conversation("chatgpt", "c-1", "Zero width\u200b", [
        Message("m-1", "user", "look at this\u200b\nsecond line\u00a0\u200b", datetime.datetime(2024, 3, 5, 9, 0)),
        Message("m-2", "assistant", "Seen. \u200b", datetime.datetime(2024, 3, 5, 9, 1)),
    ])  # fmt: skip
    path = tmp_path / "chat.org"
    path.write_text(render(chat).text)
    before = path.read_bytes()
    code, output = await run_emacs(["--eval", SAVE_DELETING_TRAILING_WHITESPACE], env=emacs_env(tmp_path, ORG_FILE=str(path)))
    assert code == 0, output
    assert path.read_bytes() == before
    assert unchanged_since_import(path.read_text())


def test_a_file_written_before_dates_were_made_inactive_reads_as_the_same_conversation():
    # A chat's "<2024-03-08 Fri>" is now written "[2024-03-08 Fri]" (no agenda entry): the
    # file imported before must still be taken for this conversation, not imported again.
    chat = Conversation("markdown", "talk", "Talk", [
        Message("m-1", "Alice", "Ship it on <2024-03-08 Fri>.", datetime.datetime(2024, 3, 5, 10, 0)),
        Message("m-2", "Bob", "Agreed.\n<2024-03-09 Sat> as well", datetime.datetime(2024, 3, 5, 10, 1)),
    ])  # fmt: skip
    new = render(chat).text
    assert "Ship it on [2024-03-08 Fri]." in new and "\n,[2024-03-09 Sat] as well" in new
    old = new.replace("[2024-03-08 Fri]", "<2024-03-08 Fri>").replace(",[2024-03-09 Sat]", "<2024-03-09 Sat>")
    assert continues(old, new) and begins_alike(old, new)
