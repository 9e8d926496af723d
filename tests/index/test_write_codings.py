"""A capture into a note Emacs reads in a coding other than UTF-8, against the real
daemon and real files, read back by batch Emacs's Org.

The daemon writes UTF-8 only, and refuses a note whose bytes are not UTF-8. Bytes can be
UTF-8 and still be read by Emacs in another coding: 7-bit ISO-2022-JP (Emacs finds it by
its escape sequences, no cookie needed), or any note whose ``-*- coding: -*-`` cookie or
``Local Variables`` block names one (ASCII text so far). UTF-8 bytes appended there are
not read as written, and in ISO-2022-JP they make Emacs give up the coding: the user's
own Japanese headings then read as escape sequences. Such a capture must be refused with
nothing written; one in ASCII reads the same in either coding and is written.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tests.emacs_batch import emacs_env
from tests.org_reading import OrgProcess
from tests.runners import start_daemon
from tests.index.test_write_attacks import post

pytestmark = pytest.mark.timeout(180)

USER = "a0000000-0000-4000-8000-000000000011"


def daily_rel() -> str:
    return f"daily/{datetime.date.today():%Y-%m-%d}.org"


# Each: the note's bytes, and the user's heading title as Emacs shows it.
NOTES = {
    "iso-2022-jp": ("* 日本語のメモ\n:PROPERTIES:\n:ID:       {id}\n:END:\n本文です。\n".encode("iso2022_jp"),
                    "日本語のメモ"),
    "cookie": (b"# -*- coding: latin-1 -*-\n* Plain note\n:PROPERTIES:\n:ID:       {id}\n:END:\nText.\n", "Plain note"),
    "local-variables": (b"* Plain note\n:PROPERTIES:\n:ID:       {id}\n:END:\nText.\n\n# Local Variables:\n"
                        b"# coding: latin-1\n# End:\n", "Plain note"),
}  # fmt: skip


@pytest.fixture(scope="module")
def org(tmp_path_factory):
    with OrgProcess(emacs_env(tmp_path_factory.mktemp("org"))) as process:
        yield process


def user_note(tmp_path: Path, kind: str) -> tuple[Path, bytes, str]:
    root = tmp_path / "roam"
    (root / "daily").mkdir(parents=True)
    data, title = NOTES[kind]
    data = data.replace(b"{id}", USER.encode())
    (root / daily_rel()).write_bytes(data)
    return root, data, title


@pytest.mark.parametrize("kind", sorted(NOTES))
async def test_a_capture_emacs_would_not_read_as_written_is_refused_unchanged(tmp_path, fake_ollama, org, kind):
    root, data, title = user_note(tmp_path, kind)
    path = root / daily_rel()
    coding = org.read(path).coding
    assert not coding.startswith("utf-8"), coding  # the premise: Emacs reads the note in another coding
    daemon = await start_daemon(tmp_path, roam_dir=root, ollama_url=fake_ollama.url, embedded=True)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Café au lait at nine", "dailies_dir": "daily"})
        assert status == 409, body
        assert daily_rel() in body["error"] and "nothing was written" in body["error"], body
        assert path.read_bytes() == data
        assert not (root / "inbox.org").exists()
        status, body = await post(daemon, "/memorize", {"text": "Tea at ten", "dailies_dir": "daily"})
        assert status == 200, body
        assert path.read_bytes().startswith(data)
    finally:
        daemon.stop()
    reading = org.read(path)
    assert reading.coding == coding
    assert [(h.id, h.title) for h in reading.headings] == [(USER, title), (body["id"], "Tea at ten")]
