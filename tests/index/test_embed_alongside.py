"""A cold index embeds alongside its reconcile: vectors of the files committed first are
stored (between the reconcile's commits, by the one writer) before the reconcile is done,
and the index ends as a reconcile-then-embed would leave it."""

from __future__ import annotations

import threading

from arcology_oracle.index import indexer as indexer_module
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.ollama.embed import OllamaEmbedder
from arcology_oracle.store import Store


class SignallingEmbedder(OllamaEmbedder):
    """The real client against the fake Ollama; ``answered`` is set once vectors came back."""

    def __init__(self, settings):
        super().__init__(settings)
        self.answered = threading.Event()

    async def embed_documents(self, texts):
        vectors = await super().embed_documents(texts)
        self.answered.set()
        return vectors


def write_notes(roam, count: int) -> None:
    for i in range(count):
        (roam / f"note-{i:03}.org").write_text(
            f":PROPERTIES:\n:ID: note-{i}\n:END:\n#+title: Note {i}\n\n* Heading {i}\nBody of note {i} about topic {i % 7}.\n"
        )


def vectors_by_hash(db) -> dict[str, bytes]:
    store = Store.open(db)
    rows = store.conn.execute(
        "SELECT e.hash, v.embedding FROM embeddings e JOIN vec_embeddings v ON v.rowid = e.id"
    ).fetchall()
    pending = store.counts()["pending"]
    store.close()
    return {h: bytes(b) for h, b in rows}, pending


async def test_a_cold_index_stores_vectors_before_its_reconcile_ends(tmp_path, fake_ollama, make_settings, monkeypatch):
    roam = tmp_path / "many"
    roam.mkdir()
    write_notes(roam, 60)
    monkeypatch.setattr(indexer_module, "FILES_PER_COMMIT", 8)
    monkeypatch.setattr(indexer_module, "PARALLEL_PARSE_MIN_FILES", 10_000)  # in this thread

    settings = make_settings(roam_dir=roam, db_path=tmp_path / "alongside.sqlite3", ollama_host=fake_ollama.url)
    embedder = SignallingEmbedder(settings)
    index = OracleIndex(settings, embedder)
    await index.start()
    stored_during: list[int] = []
    stored = 0

    def on_progress(p):
        # After the first commit, hold the reconcile (on the writer thread) until the
        # embedder has answered: its vectors must then be stored at the next commit.
        if p.done == 9:
            assert embedder.answered.wait(30), "nothing was embedded while the reconcile ran"

    def on_batch(n):
        nonlocal stored
        stored += n

    async def on_reconciled(report):
        stored_during.append(stored)

    try:
        report, error = await index.reconcile_and_embed(on_progress, on_batch, on_reconciled)
    finally:
        await index.close()
    assert error is None and report.indexed == 60
    assert stored_during[0] > 0
    along, pending = vectors_by_hash(settings.db_path)
    assert pending == 0

    # The same notes reconciled, then embedded: the same vector for every text.
    settings2 = make_settings(roam_dir=roam, db_path=tmp_path / "after.sqlite3", ollama_host=fake_ollama.url)
    index = OracleIndex(settings2)
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
    finally:
        await index.close()
    after, _ = vectors_by_hash(settings2.db_path)
    assert along == after and len(along) >= 60


async def test_an_unreachable_embedder_leaves_the_reconcile_whole(tmp_path, make_settings, monkeypatch):
    roam = tmp_path / "many"
    roam.mkdir()
    write_notes(roam, 30)
    monkeypatch.setattr(indexer_module, "FILES_PER_COMMIT", 8)
    settings = make_settings(roam_dir=roam)  # Ollama refused at once
    index = OracleIndex(settings)
    await index.start()
    try:
        report, error = await index.reconcile_and_embed()
        status = await index.status()
    finally:
        await index.close()
    assert report.indexed == 30 and error is not None
    assert status["files"] == 30 and status["pending"] == status["chunks"] > 0

