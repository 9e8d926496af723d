"""/memorize's ``unsaved`` (the notes the client's editor holds with unsaved edits):
absurd input is a 400 with nothing written, and comparing a long list of deep paths
never resolves them name by name (that held the daemon for seconds). Real files; the
comparison itself is checked by counting the resolutions, not by timing."""

from __future__ import annotations

import datetime
import os

import pytest

from arcology_oracle.index import capture_target
from tests.index.test_memory_left_out import post, snapshot


def today_rel() -> str:
    return "daily/" + datetime.date.today().strftime("%Y-%m-%d") + ".org"


@pytest.mark.parametrize("bad", ["../roam/inbox.org", "/etc/passwd", "daily/\x00x.org", "", "a/../b.org"])
async def test_an_unsaved_name_that_is_no_relative_path_is_a_400_and_writes_nothing(client, roam_dir, bad):
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "kept?", "unsaved": ["other.org", bad]})
    assert status == 400 and "unsaved" in body["error"], body
    assert snapshot(roam_dir) == before


def test_deep_unsaved_paths_are_compared_without_resolving_them(tmp_path, monkeypatch):
    root = tmp_path / "roam"
    (root / "daily").mkdir(parents=True)
    (root / "j").symlink_to("daily")
    daily = root / today_rel()
    resolved = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: resolved.append(p) or realpath(p, *a, **k))
    name = daily.name
    deep = [f"x{i}/" + "d/" * 1500 + name for i in range(300)] + ["d/" * 1500 + "inbox.org"]
    assert capture_target.unsaved_among(root, (today_rel(), "inbox.org"), deep) == set()
    assert len(resolved) == 2, len(resolved)  # the two notes' true names, nothing more
    # Still by true name: the daily as Emacs names it, through a linked folder, or while
    # it and its folder do not exist yet; the inbox the same.
    assert capture_target.unsaved_among(root, (today_rel(),), [today_rel()]) == {today_rel()}
    assert capture_target.unsaved_among(root, (today_rel(),), [f"j/{name}"]) == {today_rel()}
    (root / "today.org").symlink_to(f"daily/{name}")
    assert capture_target.unsaved_among(root, (today_rel(),), ["today.org"]) == {today_rel()}
    assert capture_target.unsaved_among(root, ("new/folder/a.org",), ["new/folder/a.org"]) == {"new/folder/a.org"}
    assert capture_target.unsaved_among(root, ("new/folder/a.org",), ["folder/a.org", "new/a.org"]) == set()
    assert capture_target.unsaved_among(root, ("inbox.org",), ["inbox.org", "daily/inbox.org"]) == {"inbox.org"}


async def test_a_daily_unsaved_under_another_of_its_hard_links_goes_to_the_inbox(client, roam_dir):
    # Emacs visits a file by any of its names as the same file (find-file: "... and ...
    # are the same file"), locks it beside the name visited and sends that name among the
    # unsaved: the daily, edited unsaved as journal/today.org (a hard link of it), got the
    # capture, and Emacs's save asked whether to write over it ("changed on disk").
    daily = roam_dir / today_rel()
    daily.parent.mkdir(exist_ok=True)
    daily.write_text("#+title: today\n* Being edited through its other name\n")
    (roam_dir / "journal").mkdir(exist_ok=True)
    os.link(daily, roam_dir / "journal" / "today.org")
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "Wax the skis", "unsaved": ["journal/today.org"]})
    assert status == 200 and body["inbox"] is True and body["file"] == "inbox.org", body
    after = snapshot(roam_dir)
    assert {rel for rel in after if after[rel] != before.get(rel)} == {"inbox.org"}
    # And the inbox, unsaved by another name of it: nothing is written anywhere (409).
    os.link(roam_dir / "inbox.org", roam_dir / "journal" / "inbox-too.org")
    before = snapshot(roam_dir)
    unsaved = ["journal/today.org", "journal/inbox-too.org"]
    status, refused = await post(client, "/memorize", {"text": "Wax the sled", "unsaved": unsaved})
    assert status == 409 and "unsaved edits" in refused["error"], refused
    assert snapshot(roam_dir) == before
