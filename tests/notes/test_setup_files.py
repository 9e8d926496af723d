"""``#+SETUPFILE``: the file tags a setup file gives make a note private as its own
``#+filetags`` do (issue 14's one rule). Org's reading of each case was checked with
``emacs --batch`` (Emacs 28.2, Org 9.5): names relative to the note's directory, a setup
file's own setup files relative to its directory, quotes stripped, none read inside a
src block.
"""

from __future__ import annotations

import os

import aiohttp
import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.cleaning import strip_private
from arcology_oracle.notes.org_syntax import split_lines
from arcology_oracle.notes.setup_files import read_setup_files
from arcology_oracle.store.db import remembered_notes_dir
from tests.corpus_tools import db_bytes, unreadable_to_the_indexer
from tests.runners import start_daemon, wait_until


def tags_of(path) -> tuple[str, ...]:
    return read_setup_files(split_lines(path.read_text()), path.parent)[0]


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
    # Text alone has no directory of its own: its setup files are read at the top of the
    # notes, where a new note is made; without the notes directory, not at all.
    assert strip_private(NOTES["journal.org"], root=vault) == ""
    assert "setupsecretmarmot" in strip_private(NOTES["journal.org"])


async def test_text_sent_unsaved_reads_its_setup_files(vault, make_settings, fake_ollama, make_client):
    # A new note from a template naming a private setup file, not saved yet (no file);
    # and a saved public note whose unsaved buffer now names one. Read without setup
    # files, /ask and /converse sent such text to the model, and POST /similar embedded it.
    client = await make_client(make_settings(roam_dir=vault, ollama_host=fake_ollama.url))
    (vault / "talk.org").write_text("#+title: Talk\n* Plans\nnothing yet\n")
    unsaved = "#+SETUPFILE: private.setup\n#+title: Talk\n* Plans\nsetuptapirsecret words\n** Me\nsetuptapirquestion?\n"
    (vault / "sub").mkdir()
    (vault / "sub" / "near.setup").write_text("#+filetags: :private:\n")
    in_sub = "#+SETUPFILE: near.setup\n#+title: N\n* H\nsetuptapirsecret in a subfolder\n"
    for route, body in (
        ("/ask", {"question": "what is this?", "buffer": NOTES["journal.org"]}),
        # What Emacs sends for a buffer with unsaved edits: the file it visits, no place.
        ("/ask", {"question": "what is this?", "buffer": unsaved, "visiting": "talk.org"}),
        ("/ask", {"question": "what is this?", "buffer": in_sub, "visiting": "sub/n.org"}),
        ("/converse", {"org": unsaved, "file": "talk.org", "line": 3}),
        ("/similar", {"text": NOTES["journal.org"]}),
        ("/similar", {"text": unsaved, "file": "talk.org", "line": 3}),
    ):
        fake_ollama.state.clear_records()
        resp = await client.post(route, json=body)
        await resp.read()
        sent = str(fake_ollama.state.chats) + " ".join(fake_ollama.state.embedded_texts)
        assert not any(word in sent for word in ("setupsecretmarmot", "setuptapirsecret", "setuptapirquestion")), (route, body)


async def test_a_place_judged_private_follows_its_setup_file(vault, make_settings, fake_ollama, make_client):
    # Emacs sends the heading at point with its file and line; whether that place is
    # private is remembered while the note is unchanged, but a setup file made private
    # changes it with no change to the note.
    client = await make_client(make_settings(roam_dir=vault, ollama_host=fake_ollama.url))
    body = {"question": "what is this?", "buffer": "* Beds\nsetupvisiblebadger words\n", "file": "garden.org", "line": 4}
    resp = await client.post("/ask", json=body)
    await resp.read()
    assert "setupvisiblebadger" in str(fake_ollama.state.chats)
    (vault / "plain.setup").write_text("#+filetags: :garden:private:\n")
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json=body)
    await resp.read()
    assert fake_ollama.state.chats and "setupvisiblebadger" not in str(fake_ollama.state.chats)


def shared_setup_vault(tmp_path):
    """Notes in ``notes/`` naming a setup file outside it, in ``conf/``."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "notes").mkdir()
    setup = tmp_path / "conf" / "shared.setup"
    setup.write_text("#+filetags: :work:\n")
    note = tmp_path / "notes" / "otters.org"
    note.write_bytes(b"#+SETUPFILE: ../conf/shared.setup\n#+title: Otters\n* Plan\nsetupotter words\n")
    (tmp_path / "notes" / "other.org").write_text("#+title: Other\n* Else\nnothing here\n")
    return tmp_path / "notes", setup, note


async def test_a_setup_file_made_private_takes_its_notes_out_at_the_next_reconcile(tmp_path, make_settings):
    """The note's own bytes never change: only the setup file it names. A reconcile
    (each start of the daemon) reads it again all the same, and it leaves the index;
    the tag taken off, it comes back."""
    roam, setup, note = shared_setup_vault(tmp_path)
    before = note.read_bytes()
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        assert [r.file for r in (await search(index, "setupotter", 5))[1]] == ["otters.org"]

        setup.write_text("#+filetags: :work:private:\n")
        report = await index.reconcile()
        assert report.deleted == report.private == 1 and (await search(index, "setupotter", 5))[1] == []
        assert await index.read(lambda s: s.file_headings("otters.org")) == []
        assert await index.read(lambda s: list(s.file_states())) == ["other.org"]  # not even its path
        assert b"setupotter" not in db_bytes(settings.db_path)

        setup.write_text("#+filetags: :work:\n")
        await index.reconcile()
        assert [r.file for r in (await search(index, "setupotter", 5))[1]] == ["otters.org"]
        assert (await index.reconcile()).indexed == 0  # read once per change, not at every reconcile
    finally:
        await index.close()
    assert note.read_bytes() == before


async def test_a_reconcile_looks_at_a_shared_setup_file_once(tmp_path, make_settings, monkeypatch):
    # Every note naming it looked at it again (a stat each, or a read of its bytes when
    # it had just changed): once per note per reconcile.
    from arcology_oracle.notes import setup_files

    roam, setup, _ = shared_setup_vault(tmp_path)
    for n in range(5):
        (roam / f"more-{n}.org").write_text(f"#+SETUPFILE: ../conf/shared.setup\n#+title: More {n}\n* H\nwords\n")
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    try:
        await index.reconcile()
        looked: list[str] = []
        state = setup_files._state
        monkeypatch.setattr(setup_files, "_state", lambda path: looked.append(path) or state(path))
        assert (await index.reconcile()).indexed == 0
        assert looked == [str(setup)]
    finally:
        await index.close()


async def test_the_running_daemon_takes_a_note_out_when_its_setup_file_is_made_private(tmp_path, fake_ollama):
    """The setup file is outside the notes directory (the watcher does not see it) and
    the note is never saved: the daemon notices the setup file within seconds."""
    roam, setup, note = shared_setup_vault(tmp_path)
    before = note.read_bytes()
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url, embedded=True)

    async def found() -> list[str]:
        async with aiohttp.ClientSession() as session:
            async with session.get(daemon.url + "/search", params={"q": "setupotter"}) as resp:
                assert resp.status == 200
                return [r["file"] for r in (await resp.json())["results"]]

    try:
        assert await found() == ["otters.org"]
        setup.write_text("#+filetags: :private:\n")
        await wait_until(lambda: _none(found()), timeout=20)
        setup.write_text("#+filetags: :work:\n")
        await wait_until(found, timeout=20)
    finally:
        daemon.stop()
    assert note.read_bytes() == before
    # Private after the read (made so by the change) or before it: only counted, never named.
    said = [line for line in daemon.log().splitlines() if "a setup file changed" in line]
    assert [line.rsplit(": ", 1)[1] for line in said] == ["1 private", "1 private"], said
    assert "otters" not in daemon.log()


async def _none(results) -> bool:
    return not await results


def test_what_counts_as_a_setup_file_changing(tmp_path):
    """Written (same size, same second), made unreadable, a link pointed elsewhere (under
    any of the names the note gives the file), gone, come: each is a change; looking
    again at an unchanged one is not."""
    from arcology_oracle.notes.setup_files import any_changed

    (tmp_path / "a.setup").write_text("#+filetags: :a:\n")
    (tmp_path / "b.setup").write_text("#+filetags: :b:\n")
    (tmp_path / "link.setup").symlink_to("a.setup")
    note = tmp_path / "note.org"
    note.write_text("#+SETUPFILE: a.setup\n#+SETUPFILE: link.setup\n#+SETUPFILE: missing.setup\n")

    def seen():
        tags, rows = read_setup_files(split_lines(note.read_text()), tmp_path)
        assert [row[0] for row in rows] == [str(tmp_path / n) for n in ("a.setup", "link.setup", "missing.setup")]
        return tags, rows

    tags, rows = seen()
    assert tags == ("a",) and not any_changed(rows) and rows[2][1:] == (-1, -1, -1, -1, "")
    (tmp_path / "a.setup").write_text("#+filetags: :z:\n")  # the same size, at once
    assert any_changed(rows)
    _, rows = seen()
    os.chmod(tmp_path / "a.setup", 0)
    assert any_changed(rows)
    _, rows = seen()
    (tmp_path / "link.setup").unlink()  # the second name of a file read under the first
    (tmp_path / "link.setup").symlink_to("b.setup")
    assert any_changed(rows)
    tags, rows = seen()
    assert set(tags) == {"z", "b"}
    (tmp_path / "missing.setup").write_text("")
    assert any_changed(rows)


def test_a_link_swapped_while_it_is_read_shows_as_a_change(tmp_path, monkeypatch):
    """What is recorded is the file that was read: a link pointed elsewhere right after
    (an atomic swap, as stow or home-manager make) is a change at the next look."""
    from arcology_oracle.notes import setup_files

    (tmp_path / "work.setup").write_text("#+filetags: :work:\n")
    (tmp_path / "private.setup").write_text("#+filetags: :private:\n")
    (tmp_path / "theme.setup").symlink_to("work.setup")
    read = setup_files.read_regular_file_with_stat

    def read_then_swap(path, limit=None, **kw):
        out = read(path, limit, **kw)
        (tmp_path / "swap").symlink_to("private.setup")
        os.replace(tmp_path / "swap", tmp_path / "theme.setup")
        return out

    monkeypatch.setattr(setup_files, "read_regular_file_with_stat", read_then_swap)
    tags, rows = read_setup_files(["#+SETUPFILE: theme.setup"], tmp_path)
    assert tags == ("work",) and setup_files.any_changed(rows)


def test_a_file_written_in_the_tick_it_was_read_is_compared_by_its_bytes(tmp_path, monkeypatch):
    """A file system whose clock ticks coarsely keeps every number of a file rewritten
    at the same size in the tick it was read: a file that had just changed when it was
    read is compared by a hash of its bytes too."""
    from arcology_oracle.notes import setup_files

    (tmp_path / "a.setup").write_text("#+filetags: :a:\n")
    _, rows = read_setup_files(["#+SETUPFILE: a.setup"], tmp_path)
    assert rows[0][5]  # just written: racy, its bytes hashed
    monkeypatch.setattr(setup_files, "_state", lambda path: tuple(rows[0][1:5]))  # every number the same
    assert not setup_files.any_changed(rows)
    (tmp_path / "a.setup").write_text("#+filetags: :p:\n")
    assert setup_files.any_changed(rows)


async def test_an_index_from_before_setup_files_were_recorded_reads_such_notes_again(tmp_path, make_settings):
    """m018 and m019 on an index whose notes recorded no setup files: every note is read
    again at the next reconcile (the one here names its setup file under a private
    heading, of which nothing was stored), so a setup file made private meanwhile
    counts; the others read the same and keep their rows."""
    from arcology_oracle.store import Store

    roam, setup, note = shared_setup_vault(tmp_path)
    note.write_text("#+title: Otters\n* Plan\nsetupotter words\n* Diary :private:\n#+SETUPFILE: ../conf/shared.setup\n")
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    store = Store.open(settings.db_path)
    with store.transaction():  # as an index made before m018 was
        store.conn.execute("DROP INDEX files_with_setup")
        store.conn.execute("ALTER TABLE files DROP COLUMN setup")
        store.conn.execute("DELETE FROM _migrations WHERE name IN ('m018_setup_files', 'm019_reread_for_setup_files')")
        kept = store.conn.execute("SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = 'other.org'").fetchall()
    store.close()
    setup.write_text("#+filetags: :private:\n")
    index = OracleIndex(settings)
    await index.start()  # migrates
    try:
        report = await index.reconcile()
        assert report.indexed == report.deleted == 1 and (await search(index, "setupotter", 5))[1] == []
        assert await index.read(lambda s: s.conn.execute(
            "SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = 'other.org'").fetchall()) == kept
    finally:
        await index.close()


async def test_a_note_in_a_folder_whose_name_is_not_utf8_records_its_setup_files(tmp_path, make_settings):
    roam = tmp_path / "notes\udcff"  # the bytes b"notes\xff"
    roam.mkdir()
    (roam / "private.setup").write_text("#+filetags: :work:\n")
    (roam / "otters.org").write_text("#+SETUPFILE: private.setup\n#+title: Otters\n* Plan\nsetupotter words\n")
    index = OracleIndex(settings := make_settings(roam_dir=roam))
    await index.start()
    try:
        report = await index.reconcile()
        assert report.indexed == 1 and report.failed == {}
        assert remembered_notes_dir(settings.db_path) == os.path.realpath(roam)  # (the CLI's, when none is given)
        (roam / "private.setup").write_text("#+filetags: :private:\n")
        assert (await index.reconcile()).deleted == 1 and (await search(index, "setupotter", 5))[1] == []
    finally:
        await index.close()


async def test_a_note_that_cannot_be_read_when_its_setup_file_changed_leaves_the_index(tmp_path, make_settings, monkeypatch):
    """It may be private now, and nothing can tell: out until it can be read (and then
    read once, not at every look)."""
    roam, setup, note = shared_setup_vault(tmp_path)
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    try:
        await index.reconcile()
        unreadable_to_the_indexer(monkeypatch, "otters.org")
        setup.write_text("#+filetags: :private:\n")
        report = await index.reconcile()
        assert report.deleted == 1 and (await search(index, "setupotter", 5))[1] == []
        assert await index.read(lambda s: s.setup_records()) == []  # nothing left to look at every 2 s
        monkeypatch.undo()
        setup.write_text("#+filetags: :work:\n")
        assert (await index.reconcile()).indexed == 1 and (await search(index, "setupotter", 5))[1]
    finally:
        await index.close()
