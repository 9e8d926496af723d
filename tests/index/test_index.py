"""The index: store, indexer, embedding and search over the example vault."""

from __future__ import annotations

import os
import sqlite3

import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.errors import DimensionMismatch, ServiceUnavailable
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store import Store
from tests.corpus_tools import db_bytes
from tests.org_samples import EXAMPLE_QUERIES, IDS, NEVER_INDEXED_IDS, SECRET_WORDS


async def test_reconcile_indexes_vault_and_keeps_bad_files(index, settings):
    status = await index.status()
    assert status["files"] >= 15
    assert status["pending"] == 0 and status["embedded"] == status["chunks"] > 0
    assert status["embedder"]["dims"] == 256
    files = await index.read(lambda s: s.file_states())
    # Invalid UTF-8, CRLF, CJK names, an invalid date and an empty file are all indexed.
    for rel in ("creme-brulee.org", "journal/2024-03-02.org", "日本語ノート.org", "projects/arcology.org", "empty.org"):
        assert rel in files
    demo = await index.read(lambda s: [h["title"] for h in s.file_headings("projects/arcology.org")])
    assert "Demo day" in demo


async def test_a_reconcile_that_changes_nothing_writes_nothing(index, settings):
    # It committed an empty transaction, a new write generation: at every start of the
    # daemon every reader's caches (notes' texts, words, means) were dropped, and the
    # embedding worker read every chunk's hash again (BENCHMARKS.md, issue 30, fortieth round).
    generation = await index.read(lambda s: s.write_generation())
    report = await index.reconcile()
    assert report.indexed == 0 and report.unchanged > 0
    assert await index.read(lambda s: s.write_generation()) == generation


async def test_nothing_private_reaches_the_database_file(index, settings):
    for node_id in NEVER_INDEXED_IDS:
        assert await index.read(lambda s: s.node(node_id)) is None
    await index.close()
    raw = db_bytes(settings.db_path)
    for word in SECRET_WORDS:
        assert word.encode() not in raw, word
    # Re-open so the fixture's close() has something to close.
    await index.start()


@pytest.mark.parametrize("query,expected", list(EXAMPLE_QUERIES.items()))
async def test_search_finds_the_answering_heading_in_top_3(index, query, expected):
    mode, results = await search(index, query, 5)
    assert mode == "hybrid"
    top = [(r.file, r.heading) for r in results[:3]]
    assert expected in top, top


async def test_search_result_fields(index):
    _, results = await search(index, "covering index", 3)
    r = results[0].as_dict()
    assert set(r) == {"node_id", "heading_id", "title", "heading", "olp", "file", "line", "score", "snippet", "date", "role",
                      "below_cutoff", "linked", "links_here", "same_file", "relevance"}
    assert r["node_id"] == IDS["covering_indexes"] and r["heading_id"] == IDS["covering_indexes"]
    assert r["file"] == "sqlite-indexing.org" and isinstance(r["olp"], list)
    lines = (index.settings.roam_dir / r["file"]).read_text().splitlines()
    assert "Covering indexes" in lines[r["line"] - 1]


async def test_search_at_most_one_result_per_heading(index):
    _, results = await search(index, "sourdough starter bread", 20)
    keys = [(r.file, r.line) for r in results]
    assert len(keys) == len(set(keys))


async def test_search_quotes_fts_syntax(index):
    for query in ('org-mode', 'NOT "x', "AND OR NEAR(", "*", "C++ (templates)"):
        await search(index, query, 5)


async def test_keyword_mode_without_ollama_then_only_pending_embedded(make_settings, fake_ollama):
    down = make_settings()  # points at a closed port
    idx = OracleIndex(down)
    await idx.start()
    await idx.reconcile()
    with pytest.raises(ServiceUnavailable):
        await idx.embed_pending()
    mode, results = await search(idx, "covering index", 5)
    assert mode == "keyword" and "Covering indexes" in [r.heading for r in results[:3]]
    status = await idx.status()
    assert status["pending"] == status["chunks"] > 0 and status["embedder"]["reachable"] is False
    await idx.close()

    up = make_settings(ollama_host=fake_ollama.url)
    idx = OracleIndex(up)
    await idx.start()
    report = await idx.reconcile()
    assert report.indexed == 0  # nothing changed on disk
    embedded = await idx.embed_pending()
    distinct_pending = await idx.read(lambda s: s.conn.execute("SELECT count(DISTINCT hash) FROM chunks").fetchone()[0])
    assert embedded == distinct_pending == fake_ollama.state.embed_texts_total
    assert (await idx.status())["pending"] == 0
    await idx.close()


async def test_an_ollama_that_does_not_answer_is_waited_for_once_not_at_every_query(make_settings, fake_ollama):
    # Ollama accepts the connection and never answers: the first query waits for the
    # embedder's timeout and falls back to keywords; the next ones do not wait at all
    # (no embedding asked) until the embedder answers again.
    index = OracleIndex(make_settings(ollama_host=fake_ollama.url, embed_timeout=1))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        fake_ollama.state.configure({"hang": True})
        mode, results = await search(index, "covering index", 5)
        assert mode == "keyword" and results
        asked = fake_ollama.state.count("/api/embed")
        mode, results = await search(index, "tomato blight", 5)
        assert mode == "keyword" and results
        assert fake_ollama.state.count("/api/embed") == asked  # not asked again meanwhile
        assert (await index.status())["embedder"]["reachable"] is False
        fake_ollama.state.configure({"hang": False})
        fake_ollama.state.release()
        index.embedder_state.ok()  # what the embedding worker's next success says
        mode, _ = await search(index, "tomato blight", 5)
        assert mode == "hybrid" and fake_ollama.state.count("/api/embed") > asked
    finally:
        await index.close()


async def test_one_heading_edit_embeds_only_that_heading(index, settings, fake_ollama):
    path = settings.roam_dir / "sqlite-indexing.org"
    before = fake_ollama.state.embed_texts_total
    text = path.read_text()
    assert "* Covering indexes" in text
    path.write_text(text.replace("* Covering indexes", "* Covering indexes\nAlso: partial indexes save space.", 1))
    report = await index.index_paths(["sqlite-indexing.org"])
    assert report.indexed == 1 and report.new_pending == 1
    await index.embed_pending()
    assert fake_ollama.state.embed_texts_total - before == 1
    _, results = await search(index, "partial indexes save space", 3)
    assert results[0].heading == "Covering indexes"


async def test_unchanged_reconcile_reads_and_embeds_nothing(index, fake_ollama):
    before = fake_ollama.state.embed_texts_total
    report = await index.reconcile()
    assert report.indexed == 0 and report.unchanged == report.seen - 1 and report.private == 1  # private-diary.org: nothing of it stored
    assert await index.embed_pending() == 0
    assert fake_ollama.state.embed_texts_total == before


async def test_touch_without_change_keeps_vectors(index, settings, fake_ollama):
    path = settings.roam_dir / "gardening-tomatoes.org"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    report = await index.reconcile()
    assert report.indexed == 0 and report.unchanged == report.seen - 1 and report.private == 1  # private-diary.org: nothing of it stored
    assert (await index.status())["pending"] == 0


async def test_heading_made_private_disappears_everywhere(index, settings):
    path = settings.roam_dir / "gardening-tomatoes.org"
    text = path.read_text()
    assert "* Seed starting" in text
    path.write_text(text.replace("* Seed starting", "* Seed starting :private:", 1))
    await index.index_paths(["gardening-tomatoes.org"])
    titles = await index.read(lambda s: [h["title"] for h in s.file_headings("gardening-tomatoes.org")])
    assert "Seed starting" not in titles
    _, results = await search(index, "seed starting", 10)
    assert all(r.heading != "Seed starting" for r in results)
    # The removed text is in no table and in no free page of the file.
    await index.close()
    assert b"Seed starting" not in db_bytes(settings.db_path)
    await index.start()


async def test_an_edit_of_the_same_size_and_time_is_read_when_the_file_is_named(index, settings):
    # A tag made private in the same second, on a file system whose timestamps are that
    # coarse: the size and the mtime are the recorded ones. The watcher names the file:
    # it is read and hashed all the same.
    path = settings.roam_dir / "gardening-tomatoes.org"
    before = path.stat()
    text = path.read_text()
    edited = text.replace("* Seed starting", "* Seedy :crypt:", 1)
    assert len(edited.encode()) == before.st_size and edited != text
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    report = await index.index_paths(["gardening-tomatoes.org"])
    assert report.indexed == 1
    titles = await index.read(lambda s: [h["title"] for h in s.file_headings("gardening-tomatoes.org")])
    assert "Seed starting" not in titles and "Seedy" not in titles


async def test_deleted_file_rows_and_vectors_are_removed(index, settings):
    before = await index.status()
    (settings.roam_dir / "coffee-brewing.org").unlink()
    report = await index.reconcile()
    assert report.deleted == 1
    after = await index.status()
    assert after["files"] == before["files"] - 1
    orphans = await index.read(
        lambda s: s.conn.execute(
            "SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)"
        ).fetchone()[0]
    )
    vec_rows = await index.read(lambda s: s.conn.execute("SELECT count(*) FROM vec_embeddings").fetchone()[0])
    emb_rows = await index.read(lambda s: s.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    assert orphans == 0 and vec_rows == emb_rows
    _, results = await search(index, "pour-over coffee bloom", 5)
    assert all(r.file != "coffee-brewing.org" for r in results)


async def test_changing_the_model_reembeds_into_a_fresh_table(index, make_settings, fake_ollama):
    await index.close()
    other = make_settings(ollama_host=fake_ollama.url, embed_model="all-minilm")
    idx = OracleIndex(other)
    await idx.start()
    status = await idx.status()
    assert status["pending"] == status["chunks"] and status["embedder"]["dims"] is None
    await idx.embed_pending()
    status = await idx.status()
    assert status["pending"] == 0 and status["embedder"]["dims"] == 384
    mode, results = await search(idx, "covering index", 3)
    assert mode == "hybrid" and results[0].heading == "Covering indexes"
    await idx.close()
    await index.start()


def test_store_refuses_vectors_of_another_dimension(tmp_path):
    from arcology_oracle.notes.records import Chunk, Heading, ParsedFile

    store = Store.open(tmp_path / "x.db")
    heading = Heading(None, None, 0, "T", (), (), None, {}, "", "", 1, 1, "T")
    store.replace_file(
        ParsedFile("a.org", "T", None, [heading]), size=1, mtime_ns=1, file_hash="h",
        chunks=[[Chunk(0, "T", "hash-a"), Chunk(1, "U", "hash-b")]],
    )  # fmt: skip
    store.ensure_embedding_model("m", "{}")
    assert store.store_vectors([("hash-a", [1.0, 0.0, 0.0])]) == 1
    with pytest.raises(DimensionMismatch):
        store.store_vectors([("hash-b", [1.0, 0.0])])
    assert store.pending_texts(10) == [("hash-b", "U")]
    store.close()


def test_database_is_plain_sqlite_with_named_migrations(index_db_path):
    conn = sqlite3.connect(index_db_path)
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names[0] == "m001_initial"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


@pytest.fixture
def index_db_path(tmp_path):
    store = Store.open(tmp_path / "plain.db")
    store.close()
    return tmp_path / "plain.db"


def test_nested_transaction_rolls_back_alone(tmp_path):
    """The indexer commits files in batches, each file in a savepoint: a file that fails
    halfway leaves nothing of itself and takes nothing of the batch with it."""
    store = Store.open(tmp_path / "n.db")
    with store.transaction():
        store.conn.execute("INSERT INTO meta (key, value) VALUES ('kept', '1')")
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.conn.execute("INSERT INTO meta (key, value) VALUES ('undone', '1')")
                raise RuntimeError("a file failed halfway")
        with store.transaction():
            store.conn.execute("INSERT INTO meta (key, value) VALUES ('also kept', '1')")
    assert store.get_meta("kept") == "1" and store.get_meta("also kept") == "1"
    assert store.get_meta("undone") is None
    store.close()


def _parsed(path: str, body: str):
    from arcology_oracle.notes.chunking import chunk_heading
    from arcology_oracle.notes.reader import read_org_bytes

    text = f":PROPERTIES:\n:ID: id-{path}\n:END:\n#+title: {path}\n\n* First\n{body}\n* Second\nplain words\n"
    parsed = read_org_bytes(text.encode(), path, frozenset())
    return parsed, [chunk_heading(h, parsed.title, 1500, 200) for h in parsed.headings]


def _replace(store: Store, path: str, body: str) -> None:
    parsed, chunks = _parsed(path, body)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=body, chunks=chunks)


def _fts_paths(store: Store, word: str) -> set[str]:
    rows = store.conn.execute(
        "SELECT f.path FROM headings_fts JOIN headings h ON h.id = headings_fts.rowid"
        " JOIN files f ON f.id = h.file WHERE headings_fts MATCH ?",
        (word,),
    )
    return {r[0] for r in rows}


def test_full_text_index_follows_batches_savepoints_and_rewrites(tmp_path):
    """New headings reach FTS once per transaction (not by a trigger per row): a file
    rolled back in its savepoint leaves no terms, a file rewritten twice in one batch
    keeps only its last text, and a rollback after an earlier file's terms were written
    out inside the savepoint still leaves that earlier file searchable."""
    store = Store.open(tmp_path / "fts.db")
    _replace(store, "old.org", "walrus")
    with store.transaction():
        _replace(store, "a.org", "aardvark")
        with pytest.raises(RuntimeError):
            with store.transaction():
                _replace(store, "b.org", "bobcat")
                raise RuntimeError("b.org failed halfway")
        _replace(store, "c.org", "caracal first")
        _replace(store, "c.org", "capybara second")
        _replace(store, "d.org", "dugong")
        with pytest.raises(RuntimeError):
            with store.transaction():
                # Deleting a file writes the pending terms (a.org's, d.org's) out first;
                # the rollback undoes that write, which must be redone at commit.
                store.delete_file("old.org")
                _replace(store, "e.org", "echidna")
                raise RuntimeError("e.org failed halfway")
    assert _fts_paths(store, "aardvark") == {"a.org"}
    assert _fts_paths(store, "bobcat") == set()
    assert _fts_paths(store, "caracal") == set()
    assert _fts_paths(store, "capybara") == {"c.org"}
    assert _fts_paths(store, "dugong") == {"d.org"}
    assert _fts_paths(store, "walrus") == {"old.org"}
    assert _fts_paths(store, "echidna") == set()
    assert _fts_paths(store, "plain") == {"old.org", "a.org", "c.org", "d.org"}
    store.conn.execute("INSERT INTO headings_fts(headings_fts, rank) VALUES ('integrity-check', 1)")
    store.close()


async def test_search_snippets_show_the_matched_words_of_long_headings(index, roam_dir):
    before = " ".join(f"alpha{i}" for i in range(300))
    after = " ".join(f"omega{i}" for i in range(300))
    (roam_dir / "long.org").write_text(
        ":PROPERTIES:\n:ID: long-note\n:END:\n#+title: Long\n\n* A long heading\n"
        f"{before} the zygomorphic petals {after}\n"
    )
    await index.reconcile()
    _, results = await search(index, "zygomorphic", 5)
    hit = next(r for r in results if r.node_id == "long-note")
    # FTS5's snippet: a window around the matched word, not the start of the text.
    assert "zygomorphic" in hit.snippet and "alpha0 " not in hit.snippet


async def test_vectors_dropped_by_another_process_mean_keyword_search(index):
    """Another process (an `index` with another model) drops the vector table while the
    daemon runs: the next search finds the notes by their words."""
    assert await index.has_vectors() is True and (await search(index, "sourdough starter", 5))[0] == "hybrid"
    other = Store.open(index.settings.db_path, writer=True)
    try:
        other.ensure_embedding_model("another-model", "", force=True)  # what `index` of another model does
    finally:
        other.close()
    mode, results = await search(index, "sourdough starter", 5)
    assert mode == "keyword" and results


async def test_a_notes_directory_that_cannot_be_listed_leaves_the_index_as_it_is(index, settings, monkeypatch):
    # Its permissions changed (or its disk answers EACCES): the walk found no notes, and
    # the reconcile forgot every one the index held, vectors and all. (Monkeypatched:
    # the tests run as root, whom permissions do not stop.)
    before = await index.status()
    root, scandir = os.path.realpath(settings.roam_dir), os.scandir

    def refusing(path="."):
        if os.path.realpath(path) == root:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    report = await index.reconcile()
    monkeypatch.undo()
    assert report.deleted == 0 and report.seen == 0, report
    after = await index.status()
    assert (after["files"], after["embedded"]) == (before["files"], before["embedded"]) and after["files"] >= 15
