"""What a forget leaves of a daily the daemon created: the same in every order of the
forgets. The last capture forgotten takes the file away (and the folders the daemon made
for it, when empty) only when the daemon's record says it created the file, the file holds
nothing but the head it wrote (the same ID, byte for byte) and Emacs does not hold it;
else the rest stays. Real files, real SQLite, the in-process app over the fake Ollama."""

from __future__ import annotations

import asyncio
import os

import pytest

from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import new_file_head
from tests.index.test_memory_left_out import post, snapshot, today_name
from tests.runners import past_a_fifo

TEXTS = ("Buy the oat milk", "Call the plumber about the tap", "Return the library books")


@pytest.fixture
def settings(make_settings, fake_ollama):
    return make_settings(ollama_host=fake_ollama.url)


async def capture_all(client, dailies_dir: str = "daily") -> list[str]:
    ids = []
    for text in TEXTS:
        status, body = await post(client, "/memorize", {"text": text, "dailies_dir": dailies_dir})
        assert status == 200 and body["file"] == f"{dailies_dir}/{today_name()}" and body["inbox"] is False, body
        ids.append(body["id"])
    return ids


async def forget_all(client, ids: list[str]) -> None:
    for node_id in ids:
        status, body = await post(client, "/forget", {"id": node_id})
        assert status == 200, body


async def captured_daily(client, roam_dir):
    """Today's daily the daemon creates for the three captures: their IDs, its path, the
    head it wrote and that head's ID."""
    ids = await capture_all(client)
    daily = roam_dir / "daily" / today_name()
    head = daily.read_bytes().split(b"* ", 1)[0]
    return ids, daily, head, head.split(b":ID:", 1)[1].split(b"\n", 1)[0].strip().decode()


@pytest.mark.parametrize("order", ["oldest first", "newest first", "middle first"])
async def test_forgetting_every_capture_of_a_daily_the_daemon_made_removes_it_in_any_order(
    make_client, settings, roam_dir, order
):
    client = await make_client(settings)
    before = snapshot(roam_dir)
    ids = await capture_all(client)
    ids = {"oldest first": ids, "newest first": ids[::-1], "middle first": [ids[1], ids[0], ids[2]]}[order]
    await forget_all(client, ids)
    assert not (roam_dir / "daily" / today_name()).exists()
    assert snapshot(roam_dir) == before


async def test_a_daily_the_user_made_with_the_same_looking_head_stays(make_client, settings, roam_dir):
    # org-roam writes the same head (":ID:" and seven spaces); the daemon did not make this one.
    daily = roam_dir / "daily" / today_name()
    daily.parent.mkdir()
    head = new_file_head(today_name().removesuffix(".org")).encode()
    daily.write_bytes(head)
    client = await make_client(settings)
    await forget_all(client, await capture_all(client))
    assert daily.read_bytes() == head


async def test_a_daily_the_daemon_made_keeps_its_head_when_anything_else_is_in_it(make_client, settings, roam_dir):
    client = await make_client(settings)
    ids, daily, head, _ = await captured_daily(client, roam_dir)
    assert head.startswith(b":PROPERTIES:\n:ID:") and head.endswith(b"\n")
    daily.write_bytes(daily.read_bytes() + b"* Mine\nmy own line\n")  # the user's heading, after the captures
    await forget_all(client, ids)
    assert daily.read_bytes() == head + b"* Mine\nmy own line\n"
    # The head changed (the title the user's now): the file stays when the captures go.
    changed = head.replace(b"#+title: ", b"#+title: my ")
    daily.write_bytes(changed)
    await forget_all(client, await capture_all(client))
    assert daily.read_bytes() == changed


async def test_a_daily_the_daemon_made_stays_while_emacs_holds_it(make_client, settings, roam_dir):
    client = await make_client(settings)
    ids = await capture_all(client)
    await forget_all(client, ids[:-1])
    daily = roam_dir / "daily" / today_name()
    lock = daily.with_name(".#" + daily.name)
    lock.symlink_to("user@host.1234:1700000000")  # Emacs's lock: unsaved edits
    status, body = await post(client, "/forget", {"id": ids[-1]})
    assert status == 409 and "unsaved edits" in body["error"], body
    lock.unlink()
    await forget_all(client, ids[-1:])
    assert not daily.exists()


@pytest.mark.parametrize("order", ["oldest first", "newest first"])
async def test_the_folders_the_daemon_made_for_a_daily_go_with_it_when_empty(make_client, settings, roam_dir, order):
    (roam_dir / "brand").mkdir()
    (roam_dir / "brand" / "kept.txt").write_text("the user's")
    client = await make_client(settings)
    ids = await capture_all(client, "brand/new/deeper")
    await forget_all(client, ids if order == "oldest first" else ids[::-1])
    assert not (roam_dir / "brand" / "new").exists()  # made by the daemon: gone
    assert (roam_dir / "brand" / "kept.txt").read_text() == "the user's"  # the user's folder stays

    ids = await capture_all(client, "brand/new")
    (roam_dir / "brand" / "new" / "notes.txt").write_text("the user's")  # something of the user's in it
    await forget_all(client, ids)
    assert (roam_dir / "brand" / "new" / "notes.txt").read_text() == "the user's"
    assert [p.name for p in (roam_dir / "brand" / "new").iterdir()] == ["notes.txt"]


async def test_a_daily_whose_making_could_not_be_recorded_keeps_its_head(make_client, settings, roam_dir, tmp_path):
    (tmp_path / ("capture-created." + settings.db_path.name)).mkdir()  # the record cannot be written
    client = await make_client(settings)
    ids, daily, head, _ = await captured_daily(client, roam_dir)
    await forget_all(client, ids)  # oldest first: the first capture's hash, covering the head, goes first
    assert daily.read_bytes() == head


async def test_the_record_holds_after_a_restart(make_client, settings, roam_dir):
    first = await make_client(settings)
    ids = await capture_all(first)
    await first.close()
    second = await make_client(settings)
    await forget_all(second, ids)
    assert not (roam_dir / "daily").exists()


@pytest.mark.parametrize("order", ["oldest first", "newest first"])
async def test_a_daily_another_note_links_to_keeps_its_head(make_client, settings, roam_dir, order):
    # The user linked to the day from another note: the daily's ID is theirs too now.
    client = await make_client(settings)
    ids, daily, head, day_id = await captured_daily(client, roam_dir)
    ids = ids if order == "oldest first" else ids[::-1]
    (roam_dir / "plans.org").write_text(f"#+title: Plans\n\nSee [[id:{day_id}][the day]].\n", encoding="utf-8")
    await client.index.index_paths(["plans.org"])
    await forget_all(client, ids)
    assert daily.read_bytes() == head


@pytest.mark.parametrize("where", ["a private heading", "an excluded note", "a note not yet indexed"])
async def test_a_daily_linked_from_where_the_index_does_not_look_keeps_its_head(make_client, make_settings, fake_ollama, roam_dir, where):
    # The index holds no link of a private heading nor of an excluded note, and none of a
    # note not yet read: the user's link to the day is theirs all the same.
    client = await make_client(make_settings(ollama_host=fake_ollama.url, exclude_globs=["drafts/**"]))
    ids, daily, head, day_id = await captured_daily(client, roam_dir)
    link = f"See [[id:{day_id}][the day]].\n"
    if where == "a private heading":
        (roam_dir / "plans.org").write_text(f"#+title: Plans\n\n* Secret :private:\n{link}", encoding="utf-8")
        await client.index.index_paths(["plans.org"])
    elif where == "an excluded note":
        (roam_dir / "drafts").mkdir()
        (roam_dir / "drafts" / "plans.org").write_text(f"#+title: Plans\n\n{link}", encoding="utf-8")
    else:
        (roam_dir / "plans.org").write_text(f"#+title: Plans\n\n{link}", encoding="utf-8")
    await forget_all(client, ids)
    assert daily.read_bytes() == head


async def test_a_fifo_named_as_a_note_does_not_hold_up_the_last_forget(make_client, settings, roam_dir):
    # Before the daily goes, every org file is read for links to it: a FIFO named as a
    # note (nothing will ever write to it) must be passed over, not waited on for ever
    # while the forget holds the captures' lock.
    client = await make_client(settings)
    ids = await capture_all(client)
    daily = roam_dir / "daily" / today_name()
    os.mkfifo(roam_dir / ".hidden-pipe.org")
    await past_a_fifo(asyncio.ensure_future(forget_all(client, ids)), roam_dir / ".hidden-pipe.org", 30)
    assert not daily.exists()


async def test_a_daily_that_cannot_be_read_before_its_last_forget_keeps_its_head(make_client, settings, roam_dir, monkeypatch):
    # Whether the user links to it is unknown when the look before the forget cannot read
    # the daily (another program holding it a moment): the head stays rather than be guessed.
    client = await make_client(settings)
    ids, daily, head, _ = await captured_daily(client, roam_dir)
    monkeypatch.setattr(note_io, "read_note", lambda root, rel: None)
    await forget_all(client, ids)
    assert daily.read_bytes() == head


async def test_a_link_in_a_version_controls_store_is_not_the_users(make_client, settings, roam_dir):
    # .git holds no note by name: what is there is not looked at, and the daily goes.
    client = await make_client(settings)
    ids, daily, _, day_id = await captured_daily(client, roam_dir)
    (roam_dir / ".git").mkdir()
    (roam_dir / ".git" / "stash.org").write_text(f"[[id:{day_id}]]\n", encoding="utf-8")
    await forget_all(client, ids)
    assert not daily.exists()
