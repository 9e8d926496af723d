"""A capture from a private part of a saved note is refused: POST /memorize with the place
its text comes from (``file``, ``line``: Emacs sends them for a region) writes nothing
when the daemon's own rule makes that place private, though the client's did not (Emacs's
``arcology-oracle-private-tags`` may lack one of the daemon's ``private_tags``; it knows
nothing of ``exclude_globs`` or of the tags a ``#+SETUPFILE`` gives). Written into a
public daily, the text would be indexed, embedded and found: private text made public.

The real daemon process over real org files and SQLite, the fake Ollama recording every
request. A refused capture changes no byte of the notes, leaves no word in the database,
reaches the fake Ollama never, is named in no line of the log, and the refusal says which
note is private without repeating the text.
"""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from tests.corpus_tools import db_bytes
from tests.runners import start_daemon, wait_indexed

FILES = {
    "journal.org": (
        ":PROPERTIES:\n:ID: 17000000-0000-4000-8000-000000000001\n:END:\n#+title: Journal\n"
        "* Therapy :private:\n** Session notes\nThe placeiguana trauma came up again.\n"
        "* Dreams :therapy:\nThe placeotter dream came back.\n"
        "* Gardening\nTomatoes need placevisiblesun and water.\nThe rain came up again.\n"
    ),
    "diary.org": "#+title: Diary\n#+filetags: :private:\n* Affairs\nShould I tell them about the placeocelot affair?\n",
    "drafts/idea.org": "#+title: Idea\n* Draft\nThe placedraftkoala plan.\n",
    "vault/secret.org": "#+SETUPFILE: private.setup\n#+title: Secret\n* Codes\nThe placelynx door code.\n",
    "vault/private.setup": "#+filetags: :private:\n",
}
# journal.org: "** Session notes" is line 6, its text line 7; "* Dreams" line 8, its text
# line 9; "* Gardening" line 10, its text lines 11 and 12.


@pytest.fixture
def roam_dir(tmp_path) -> Path:
    root = tmp_path / "roam"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
async def daemon(tmp_path, roam_dir, fake_ollama):
    """The daemon with a private tag Emacs's list lacks (``therapy``) and ``exclude_globs``."""
    env = {"ARCOLOGY_ORACLE_PRIVATE_TAGS": "private,therapy", "ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "drafts/**"}
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, env=env, embedded=True)
    d.db_path = tmp_path / "daemon.sqlite3"
    yield d
    d.stop()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones too) and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def post(daemon, body: dict):
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.post(daemon.url + "/memorize", json=body) as resp:
            return resp.status, await resp.json()


@pytest.mark.parametrize(
    "word, text, file, line",
    [
        ("placeiguana", "The placeiguana trauma came up again.", "journal.org", 7),
        ("placeotter", "* Dreams :therapy:\nThe placeotter dream came back.", "journal.org", 8),
        ("placeocelot", "Should I tell them about the placeocelot affair?", "diary.org", 4),
        ("placedraftkoala", "The placedraftkoala plan.", "drafts/idea.org", 3),
        ("placelynx", "The placelynx door code.", "vault/secret.org", 4),
        # The line sent is public (an unsaved buffer's lines moved), the text is not.
        ("placeiguana", "Tomatoes.\nThe placeiguana trauma came up again.\n", "journal.org", 11),
        # An unsaved buffer: Emacs sends the file without a line.
        ("placeiguana", "The placeiguana trauma came up", "journal.org", None),
        ("placeocelot", "A new line typed, not saved yet.", "diary.org", None),
    ],
    ids=["inherited-tag", "daemon-only-tag", "file-tags", "exclude-globs", "setupfile", "public-line", "no-line",
         "private-file-no-line"],
)  # fmt: skip
async def test_a_capture_from_a_private_place_is_refused_and_nothing_is_written(
    daemon, roam_dir, fake_ollama, word, text, file, line
):
    before = snapshot(roam_dir)
    fake_ollama.state.clear_records()
    source = f"[[file:{file}::*Somewhere][Somewhere]]"
    place = {"file": file} | ({"line": line} if line else {})
    status, body = await post(daemon, {"text": text, "source": source, **place})
    assert status == 400, body
    assert "private" in body["error"] and file in body["error"] and "nothing was written" in body["error"], body
    assert word not in json.dumps(body)
    # Anything the daemon would do after a write (index, embed) is done once nothing is pending.
    await wait_indexed(daemon)
    assert snapshot(roam_dir) == before
    assert word.encode() not in db_bytes(daemon.db_path)
    assert word not in json.dumps(fake_ollama.state.requests)
    assert word not in daemon.log() and file not in daemon.log()
    _, found = await daemon.get_json("/search", q=word)
    assert found["results"] == []


async def test_a_capture_from_a_public_place_is_remembered(daemon, roam_dir, fake_ollama):
    """The same request from a public heading is written, indexed and embedded: the test
    above would see the words were they sent."""
    status, body = await post(daemon, {"text": "Tomatoes need placevisiblesun and water.\nAnd placecompost.",
                                       "file": "journal.org", "line": 11})  # fmt: skip
    assert status == 200 and body["indexed"] is True, body
    await wait_indexed(daemon)
    assert any("placecompost" in t for t in fake_ollama.state.embedded_texts)
    # Words a private line holds and a public one too are public (a region cut in a line).
    status, body = await post(daemon, {"text": "came up again", "file": "journal.org", "line": 12})
    assert status == 200 and body["indexed"] is True, body
    # A note not saved yet is no private place: its text is judged by itself.
    for place in ({"file": "new-note.org", "line": 3}, {"file": "nowhere/else.org"}):
        status, body = await post(daemon, {"text": "A thought about placeheron.", **place})
        assert status == 200 and body["indexed"] is True, body


@pytest.mark.parametrize(
    "word, text, place",
    [
        ("placewalrus", "Groceries for the week.\n* Therapy session :private:\nThe placewalrus session.", {}),
        ("placemole", "Dreams.\n** Last night :therapy:\nThe placemole dream came back.", {}),
        ("placegecko", "* Codes :crypt:\nThe placegecko door code.", {}),
        ("placeyak", "#+filetags: :private:\nThe placeyak thought.", {}),
        ("placebison", ":PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\nThe placebison thought.", {}),
        ("placewalrus", "Groceries.\n* Session :private:\nThe placewalrus session.", {"file": "new-note.org", "line": 1}),
    ],
    ids=["private-heading", "daemon-only-tag", "crypt", "filetags", "roam-exclude", "unsaved-note"],
)  # fmt: skip
async def test_a_capture_whose_text_holds_a_private_part_of_its_own_is_refused(daemon, roam_dir, fake_ollama, word, text, place):
    """Without a saved place (the web page, a phone, MCP's remember) the text is judged by
    itself, as the index reads a note: a heading tagged private in it, its ``#+filetags``,
    its ``ROAM_EXCLUDE``. The capture writes the text as the body of its own heading, each
    heading line and keyword escaped (``,* Therapy session :private:``), so what made it
    private was gone and the text was indexed, embedded and found."""
    before = snapshot(roam_dir)
    fake_ollama.state.clear_records()
    status, body = await post(daemon, {"text": text, **place})
    assert status == 400, body
    assert "private" in body["error"] and "nothing was written" in body["error"], body
    assert word not in json.dumps(body)
    await wait_indexed(daemon)
    assert snapshot(roam_dir) == before
    assert word.encode() not in db_bytes(daemon.db_path)
    assert word not in json.dumps(fake_ollama.state.requests)
    assert word not in daemon.log()
    # Tagged private as a whole, or holding a PGP block (its heading is private), it is
    # written and never indexed, as before.
    for whole in ({"tags": ["private"]}, {"text": text + "\n-----BEGIN PGP MESSAGE-----\nhQEMA\n-----END PGP MESSAGE-----"}):
        status, body = await post(daemon, {"text": text, **place, **whole})
        assert status == 200 and body["indexed"] is False, body
