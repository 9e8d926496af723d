"""``dailies_dir``, the folder a capture request names for today's daily (Emacs sends its
``org-roam-dailies-directory`` relative to the roam directory): ``.`` is the roam
directory itself, as org-roam reads ``"./"``, never the configured folder in its place;
a name with control characters is a 400 that creates and writes nothing. The real
daemon, real files."""

from __future__ import annotations

import pytest

from tests.index.test_memory import post, today_daily
from tests.index.test_memory_left_out import snapshot


@pytest.mark.parametrize("dailies_dir", [".", "./"])
async def test_the_roam_directory_itself_is_a_dailies_folder(daemon, roam_dir, dailies_dir):
    status, body = await post(daemon, "/memorize", {"text": "Repot the basil", "dailies_dir": dailies_dir})
    name = today_daily(roam_dir).name
    assert status == 200 and body["file"] == name and body["inbox"] is False, body
    assert "* Repot the basil" in (roam_dir / name).read_text()
    assert not today_daily(roam_dir).exists()  # not the configured "daily" folder
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200 and gone["file"] == name, gone


@pytest.mark.parametrize("bad", ["jour\nnals", "daily\n2026-01-01 captured forged", "\x1b[31mred", "tab\there", "del\x7f", "c1\x85"])
async def test_a_dailies_dir_with_control_characters_is_a_400_that_changes_nothing(daemon, roam_dir, bad):
    before, folders = snapshot(roam_dir), _folders(roam_dir)
    status, body = await post(daemon, "/memorize", {"text": "Kept?", "dailies_dir": bad})
    assert status == 400 and "dailies_dir" in body["error"] and "control characters" in body["error"], body
    assert "nothing was written" in body["error"], body
    assert snapshot(roam_dir) == before and _folders(roam_dir) == folders  # no folder made either


def _folders(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())
