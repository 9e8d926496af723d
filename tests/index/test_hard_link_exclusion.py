"""A hard link never walks around ``exclude_globs``: a file is one file whatever its names
(the same device and inode), so a second name of an excluded note is excluded too, at
the start's reconcile, when the link is made while the daemon runs (either way round),
and for text sent from it (``/ask``). The log names none of those names.

The real daemon process over real files; the fake Ollama records every text embedded and
every prompt.
"""

from __future__ import annotations

import json
import os

import aiohttp
import pytest

from arcology_oracle.notes.files import is_excluded_file, iter_org_files
from tests.runners import start_daemon, wait_until

pytestmark = pytest.mark.timeout(120)

GLOBS = "attic/**"


def note(word: str) -> str:
    return f"#+title: {word}\n* Heading about {word}\nBody text with {word}.\n"


def test_the_walker_leaves_out_every_name_of_an_excluded_file(tmp_path):
    (tmp_path / "attic").mkdir()
    (tmp_path / "attic" / "vault.org").write_text(note("hardlinkwalrus"))
    os.link(tmp_path / "attic" / "vault.org", tmp_path / "a-copy.org")  # listed before the excluded name
    os.link(tmp_path / "attic" / "vault.org", tmp_path / "z-copy.org")  # and after it
    (tmp_path / "public.org").write_text(note("hardlinkotter"))
    left_out: set[str] = set()
    assert [rel for rel, _ in iter_org_files(tmp_path, [GLOBS], left_out=left_out)] == ["public.org"]
    assert left_out == {"a-copy.org", "z-copy.org"}
    assert is_excluded_file(tmp_path, tmp_path / "a-copy.org", [GLOBS])
    assert not is_excluded_file(tmp_path, tmp_path / "public.org", [GLOBS])
    assert [rel for rel, _ in iter_org_files(tmp_path)] == ["a-copy.org", "attic/vault.org", "public.org", "z-copy.org"]


async def found(daemon, word: str) -> list[str]:
    status, body = await daemon.get_json("/search", q=word)
    assert status == 200, body
    return sorted({r["file"] for r in body["results"] if word in r["snippet"]})


async def test_a_hard_link_to_an_excluded_note_is_never_read_nor_sent(tmp_path, roam_dir, fake_ollama):
    (roam_dir / "attic").mkdir()
    vault = roam_dir / "attic" / "vault.org"
    vault.write_text(note("hardlinkwalrus"))
    os.link(vault, roam_dir / "vault-copy.org")
    later = roam_dir / "later-made-private.org"
    later.write_text(note("hardlinknarwhal"))
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
                                env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": GLOBS})  # fmt: skip
    try:
        assert await found(daemon, "hardlinkwalrus") == []  # at the start
        assert await found(daemon, "hardlinknarwhal") == [later.name]

        os.link(later, roam_dir / "attic" / later.name)  # a public note gets an excluded name
        await wait_until(lambda: _none(daemon, "hardlinknarwhal"), timeout=30)

        os.link(vault, roam_dir / "vault-copy-two.org")  # an excluded note gets a public name
        (roam_dir / "after.org").write_text(note("hardlinkafterowl"))  # read after it
        await wait_until(lambda: found(daemon, "hardlinkafterowl"), timeout=30)
        assert await found(daemon, "hardlinkwalrus") == []

        fake_ollama.state.clear_records()
        text = "* Heading about hardlinkwalrus\nBody text with hardlinkwalrus.\n"
        async with aiohttp.ClientSession() as session:
            ask = {"question": "what does this say?", "buffer": text, "file": "vault-copy.org", "line": 2, "stream": False}
            async with session.post(daemon.url + "/ask", json=ask) as resp:
                assert resp.status == 200, await resp.text()
                assert "hardlinkwalrus" not in await resp.text()
        assert fake_ollama.state.chats
        log = daemon.log()
    finally:
        daemon.stop()
    sent = json.dumps(fake_ollama.state.chats) + json.dumps(fake_ollama.state.embedded_texts)
    assert "hardlinkwalrus" not in sent
    assert "vault-copy" not in log and "later-made-private" not in log, log


async def _none(daemon, word: str) -> bool:
    return await found(daemon, word) == []
