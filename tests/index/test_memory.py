"""Memory against the real daemon: POST /memorize writes org and is searchable at once,
Emacs' lock sends it to the inbox, private captures stay out of the index, and
POST /forget deletes only what the daemon wrote, purging every copy."""

from __future__ import annotations

import datetime
import os
import stat

import aiohttp
import pytest

from arcology_oracle.notes.capture import Changed, NotCaptured, make_capture, plan_forget, render_capture
from tests.corpus_tools import db_bytes
from tests.org_samples import IDS
from tests.runners import wait_until

NOW = datetime.datetime(2026, 3, 14, 9, 26)


async def post(daemon, path: str, body: dict):
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.post(daemon.url + path, json=body) as resp:
            return resp.status, await resp.json()


def today_daily(roam_dir):
    return roam_dir / "daily" / (datetime.date.today().strftime("%Y-%m-%d") + ".org")


# -- pure text edits ----------------------------------------------------------------------


def test_capture_text_cannot_open_a_heading():
    entry = make_capture("first line\n* not a heading\n** nor this", title=None, tags=("idea",), now=NOW, node_id="abc")
    lines = render_capture(entry, rel="d.org", eol=b"\n").decode().splitlines()
    assert lines[0] == "* first line not a heading nor this :idea:"  # the titles, as Org shows them
    assert ":CREATED:  [2026-03-14 Sat 09:26]" in lines
    assert ":CAPTURED_BY: arcology-oracle" in lines
    assert [line for line in lines[1:] if line.startswith("*")] == []


def test_forget_plan_keeps_the_rest_and_refuses_user_headings():
    user = b"* Mine\n:PROPERTIES:\n:ID: u1\n:END:\nkeep\n"
    entry = make_capture("remember the milk", title=None, tags=(), now=NOW, node_id="c1")
    head = b"#+title: day\n" + user
    text = head + render_capture(entry, rel="d.org", eol=b"\n")
    removal = plan_forget(text, "d.org", "c1")
    assert text[: removal.start] + text[removal.end :] == head and removal.line == 7 and removal.lines == 8
    with pytest.raises(NotCaptured):
        plan_forget(text, "d.org", "u1")
    # A heading the user added under the capture makes the subtree theirs.
    with pytest.raises(Changed, match="headings were added"):
        plan_forget(text + b"** my follow-up\n", "d.org", "c1")
    assert plan_forget(text, "d.org", "nope") is None


# -- the real daemon ----------------------------------------------------------------------


async def test_memorize_is_searchable_at_once_and_keeps_the_file_mode(daemon, roam_dir):
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text(":PROPERTIES:\n:ID: d-1\n:END:\n#+title: today\n* Morning\nCoffee.")  # no final newline
    os.chmod(daily, 0o640)
    status, body = await post(daemon, "/memorize", {"text": "The quokka sanctuary opens at nine", "tags": ["zoo"]})
    assert status == 200, body
    assert body["file"] == f"daily/{daily.name}" and body["inbox"] is False and body["indexed"] is True
    assert body["link"] == f"[[id:{body['id']}][The quokka sanctuary opens at nine]]"
    lines = daily.read_text().splitlines()
    assert lines[5] == "Coffee." and lines[body["line"] - 1] == "* The quokka sanctuary opens at nine :zoo:"
    assert f":ID:       {body['id']}" in lines
    assert stat.S_IMODE(daily.stat().st_mode) == 0o640
    # No waiting: the answer comes after the daemon indexed its own write.
    _, found = await daemon.get_json("/search", q="quokka sanctuary")
    assert [r["heading_id"] for r in found["results"]] == [body["id"]]
    assert not [p.name for p in daily.parent.iterdir() if p.name.endswith(".tmp")]


async def test_memorize_creates_the_daily_with_id_and_title(daemon, roam_dir):
    status, body = await post(daemon, "/memorize", {"text": "Line one\nline two", "title": "Two lines"})
    assert status == 200, body
    text = today_daily(roam_dir).read_text()
    assert text.startswith(":PROPERTIES:\n:ID:       ")
    assert f"#+title: {datetime.date.today():%Y-%m-%d}\n" in text
    assert text.endswith("* Two lines\n" + text.split("* Two lines\n", 1)[1]) and text.endswith("Line one\nline two\n")
    _, node = await daemon.get_json(f"/nodes/{body['id']}")
    assert node["title"] == "Two lines" and node["line"] == body["line"]


async def test_locked_daily_goes_to_the_inbox(daemon, roam_dir):
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text("#+title: today\n* Being edited\n")
    before = daily.read_bytes()
    os.symlink("user@elsewhere.4242:1700000000", daily.with_name(".#" + daily.name))
    status, body = await post(daemon, "/memorize", {"text": "Call the plumber about the axolotl tank"})
    assert status == 200, body
    assert body["inbox"] is True and body["file"] == "inbox.org" and "locked" in body["note"]
    assert daily.read_bytes() == before
    assert "* Call the plumber about the axolotl tank" in (roam_dir / "inbox.org").read_text()
    assert (roam_dir / "inbox.org").read_text().startswith("#+title: Inbox\n")  # the user's head kept
    _, found = await daemon.get_json("/search", q="axolotl plumber")
    assert found["results"][0]["heading_id"] == body["id"]
    # Forgetting needs the file unlocked too: the inbox is not locked, so it works.
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200 and gone["file"] == "inbox.org" and gone["remaining_rows"] == 0
    # A forget in a locked file is refused.
    status, body = await post(daemon, "/memorize", {"text": "second note on the inbox"})
    lock = roam_dir / ".#inbox.org"
    os.symlink("user@elsewhere.4242:1700000000", lock)
    status, refused = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 409 and "unsaved edits" in refused["error"]
    lock.unlink()


async def test_unsaved_named_by_the_client_goes_to_the_inbox(daemon, roam_dir):
    """Emacs without lock files (create-lockfiles nil, or lock-file-name-transforms) leaves
    no .#NAME: it names the notes it holds unsaved, and the daemon treats them as locked."""
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text("#+title: today\n* Being edited\n")
    before = daily.read_bytes()
    rel = f"daily/{daily.name}"
    status, body = await post(daemon, "/memorize", {"text": "Descale the kettle", "unsaved": ["other.org", "./" + rel]})
    assert status == 200, body
    assert body["inbox"] is True and body["file"] == "inbox.org" and "unsaved edits" in body["note"], body
    assert daily.read_bytes() == before
    assert "* Descale the kettle" in (roam_dir / "inbox.org").read_text()
    # Named through a symlink to it (Emacs sends the file's true name), the same.
    (roam_dir / "today-link.org").symlink_to(daily)
    status, body = await post(daemon, "/memorize", {"text": "Oil the hinges", "unsaved": ["today-link.org"]})
    assert status == 200 and body["file"] == "inbox.org", body
    # Both unsaved: nothing is written anywhere (409), whatever else is named.
    inbox_before = (roam_dir / "inbox.org").read_bytes()
    status, refused = await post(daemon, "/memorize", {"text": "Wind the clock", "unsaved": [rel, "inbox.org"]})
    assert status == 409 and "unsaved edits" in refused["error"], refused
    assert daily.read_bytes() == before and (roam_dir / "inbox.org").read_bytes() == inbox_before
    # Other files unsaved, or none: today's daily as ever.
    status, body = await post(daemon, "/memorize", {"text": "Sharpen the chisels", "unsaved": ["inbox.org"]})
    assert status == 200 and body["file"] == rel and body["inbox"] is False, body
    status, bad = await post(daemon, "/memorize", {"text": "x", "unsaved": "daily"})
    assert status == 400, bad


async def test_private_capture_is_written_not_indexed(daemon, roam_dir):
    status, body = await post(daemon, "/memorize", {"text": "My pin is zebracorn 0000", "tags": ["private"]})
    assert status == 200 and body["indexed"] is False
    assert "zebracorn" in today_daily(roam_dir).read_text()
    _, found = await daemon.get_json("/search", q="zebracorn")
    assert found["results"] == []
    # It can still be forgotten (found in the dailies, not in the index).
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert not today_daily(roam_dir).exists()  # the capture created it: the file goes too
    # The log never names the private heading's ID, captured or forgotten.
    assert body["id"] not in daemon.log(), daemon.log()
    assert "captured a heading the index does not hold" in daemon.log()


async def test_a_capture_into_a_private_daily_leaves_its_name_out_of_the_log(daemon, roam_dir):
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text("#+filetags: :private:\n#+title: today\n* Morning\n")
    status, body = await post(daemon, "/memorize", {"text": "Call the lawyer"})
    assert status == 200 and body["file"] == f"daily/{daily.name}" and body["indexed"] is False, body
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.name not in daemon.log() and body["id"] not in daemon.log(), daemon.log()


async def test_forget_refuses_user_headings_and_bad_input(daemon, roam_dir):
    await wait_until(lambda: _has_node(daemon, IDS["hydration"]))
    before = (roam_dir / "bread-hydration.org").read_bytes()
    status, body = await post(daemon, "/forget", {"id": IDS["hydration"]})
    assert status == 409 and "not" in body["error"] and body["ok"] is False
    status, body = await post(daemon, "/forget", {"id": IDS["bakers_percentages"]})
    assert status == 409 and "yours" in body["error"]
    assert (roam_dir / "bread-hydration.org").read_bytes() == before
    status, body = await post(daemon, "/forget", {"id": "00000000-dead-beef-0000-000000000000"})
    assert status == 404
    for bad in ({}, {"id": 3}, {"id": ""}):
        status, body = await post(daemon, "/forget", bad)
        assert status == 400, (bad, body)
    for bad in ({}, {"text": ""}, {"text": "x", "tags": ["no spaces"]}, {"text": "x", "tags": "one"}):
        status, body = await post(daemon, "/memorize", bad)
        assert status == 400, (bad, body)


async def _has_node(daemon, node_id):
    status, _ = await daemon.get_json(f"/nodes/{node_id}")
    return status == 200


async def test_purge_chain_capture_found_forget_found_nothing_anywhere(daemon, roam_dir, tmp_path):
    word = "xylophonist"
    status, body = await post(daemon, "/memorize", {"text": f"The {word} rehearses on Tuesdays in the crypt hall"})
    assert status == 200
    node_id = body["id"]

    async def embedded():
        _, st = await daemon.get_json("/status")
        return st["pending"] == 0 and st["chunks"] > 0 and not st["indexing"]["running"]

    await wait_until(embedded, timeout=20)
    _, found = await daemon.get_json("/search", q=word)
    assert [r["heading_id"] for r in found["results"]] == [node_id]
    status, similar = await post(daemon, "/similar", {"text": f"{word} rehearses tuesdays"})
    assert status == 200 and similar["results"][0]["heading_id"] == node_id
    db = tmp_path / "daemon.sqlite3"
    assert word.encode() in db_bytes(db)

    status, gone = await post(daemon, "/forget", {"id": node_id})
    assert status == 200 and gone["remaining_rows"] == 0, gone
    assert not today_daily(roam_dir).exists()  # the capture created it: the file goes too
    _, found = await daemon.get_json("/search", q=word)
    assert found["results"] == []
    _, similar = await post(daemon, "/similar", {"text": f"{word} rehearses tuesdays"})
    assert node_id not in [r["heading_id"] for r in similar["results"]]
    status, _ = await daemon.get_json(f"/nodes/{node_id}")
    assert status == 404
    # The bytes: database file and WAL, while the daemon runs and after it stopped.
    assert os.path.exists(f"{db}-wal") or os.path.exists(db)
    assert word.encode() not in db_bytes(db)
    daemon.stop()
    assert word.encode() not in db_bytes(db)


async def test_a_symlinked_daily_inside_the_notes_is_written_through_and_forgotten(daemon, roam_dir):
    real = roam_dir / "synced" / "today.org"
    real.parent.mkdir()
    real.write_bytes(b":PROPERTIES:\n:ID: j-1\n:END:\n#+title: Journal\n* Kept\r\nline")  # odd, but the user's
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    os.symlink("../synced/today.org", daily)
    before = real.read_bytes()
    status, body = await post(daemon, "/memorize", {"text": "Oil the garden gate hinges"})
    assert status == 200 and body["inbox"] is False and body["indexed"] is True, body
    assert daily.is_symlink() and real.read_bytes().startswith(before + b"\n* Oil the garden gate hinges\n")
    status, gone = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, gone
    assert daily.is_symlink() and real.read_bytes() == before


async def test_forget_answers_a_private_users_id_like_an_unknown_one(daemon, roam_dir):
    daily = today_daily(roam_dir)
    daily.parent.mkdir()
    daily.write_text("* Diary :private:\n:PROPERTIES:\n:ID:       0000aaaa-0000-0000-0000-00000000beef\n:END:\nsecret\n")
    answers = []
    for node_id in ("0000aaaa-0000-0000-0000-00000000beef", "0000aaaa-0000-0000-0000-00000000dead"):
        status, body = await post(daemon, "/forget", {"id": node_id})
        answers.append((status, body["error"].replace(node_id, "ID")))
    assert answers[0] == answers[1] and answers[0][0] == 404
    assert "secret" in daily.read_text()
