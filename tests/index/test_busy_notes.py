"""A note another program holds open for writing is not read (index/regular_files.py's
read lease): the real daemon, with the fake Ollama, must read it once that program closes
it, even when it was held from before the daemon started and nothing is written after
(the watcher's IN_CLOSE_WRITE, as FileClosedEvent, is the only event then). Waits on
/search, no sleeps."""

from __future__ import annotations

import os

import pytest

from tests.index.test_write_attacks import roam, serve  # noqa: F401 (roam: a fixture)
from tests.runners import wait_until

pytestmark = pytest.mark.timeout(120)


async def files_found(daemon, words: str) -> set[str]:
    status, body = await daemon.get_json("/search", q=words, k="20")
    assert status == 200, body
    return {r.get("file") for r in body["results"]}


async def test_a_new_note_held_open_at_the_daemons_start_is_read_when_its_writer_closes_it(tmp_path, roam, fake_ollama):  # noqa: F811
    note = roam / "held.org"
    note.write_text("#+title: Held\n* Quokkaberry\nquokkaberry pie recipe\n")
    writer = os.open(note, os.O_WRONLY | os.O_APPEND)  # another program's, held open
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        assert "held.org" not in await files_found(daemon, "quokkaberry")
        assert "cannot read a note not read before (being written by another program)" in daemon.log()
        assert "held.org" not in daemon.log()  # never read: it may be private
        os.close(writer)
        writer = None

        async def found():
            return "held.org" in await files_found(daemon, "quokkaberry")

        await wait_until(found, timeout=30)
    finally:
        if writer is not None:
            os.close(writer)
        daemon.stop()
