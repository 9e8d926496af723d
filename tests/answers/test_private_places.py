"""Text a client sends with the place it comes from (``file``, ``line``) is judged by that
place of the saved file too: cut out of its file, the heading at point, a region, an
excerpt of a long buffer or a conversation's subtree no longer carries the tag inherited
from above, the file's ``#+filetags`` or the ``exclude_globs`` that make it private.

The real app and index over real org files; the fake Ollama records every text embedded
and every prompt. Each private word must be in none of them; the same request from a
place that is not private must still carry its words (so the tests see text when it is
sent).
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest

FILES = {
    "diary.org": (
        ":PROPERTIES:\n:ID: 15000000-0000-4000-8000-000000000002\n:END:\n#+title: Diary\n#+filetags: :private:\n"
        "* Talking it over :conversation:\n** Me\nShould I tell them about the placeocelot affair?\n"
    ),
    "journal.org": (
        ":PROPERTIES:\n:ID: 15000000-0000-4000-8000-000000000004\n:END:\n#+title: Journal\n"
        "* Therapy :private:\n** Session notes\nThe placeiguana trauma came up again.\n"
        "** Chat :conversation:\n*** Me\nWhat about the placeiguana dream?\n"
        "* Gardening\nTomatoes need placevisiblesun and water.\n"
    ),
    "drafts/idea.org": "#+title: Idea\n* Draft\nThe placedraftkoala plan.\n",
}
# journal.org: "** Session notes" is line 6, "** Chat" line 8, "* Gardening" line 11.


@pytest.fixture
def roam_dir(tmp_path):
    root = tmp_path / "roam"
    (root / "drafts").mkdir(parents=True)
    for rel, text in FILES.items():
        (root / rel).write_text(text)
    return root


@pytest.fixture
def settings(make_settings, fake_ollama):
    return make_settings(ollama_host=fake_ollama.url, exclude_globs=["drafts/**"])


def sent(fake_ollama) -> str:
    state = fake_ollama.state
    return json.dumps(state.chats) + json.dumps(state.embedded_texts)


@pytest.mark.parametrize(
    "buffer, file, line",
    [
        ("** Session notes\nThe placeiguana trauma came up again.\n", "journal.org", 6),  # a region
        ("Should I tell them about the placeocelot affair?\n" + "A line of the day.\n" * 50, "diary.org", 8),  # an excerpt
        ("* Draft\nThe placedraftkoala plan.\n", "drafts/idea.org", 2),  # a file exclude_globs leave out
    ],
    ids=["inherited tag", "file tags", "exclude_globs"],
)
async def test_ask_uses_no_text_from_a_private_place(client, fake_ollama, buffer, file, line):
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": buffer, "file": file, "line": line})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert fake_ollama.state.chats  # the question was answered
    assert "placeiguana" not in sent(fake_ollama) and "placeocelot" not in sent(fake_ollama)
    assert "placedraftkoala" not in sent(fake_ollama)

    resp = await client.post("/ask", json={"buffer": buffer, "file": file, "line": line})
    assert resp.status == 400 and "private" in (await resp.json())["error"]


async def test_ask_from_a_place_that_is_not_private_sends_its_text(client, fake_ollama):
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": "* Gardening\nTomatoes need placevisiblesun and water.\n",
                                           "file": "journal.org", "line": 11})  # fmt: skip
    assert resp.status == 200
    await resp.read()
    assert "placevisiblesun" in json.dumps(fake_ollama.state.chats)


@pytest.mark.parametrize(
    "org, file, line",
    [
        ("** Chat :conversation:\n*** Me\nWhat about the placeiguana dream?\n", "journal.org", 8),
        ("* Talking it over :conversation:\n** Me\nShould I tell them about the placeocelot affair?\n", "diary.org", 6),
    ],
    ids=["inherited tag", "file tags"],
)
async def test_converse_from_a_private_place_is_refused(client, fake_ollama, org, file, line):
    fake_ollama.state.clear_records()
    resp = await client.post("/converse", json={"org": org, "file": file, "line": line})
    assert resp.status == 400 and "private" in (await resp.json())["error"]
    assert fake_ollama.state.chats == [] and fake_ollama.state.embedded_texts == []

    resp = await client.post("/converse", json={"org": "* Tomatoes :conversation:\n** Me\nplacevisiblesun?\n",
                                                "file": "journal.org", "line": 11})  # fmt: skip
    assert resp.status == 200 and "placevisiblesun" in json.dumps(fake_ollama.state.chats)


async def test_similar_to_text_from_a_private_place_embeds_and_searches_nothing(client, fake_ollama):
    fake_ollama.state.clear_records()
    resp = await client.post("/similar", json={"text": "** Session notes\nThe placeiguana trauma came up again.\n",
                                               "file": "journal.org", "line": 6, "k": 5})  # fmt: skip
    assert resp.status == 200
    assert (await resp.json())["results"] == []
    assert fake_ollama.state.embedded_texts == []

    resp = await client.post("/similar", json={"text": "* Gardening\nTomatoes need placevisiblesun and more water.\n",
                                               "file": "journal.org", "line": 11, "k": 5})  # fmt: skip
    assert resp.status == 200
    assert any("placevisiblesun" in t for t in fake_ollama.state.embedded_texts)


async def test_a_place_reached_through_a_link_is_judged_as_the_index_judges_it(client, fake_ollama, roam_dir):
    # drafts/** is excluded; a link outside drafts/ leads to the excluded file: the index
    # leaves it out by its real path, and so does the check of the place.
    (roam_dir / "idea-link.org").symlink_to(roam_dir / "drafts" / "idea.org")
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": "* Draft\nThe placedraftkoala plan.\n",
                                           "file": "idea-link.org", "line": 2})  # fmt: skip
    assert resp.status == 200
    await resp.read()
    assert fake_ollama.state.chats and "placedraftkoala" not in sent(fake_ollama)


async def test_a_fifo_in_a_notes_place_is_not_waited_for(client, fake_ollama, roam_dir):
    os.mkfifo(roam_dir / "pipe.org")  # nothing will ever write to it
    resp = await asyncio.wait_for(client.post("/similar", json={"text": "* Pipe\nplacevisiblesun words\n", "file": "pipe.org",
                                                               "line": 1, "k": 3}), 10)  # fmt: skip
    assert resp.status == 200


async def test_a_saved_file_is_read_once_while_it_is_unchanged(client, fake_ollama, roam_dir, monkeypatch):
    # Emacs posts an unsaved heading at every move: the saved file's privacy is read
    # once, and again only when the file changes.
    from arcology_oracle.answers import private_places

    calls = []
    real = private_places.private_lines
    monkeypatch.setattr(private_places, "private_lines", lambda *a, **k: calls.append(1) or real(*a, **k))
    body = {"text": "* Gardening\nTomatoes need placevisiblesun and more water.\n", "file": "journal.org", "line": 11, "k": 3}
    for _ in range(3):
        assert (await client.post("/similar", json=body)).status == 200
    assert len(calls) == 1
    journal = roam_dir / "journal.org"
    journal.write_text(journal.read_text().replace("* Gardening", "* Gardening :private:"))
    resp = await client.post("/similar", json=body)
    assert len(calls) == 2 and (await resp.json())["results"] == []  # the edit is seen: now private


# An excerpt of journal.org cut anywhere (here inside line 7), from below "* Therapy
# :private:" to "* Gardening", whose point (line 12) is public: a client that missed
# the private tag (Emacs's arcology-oracle-private-tags may lack one of the daemon's)
# sends it as it is.
EXCERPT = ("e placeiguana trauma came up again.\n** Chat :conversation:\n*** Me\nWhat about the placeiguana dream?\n"
           "* Gardening\nTomatoes need placevisiblesun and water.\n")  # fmt: skip


async def test_an_excerpt_starting_below_a_private_heading_cut_off_above_it_sends_none_of_it(client, fake_ollama):
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": EXCERPT, "file": "journal.org", "line": 12})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert "placevisiblesun" in sent(fake_ollama)  # the public part is sent
    assert "placeiguana" not in sent(fake_ollama)

    fake_ollama.state.clear_records()
    # Emacs posts the text of an unsaved buffer (an unchanged heading's vector is read from the index).
    text = EXCERPT.replace("and water", "and more water")
    resp = await client.post("/similar", json={"text": text, "file": "journal.org", "line": 12, "k": 3})
    assert resp.status == 200, await resp.text()
    assert "placevisiblesun" in sent(fake_ollama) and "placeiguana" not in sent(fake_ollama)


async def test_a_conversation_sent_with_a_public_line_of_its_saved_file_sends_none_of_its_private_lines(client, fake_ollama):
    # An unsaved buffer's lines are not the saved file's: line 11 is public there.
    fake_ollama.state.clear_records()
    resp = await client.post("/converse", json={"org": "** Chat :conversation:\n*** Me\nWhat about the placeiguana dream?\n",
                                                "file": "journal.org", "line": 11})  # fmt: skip
    assert resp.status == 400
    assert "placeiguana" not in sent(fake_ollama)


@pytest.mark.parametrize(
    "buffer, visiting",
    [
        ("* Draft\nThe placedraftkoala plan, edited.\n", "drafts/idea.org"),
        ("Should I tell them about the placeocelot affair? Edited.\n" + "A line of the day.\n" * 5, "diary.org"),
    ],
    ids=["exclude_globs", "file tags"],
)
async def test_an_unsaved_buffer_of_a_private_note_sends_none_of_it(client, fake_ollama, buffer, visiting):
    # Emacs sends an unsaved buffer with the file it visits, no line: an excerpt below
    # its #+filetags, or any text of a note exclude_globs leave out (Emacs knows nothing
    # of them), is judged by the saved file, whole.
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": buffer, "visiting": visiting})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert fake_ollama.state.chats
    assert "placedraftkoala" not in sent(fake_ollama) and "placeocelot" not in sent(fake_ollama)

    resp = await client.post("/ask", json={"buffer": buffer, "visiting": visiting})
    assert resp.status == 400 and f"{visiting} is private" in (await resp.json())["error"]


async def test_a_private_line_holding_a_lone_carriage_return_is_refused_and_sends_none_of_it(client, fake_ollama, roam_dir):
    # Terminal output pasted into a private heading keeps its lone carriage returns; the
    # reader reads the line without them, a capture writes each part on a line of its
    # own and a prompt gets the line without them: each form is a private line's.
    (roam_dir / "pasted.org").write_bytes(b"#+title: Pasted\n* Open\nhello\n* Login :private:\n"
                                          b"progress 100%\rplacelynxtoken=s3cret\n")  # fmt: skip
    daily = roam_dir / "daily"
    text = "hello\nprogress 100%\rplacelynxtoken=s3cret\n"
    resp = await client.post("/memorize", json={"text": text, "file": "pasted.org", "line": 3})
    assert resp.status == 400, await resp.text()
    assert "private parts" in (await resp.json())["error"]
    assert not daily.exists() or "placelynx" not in "".join(p.read_text() for p in daily.iterdir())

    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": text, "file": "pasted.org", "line": 3})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert fake_ollama.state.chats and "hello" in sent(fake_ollama)  # the public line is sent
    assert "placelynx" not in sent(fake_ollama)


@pytest.mark.parametrize(
    "text, coding, head",
    [
        ("hallo welt\nKennwort: gr\u00fc\u00dfplacemarder4711\n", "latin-1", "#+title: Notizen\n"),
        ("hello\n\u043f\u0430\u0440\u043e\u043b\u044c placemarder4711\n", "koi8-r", "# -*- coding: koi8-r -*-\n"),
        ("hello\n\u201cplacemarder4711\u201d\n", "cp1252", "#+title: Old\n"),
    ],
    ids=["latin-1", "coding cookie", "windows-1252"],
)
async def test_a_private_line_of_a_note_not_in_utf8_is_refused_and_sends_none_of_it(client, fake_ollama, roam_dir, text, coding, head):
    # Emacs reads a note that is not UTF-8 in its coding (Latin-1, Windows-1252, or what
    # its cookie names) and sends its text as such; the reader reads those bytes as
    # U+FFFD, so the private line the client sent matched none of the saved file's, and
    # was written into the public daily, put in the prompt and embedded.
    public, secret = text.split("\n")[:2]
    (roam_dir / "old.org").write_bytes(f"{head}* Open\n{public}\n* Secret :private:\n{secret}\n".encode(coding))
    daily = roam_dir / "daily"
    resp = await client.post("/memorize", json={"text": text, "file": "old.org", "line": 3})  # line 3: the public one
    assert resp.status == 400, await resp.text()
    assert not daily.exists() or "placemarder" not in "".join(p.read_text() for p in daily.iterdir())

    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": text, "file": "old.org", "line": 3})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert public in sent(fake_ollama)  # the public line is sent
    assert "placemarder" not in sent(fake_ollama)


async def test_a_private_line_holding_a_nul_sends_none_of_it(client, fake_ollama, roam_dir):
    # Emacs shows a NUL as ^@ and sends it; the reader reads it as U+FFFD: the private
    # line the client sent matched none of the saved file's and went into the prompt.
    (roam_dir / "nul.org").write_bytes(b"#+title: Nul\n* Open\nhello\n* Secret :private:\npin\x00 placenulmarten99\n")
    fake_ollama.state.clear_records()
    buffer = "hello\npin\x00 placenulmarten99\n"
    resp = await client.post("/ask", json={"question": "what does this say?", "buffer": buffer, "file": "nul.org", "line": 3})
    assert resp.status == 200, await resp.text()
    await resp.read()
    assert "hello" in sent(fake_ollama)  # the public line is sent
    assert "placenulmarten" not in sent(fake_ollama)


@pytest.mark.parametrize("name", ["vault.org.gpg", "vault.org.age"])
async def test_text_from_an_encrypted_note_is_refused_and_sends_none_of_it(client, fake_ollama, roam_dir, name):
    # Emacs shows an encrypted note decrypted (epa-file, binary by default: no PGP armor
    # in its bytes; age.el) and sends its text with its name; the saved bytes are
    # ciphertext in which nothing reads as private, so the text was written into the
    # public daily, put in the prompt and embedded.
    (roam_dir / name).write_bytes(bytes([0x85, 0x02, 0x0C, 0x03]) + bytes(range(256)) * 2)
    text = "* Bank\nThe placegpgheron code is 9911.\n"
    resp = await client.post("/memorize", json={"text": text, "file": name, "line": 2})
    assert resp.status == 400, await resp.text()
    daily = roam_dir / "daily"
    assert not daily.exists() or "placegpgheron" not in "".join(p.read_text() for p in daily.iterdir())

    fake_ollama.state.clear_records()
    for where in ({"file": name, "line": 2}, {"visiting": name}):  # a saved buffer, an unsaved one
        resp = await client.post("/ask", json={"question": "what does this say?", "buffer": text, **where})
        assert resp.status == 200, await resp.text()
        await resp.read()
    resp = await client.post("/similar", json={"text": text, "k": 3, "file": name, "line": 2})
    assert resp.status == 200, await resp.text()
    assert fake_ollama.state.chats and "placegpgheron" not in sent(fake_ollama)


async def test_a_file_the_index_leaves_out_is_named_so_in_the_404(client, roam_dir):
    """``/similar`` and ``/suggest-links`` by file and line in a note the daemon never
    reads said only "no indexed heading at drafts/idea.org:2", as of a note not indexed
    yet: the 404 says why (``exclude_globs``, a hidden folder)."""
    (roam_dir / ".hidden").mkdir()
    (roam_dir / ".hidden" / "h.org").write_text("* H\nSome text.\n")
    for path, why in (("drafts/idea.org", "it matches exclude_globs"), (".hidden/h.org", "hidden folders and files are not read")):
        for route in ("/similar", "/suggest-links"):
            resp = await client.get(route, params={"file": path, "line": "2"})
            assert resp.status == 404, await resp.text()
            assert (await resp.json())["error"].endswith(f": the daemon does not read {path} ({why})"), route
    resp = await client.get("/similar", params={"file": "new.org", "line": "1"})  # not indexed (yet)
    assert resp.status == 404 and (await resp.json())["error"] == "no indexed heading at new.org:1"


async def test_text_from_a_note_in_a_hidden_folder_is_refused_and_sends_none_of_it(client, fake_ollama, roam_dir):
    # A sync tool's old version of a note (Syncthing's .stversions), from before it was
    # made private: the index never reads a hidden folder, yet its text sent from Emacs
    # was put in the prompt (and echoed in the answer) and captured into the public daily.
    (roam_dir / ".stversions").mkdir()
    name = ".stversions/diary~20261201-101010.org"
    text = "* Talking it over\nShould I tell them about the placehiddenlynx affair?\n"
    (roam_dir / name).write_text("#+title: Diary\n" + text)
    resp = await client.post("/memorize", json={"text": text, "file": name, "line": 3})
    assert resp.status == 400 and "hidden folder" in (await resp.json())["error"], await resp.text()
    daily = roam_dir / "daily"
    assert not daily.exists() or "placehiddenlynx" not in "".join(p.read_text() for p in daily.iterdir())

    fake_ollama.state.clear_records()
    for where in ({"file": name, "line": 3}, {"visiting": name}):  # a saved buffer, an unsaved one
        resp = await client.post("/ask", json={"question": "what does this say?", "buffer": text, **where})
        assert resp.status == 200, await resp.text()
        assert "placehiddenlynx" not in await resp.text()
    resp = await client.post("/converse", json={"org": text, "file": name, "line": 2})
    assert resp.status == 400, await resp.text()
    resp = await client.post("/similar", json={"text": text, "k": 3, "file": name, "line": 3})
    assert resp.status == 200, await resp.text()
    assert fake_ollama.state.chats and "placehiddenlynx" not in sent(fake_ollama)
