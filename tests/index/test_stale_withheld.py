"""A note the store cannot take serves nothing until it is taken: its old rows may hold a
heading the user has just made private (added the tag, saved), and whether they do is
not known until the note is taken. The real app with its watcher over real files, the
fake Ollama at the network edge, and a real SQLite file that refuses writes: another
process holds its write lock, as another program would (the writer's busy wait cut
short, so that the refusal comes at once)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys

import pytest

from arcology_oracle.index import live, service
from arcology_oracle.http.app import create_app
from arcology_oracle.http.keys import index_key, ready_key, worker_key
from tests.index.test_private_files import rows_holding
from tests.runners import reconcile_once, wait_until

NODE = "dddddddd-0000-4000-8000-000000000051"
# Holds the database's write lock until its standard input closes (a process of its own:
# the locks of two connections of one process do not exclude each other).
HOLD_LOCK = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
    " c.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.read(); c.execute('ROLLBACK')"
)

@contextlib.contextmanager
def write_lock_held(db_path):
    """Another process holds the write lock of the database ``db_path`` inside the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.communicate("")


NOTE = (
    f":PROPERTIES:\n:ID: {NODE}\n:END:\n#+title: Bank notes\n"
    "* Bank{tag}\nmy pin is lockedotterpin 4242 for the bank\n"
    "* Garden\nthe lockedgardenword grows by the bank\n"
)


def impatient_writer(monkeypatch) -> None:
    """The writers opened from now on wait 50 ms for a lock rather than the default 10 s."""
    real_open = service.Store.open

    def open_impatient(path, *, writer=False):
        store = real_open(path, writer=writer)
        store.conn.execute("PRAGMA busy_timeout = 50")
        return store

    monkeypatch.setattr(service.Store, "open", open_impatient)


@pytest.fixture
def bank(tmp_path, make_settings, fake_ollama, monkeypatch):
    """Settings for a notes directory holding bank.org (no private tag yet), whose stale
    notes are read again every 50 ms."""
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "bank.org").write_text(NOTE.format(tag=""))
    monkeypatch.setattr(live, "SETUP_CHECK_SECONDS", 0.05)
    return make_settings(roam_dir=roam, ollama_host=fake_ollama.url)


async def served(client, fake_ollama, word: str) -> list[str]:
    """Where ``word`` is served: the answers of /search, POST /similar, GET /heading,
    /nodes/ID, and the prompt of POST /ask when it holds the note's line of it."""
    seen = []
    answers = {
        "/search": await client.get("/search", params={"q": word}),
        "/similar": await client.post("/similar", json={"text": f"{word} 4242 bank", "k": 10}),
        "/heading": await client.get("/heading", params={"file": "bank.org", "line": "5"}),
        "/nodes": await client.get(f"/nodes/{NODE}"),
    }
    for route, resp in answers.items():
        if word in await resp.text():
            seen.append(route)
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": f"what about {word} by the bank?"})
    await resp.read()
    line = next(line for line in NOTE.splitlines() if word in line)  # the note's, not the question's
    if line in json.dumps(fake_ollama.state.chats):
        seen.append("/ask prompt")
    return seen


async def test_a_note_the_locked_database_cannot_take_is_not_served_until_it_is(
    bank, make_client, fake_ollama, caplog
):
    settings, roam = bank, bank.roam_dir
    client = await make_client(settings, watch=True)
    index = client.index
    everywhere = ["/search", "/similar", "/heading", "/nodes", "/ask prompt"]
    assert await served(client, fake_ollama, "lockedotterpin") == everywhere

    await index.write(lambda store: store.conn.execute("PRAGMA busy_timeout = 50"))
    with write_lock_held(settings.db_path):  # the database refuses every other writer now
        (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))
        await wait_until(lambda: any("failed to index" in r.getMessage() for r in caplog.records))  # the save: refused
        await index.write(lambda store: None)  # (after the refused write, whose outcome is seen first)
        assert rows_holding(settings.db_path, ("lockedotterpin",))  # still in the file: it cannot be written
        assert await served(client, fake_ollama, "lockedotterpin") == []
        assert await served(client, fake_ollama, "lockedgardenword") == []  # the note whole
    await wait_until(lambda: not rows_holding(settings.db_path, ("lockedotterpin",)))  # taken at a retry
    await wait_until(lambda: not index.withheld)
    assert await served(client, fake_ollama, "lockedotterpin") == []
    assert await served(client, fake_ollama, "lockedgardenword") == ["/search", "/similar", "/nodes", "/ask prompt"]


async def test_a_save_waits_for_another_programs_lock_no_longer_than_the_watcher_allows(
    bank, make_client, fake_ollama
):
    # A save waited the writer's whole busy timeout (10 s) for the lock before it was
    # refused and its note withheld: that long, the heading it made private was served.
    settings, roam = bank, bank.roam_dir
    client = await make_client(settings, watch=True)
    index = client.index

    def busy_timeout(store) -> int:
        return store.conn.execute("PRAGMA busy_timeout").fetchone()[0]

    # A writer far more patient than the daemon's (10 s), so that only a hang fails the
    # wait below, never a slow machine: the save's own wait does not depend on it.
    patient = await index.write(lambda store: store.conn.execute("PRAGMA busy_timeout = 600000") and busy_timeout(store))
    assert patient == 600_000
    with write_lock_held(settings.db_path):
        (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))
        # Withheld long before the busy timeout would have refused the save (it used to
        # be withheld only after it: this wait gave up first).
        await wait_until(lambda: "bank.org" in index.withheld, timeout=60)
        assert rows_holding(settings.db_path, ("lockedotterpin",))  # its old rows, the heading public in them
        assert await served(client, fake_ollama, "lockedotterpin") == []
        assert await index.write(busy_timeout) == patient  # a capture, the embedding... wait as long as before
    await wait_until(lambda: not index.withheld)  # taken at a retry
    assert not rows_holding(settings.db_path, ("lockedotterpin",))
    assert await served(client, fake_ollama, "lockedgardenword") == ["/search", "/similar", "/nodes", "/ask prompt"]


async def test_a_note_made_private_while_the_database_is_locked_is_not_named_in_the_log(
    tmp_path, make_settings, make_client, fake_ollama, monkeypatch, caplog
):
    # The refused write was logged with a traceback naming the file: a note the save made
    # private whole (its #+filetags) must never be named (README, What is private).
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "therapy-janedoe.org").write_text("#+title: Sessions\n* Monday\nwe talked\n")
    monkeypatch.setattr(live, "SETUP_CHECK_SECONDS", 0.05)
    settings = make_settings(roam_dir=roam, ollama_host=fake_ollama.url)
    client = await make_client(settings, watch=True)
    await client.index.write(lambda store: store.conn.execute("PRAGMA busy_timeout = 50"))
    with write_lock_held(settings.db_path):
        caplog.clear()
        (roam / "therapy-janedoe.org").write_text("#+title: Sessions\n#+filetags: :private:\n* Monday\nwe talked\n")
        await wait_until(lambda: "therapy-janedoe.org" in client.index.withheld)
    await wait_until(lambda: not client.index.withheld)  # taken at a retry
    named = [r.getMessage() for r in caplog.records if "janedoe" in r.getMessage() or "janedoe" in (r.exc_text or "")]
    assert named == []


async def test_a_note_changed_while_the_daemon_was_down_is_withheld_when_the_start_cannot_store_it(
    bank, make_client, fake_ollama, monkeypatch, caplog
):
    # The first reconcile refused whole (the database locked as the daemon starts) was
    # logged and never retried: a heading made private while the daemon was down stayed
    # served until its note changed again.
    settings, roam = bank, bank.roam_dir
    await reconcile_once(settings)
    (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))  # while the daemon is down
    impatient_writer(monkeypatch)
    with write_lock_held(settings.db_path):
        client = await make_client(settings, watch=True, embedded=False)  # its first reconcile: refused
        assert any("initial index failed" in r.getMessage() for r in caplog.records)
        assert rows_holding(settings.db_path, ("lockedotterpin",))
        assert await served(client, fake_ollama, "lockedotterpin") == []
    await wait_until(lambda: not rows_holding(settings.db_path, ("lockedotterpin",)))  # taken at a retry
    await wait_until(lambda: not client.index.withheld)  # (once its report is read, after the commit)
    assert await served(client, fake_ollama, "lockedgardenword") == ["/search", "/similar", "/nodes", "/ask prompt"]


async def test_a_note_made_while_the_daemon_was_down_is_indexed_when_the_start_can_store_it_again(
    bank, make_client, monkeypatch
):
    # A start the store refused whole retried only the notes it held: one the user wrote
    # while the daemon was down was never indexed until edited again.
    settings, roam = bank, bank.roam_dir
    await reconcile_once(settings)
    (roam / "walks.org").write_text("#+title: Walks\n* Ridge\nthe ridgewalkword path above the lake\n")  # while down
    impatient_writer(monkeypatch)
    with write_lock_held(settings.db_path):
        await make_client(settings, watch=False, embedded=False)  # its first reconcile: refused
        assert not rows_holding(settings.db_path, ("ridgewalkword",))
    await wait_until(lambda: rows_holding(settings.db_path, ("ridgewalkword",)))  # the start, tried again


async def test_the_pending_chunks_of_a_withheld_note_are_not_sent_to_the_embedder(
    bank, make_client, fake_ollama
):
    # Readers hid a withheld note, but the embedding worker read its chunks still pending
    # (the embedder was down when it was saved) and sent them to Ollama: a heading made
    # private by the save the store refused went to the embedder, its vector stored.
    fake_ollama.state.configure({"fault_paths": ["/api/embed"], "fail_status": 503})  # nothing embedded yet
    settings, roam = bank, bank.roam_dir
    client = await make_client(settings, watch=True, embedded=False)
    index, worker = client.index, client.server.app[worker_key]
    assert await index.read(lambda store: store.counts()["pending"]) > 0

    await index.write(lambda store: store.conn.execute("PRAGMA busy_timeout = 50"))
    with write_lock_held(settings.db_path):
        (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))
        await wait_until(lambda: "bank.org" in index.withheld)
        fake_ollama.state.clear_records()
        worker.wake()  # what is pending is read again (the embedder still fails: what it is sent is recorded)
        await wait_until(lambda: worker.idle.is_set() or fake_ollama.state.count("/api/embed"))
        sent = " ".join(fake_ollama.state.embedded_texts)
        assert "lockedotterpin" not in sent and "lockedgardenword" not in sent
    fake_ollama.state.configure({"fail_status": None})
    await wait_until(lambda: not index.withheld)  # taken at a retry
    await wait_until(lambda: worker.idle.is_set())
    assert await index.read(lambda store: store.counts()["pending"]) == 0
    sent = " ".join(fake_ollama.state.embedded_texts)
    assert "lockedotterpin" not in sent and "lockedgardenword" in sent


COUNTS = ("files", "headings", "nodes", "chunks", "embedded", "pending")


async def all_embedded(counts):
    """The counts, once every chunk counted is embedded (else None)."""
    now = await counts()
    return now if now["embedded"] == now["chunks"] else None


async def test_status_counts_nothing_of_a_withheld_note(bank, make_client, fake_ollama):
    # /status counted the chunks of a withheld note (its files and headings not): a count
    # the note's chunks were in told what exists of a note served nowhere else.
    settings, roam = bank, bank.roam_dir
    (roam / "bank.org").unlink()
    (roam / "walks.org").write_text("#+title: Walks\n* Ridge\nthe ridgewalkword path above the lake\n")
    client = await make_client(settings, watch=True)
    index = client.index

    async def counts():
        status = await (await client.get("/status")).json()
        return {key: status[key] for key in COUNTS}

    alone = await counts()  # walks.org alone
    (roam / "bank.org").write_text(NOTE.format(tag=""))
    await wait_until(lambda: rows_holding(settings.db_path, ("lockedotterpin",)))
    # Every chunk embedded (the worker's idle flag may still be the one from before the note).
    embedded = await wait_until(lambda: all_embedded(counts))
    assert embedded["chunks"] > alone["chunks"] and embedded["embedded"] > alone["embedded"]

    await index.write(lambda store: store.conn.execute("PRAGMA busy_timeout = 50"))
    with write_lock_held(settings.db_path):
        (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))
        await wait_until(lambda: "bank.org" in index.withheld)
        assert await counts() == alone
    await wait_until(lambda: not index.withheld)  # taken at a retry: its Garden is served again
    assert await served(client, fake_ollama, "lockedgardenword") == ["/search", "/similar", "/nodes", "/ask prompt"]


async def test_a_note_changed_while_the_daemon_was_down_is_withheld_until_the_start_has_read_it(
    bank, aiohttp_client, fake_ollama, monkeypatch
):
    # A heading made private while the daemon was down (a sync, a restart of the service)
    # was served from its old rows for as long as the first reconcile took to reach its
    # note: requests are answered while it runs (seconds at a few thousand notes, more on
    # a large or slow notes directory). Notes unchanged since are served meanwhile.
    settings, roam = bank, bank.roam_dir
    (roam / "walks.org").write_text("#+title: Walks\n* Ridge\nthe ridgewalkword path above the lake\n")
    await indexed_and_stopped(settings)
    (roam / "bank.org").write_text(NOTE.format(tag=" :private:"))  # while the daemon is down
    gate, _ = hold_reconciles(monkeypatch)
    app = create_app(settings, watch=True)
    client = await aiohttp_client(app)
    assert not app[ready_key].is_set()  # the first reconcile has not read the notes yet
    assert await served(client, fake_ollama, "lockedotterpin") == []
    found = await (await client.get("/search", params={"q": "ridgewalkword"})).json()
    assert [r["file"] for r in found["results"]] == ["walks.org"]
    gate.set()
    await asyncio.wait_for(app[ready_key].wait(), 30)
    await wait_until(lambda: not index_of(app).withheld)
    assert await served(client, fake_ollama, "lockedotterpin") == []
    assert "/search" in await served(client, fake_ollama, "lockedgardenword")  # the rest of the note is back


async def test_a_note_whose_setup_file_was_made_private_while_the_daemon_was_down_is_withheld_at_the_start(
    bank, aiohttp_client, fake_ollama, monkeypatch
):
    # The note's own bytes did not change, only the #+SETUPFILE it names gained a private
    # tag: its old rows were served until the first reconcile read it again.
    settings, roam = bank, bank.roam_dir
    (roam / "bank.setup").write_text("#+title: unused\n")
    (roam / "bank.org").write_text("#+SETUPFILE: bank.setup\n" + NOTE.format(tag=""))
    await indexed_and_stopped(settings)
    (roam / "bank.setup").write_text("#+filetags: :private:\n")  # while the daemon is down
    gate, _ = hold_reconciles(monkeypatch)
    app = create_app(settings, watch=True)
    client = await aiohttp_client(app)
    assert not app[ready_key].is_set()
    assert await served(client, fake_ollama, "lockedgardenword") == []
    gate.set()
    await asyncio.wait_for(app[ready_key].wait(), 30)
    assert await served(client, fake_ollama, "lockedgardenword") == []


async def test_a_tag_made_private_while_the_daemon_was_down_keeps_its_notes_out_from_the_start(
    bank, aiohttp_client, fake_ollama, monkeypatch
):
    # private_tags gained "money" between two starts: the notes holding it were read again
    # by the first reconcile, and served from their old rows until it reached them.
    settings, roam = bank, bank.roam_dir
    (roam / "bank.org").write_text(NOTE.format(tag=" :money:"))
    await indexed_and_stopped(settings)
    settings = settings.model_copy(update={"private_tags": ("private", "money")})
    gate, _ = hold_reconciles(monkeypatch)
    app = create_app(settings, watch=True)
    client = await aiohttp_client(app)
    assert not app[ready_key].is_set()
    assert await served(client, fake_ollama, "lockedotterpin") == []
    gate.set()
    await asyncio.wait_for(app[ready_key].wait(), 30)
    assert await served(client, fake_ollama, "lockedotterpin") == []
    assert "/search" in await served(client, fake_ollama, "lockedgardenword")


# watchdog's inotify emitter warns when a watched folder is moved within the tree (it
# watches it again under its new name); the suite's warnings are errors, which would stop it.
@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
async def test_a_folder_moved_where_exclude_globs_leave_it_out_is_withheld_until_the_rescan_has_read_it(
    bank, aiohttp_client, fake_ollama, monkeypatch
):
    # A folder moved (mv money attic/money, exclude_globs attic/**) is a rescan, a full
    # reconcile: its notes were served from their old rows until that reconcile ended.
    settings, roam = bank, bank.roam_dir
    (roam / "bank.org").unlink()
    (roam / "money").mkdir()
    (roam / "money" / "bank.org").write_text(NOTE.format(tag=""))
    settings = settings.model_copy(update={"exclude_globs": ("attic/**",)})
    app = create_app(settings, watch=True)
    client = await aiohttp_client(app)
    await asyncio.wait_for(app[ready_key].wait(), 30)
    await asyncio.wait_for(app[worker_key].idle.wait(), 30)
    found = await (await client.get("/search", params={"q": "lockedotterpin"})).json()
    assert [r["file"] for r in found["results"]] == ["money/bank.org"]
    gate, started = hold_reconciles(monkeypatch)
    (roam / "attic").mkdir()
    (roam / "money").rename(roam / "attic" / "money")
    await asyncio.wait_for(started.wait(), 30)  # the rescan
    found = await (await client.get("/search", params={"q": "lockedotterpin"})).json()
    assert found["results"] == []
    gate.set()
    await wait_until(lambda: not index_of(app).withheld)
    found = await (await client.get("/search", params={"q": "lockedotterpin"})).json()
    assert found["results"] == []


def index_of(app):
    return app[index_key]


async def indexed_and_stopped(settings) -> None:
    """The notes indexed and embedded by a daemon's index that then stops (as before a
    change made while the daemon is down)."""
    index = service.OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.embed_pending()
    await index.close()


def hold_reconciles(monkeypatch) -> tuple[asyncio.Event, asyncio.Event]:
    """``(gate, started)``: every reconcile sets ``started`` and waits for ``gate``."""
    gate, started = asyncio.Event(), asyncio.Event()
    reconcile = service.OracleIndex.reconcile

    async def held_reconcile(self, *args, **kwargs):
        started.set()
        await gate.wait()
        return await reconcile(self, *args, **kwargs)

    monkeypatch.setattr(service.OracleIndex, "reconcile", held_reconcile)
    return gate, started
