"""A capture into a folder the index leaves out (``exclude_globs``, or a hidden folder):
Emacs sends its ``org-roam-dailies-directory`` as ``dailies_dir``, and a user may keep
that folder from the AI. The capture is the user's text, sent by the user: it is written
where asked, never indexed, and the answer says so (``indexed: false`` and a ``note``).
Whatever the index leaves out, the capture can be forgotten by its ID, also after the
daemon started again, and the forget gives back every other byte as it was. Real files,
real SQLite, the in-process app over the fake Ollama."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest

from tests.corpus_tools import db_bytes

EXCLUDED = ("journals/",)
USER_DAILY = b":PROPERTIES:\n:ID: user-daily-1\n:END:\n#+title: my day\n* Therapy\nsaid things"  # no final newline


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones too) and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def today_name() -> str:
    return datetime.date.today().strftime("%Y-%m-%d") + ".org"


async def post(client, path: str, body: dict):
    resp = await client.post(path, json=body)
    return resp.status, await resp.json()


@pytest.fixture
def left_out_settings(make_settings, fake_ollama):
    return make_settings(ollama_host=fake_ollama.url, exclude_globs=list(EXCLUDED))


@pytest.mark.parametrize("dailies_dir", ["journals", ".hidden", "journals/2026/"])
@pytest.mark.parametrize("existing", [False, True], ids=["new-daily", "users-daily"])
async def test_a_capture_into_a_left_out_dailies_dir_is_written_never_indexed_and_forgotten(
    make_client, left_out_settings, roam_dir, dailies_dir, existing
):
    client = await make_client(left_out_settings)
    daily = roam_dir / dailies_dir / today_name()
    if existing:
        daily.parent.mkdir(parents=True)
        daily.write_bytes(USER_DAILY)
    before = snapshot(roam_dir)
    text = "the quokka whisperer said the locker code is 4711"
    status, body = await post(client, "/memorize", {"text": text, "dailies_dir": dailies_dir})
    assert status == 200, body
    rel = daily.relative_to(roam_dir).as_posix()
    assert body["file"] == rel and body["inbox"] is False and body["indexed"] is False, body
    why = "a hidden folder" if dailies_dir.startswith(".") else "exclude_globs"
    assert why in body["note"] and "never indexed" in body["note"], body
    # Written where asked, after every byte the user had there.
    data = daily.read_bytes()
    assert data.startswith(USER_DAILY if existing else b":PROPERTIES:") and f":ID:       {body['id']}".encode() in data
    assert {k: v for k, v in snapshot(roam_dir).items() if k != rel} == {k: v for k, v in before.items() if k != rel}
    # Never indexed: not found, and not one of its words is in the database.
    found = await (await client.get("/search", params={"q": "quokka whisperer locker"})).json()
    assert body["id"] not in [r["heading_id"] for r in found["results"]]
    assert b"quokka whisperer" not in db_bytes(left_out_settings.db_path)

    status, forgot = await post(client, "/forget", {"id": body["id"]})
    assert status == 200, forgot
    assert forgot["file"] == rel and forgot["line"] == body["line"] and forgot["remaining_rows"] == 0, forgot
    # Byte for byte as before: the user's daily as it was, or the daily the capture made gone.
    assert snapshot(roam_dir) == before
    status, again = await post(client, "/forget", {"id": body["id"]})
    assert status == 404, again


async def test_a_capture_in_a_left_out_folder_is_forgotten_after_the_daemon_starts_again(
    make_client, left_out_settings, roam_dir
):
    """Where captures went that no walk of the index finds is kept beside the database,
    so a forget after a restart still finds them."""
    first = await make_client(left_out_settings)
    before = snapshot(roam_dir)
    captured = {}
    for folder in ("journals", ".hidden"):
        status, body = await post(first, "/memorize", {"text": f"remembered in {folder}", "dailies_dir": folder})
        assert status == 200 and body["indexed"] is False, body
        captured[folder] = body
    await first.close()

    second = await make_client(left_out_settings)
    for folder, body in captured.items():
        status, forgot = await post(second, "/forget", {"id": body["id"]})
        assert status == 200 and forgot["file"] == body["file"], (folder, forgot)
    assert snapshot(roam_dir) == before


async def test_the_users_own_heading_in_a_left_out_folder_stays_unknown(make_client, left_out_settings, roam_dir):
    """Looking in the left-out folders the daemon wrote to never makes the user's own
    headings there forgettable, nor says they exist: 404, the file as it was."""
    client = await make_client(left_out_settings)
    status, body = await post(client, "/memorize", {"text": "a capture", "dailies_dir": "journals"})
    assert status == 200, body
    mine = roam_dir / "journals" / "older.org"
    mine.write_bytes(b"* My secret\n:PROPERTIES:\n:ID: my-own-heading\n:END:\nnot for the AI\n")
    before = snapshot(roam_dir)
    status, answer = await post(client, "/forget", {"id": "my-own-heading"})
    assert status == 404 and answer["error"] == "no captured heading with ID 'my-own-heading'", answer
    assert snapshot(roam_dir) == before
    # Nor while Emacs holds the file's lock: "it has unsaved edits" would say it is there.
    os.symlink("user@elsewhere.4242:1700000000", mine.with_name(".#" + mine.name))
    status, answer = await post(client, "/forget", {"id": "my-own-heading"})
    assert status == 404 and answer["error"] == "no captured heading with ID 'my-own-heading'", answer
    assert snapshot(roam_dir) == before


async def test_a_capture_in_an_indexed_dailies_dir_says_nothing_of_the_index(make_client, left_out_settings):
    client = await make_client(left_out_settings)
    status, body = await post(client, "/memorize", {"text": "kept in plain sight", "dailies_dir": "journal"})
    assert status == 200 and body["indexed"] is True and body["note"] is None, body


async def test_a_link_to_a_left_out_folder_is_left_out_too(make_client, left_out_settings, roam_dir):
    """As the index decides: by the real path too (``j`` links to the excluded ``journals``)."""
    (roam_dir / "journals").mkdir()
    (roam_dir / "j").symlink_to("journals")
    client = await make_client(left_out_settings)
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "through a link", "dailies_dir": "j"})
    assert status == 200 and body["file"] == f"j/{today_name()}" and body["indexed"] is False, body
    assert "exclude_globs" in body["note"], body
    assert (roam_dir / "journals" / today_name()).exists()
    status, forgot = await post(client, "/forget", {"id": body["id"]})
    assert status == 200, forgot
    assert snapshot(roam_dir) == before


async def test_a_capture_whose_place_cannot_be_recorded_writes_nothing(make_client, left_out_settings, roam_dir, tmp_path):
    """A capture the daemon writes can always be forgotten: when the record of left-out
    folders cannot be written (here a directory has its name), the capture is refused
    before a byte of the notes is written."""
    client = await make_client(left_out_settings)
    (tmp_path / ("capture-places." + left_out_settings.db_path.name)).mkdir()
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "not kept", "dailies_dir": "journals"})
    assert status == 409 and "nothing was written" in body["error"], body
    assert snapshot(roam_dir) == before and not (roam_dir / "journals").exists()
    # An indexed folder needs no record.
    status, body = await post(client, "/memorize", {"text": "kept", "dailies_dir": "journal"})
    assert status == 200 and body["indexed"] is True, body


@pytest.mark.parametrize("where", ["private-tagged", "left-out folder"])
@pytest.mark.parametrize("state", ["read-only", "open in another program"])
async def test_a_heading_the_index_does_not_hold_is_unknown_whatever_its_file(
    make_client, left_out_settings, roam_dir, where, state
):
    """A forget of a private heading's ID (or one in a left-out folder) answers as for an
    ID nobody wrote, whatever state its file is in: a 409 saying the file is read-only,
    or open elsewhere, told that the heading exists and named its file."""
    client = await make_client(left_out_settings)
    status, body = await post(client, "/memorize", {"text": "a capture", "dailies_dir": "journals"})
    assert status == 200, body
    if where == "private-tagged":
        secret = roam_dir / "therapy.org"
        secret.write_bytes(b"#+title: Therapy\n#+filetags: :private:\n* Session\n:PROPERTIES:\n:ID: user-daily-1\n"
                           b":END:\nsaid things\n")
    else:
        secret = roam_dir / "journals" / "older.org"
        secret.write_bytes(USER_DAILY)
    unknown = await post(client, "/forget", {"id": "nobody-wrote-this"})
    assert unknown[0] == 404, unknown
    before = snapshot(roam_dir)
    holder = None
    if state == "read-only":
        secret.chmod(0o444)
    else:
        holder = os.open(secret, os.O_RDONLY)  # no write lease can be had while it is open
    try:
        status, answer = await post(client, "/forget", {"id": "user-daily-1"})
    finally:
        if holder is not None:
            os.close(holder)
        secret.chmod(0o644)
    assert (status, answer["error"]) == (404, "no captured heading with ID 'user-daily-1'"), answer
    assert secret.name not in answer["error"]
    assert snapshot(roam_dir) == before


async def test_a_capture_into_a_daily_not_named_as_an_org_note_is_forgotten(make_client, make_settings, fake_ollama, roam_dir):
    # daily_file_format names the dailies "*.txt": the capture is written there, never
    # indexed, and the answer says "forgetting it by its ID takes it back"; the forget
    # looked for it in the dailies folder's "*.org" notes only, and answered 404.
    settings = make_settings(ollama_host=fake_ollama.url, daily_file_format="%Y-%m-%d.txt")
    client = await make_client(settings)
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "the placetxtdaily plan"})
    assert status == 200 and body["file"].endswith(".txt") and "never indexed" in body["note"], body
    status, forgot = await post(client, "/forget", {"id": body["id"]})
    assert status == 200, forgot
    assert snapshot(roam_dir) == before


async def test_a_daily_linked_to_a_hidden_file_is_indexed_as_the_index_reads_it(make_client, left_out_settings, roam_dir):
    """The index reads a note by the path it is reached by: a daily that is a symlink to a
    file in a hidden folder is indexed (only exclude_globs is matched against the real path
    too). The capture's answer said 'left out of the index (a hidden folder or file):
    never indexed' with ``indexed: true``; it now says nothing of the index, and the
    capture is forgotten like any other."""
    (roam_dir / ".journal").mkdir()
    (roam_dir / ".journal" / "today.org").write_bytes(USER_DAILY)
    (roam_dir / "daily").mkdir(exist_ok=True)
    (roam_dir / "daily" / today_name()).symlink_to(Path("..", ".journal", "today.org"))
    client = await make_client(left_out_settings)
    before = snapshot(roam_dir)
    status, body = await post(client, "/memorize", {"text": "linked from plain sight"})
    assert status == 200 and body["file"] == f"daily/{today_name()}", body
    assert body["indexed"] is True and body["note"] is None, body
    status, forgot = await post(client, "/forget", {"id": body["id"]})
    assert status == 200, forgot
    assert snapshot(roam_dir) == before and (roam_dir / "daily" / today_name()).is_symlink()
