"""/similar from inside a large note (a year of journal in one file): its own headings
are each other's nearest neighbours and fill the pool of nearest headings /similar starts
from (``answers/nearest.py``), yet the answer holds the other notes, in vector mode, and
never says that the query has no vectors when it has them.

Over HTTP with the fake Ollama: real org files, real SQLite, the daemon's own routes.
"""

from __future__ import annotations

import uuid

import pytest

HEADINGS = 300  # three times the pool of 100 that /similar at k=10 starts from


def journal(*, file_id: bool, heading_ids: bool) -> str:
    """A journal in one file: every day's heading shares the file's words (so the file's
    headings are nearest one another) and none of the example vault's."""
    ns = uuid.UUID(int=7)
    lines = [":PROPERTIES:", f":ID:       {uuid.uuid5(ns, 'journal')}", ":END:"] if file_id else []
    lines += ["#+title: Lab journal", ""]
    for day in range(HEADINGS):
        lines.append(f"* Day {day}: zorblax calibration")
        if heading_ids and day % 3 == 0:
            lines += [":PROPERTIES:", f":ID:       {uuid.uuid5(ns, str(day))}", ":END:"]
        lines.append(f"Calibrated the zorblax rig and the quaxel probe; flumph reading {day % 7}, drift {day % 5}.")
    return "\n".join(lines) + "\n"


async def similar(client, **params) -> dict:
    resp = await client.get("/similar", params={k: str(v) for k, v in params.items()})
    body = await resp.json()
    assert resp.status == 200, body
    return body


def day_line(text: str, day: int) -> int:
    return text.splitlines().index(f"* Day {day}: zorblax calibration") + 1


@pytest.mark.parametrize("ids", [{"file_id": True, "heading_ids": True}, {"file_id": False, "heading_ids": False}])
async def test_a_heading_of_a_large_note_finds_the_other_notes(make_client, settings, roam_dir, ids):
    text = journal(**ids)
    (roam_dir / "journal-2024.org").write_text(text)
    client = await make_client(settings)
    others = {p.relative_to(roam_dir).as_posix() for p in roam_dir.rglob("*.org")} - {"journal-2024.org"}
    for day in (1, 151, 299):  # days without an ID of their own: the file's note is theirs
        body = await similar(client, file="journal-2024.org", line=day_line(text, day), k=10)
        assert body["mode"] == "vector" and "note" not in body, body
        found = {r["file"] for r in body["results"]}
        assert len(body["results"]) == 10 and found <= others | {"journal-2024.org"}, body
        assert found & others, body
    if ids["file_id"]:
        body = await similar(client, node=str(uuid.uuid5(uuid.UUID(int=7), "journal")), k=10)
        assert body["mode"] == "vector" and len(body["results"]) == 10, body
        assert {r["file"] for r in body["results"]} <= others


async def test_an_empty_answer_says_no_false_reason(make_client, make_settings, fake_ollama, tmp_path):
    """Alone in the index, the note's heading has vectors and nothing to compare them with:
    an empty vector answer, not "no vectors for this query yet". Another note added and
    not yet embedded is found by its words, with that note (its embedding is pending)."""
    roam = tmp_path / "alone"
    roam.mkdir()
    text = journal(file_id=True, heading_ids=True)
    (roam / "journal-2024.org").write_text(text)
    client = await make_client(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    line = day_line(text, 151)
    body = await similar(client, file="journal-2024.org", line=line, k=10)
    assert body == {"mode": "vector", "results": [], "min_score": 0.0}
    (roam / "zorblax-rig.org").write_text("#+title: Zorblax rig\n\nHow the zorblax rig is calibrated.\n")
    fake_ollama.state.fail_status = 500  # the new note stays pending
    await client.index.reconcile()
    body = await similar(client, file="journal-2024.org", line=line, k=10)
    assert body["mode"] == "keyword" and [r["file"] for r in body["results"]] == ["zorblax-rig.org"], body
    assert "embeddings pending" in body["note"]


async def test_a_note_larger_than_the_widest_pool_still_finds_the_others(make_client, settings, roam_dir, monkeypatch):
    """A note of more chunks than one search may ask for (``MAX_POOL``: 25,600; a year of
    journal of 58k chunks held all of a heading's nearest): its headings are not searched
    once the pool is found to be all of them, so the pool holds the other notes. ``MAX_POOL``
    is lowered to below this note's chunks to stand for such a note at a test's size."""
    monkeypatch.setattr("arcology_oracle.answers.nearest.MAX_POOL", 2 * HEADINGS // 3)
    text = journal(file_id=True, heading_ids=False)
    (roam_dir / "journal-2024.org").write_text(text)
    client = await make_client(settings)
    others = {p.relative_to(roam_dir).as_posix() for p in roam_dir.rglob("*.org")} - {"journal-2024.org"}
    for params in ({"file": "journal-2024.org", "line": day_line(text, 151)}, {"node": str(uuid.uuid5(uuid.UUID(int=7), "journal"))}):
        body = await similar(client, **params, k=10)
        assert body["mode"] == "vector" and len(body["results"]) == 10, body
        assert {r["file"] for r in body["results"]} <= others, body
