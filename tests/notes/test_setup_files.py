"""``#+SETUPFILE``: the file tags a setup file gives make a note private as its own
``#+filetags`` do (issue 14's one rule). Org's reading of each case was checked with
``emacs --batch`` (Emacs 28.2, Org 9.5): names relative to the note's directory, a setup
file's own setup files relative to its directory, quotes stripped, none read inside a
src block.
"""

from __future__ import annotations

import os

import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.cleaning import strip_private
from arcology_oracle.notes.org_syntax import split_lines
from arcology_oracle.notes.setup_files import setup_file_tags
from tests.corpus_tools import db_bytes


def tags_of(path) -> tuple[str, ...]:
    return setup_file_tags(split_lines(path.read_text()), path.parent)


def test_setup_files_are_found_as_org_finds_them(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "conf" / "nested.setup").write_text("#+filetags: :fromnested:\n")
    (tmp_path / "conf" / "main.setup").write_text("#+SETUPFILE: nested.setup\n#+filetags: :fromconf:\n")
    note = tmp_path / "notes" / "note.org"
    note.write_text('#+SETUPFILE: "../conf/main.setup"\n#+title: N\n* A\n')
    assert set(tags_of(note)) == {"fromconf", "fromnested"}

    note.write_text("#+begin_src org\n#+SETUPFILE: ../conf/main.setup\n#+end_src\n* B\n")
    assert tags_of(note) == ()  # not a keyword inside a src block

    monkeypatch.setenv("HOME", str(tmp_path))
    note.write_text(f"#+setupfile: ~/conf/nested.setup\n#+SETUPFILE: {tmp_path / 'conf' / 'main.setup'}\n")
    assert set(tags_of(note)) == {"fromconf", "fromnested"}  # ~ and absolute names

    (tmp_path / "conf" / "loop.setup").write_text("#+SETUPFILE: loop.setup\n#+filetags: :looped:\n")
    os.mkfifo(tmp_path / "conf" / "fifo.setup")
    note.write_text("#+SETUPFILE: ../conf/loop.setup\n#+SETUPFILE: ../conf/fifo.setup\n#+SETUPFILE: ../conf/none.setup\n"
                    "#+SETUPFILE: https://example.org/theme.setup\n#+SETUPFILE: ../conf\n")  # fmt: skip
    assert tags_of(note) == ("looped",)  # each once; a FIFO, a missing file, a URL, a directory: nothing


NOTES = {
    "journal.org": "#+SETUPFILE: private.setup\n#+title: Journal\n* Entry\nsetupsecretmarmot words\n",
    "garden.org": "#+SETUPFILE: plain.setup\n#+title: Garden\n* Beds\nsetupvisiblebadger words\n",
}


@pytest.fixture
def vault(roam_dir):
    (roam_dir / "private.setup").write_text("#+STARTUP: overview\n#+filetags: :Private:\n")
    (roam_dir / "plain.setup").write_text("#+filetags: :garden:\n")
    for rel, text in NOTES.items():
        (roam_dir / rel).write_text(text)
    return roam_dir


async def test_a_setup_file_s_private_tag_keeps_the_note_out_of_the_index(vault, make_settings):
    settings = make_settings(roam_dir=vault)
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        assert (await search(index, "setupsecretmarmot", 5))[1] == []
        found = (await search(index, "setupvisiblebadger", 5))[1]
        assert [r.file for r in found] == ["garden.org"]
        headings = await index.read(lambda s: s.file_headings("garden.org"))
        assert "garden" in headings[-1]["tags"]  # the setup file's tags are the file's
    finally:
        await index.close()
    assert b"setupsecretmarmot" not in db_bytes(settings.db_path).lower()


async def test_a_buffer_from_such_a_note_is_not_used_by_ask(vault, make_settings, fake_ollama, make_client):
    client = await make_client(make_settings(roam_dir=vault, ollama_host=fake_ollama.url))
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what is this?", "buffer": "* Entry\nsetupsecretmarmot words\n",
                                           "file": "journal.org", "line": 4})  # fmt: skip
    assert resp.status == 200
    await resp.read()
    assert fake_ollama.state.chats and "setupsecretmarmot" not in str(fake_ollama.state.chats)
    # Text alone (no file) has no directory to read a setup file from: judged by itself.
    assert "setupsecretmarmot" in strip_private(NOTES["journal.org"])
