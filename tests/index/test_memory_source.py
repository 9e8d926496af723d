"""POST /memorize from Emacs: the ``source`` it sends (a link back to the heading the
region came from) becomes the capture's ``:SOURCE:`` property, and ``dailies_dir`` (its
``org-roam-dailies-directory``) says where today's daily note is."""

from __future__ import annotations

import datetime

import pytest

from arcology_oracle.notes.capture import make_capture
from tests.index.test_memory import NOW, post


def test_source_is_one_property_line():
    entry = make_capture("kept", title=None, tags=(), now=NOW, node_id="s1", source="[[id:abc][Bread\n › Autolyse]]")
    assert list(entry.lines[1:7]) == [
        ":PROPERTIES:", ":ID:       s1", ":CREATED:  [2026-03-14 Sat 09:26]",
        ":CAPTURED_BY: arcology-oracle", ":SOURCE:   [[id:abc][Bread › Autolyse]]", ":END:",
    ]  # fmt: skip
    assert ":SOURCE:" not in make_capture("kept", title=None, tags=(), now=NOW, source="  ").lines


async def test_memorize_writes_source_into_the_dailies_dir_asked_for(daemon, roam_dir):
    link = "[[id:36fb47dd-e96a-4b44-80ce-b246a771f11d][Bread Hydration › Autolyse]]"
    status, body = await post(daemon, "/memorize", {"text": "Autolyse for an hour", "source": link, "dailies_dir": "journal/"})
    assert status == 200, body
    name = datetime.date.today().strftime("%Y-%m-%d") + ".org"
    assert body["file"] == f"journal/{name}"
    assert f":SOURCE:   {link}" in (roam_dir / "journal" / name).read_text().splitlines()
    assert not (roam_dir / "daily").exists()


@pytest.mark.parametrize("bad", ["/etc", "../outside", "~/notes"])
async def test_dailies_dir_stays_in_the_roam_directory(daemon, bad):
    status, body = await post(daemon, "/memorize", {"text": "x", "dailies_dir": bad})
    assert status == 400, body


async def test_a_private_capture_in_the_dailies_dir_asked_for_can_be_forgotten(daemon, roam_dir):
    """Not in the index, so found on disk: in the folder Emacs named too, not only in the
    configured dailies folder. The forget restores the file byte for byte (here: gone)."""
    name = datetime.date.today().strftime("%Y-%m-%d") + ".org"
    status, body = await post(daemon, "/memorize", {"text": "the locker code is 4711", "tags": ["private"],
                                                    "dailies_dir": "journal/"})  # fmt: skip
    assert status == 200 and body["file"] == f"journal/{name}" and body["indexed"] is False, body
    status, body = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, body
    assert not (roam_dir / "journal" / name).exists()
