"""A capture's and a forget's looks at the files (Emacs's lock beside the daily, symlinks,
encrypted names) run in a worker thread: on a notes directory that stalls (NFS, sshfs
gone away) every other request is served meanwhile. The look at the lock is made to
block on an event until another request has been answered; no sleeps, no timing."""

from __future__ import annotations

import asyncio
import datetime
import threading

import pytest

from arcology_oracle.notes import disk

GUARD = 20  # seconds a blocked look waits before giving up: only a broken run waits that long


def block_first_lock_look(monkeypatch, name: str) -> tuple[threading.Event, threading.Event, list[str]]:
    """Make the first look at the lock of the note called ``name`` wait for ``release``;
    ``entered`` is set when it starts. ``order`` records what happened first."""
    entered, release, order = threading.Event(), threading.Event(), []
    lock_held = disk._lock_held

    def stalled(path):
        if path.name == name and not entered.is_set():
            entered.set()
            order.append("look released" if release.wait(GUARD) else "look gave up, nothing else served")
        return lock_held(path)

    monkeypatch.setattr(disk, "_lock_held", stalled)
    return entered, release, order


async def served_while_blocked(client, entered, release, order) -> None:
    assert await asyncio.to_thread(entered.wait, GUARD)
    health = await client.get("/health")
    order.append(f"health {health.status}")
    release.set()


@pytest.mark.parametrize("daily_exists", [False, True])
async def test_a_capture_looks_at_the_files_off_the_event_loop(client, roam_dir, monkeypatch, daily_exists):
    name = datetime.date.today().strftime("%Y-%m-%d") + ".org"
    if daily_exists:
        (roam_dir / "daily").mkdir(exist_ok=True)
        (roam_dir / "daily" / name).write_bytes(b"#+title: today\n")
    entered, release, order = block_first_lock_look(monkeypatch, name)
    capture = asyncio.create_task(client.post("/memorize", json={"text": "Served while the lock was looked at"}))
    await served_while_blocked(client, entered, release, order)
    response = await capture
    assert response.status == 200, await response.text()
    assert order == ["health 200", "look released"]
    assert (await response.json())["file"] == f"daily/{name}"


async def test_a_forget_looks_at_the_files_off_the_event_loop(client, roam_dir, monkeypatch):
    response = await client.post("/memorize", json={"text": "To be forgotten while the lock is looked at"})
    body = await response.json()
    assert response.status == 200, body
    name = body["file"].rsplit("/", 1)[-1]
    entered, release, order = block_first_lock_look(monkeypatch, name)
    forget = asyncio.create_task(client.post("/forget", json={"id": body["id"]}))
    await served_while_blocked(client, entered, release, order)
    response = await forget
    assert response.status == 200, await response.text()
    assert order == ["health 200", "look released"]
    daily = roam_dir / body["file"]
    assert not daily.exists() or body["id"] not in daily.read_text()  # the daily it made goes with it
