"""Indexing a capture alone (index/appends.py) gives exactly the records and chunks a full
read of the whole file gives, whatever the file around it says."""

from __future__ import annotations

import datetime
import os

import pytest

from arcology_oracle.index.appends import appended_headings
from arcology_oracle.index.note_io import note_state
from arcology_oracle.index.parsing import ParseOptions, parse_note
from arcology_oracle.notes.capture import file_eol, make_capture, render_capture

OPTIONS = ParseOptions(frozenset({"private"}), 400, 50)
NOW = datetime.datetime(2026, 3, 14, 9, 26)
HEAD = ":PROPERTIES:\n:ID:       f-1\n:END:\n#+title: The day\n"
FILES = {
    "plain": HEAD + "* One\n:PROPERTIES:\n:ID: u-1\n:END:\ntext\n** Sub\nmore\n",
    "no heading yet": HEAD + "just text\n",
    "empty": "",
    "filetags after the first heading": HEAD + "* One\ntext\n#+filetags: :late:\n* Two\n",
    "filetags in the head": ":PROPERTIES:\n:ID: f-2\n:END:\n#+filetags: :a:b:\n#+title: T\n* One\n",
    "private file tag": HEAD + "#+filetags: :private:\n* One\n",
    "excluded file": ":PROPERTIES:\n:ID: f-3\n:ROAM_EXCLUDE: t\n:END:\n* One\n",
    "filetags in a src block": HEAD + "* One\n#+begin_src org\n#+filetags: :private:\n#+end_src\n",
    "no final newline": HEAD + "* One\nlast line",
    "crlf": (HEAD + "* One\ntext\n").replace("\n", "\r\n"),
    "cr": (HEAD + "* One\ntext\n").replace("\n", "\r"),
    "unclosed block": HEAD + "* One\n#+begin_quote\nopen\n",
    "gptel chat": ":PROPERTIES:\n:GPTEL_MODEL: m\n:ID: f-4\n:END:\n#+title: Chat\n* Question\nwhy\n",
    "long preamble, no id": "#+title: Notes\n" + "a line\n" * 50,
}
CAPTURES = {
    "plain": dict(text="remember the quokka", tags=()),
    "tagged": dict(text="a tagged one\nwith two lines", tags=("zoo", "b")),
    "private": dict(text="the pin is 0000", tags=("private",)),
    "hostile": dict(text="#+filetags: :private:\n* heading\n:END:\n[[id:u-1][a link]]", tags=()),
}


def _stat(tmp_path) -> os.stat_result:
    path = tmp_path / "x"
    path.write_bytes(b"")
    return os.stat(path)


@pytest.mark.parametrize("capture_name", CAPTURES)
@pytest.mark.parametrize("file_name", FILES)
def test_the_appended_heading_reads_as_in_the_whole_file(tmp_path, file_name, capture_name):
    before = FILES[file_name].encode()
    rel = "daily/2026-03-14.org"
    state = note_state(before, _stat(tmp_path))
    entry = make_capture(**CAPTURES[capture_name], title=None, now=NOW, node_id="c-1")
    added = render_capture(entry, rel=rel, eol=file_eol(before), lead=b"" if state.ends_with_eol else state.eol)
    full, full_chunks = parse_note(before + added, rel, OPTIONS)
    alone, chunks = appended_headings(
        state.head, state.tags, state.lines, added, rel, OPTIONS, title=full.title, file_id=full.file_id
    )
    n = len(alone)
    expected = [h for h in full.headings if h.start_line > state.lines]
    assert alone == expected
    assert chunks == full_chunks[len(full_chunks) - n :]
    # A capture never changes what is read of the rest of the file.
    rest, _ = parse_note(before, rel, OPTIONS)
    assert full.headings[: len(full.headings) - n] == rest.headings


def test_the_state_after_an_append_is_the_state_of_the_new_bytes(tmp_path):
    st = _stat(tmp_path)
    for text in FILES.values():
        before = text.encode()
        state = note_state(before, st)
        added = render_capture(make_capture("x", title=None, tags=(), now=NOW), rel="r", eol=state.eol, lead=b"" if state.ends_with_eol else state.eol)
        after, again = state.after(added, st), note_state(before + added, st)
        assert (after.eol, after.ends_with_eol, after.lines, after.head, after.tags, after.hexdigest) == (
            again.eol, again.ends_with_eol, again.lines, again.head, again.tags, again.hexdigest
        )


@pytest.mark.parametrize("where", ["in the head", "after the first heading"])
def test_a_setup_file_named_anywhere_keeps_a_capture_out_as_the_whole_file(tmp_path, where):
    """Org reads a #+SETUPFILE wherever it stands: one naming a private setup file after
    the first heading makes the whole note private, a capture into it included (the
    capture read alone once indexed it)."""
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily" / "private.setup").write_text("#+filetags: :private:\n")
    line = "#+SETUPFILE: private.setup\n"
    before = (HEAD + line + "* One\ntext\n" if where == "in the head" else HEAD + "* One\ntext\n" + line).encode()
    rel = "daily/2026-03-14.org"
    options = ParseOptions(frozenset({"private"}), 400, 50, tmp_path)
    state = note_state(before, _stat(tmp_path))
    entry = make_capture(text="the pin is 0000", tags=(), title=None, now=NOW, node_id="c-1")
    added = render_capture(entry, rel=rel, eol=file_eol(before), lead=b"" if state.ends_with_eol else state.eol)
    full, _ = parse_note(before + added, rel, options)
    alone, chunks = appended_headings(
        state.head, state.tags, state.lines, added, rel, options, title=full.title, file_id=full.file_id,
        setups=state.setups,
    )  # fmt: skip
    assert full.headings == [] and alone == [] and chunks == []
