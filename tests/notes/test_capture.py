"""The pure edits of memory (notes/capture.py): inert captured text, Org's tag words,
titles without links, the file's line endings, and forget plans that remove only
untouched bytes the daemon wrote, restoring the file byte for byte."""

from __future__ import annotations

import datetime
import re

import pytest

from arcology_oracle.errors import BadRequest
from arcology_oracle.notes.capture import (
    AFTER_BLANKS,
    AFTER_TEXT,
    FILE_START,
    Changed,
    NotCaptured,
    capture_title,
    clean_tags,
    file_eol,
    make_capture,
    new_file_head,
    plan_forget,
    render_capture,
)
from arcology_oracle.notes.reader import read_org_bytes

NOW = datetime.datetime(2026, 3, 14, 9, 26)
USER = (
    ":PROPERTIES:\n:ID:       f-1\n:END:\n#+title: A day\n"
    "* Mine :work:\n:PROPERTIES:\n:ID:       u-1\n:END:\nmy text\n"
    "* Secret :private:\n:PROPERTIES:\n:ID:       u-2\n:END:\nhidden words\n"
)


def capture(text="remember the milk", *, rel="daily/d.org", eol=b"\n", separator=False, node_id="c-1", **kw):
    entry = make_capture(text, title=kw.get("title"), tags=kw.get("tags", ()), now=NOW, node_id=node_id)
    # As note_io writes a separator after a last line without its ending (of text, or blanks).
    kept = kw.get("after", AFTER_TEXT) if separator else b""
    return render_capture(entry, rel=rel, eol=eol, lead=kept + eol if separator else b"")[len(kept) :]


def user_view(data: bytes) -> list[tuple]:
    """What the reader makes of the user's headings: ID, title, tags (private ones absent)."""
    return [(h.own_id, h.title, h.tags) for h in read_org_bytes(data, "daily/d.org").headings if h.own_id and h.own_id.startswith("u-")]


@pytest.mark.parametrize(
    "line",
    ["#+filetags: :private:", "  #+FILETAGS: :x:", "#+title: Hijacked", "#+startup: overview", "#+property: a b",
     "#+begin_src elisp", "#+end_src", "* a heading", "** deeper", "*", ":PROPERTIES:", ":END:", "  :LOGBOOK:",
     ":ID:"],
)  # fmt: skip
def test_structure_lines_of_the_text_are_escaped_and_change_nothing_else(line):
    data = USER.encode() + capture(f"before\n{line}\nafter")
    assert f"\n,{line}\n".encode() in data
    assert user_view(data) == [("u-1", "Mine", ("work",))]
    parsed = read_org_bytes(data, "daily/d.org")
    assert parsed.title == "A day" and [h.own_id for h in parsed.headings if h.level] == ["u-1", "c-1"]


def test_plain_lines_are_kept_as_written():
    text = "a list:\n - item\n * indented star item\nword: value\n:not a drawer line\n#comment\n,already"
    data = capture(text)
    assert data.decode().endswith(text + "\n")


@pytest.mark.parametrize("tag", ["x\n:", "private\n:", "a b", "", "a:b", ":private:", "tab\t", "é\n"])
def test_a_tag_outside_orgs_characters_is_refused(tag):
    with pytest.raises(BadRequest):
        clean_tags([tag])


def test_org_tag_words_are_taken():
    assert clean_tags(["idea", "a_b", "@home", "#1", "50%", "café", "idea"]) == ("idea", "a_b", "@home", "#1", "50%", "café")


def test_a_title_from_a_region_of_a_note_reads_as_org_shows_it():
    """A region selected from a note starts with its heading or its keywords: the title
    is the heading's words, or the note's title, never stars, tags, keyword lines or an
    active timestamp (which would put the capture on the agenda). The body keeps it all."""
    meeting = "* Meeting with Sam <2024-03-01 Fri 14:00> :work:\nTalked about the roadmap"
    assert capture_title(meeting, None) == "Meeting with Sam [2024-03-01 Fri 14:00] Talked about the…"
    note = "#+title: Sourdough Baking\n#+filetags: :baking:bread:\n\nMy starter notes"
    assert capture_title(note, None) == "Sourdough Baking My starter notes"
    task = "** TODO [#A] Call mum :family:\n:PROPERTIES:\n:ID: x\n:END:\nSCHEDULED: <2024-03-02 Sat>\nabout the trip"
    assert capture_title(task, None) == "TODO Call mum about the trip"
    assert capture_title("#+filetags: :x:", None) == "#+filetags: :x\u200b:"  # nothing else to show
    assert capture_title(":note:\nhello", None) == ":note: hello"  # no drawer without its :END:
    assert capture_title(meeting, "Given") == "Given"
    # A first word COMMENT would make the capture a commented heading (off the agenda and
    # exports, its title read without the word): kept a word.
    assert capture_title("* COMMENT Draft\nbody", None) == "COMMENT\u200b Draft body"
    assert capture_title("x", "COMMENT") == "COMMEN\u200bT"
    assert capture_title("COMMENTARY on it", None) == "COMMENTARY on it"
    assert "<2024-03-01 Fri 14:00> :work:" in "\n".join(make_capture(meeting, title=None, tags=(), now=NOW, node_id="n1").lines)


def test_titles_turn_links_into_their_descriptions_and_cut_at_a_word():
    text = "[[id:abc][Bread hydration]] is what I meant, with the long ratios of dough and water and salt"
    title = capture_title(text, None)
    assert title == "Bread hydration is what I meant, with the long ratios of…"
    assert capture_title("see [[https://example.org]] now", None) == "see https://example.org now"
    assert capture_title("x", "See [[id:x][foo]] and ]] odd [[") == "See foo and }} odd {{"
    entry = make_capture(text, title=None, tags=(), now=NOW, node_id="n1")
    assert re.fullmatch(r"\[\[id:n1\]\[[^\[\]]+\]\]", entry.link)
    entry = make_capture("body", title="brackets ] [ ]] [[", tags=(), now=NOW, node_id="n1")
    assert re.fullmatch(r"\[\[id:n1\]\[[^\[\]]+\]\]", entry.link)


def test_lone_surrogates_are_a_bad_request():
    with pytest.raises(BadRequest):
        make_capture("bad \ud800 text", title=None, tags=(), now=NOW)


# Emacs 28's choice of end of line for each file (buffer-file-coding-system), checked in
# batch Emacs: any lone LF -> unix, else any CRLF -> dos, else any CR -> mac.
@pytest.mark.parametrize(
    "data, eol",
    [(b"a\nb\n", b"\n"), (b"a\r\nb\r\n", b"\r\n"), (b"a\rb\r", b"\r"), (b"a\rb\rc\rd\ne\n", b"\n"),
     (b"a\r\nb\r\nd\n", b"\n"), (b"a\nb\r\nc\r\n", b"\n"), (b"a\rb\r\nc\r\n", b"\r\n"), (b"a\r\nb\rx\r\n", b"\r\n"),
     (b"a\rb", b"\r"), (b"", b"\n"), (b"one line", b"\n")],
)  # fmt: skip
def test_the_line_ending_is_the_one_emacs_gives_the_file(data, eol):
    assert file_eol(data) == eol


FILES = {
    "lf": USER.encode(),
    "crlf": USER.replace("\n", "\r\n").encode(),
    "cr": USER.replace("\n", "\r").encode(),
    "lf, no final newline": USER.encode().rstrip(b"\n"),
    "crlf, no final newline": USER.replace("\n", "\r\n").encode().rstrip(b"\r\n"),
    "cr, no final newline": USER.replace("\n", "\r").encode().rstrip(b"\r"),
    "bom": b"\xef\xbb\xbf" + USER.encode(),
    "bom only": b"\xef\xbb\xbf",
    "empty": b"",
}


@pytest.mark.parametrize("name", FILES)
def test_capture_then_forget_restores_the_file_byte_for_byte(name):
    before = FILES[name]
    eol = file_eol(before)
    body = before.removeprefix(b"\xef\xbb\xbf")
    separator = bool(body) and not body.endswith(eol)
    data = before + capture("line one\nline two", eol=eol, separator=separator, tags=("zoo",))
    assert file_eol(data) == eol
    assert b"\n" not in data.replace(b"\r\n", b"") or eol == b"\n"
    assert user_view(data) == user_view(before)
    captured = [h for h in read_org_bytes(data, "daily/d.org").headings if h.own_id == "c-1"]
    assert [(h.title, h.tags, h.text) for h in captured] == [("line one line two", ("zoo",), "line one\nline two")]
    removal = plan_forget(data, "daily/d.org", "c-1")
    assert data[: removal.start] + data[removal.end :] == before


def test_forget_of_the_capture_that_created_the_file_deletes_it():
    head = new_file_head("2026-03-14", "f-9").encode()
    entry = make_capture("first of the day", title=None, tags=(), now=NOW, node_id="c-1")
    data = render_capture(entry, rel="daily/d.org", eol=b"\n", lead=head)
    assert data.startswith(head)
    assert plan_forget(data, "daily/d.org", "c-1").whole_file
    # The head edited, or more text after the capture: only the capture goes.
    edited = data.replace(b"#+title: 2026-03-14", b"#+title: My day")
    with pytest.raises(Changed):
        plan_forget(edited, "daily/d.org", "c-1")
    more = data + b"* Mine\n"
    removal = plan_forget(more, "daily/d.org", "c-1")
    assert not removal.whole_file and more[: removal.start] + more[removal.end :] == head + b"* Mine\n"


def test_a_title_ending_like_tags_is_not_read_as_tags():
    for title, tags in (("#+filetags: :private:", ()), ("note :private:", ()), ("note :a:b:", ("x",))):
        data = USER.encode() + capture("text", title=title, tags=tags)
        parsed = read_org_bytes(data, "daily/d.org")
        assert [h.tags for h in parsed.headings if h.own_id == "c-1"] == [tags], title


def test_forget_of_the_first_of_two_captures_keeps_the_second():
    before = USER.encode()
    data = before + capture("one", node_id="c-1") + capture("two", node_id="c-2")
    removal = plan_forget(data, "daily/d.org", "c-1")
    assert data[: removal.start] + data[removal.end :] == before + capture("two", node_id="c-2")


def test_a_user_heading_after_a_capture_keeps_the_separator():
    before = USER.encode().rstrip(b"\n")
    data = before + capture(separator=True) + b"* Later mine\nmore\n"
    removal = plan_forget(data, "daily/d.org", "c-1")
    assert data[: removal.start] + data[removal.end :] == before + b"\n* Later mine\nmore\n"


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda d: d + b"my own line typed after it\n", "text was added below it"),
        (lambda d: d + b"** my follow-up\n", "headings were added under it"),
        (lambda d: d.replace(b"remember the milk\n", b"remember the oat milk\n"), "edited"),
        (lambda d: d.replace(b"* remember the milk", b"* remember the milk :x:"), "edited"),
        (lambda d: d.replace(b"* remember", b"** remember"), "refiled"),
        (lambda d: d.rstrip(b"\n"), "line ending"),
    ],
)
def test_forget_refuses_a_capture_that_is_not_as_written(edit, reason):
    data = edit(USER.encode() + capture())
    with pytest.raises(Changed, match=reason):
        plan_forget(data, "daily/d.org", "c-1")


def test_a_capture_moved_to_another_file_is_not_forgotten_there():
    data = USER.encode() + capture(rel="daily/d.org")
    with pytest.raises(Changed, match="moved"):
        plan_forget(data, "projects.org", "c-1")


def test_old_captures_without_a_hash_and_user_headings_are_refused():
    old = "* Old\n:PROPERTIES:\n:ID:       c-9\n:CAPTURED_BY: arcology-oracle\n:END:\ntext\n"
    with pytest.raises(Changed, match="no hash"):
        plan_forget((USER + old).encode(), "daily/d.org", "c-9")
    with pytest.raises(NotCaptured):
        plan_forget(USER.encode(), "daily/d.org", "u-1")
    assert plan_forget(USER.encode(), "daily/d.org", "nope") is None


def test_a_copied_hash_does_not_make_a_user_heading_forgettable():
    data = capture().decode()
    forged = data.replace("remember the milk", "my own words")
    with pytest.raises(Changed):
        plan_forget((USER + forged).encode(), "daily/d.org", "c-1")


def delete_trailing_whitespace(data: bytes) -> bytes:
    """What Emacs's ``delete-trailing-whitespace`` (a common ``before-save-hook``) makes
    of an LF file: no blank at a line's end, no empty line at the file's end."""
    blanks = "[ \t\u00a0\u2000-\u200b\u202f\u205f\u3000]+$"  # whitespace to Emacs 28 in org-mode
    return (re.sub(blanks, "", data.decode(), flags=re.M).rstrip("\n") + "\n").encode()


@pytest.mark.parametrize("text", ["pasted from a page   \nsecond line\t\n", "last line  \n   \n\t\n", "one line "])
def test_a_capture_is_as_emacs_leaves_it_saved_with_trailing_whitespace_deleted(text):
    # Text pasted with blanks at line ends: the user saves the daily in an Emacs that
    # deletes trailing whitespace on save, and the capture, never edited, could not be
    # forgotten any more (409: its text was edited).
    data = USER.encode() + capture(text)
    assert delete_trailing_whitespace(data) == data
    removal = plan_forget(delete_trailing_whitespace(data), "daily/d.org", "c-1")
    assert removal is not None and data[: removal.start] + data[removal.end :] == USER.encode()


@pytest.mark.parametrize(
    "title,source",
    [("note :private:", None), ("COMMENT", None), ("ends in blanks \u00a0\u3000\u200b", "a page  \u200b"), (None, "\u200b")],
)
def test_the_heading_and_its_drawer_are_as_emacs_leaves_them_saved_with_trailing_whitespace_deleted(title, source):
    # The zero-width space that keeps a title ending like tags text, or COMMENT a word,
    # stood last on the heading line: Emacs's delete-trailing-whitespace deletes it
    # there (U+200B is whitespace to it), so the title was read as tags (or the heading
    # as commented) once saved, and the capture could not be forgotten.
    entry = make_capture("text", title=title, tags=(), now=NOW, node_id="c-1", source=source)
    data = USER.encode() + render_capture(entry, rel="daily/d.org", eol=b"\n")
    assert delete_trailing_whitespace(data) == data
    assert [h.tags for h in read_org_bytes(data, "daily/d.org").headings if h.own_id == "c-1"] == [()]


TABBED = "steps:\n\tfirst\tstep\n  \tsecond\n        third\n日本 \tCJK\na\u0301 \tb\n"


def untabified(data: bytes) -> bytes:
    """What Emacs's ``whitespace-cleanup`` with ``indent-tabs-mode`` nil makes of leading
    tabs and of tabs after spaces: spaces to the same column (``tab-width`` 8; the CJK
    characters are two columns wide, the combining accent none)."""
    widths = {"日": 2, "本": 2, "\u0301": 0}
    out = []
    for line in data.decode().split("\n"):
        while m := re.search(r"^( *)(\t+)|( +)(\t+)", line):
            at = m.start(2) if m[2] else m.start(4)
            column = sum(widths.get(c, 1) for c in line[:at])
            tabs = len(m[2] or m[4])
            spaces = (8 - column % 8) + 8 * (tabs - 1)
            line = line[:at] + " " * spaces + line[at + tabs :]
        out.append(line)
    return "\n".join(out).encode()


def test_a_capture_whose_tabs_a_save_turned_into_spaces_or_back_is_still_forgotten(monkeypatch):
    # Text with tabs, saved by an Emacs whose whitespace-cleanup turns leading tabs into
    # spaces (indent-tabs-mode nil), or 8 leading spaces into a tab (t): the capture,
    # never edited, no longer matched its hash (409: its text was edited).
    data = USER.encode() + capture(TABBED)
    assert b"\tfirst\tstep\n  \tsecond\n        third\n" in data  # written as sent
    saved = untabified(data)
    assert b"\t" in saved and saved.count(b"\t") < data.count(b"\t")  # the mid-line tab stays
    for edited in (saved, saved.replace(b"        third", b"\tthird")):
        removal = plan_forget(edited, "daily/d.org", "c-1")
        assert edited[: removal.start] + edited[removal.end :] == USER.encode()
    # Anything but tabs and spaces swapped keeping every column is still the user's: a
    # word, a blank added or taken away, a character moved to another column.
    for before, after in ((b"third", b"third!"), (b"first\tstep", b"first step"), (b"first\tstep", b"firststep"),
                          (b"        third", b"         third"), (b"        second", b"\t\tsecond")):  # fmt: skip
        assert before in saved
        with pytest.raises(Changed, match="edited"):
            plan_forget(saved.replace(before, after), "daily/d.org", "c-1")

    # A capture of an older version, whose hash counted the tabs as tabs: forgotten as written.
    monkeypatch.setattr("arcology_oracle.notes.capture.blank_form", lambda line: line)
    older = USER.encode() + capture(TABBED)
    monkeypatch.undo()
    removal = plan_forget(older, "daily/d.org", "c-1")
    assert older != data and older[: removal.start] + older[removal.end :] == USER.encode()


def whitespace_cleanup_top(data: bytes) -> bytes:
    """What Emacs's ``whitespace-cleanup`` deletes at the top of a buffer: its first lines
    of blanks only (a UTF-8 BOM is no text to Emacs and stays)."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    return bom + re.sub(rb"\A(?:[ \t]*(?:\r\n|\r|\n))+", b"", data[len(bom) :])


@pytest.mark.parametrize(
    "before, kept",
    [(b"", FILE_START), (b"\xef\xbb\xbf", FILE_START), (b"", b""), (b"\n", b"\n"), (b"\r\n", b"\r\n"), (b"  \t", AFTER_BLANKS),
     (b" \n\n", b"\n")],
    ids=["empty", "bom", "empty-older-version", "empty-line", "crlf-empty-line", "blanks", "blank-lines"],
)  # fmt: skip
def test_a_capture_at_the_top_whose_separator_a_save_deleted_is_forgotten_alone(before, kept):
    # A daily with no text: the capture's separator (its hash covering what stood before
    # it: the daily's own line ending, or its start when empty; an older version hashed
    # it alone) is among the file's first empty lines, which whitespace-cleanup deletes
    # on save. The capture, never edited, answered 409.
    eol = b"\r\n" if b"\r" in before else b"\n"
    entry = make_capture("remember the milk", title=None, tags=(), now=NOW, node_id="c-1")
    written = before + render_capture(entry, rel="daily/d.org", eol=eol, lead=kept + eol)[len(kept) :]
    untouched = plan_forget(written, "daily/d.org", "c-1")
    assert written[: untouched.start] + written[untouched.end :] == before
    bom = before[:3] if before.startswith(b"\xef\xbb\xbf") else b""
    saved = whitespace_cleanup_top(written)
    subtree = written[written.index(b"* remember") :]
    assert saved == bom + subtree
    mine = b"* Mine" + eol + b"my text" + eol
    for data, left in ((saved, bom), (saved + mine, bom + mine)):
        removal = plan_forget(data, "daily/d.org", "c-1")
        assert data[: removal.start] + data[removal.end :] == left and not removal.whole_file
    # Anything else is still the user's: text typed under it; text typed above it, or one
    # of the two line endings above it left (which one cannot be told), once its hash
    # says what stood before the separator.
    edits = [(saved + b"my text" + eol, "text was added below it")]
    if kept in (FILE_START, eol):
        edits.append((bom + b"typed" + eol + subtree, "empty line above it was deleted .or text written there."))
    elif kept == AFTER_BLANKS:  # after a line of blanks a save deleted, a line typed above is the user's
        edits.append((bom + b"typed" + eol + subtree, "line above it was deleted or written on"))
    edits += [(bom + eol + subtree, "empty line above it was deleted")] if kept == eol else []
    for data, reason in edits:
        with pytest.raises(Changed, match=reason):
            plan_forget(data, "daily/d.org", "c-1")
    if not kept:  # the bytes of the same capture untouched after a last line "typed" without its ending
        typed = bom + b"typed" + eol + subtree
        removal = plan_forget(typed, "daily/d.org", "c-1")
        # Or the user's line ending, typed once the empty line was deleted: it stays (it took it).
        assert typed[: removal.start] + typed[removal.end :] == bom + b"typed" + eol


def test_a_created_daily_whose_head_was_deleted_is_not_forgotten_from_the_top():
    # The head a capture wrote into the daily it created is not blank: no save deletes it,
    # so a capture at the top of such a file was edited above (the head is the user's now).
    head = new_file_head("2026-03-14", "f-9").encode()
    entry = make_capture("first of the day", title=None, tags=(), now=NOW, node_id="c-1")
    data = render_capture(entry, rel="daily/d.org", eol=b"\n", lead=head)
    with pytest.raises(Changed):
        plan_forget(data[len(head) :], "daily/d.org", "c-1")


def test_an_older_versions_capture_a_save_trimmed_stays_refused(monkeypatch):
    # Older versions wrote text with the blanks ending its lines, and hashed tabs as tabs.
    # Once a save deleted those blanks or turned the tabs into spaces, the bytes the hash
    # covers are gone: finding them again means guessing each blank run deleted (any
    # length, any of Emacs's blanks) or how each indentation was made (9 ways for each tab
    # stop), and nothing else tells the capture from the user's edit. Refused, unchanged;
    # as written, such a capture is still forgotten.
    monkeypatch.setattr("arcology_oracle.notes.capture.TRAILING_BLANKS", "")
    trailing = USER.encode() + capture("pasted from a page   \nsecond line\t")
    monkeypatch.setattr("arcology_oracle.notes.capture.blank_form", lambda line: line)
    tabbed = USER.encode() + capture(TABBED)
    monkeypatch.undo()
    for older, saved in ((trailing, delete_trailing_whitespace(trailing)), (tabbed, untabified(tabbed))):
        assert saved != older
        with pytest.raises(Changed, match="edited"):
            plan_forget(saved, "daily/d.org", "c-1")
        removal = plan_forget(older, "daily/d.org", "c-1")
        assert older[: removal.start] + older[removal.end :] == USER.encode()


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["", "bom"])
def test_a_forget_never_brings_the_users_mode_line_onto_the_first_line(eol, bom):
    # Emacs reads a file's mode and coding from a -*- ... -*- on its first line only (the
    # second after a #! line; for the coding, the file's bytes up to a line feed within
    # its first 1024: a CR file is one line there). A heading of the user's holding one
    # below a capture is inert; taking out what stands above it would make it the file's
    # mode (text-mode: no longer Org) or coding.
    mine = b"* Tips -*- mode: text -*-" + eol + b"my text" + eol
    at_top = bom + capture(eol=eol) + mine
    after_a_shebang = bom + b"#!/usr/bin/env org" + eol + capture(eol=eol) + mine
    for data, line in ((at_top, 9), (after_a_shebang, 10)):
        with pytest.raises(Changed, match=f"-[*]- of your line {line} to the top of the file"):
            plan_forget(data, "daily/d.org", "c-1")
    # A CR file's coding: a cookie beyond its first 1024 bytes is inert, and must stay so.
    coding = b"* Tips -*- coding: latin-1 -*-" + eol
    for lines in (16, 20):  # about 840 and 1050 bytes
        far = b"".join(b"* Line %02d" % i + eol + b"text of mine, long enough to fill the file" + eol for i in range(lines))
        data = bom + capture(eol=eol) + far + coding
        assert data.index(coding) > 1024
        if eol == b"\r" and len(bom + far) < 1024:
            with pytest.raises(Changed, match=f"-[*]- of your line {9 + 2 * lines}"):
                plan_forget(data, "daily/d.org", "c-1")
        else:
            removal = plan_forget(data, "daily/d.org", "c-1")
            assert data[: removal.start] + data[removal.end :] == bom + far + coding
    # Where the user's -*- already is, or stays out of reach, a forget goes as always.
    for data, left in (
        (bom + b"# -*- mode: org -*-" + eol + capture(eol=eol) + mine, bom + b"# -*- mode: org -*-" + eol + mine),
        (bom + b"* Mine" + eol + capture(eol=eol) + mine, bom + b"* Mine" + eol + mine),
        (bom + capture(eol=eol) + b"* Mine" + eol + mine, bom + b"* Mine" + eol + mine),
    ):
        removal = plan_forget(data, "daily/d.org", "c-1")
        assert data[: removal.start] + data[removal.end :] == left


def older_capture() -> bytes:
    """A capture as an older version wrote it after a separator: its hash covered that line ending alone."""
    entry = make_capture("remember the milk", title=None, tags=(), now=NOW, node_id="c-1")
    return render_capture(entry, rel="daily/d.org", eol=b"\n", lead=b"\n")


@pytest.mark.parametrize(
    "data, left",
    [(older_capture(), b""), (b"x\n" + older_capture(), b"x\n"), (b"x\n" + older_capture()[1:], b"x\n"),
     (b"typed\n" + older_capture()[1:], b"typed\n"), (b"x" + older_capture(), b"x\n")],
    ids=["empty-daily", "after-a-final-line-ending", "its-empty-line-deleted", "a-line-typed-above-instead",
         "after-a-last-line-without-its-ending"],
)  # fmt: skip
def test_an_older_versions_lone_separator_goes_only_where_no_text_stands_right_above_it(data, left):
    # Its empty line's ending (after nothing, or after a line ending) goes with it; after
    # text it may be the ending of the user's line (typed above once the empty line was
    # gone), the bytes of a capture written after a last line without one: it stays.
    removal = plan_forget(data, "daily/d.org", "c-1")
    assert data[: removal.start] + data[removal.end :] == left


@pytest.mark.parametrize(
    "before, edit, left",
    [(b"* Mine\nx", lambda d: d, b"* Mine\nx"), (b"* Mine\nx", lambda d: d.replace(b"x\n", b"x and more\n"), b"* Mine\nx and more"),
     (b"* Mine\n \t", lambda d: d, b"* Mine\n \t"), (b"* Mine\n \t", lambda d: d.replace(b" \t\n", b"\n"), b"* Mine\n\n"),
     (b"* Mine\nx", lambda d: d.replace(b"x\n", b"\n"), None), (b"* Mine\n \t", lambda d: d.replace(b" \t\n", b"typed\n"), None)],
    ids=["text", "text-written-on", "blanks", "blanks-a-save-trimmed", "text-deleted", "blanks-written-on"],
)  # fmt: skip
def test_a_separator_after_a_last_line_without_its_ending_goes_while_that_line_is_of_its_kind(before, edit, left):
    # The hash says whether that line held text or blanks only (AFTER_TEXT, AFTER_BLANKS):
    # text goes on being text, blanks may lose their blanks to a save; else which line
    # ending above the capture is its separator cannot be told (409). Once the blanks are
    # gone, the line ending left may be the user's (of an empty line above, once they
    # killed that line): it stays.
    data = edit(before + capture(separator=True, after=AFTER_BLANKS if before.endswith(b" \t") else AFTER_TEXT))
    if left is None:
        with pytest.raises(Changed, match="line above it was deleted or written on"):
            plan_forget(data, "daily/d.org", "c-1")
        return
    removal = plan_forget(data, "daily/d.org", "c-1")
    assert data[: removal.start] + data[removal.end :] == left
