"""Draining pending chunks: successive pending_texts calls continue where the last one
stopped, and still find chunks that were (re)inserted below that point."""

from __future__ import annotations

import asyncio
import gc

import pytest

from arcology_oracle.ollama.embed import OllamaEmbedder
from arcology_oracle.errors import ServiceUnavailable
from arcology_oracle.index.embedding import embed_pending
from arcology_oracle.store import Store
from tests.runners import wait_until
from tests.store_rows import write_file


def test_pending_texts_drains_in_order_and_finds_chunks_inserted_below_the_cursor(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(store, "a.org", list(range(10))) + write_file(store, "b.org", list(range(10, 20)))
    first = store.pending_texts(8)
    assert [h for h, _ in first] == hashes[:8]
    store.store_vectors([(h, [1.0, 0.0]) for h, _ in first])
    # b.org is rewritten (its chunks get new, higher ids); a.org's tail is still pending.
    store.delete_file("b.org")
    hashes_b = write_file(store, "b.org", list(range(10, 20)))
    drained: list[str] = []
    while batch := store.pending_texts(5):
        drained += [h for h, _ in batch]
        store.store_vectors([(h, [0.0, 1.0]) for h, _ in batch])
    assert sorted(drained) == sorted(hashes[8:10] + hashes_b)
    assert store.counts()["pending"] == 0
    store.close()


async def test_a_fast_embedders_batches_are_committed_together_and_kept_when_it_fails(tmp_path, fake_ollama, make_settings):
    """Vectors are stored at most every ``store_every`` seconds (here: only at the end),
    in one transaction; when the embedder fails, what it embedded before is stored."""
    store = Store.open(tmp_path / "db.sqlite3")
    write_file(store, "a.org", list(range(20)))
    embedder = OllamaEmbedder(make_settings(ollama_host=fake_ollama.url, embed_batch_size=4))

    async def run_store(fn):
        return fn(store)

    stored: list[int] = []
    embedded = await embed_pending(embedder, run_store, batch_size=4, on_batch=stored.append, store_every=3600)
    assert embedded == 20 and stored == [20]
    assert fake_ollama.state.embed_batches == [4] * 5
    assert store.counts()["pending"] == 0

    write_file(store, "b.org", list(range(20, 40)))
    fake_ollama.state.configure({"fault_paths": ["/api/embed"], "faults_after": 2, "fail_status": 500})
    with pytest.raises(ServiceUnavailable):
        await embed_pending(embedder, run_store, batch_size=4, on_batch=stored.append, store_every=3600)
    assert stored == [20, 8]
    assert store.counts()["pending"] == 12
    await embedder.close()
    store.close()


async def test_the_next_batch_is_requested_before_the_first_is_answered(tmp_path, fake_ollama, make_settings):
    """Ollama gets the next batch queued while the daemon waits for (or reads) an answer."""
    store = Store.open(tmp_path / "db.sqlite3")
    write_file(store, "a.org", list(range(12)))
    embedder = OllamaEmbedder(make_settings(ollama_host=fake_ollama.url, embed_batch_size=4))

    async def run_store(fn):
        return fn(store)

    fake_ollama.state.configure({"fault_paths": ["/api/embed"], "hang": True})
    task = asyncio.ensure_future(embed_pending(embedder, run_store, batch_size=4))
    await wait_until(lambda: fake_ollama.state.count("/api/embed") == 2)
    assert not task.done()
    fake_ollama.state.hang = False
    fake_ollama.state.release()
    assert await task == 12
    assert store.counts()["pending"] == 0
    await embedder.close()
    store.close()


def test_stores_of_one_database_share_where_the_last_read_stopped(tmp_path):
    """The cold index reads pending texts through whichever reader is free: each must
    go on from the last read, not from where it itself last stopped."""
    first = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(first, "a.org", list(range(12)))
    second = Store.open(tmp_path / "db.sqlite3")
    got = [h for h, _ in first.pending_texts(4)]
    got += [h for h, _ in second.pending_texts(4)]
    got += [h for h, _ in first.pending_texts(4)]
    assert got == hashes
    first.close()
    second.close()


def test_a_first_look_with_nothing_pending_reads_no_text_and_goes_on_after_the_last_chunk(tmp_path):
    """At a start every chunk has its vector, most often: the first look answers that from
    the hashes' index, without reading every chunk's text in id order, and the chunks
    written after it are still found."""
    writer = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(writer, "a.org", list(range(10)))
    writer.store_vectors([(h, [1.0, 0.0]) for h in hashes])
    reader = Store.open(tmp_path / "db.sqlite3")
    statements: list[str] = []
    reader.conn.set_trace_callback(statements.append)
    assert reader.pending_texts(8) == []
    reader.conn.set_trace_callback(None)
    assert statements and not [s for s in statements if "c.text" in s], statements
    more = write_file(writer, "b.org", list(range(10, 13)))
    assert [h for h, _ in reader.pending_texts(8)] == more
    writer.close()
    reader.close()


def test_a_start_with_no_write_since_nothing_was_pending_does_not_look_at_every_chunk_again(tmp_path):
    """The first look of a process read every chunk's hash (0.5-2.4 s at a million, at each
    start of the daemon, beside its first queries). The writer records the write
    generation at which none was pending; a start that finds it unchanged asks nothing
    more, and one after any write (here a chunk pending) looks as before."""
    path = tmp_path / "db.sqlite3"

    def first_look(store: Store) -> tuple[list[str], bool]:
        """What a process's first look finds, and whether it looked at the vectors."""
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        found = [h for h, _ in store.pending_texts(8)]
        store.conn.set_trace_callback(None)
        store.close()
        gc.collect()  # the next store is a new process's: no cursor shared with this one
        return found, any("embeddings" in s for s in statements)

    store = Store.open(path, writer=True)
    hashes = write_file(store, "a.org", list(range(10)))
    store.store_vectors([(h, [1.0, 0.0]) for h in hashes])
    store.close()
    assert first_look(Store.open(path)) == ([], True)  # a reader records nothing...
    assert first_look(Store.open(path)) == ([], True)
    assert first_look(Store.open(path, writer=True)) == ([], True)  # ...the writer does
    assert first_look(Store.open(path, writer=True)) == ([], False)
    assert first_look(Store.open(path)) == ([], False)
    store = Store.open(path, writer=True)
    more = write_file(store, "b.org", list(range(10, 13)))
    store.close()
    # A run that embeds them, then looks and finds nothing, every chunk looked at: recorded too.
    store = Store.open(path, writer=True)
    assert [h for h, _ in store.pending_texts(8)] == more
    store.store_vectors([(h, [0.0, 1.0]) for h in more])
    assert store.get_meta("none_pending") != store.write_generation()
    assert store.pending_texts(8) == []
    store.close()
    del store  # (and with it this process's cursor)
    gc.collect()
    assert first_look(Store.open(path, writer=True)) == ([], False)


def test_chunks_below_the_cursor_wait_until_nothing_is_after_it(tmp_path):
    """Looking below the cursor scans every chunk up to it; a call that found some
    chunks after it does not, even fewer than it asked for."""
    store = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(store, "a.org", list(range(6)))
    store.pending_texts(6)
    store.store_vectors([(h, [1.0, 0.0]) for h in hashes[2:]])  # a batch failed: 0 and 1 never stored
    more = write_file(store, "b.org", list(range(6, 9)))
    assert [h for h, _ in store.pending_texts(10)] == more
    store.store_vectors([(h, [1.0, 0.0]) for h in more])
    assert [h for h, _ in store.pending_texts(10)] == hashes[:2]
    store.close()


async def test_while_the_reconcile_commits_the_embedding_looks_below_its_cursor_only_at_the_end(
    tmp_path, fake_ollama, make_settings
):
    """A cold index's embedding catches up with the reconcile after each commit. A look
    below the cursor then would walk every chunk each time, so it comes once, when the
    reconcile is done; what was there (here a batch that never got its vectors) is
    embedded then."""
    store = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(store, "a.org", list(range(6)))
    store.pending_texts(6)  # the cursor is past a.org; none of it stored
    store.store_vectors([(h, [1.0] + [0.0] * 255) for h in hashes[2:]])  # the fake's 256 dimensions
    embedder = OllamaEmbedder(make_settings(ollama_host=fake_ollama.url, embed_batch_size=4))
    asked_below: list[bool] = []
    commits = iter([lambda: write_file(store, "b.org", list(range(6, 9))), None])

    async def run_store(fn):
        return fn(store)

    async def read_pending(fn):
        class Recording:
            def pending_texts(self, limit, **kwargs):
                asked_below.append(kwargs.get("below", True))
                return store.pending_texts(limit, **kwargs)

        return fn(Recording())

    async def more():
        commit = next(commits, None)
        if commit is None:
            return False
        commit()
        return True

    try:
        embedded = await embed_pending(embedder, run_store, batch_size=4, read_pending=read_pending, more=more)
    finally:
        await embedder.close()
    assert embedded == 2 + 3 and store.counts()["pending"] == 0
    assert asked_below[-1] is True and not any(asked_below[:-2]), asked_below
    store.close()


def test_a_migration_leaves_no_record_that_none_was_pending(tmp_path, monkeypatch):
    """A migration may change chunks or vectors without a new write generation: the
    record goes in its own transaction (a kill after it cannot leave it)."""
    from arcology_oracle.store import migrate

    path = tmp_path / "db.sqlite3"
    store = Store.open(path, writer=True)
    hashes = write_file(store, "a.org", list(range(3)))
    store.store_vectors([(h, [1.0, 0.0]) for h in hashes])
    assert store.pending_texts(8) == []
    assert store.get_meta("none_pending") == store.write_generation()
    store.close()

    def m999_later(conn) -> None:  # a migration of a later version
        conn.execute("SELECT 1")

    monkeypatch.setattr(migrate, "MIGRATIONS", [*migrate.MIGRATIONS, m999_later])
    store = Store.open(path)
    assert store.get_meta("none_pending") is None and store.write_generation() is not None
    store.close()


def test_a_record_that_none_was_pending_that_cannot_be_written_is_not_kept_and_fails_nothing(tmp_path):
    # Under another program's long write, the record waited the busy timeout on the
    # writer thread and raised: the look failed, and the daemon's worker logged an error
    # with a traceback and tried again, waiting as long each time.
    from arcology_oracle.store.db import connect

    path = tmp_path / "db.sqlite3"
    store = Store.open(path, writer=True)
    hashes = write_file(store, "a.org", list(range(5)))
    store.store_vectors([(h, [1.0, 0.0]) for h in hashes])
    other = connect(path)
    other.execute("BEGIN IMMEDIATE")  # another program writing
    try:
        assert store.pending_texts(8) == []
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.get_meta("none_pending") is None  # not kept...
    assert store.pending_texts(8) == [] and store.get_meta("none_pending") == store.write_generation()  # ...until a look can
    store.close()
