"""A daily the daemon created that was given another name (a hard link) meanwhile: its
last capture forgotten, the file is not deleted (the other name would keep the captured
text): the capture is taken out of it, under every name, and the head the daemon wrote
stays, so the file reads as before the capture. Given the other name between the plan
and the deletion, the forget is refused (409, retry). The real daemon, real files, read
back by batch Emacs's Org."""

from __future__ import annotations

import os
import re

import pytest

from arcology_oracle.errors import Conflict
from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import plan_forget
from tests.emacs_batch import emacs_env
from tests.index.test_memory_left_out import snapshot
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of
from tests.org_reading import OrgProcess
from tests.runners import wait_until

HEAD_RE = rb":PROPERTIES:\n:ID:       ([0-9a-f-]{36})\n:END:\n#\+title: \d{4}-\d\d-\d\d\n"


async def created_daily(daemon, roam_dir, text: str):
    daily = daily_of(roam_dir)
    assert not daily.exists()
    status, captured = await post(daemon, "/memorize", {"text": text})
    assert status == 200 and captured["file"] == daily.relative_to(roam_dir).as_posix(), captured
    head = re.match(HEAD_RE, daily.read_bytes())
    assert head, daily.read_bytes()
    return daily, captured["id"], head


async def test_the_last_capture_of_a_hard_linked_daily_goes_from_every_name_and_the_head_stays(
    daemon, roam_dir, tmp_path
):
    daily, node_id, head = await created_daily(daemon, roam_dir, "The spare key is under the blue pot")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.link(daily, elsewhere / "today.org")  # outside the notes: the index reads one name only
    status, forgotten = await post(daemon, "/forget", {"id": node_id})
    assert status == 200 and forgotten["removed_lines"] == 8, forgotten
    for name in (elsewhere / "today.org", daily):
        assert name.read_bytes() == head[0], name  # the head, byte for byte: no captured byte left
    assert os.path.samefile(daily, elsewhere / "today.org")
    with OrgProcess(emacs_env(tmp_path)) as org:
        read = org.read(daily)
    assert (read.top.id, read.headings) == (head[1].decode(), ())
    status, found = await daemon.get_json("/search", q="spare key blue pot", k="5")
    assert status == 200 and node_id not in [r["heading_id"] for r in found["results"]], found


async def test_a_daily_given_another_name_after_the_plan_is_not_deleted(daemon, roam_dir, tmp_path):
    daily, node_id, _ = await created_daily(daemon, roam_dir, "Water the fern on Fridays")
    rel = daily.relative_to(roam_dir).as_posix()
    checked = []

    def plan(data: bytes, real: str):
        removal = plan_forget(data, real, node_id)
        assert removal is not None and removal.whole_file  # the file would go
        os.link(daily, tmp_path / "linked-meanwhile.org")
        checked.append(True)
        return removal

    note_io.prepare_leases()  # as the daemon's start does (pytest runs tests in the main thread)
    before = snapshot(roam_dir)
    with pytest.raises(Conflict) as refused:
        note_io.remove_from_note(roam_dir, rel, plan)
    assert checked and refused.value.retry is True and "another name" in str(refused.value), refused.value
    assert snapshot(roam_dir) == before
    assert (tmp_path / "linked-meanwhile.org").read_bytes() == daily.read_bytes()


async def test_a_daily_indexed_under_a_second_name_in_the_notes_is_forgotten_under_both(daemon, roam_dir, tmp_path):
    # The other name inside the notes: the index reads the file twice, the capture's ID in
    # both. The forget takes the capture out of the file, and out of the index under every
    # name (not only the one the index placed the ID in): nothing of it is found or kept.
    daily, node_id, head = await created_daily(daemon, roam_dir, "The spare key is under the blue pot")
    os.link(daily, roam_dir / "copy.org")

    async def files_found() -> list[str]:
        status, found = await daemon.get_json("/search", q="spare key blue pot", k="10")
        assert status == 200, found
        return [r["file"] for r in found["results"] if r["heading_id"] == node_id]

    async def read_under_both():
        return sorted(await files_found()) == ["copy.org", daily.relative_to(roam_dir).as_posix()]

    await wait_until(read_under_both, timeout=30)
    status, forgotten = await post(daemon, "/forget", {"id": node_id})
    assert status == 200 and forgotten["remaining_rows"] == 0, forgotten
    for name in (roam_dir / "copy.org", daily):
        assert name.read_bytes() == head[0], name
    with OrgProcess(emacs_env(tmp_path)) as org:
        read = org.read(roam_dir / "copy.org")
    assert (read.top.id, read.headings) == (head[1].decode(), ())
    assert await files_found() == []
    status, again = await post(daemon, "/forget", {"id": node_id})
    assert status == 404, again
