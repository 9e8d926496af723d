"""`arcology-oracle doctor` and rebuilding a broken database."""

from __future__ import annotations

import asyncio
import json
import logging
import os

from arcology_oracle.answers.search import search
from arcology_oracle.index.doctor import diagnose, repair
from arcology_oracle.index.indexer import Indexer
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store import Store
from tests.runners import past_a_fifo, run_cli


async def test_doctor_finds_and_repairs_drift(tmp_path, roam_dir, fake_ollama):
    db = str(tmp_path / "d.db")
    code, _, err = await run_cli("index", str(roam_dir), "--db", db, "--ollama-host", fake_ollama.url)
    assert code == 0, err
    code, out, _ = await run_cli("doctor", str(roam_dir), "--db", db, "--json")
    assert code == 0 and json.loads(out)["after"]["ok"] is True

    # Drift: a file edited behind the index's back, one deleted, one added, an orphan vector.
    (roam_dir / "inbox.org").write_text("* Replaced inbox\n")
    (roam_dir / "coffee-brewing.org").unlink()
    (roam_dir / "new.org").write_text("* Brand new\n")
    store = Store.open(db)
    store.conn.execute("INSERT INTO embeddings (hash) VALUES ('orphan-hash')")
    store.close()

    code, out, _ = await run_cli("doctor", str(roam_dir), "--db", db)
    assert code == 1
    assert "missing from disk: coffee-brewing.org" in out and "not indexed: new.org" in out
    assert "changed since indexed: inbox.org" in out and "orphan embeddings" in out

    code, out, _ = await run_cli("doctor", str(roam_dir), "--db", db, "--repair", "--json")
    report = json.loads(out)
    assert code == 0 and report["before"]["ok"] is False and report["after"]["ok"] is True


def test_fts_damage_is_rebuilt(tmp_path, make_settings):
    settings = make_settings(db_path=tmp_path / "f.db")
    store = Store.open(settings.db_path)
    from arcology_oracle.index.indexer import Indexer

    Indexer(settings, store).reconcile()
    # Remove the FTS rows of one heading behind the trigger's back.
    heading_id = store.conn.execute("SELECT id FROM headings LIMIT 1").fetchone()[0]
    row = store.conn.execute("SELECT title, olp_text, text FROM headings WHERE id = ?", (heading_id,)).fetchone()
    store.conn.execute(
        "INSERT INTO headings_fts(headings_fts, rowid, title, olp_text, text) VALUES ('delete', ?, ?, ?, ?)",
        (heading_id, *row),
    )
    assert diagnose(settings, store).fts != "ok"
    before, after = repair(settings, store)
    assert before.fts != "ok" and after.ok
    store.close()


async def test_corrupt_database_is_rebuilt_with_a_warning(make_settings, fake_ollama, caplog):
    settings = make_settings(ollama_host=fake_ollama.url)
    settings.db_path.write_bytes(b"this is not sqlite" * 500)
    caplog.set_level(logging.WARNING)
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    await idx.embed_pending()
    _, results = await search(idx, "covering index", 3)
    assert results and any("unusable" in r.getMessage() for r in caplog.records)
    await idx.close()


async def test_vectors_of_the_wrong_dimension_are_found_by_sqlite_vec_and_repaired(make_settings, fake_ollama):
    settings = make_settings(ollama_host=fake_ollama.url)
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.embed_pending()
    await index.close()
    store = Store.open(settings.db_path)
    dims = store.embedding_model().dims
    rows = [r[0] for r in store.conn.execute("SELECT rowid FROM vec_embeddings ORDER BY rowid LIMIT 2")]
    assert diagnose(settings, store).ok
    # One vector a float short (vec_length says dims - 1), one not float32s at all.
    store.conn.execute("UPDATE vec_embeddings SET embedding = substr(embedding, 1, ?) WHERE rowid = ?", ((dims - 1) * 4, rows[0]))
    store.conn.execute("UPDATE vec_embeddings SET embedding = X'010203' WHERE rowid = ?", (rows[1],))
    found = diagnose(settings, store)
    assert found.wrong_size_vectors == 2 and "2 wrong size vectors" in found.problems()
    before, after = repair(settings, store)
    assert before.wrong_size_vectors == 2 and after.ok
    assert store.conn.execute("SELECT count(*) FROM vec_embeddings WHERE vec_length(embedding) != ?", (dims,)).fetchone()[0] == 0
    store.close()


async def test_the_doctor_never_waits_on_a_fifo_a_link_leads_to(roam_dir, make_settings):
    """A link in the notes directory to a FIFO is listed as a note; the indexer opens it
    without blocking and stores nothing of it. The doctor reads each file the index does
    not hold (to tell a private one, of which nothing is stored) and each it holds (to
    compare hashes): it must read them as the indexer does, not wait for a writer for ever."""
    settings = make_settings()
    store = Store.open(settings.db_path)
    try:
        Indexer(settings, store).reconcile()
        os.mkfifo(roam_dir / ".pipe")  # nothing will ever write to it
        (roam_dir / "pipe.org").symlink_to(".pipe")
        (roam_dir / "inbox.org").unlink()
        (roam_dir / "inbox.org").symlink_to(".pipe")  # a note the index holds, swapped
        done = asyncio.get_running_loop().run_in_executor(None, diagnose, settings, store)
        d = await past_a_fifo(done, roam_dir / ".pipe")
        # Neither is a note the index could read: pipe.org is not missing from it, and
        # inbox.org differs from what it holds (a reconcile takes it out).
        assert "pipe.org" not in d.new_files and d.changed_files == ["inbox.org"]
    finally:
        store.close()
