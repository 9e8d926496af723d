"""Ollama misbehaving: the index stores nothing wrong, keeps serving, and catches up."""

from __future__ import annotations


import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.errors import DimensionMismatch, ModelNotFound, ServiceUnavailable
from arcology_oracle.index.service import OracleIndex
from tests.fakes.fake_ollama import FakeModel
from tests.runners import wait_until


@pytest.fixture
async def fresh(settings):
    """An index over the vault, read but not embedded yet."""
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    yield idx
    await idx.close()


async def vector_counts(idx):
    def run(store):
        emb = store.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        vec = store.conn.execute("SELECT count(*) FROM vec_embeddings").fetchone()[0] if store.has_vector_table() else 0
        return emb, vec

    return await idx.read(run)


@pytest.mark.parametrize(
    "fault",
    [{"fail_status": 500}, {"garbage": True}, {"fail_status": 503, "fail_message": "overloaded"}],
)
async def test_errors_store_nothing_then_recover(fresh, fake_ollama, fault):
    for key, value in fault.items():
        setattr(fake_ollama.state, key, value)
    with pytest.raises(ServiceUnavailable):
        await fresh.embed_pending()
    assert await vector_counts(fresh) == (0, 0)
    status = await fresh.status()
    assert status["embedder"]["reachable"] is False and status["embedder"]["error"]
    fake_ollama.state.fail_status = None
    fake_ollama.state.garbage = False
    await fresh.embed_pending()
    assert (await fresh.status())["pending"] == 0


async def test_wrong_dimension_is_never_stored(fresh, fake_ollama):
    await fresh.embed_pending()  # fixes the dimension at 256
    path = fresh.settings.roam_dir / "inbox.org"
    path.write_text(path.read_text() + "\n* A new idea about kites\n")
    await fresh.index_paths(["inbox.org"])
    before = await vector_counts(fresh)
    fake_ollama.state.wrong_dims = 17
    with pytest.raises(DimensionMismatch):
        await fresh.embed_pending()
    assert await vector_counts(fresh) == before
    fake_ollama.state.wrong_dims = None
    await fresh.embed_pending()
    assert (await fresh.status())["pending"] == 0


async def test_hanging_ollama_times_out(make_settings, fake_ollama):
    settings = make_settings(ollama_host=fake_ollama.url, embed_timeout=0.5)
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    fake_ollama.state.hang = True
    with pytest.raises(ServiceUnavailable) as err:
        await idx.embed_pending()
    # Host and model once each (tests/http/test_timeout_words.py: the chat model on every route).
    assert str(err.value) == f"Ollama at {fake_ollama.url} timed out (model 'nomic-embed-text')"
    fake_ollama.state.hang = False
    fake_ollama.state.release()
    await idx.embed_pending()
    assert (await idx.status())["pending"] == 0
    await idx.close()


async def test_missing_model_names_host_and_model(fresh, fake_ollama):
    fake_ollama.state.remove_model("nomic-embed-text")
    with pytest.raises(ModelNotFound) as err:
        await fresh.embed_pending()
    assert "nomic-embed-text" in str(err.value) and fake_ollama.url in str(err.value)


async def test_model_replaced_under_the_same_name_reembeds_everything(fresh, fake_ollama):
    await fresh.embed_pending()
    assert (await fresh.status())["embedder"]["dims"] == 256
    fake_ollama.state.remove_model("nomic-embed-text")
    fake_ollama.state.models.append(FakeModel("nomic-embed-text", kind="embedding", dims=128, salt="v2"))
    path = fresh.settings.roam_dir / "inbox.org"
    path.write_text(path.read_text() + "\n* Kites and wind\n")
    await fresh.index_paths(["inbox.org"])
    await fresh.embed_pending()
    status = await fresh.status()
    assert status["embedder"]["dims"] == 128 and status["pending"] == 0
    emb, vec = await vector_counts(fresh)
    assert emb == vec == await fresh.read(lambda s: s.conn.execute("SELECT count(DISTINCT hash) FROM chunks").fetchone()[0])
    mode, results = await search(fresh, "kites wind", 3)
    assert mode == "hybrid" and results[0].heading == "Kites and wind"


async def test_worker_backs_off_and_catches_up(make_client, settings, fake_ollama):
    fake_ollama.state.fail_status = 500
    client = await make_client(settings, embedded=False)
    await fake_ollama.state.wait_for("/api/embed", 2)  # failed, backed off, retried
    status = await (await client.get("/search", params={"q": "covering index"})).json()
    assert status["results"]
    fake_ollama.state.fail_status = None

    async def caught_up():
        return (await (await client.get("/status")).json())["pending"] == 0

    await wait_until(caught_up, timeout=20)


def test_an_error_inside_a_streamed_answer_is_said_as_such():
    # The official client reports an error line in a stream with status -1: shown as
    # "(HTTP -1)", which means nothing to a reader, and no status to answer a client with.
    import ollama

    from arcology_oracle.ollama.client import UpstreamError, translate_errors

    with pytest.raises(UpstreamError) as caught:
        with translate_errors("http://gpu:11434", "llama3.2", streaming=True):
            raise ollama.ResponseError("an error was encountered while running the model", -1)
    assert str(caught.value) == (
        "model 'llama3.2' at http://gpu:11434 stopped with an error while it answered:"
        " an error was encountered while running the model"
    )
    assert caught.value.status == 502


async def test_a_model_replaced_under_its_name_while_nothing_is_pending_is_found_by_a_query(
    make_client, settings, fake_ollama
):
    # Nothing new to embed, so only a query meets the new model: its vector is of
    # another length than the index's. That was a 500 on every route that embeds a
    # query; now the query is answered by keywords at once, the old vectors are
    # dropped and every chunk is embedded again with the new model, and the queries'
    # vectors kept from the old one are forgotten.
    client = await make_client(settings)
    assert (await (await client.get("/status")).json())["embedder"]["dims"] == 256
    assert (await client.get("/search", params={"q": "covering index"})).status == 200  # its vector kept
    fake_ollama.state.remove_model("nomic-embed-text")
    fake_ollama.state.models.append(FakeModel("nomic-embed-text", kind="embedding", dims=128, salt="v2"))
    for send in (
        lambda: client.get("/search", params={"q": "covering index"}),
        lambda: client.post("/similar", json={"text": "a covering index for the query"}),
    ):
        response = await send()
        assert response.status == 200, await response.text()

    async def embedded_again():
        status = await (await client.get("/status")).json()
        return status["embedder"]["dims"] == 128 and status["pending"] == 0

    await wait_until(embedded_again, timeout=30)
    body = await (await client.get("/search", params={"q": "covering index"})).json()
    assert body["mode"] == "hybrid" and body["results"]


async def test_a_search_outside_the_daemon_meeting_another_model_drops_no_vector(fresh, fake_ollama):
    # The CLI may ask another Ollama than the daemon's: its search answers by keywords
    # and leaves the index's vectors to the daemon.
    await fresh.embed_pending()
    before = await vector_counts(fresh)
    fake_ollama.state.remove_model("nomic-embed-text")
    fake_ollama.state.models.append(FakeModel("nomic-embed-text", kind="embedding", dims=128, salt="v2"))
    mode, results = await search(fresh, "covering index", 3)
    assert mode == "keyword" and results
    if fresh._model_check is not None:  # a check of the model the query started, if any
        await fresh._model_check
    assert await vector_counts(fresh) == before
    assert "another length" in (await fresh.status())["embedder"]["error"]


async def test_vectors_another_process_embedded_with_another_model_are_no_error(
    make_client, settings, fake_ollama, make_settings
):
    # `arcology-oracle index --embed-model other` run beside the daemon replaces every
    # vector with vectors of another length. The daemon's queries met them in its
    # in-memory index: HTTP 500 on every route that embeds a query. Now they are
    # answered by keywords, and the daemon embeds everything again with its own model.
    client = await make_client(settings)
    assert (await client.get("/search", params={"q": "covering index"})).status == 200  # its length kept
    fake_ollama.state.models.append(FakeModel("other-embed", kind="embedding", dims=128, salt="v2"))
    other = OracleIndex(make_settings(ollama_host=fake_ollama.url, embed_model="other-embed"))
    await other.start()
    try:
        await other.reconcile()
        await other.embed_pending()
        assert (await other.status())["embedder"]["dims"] == 128
    finally:
        await other.close()
    for send in (
        lambda: client.get("/search", params={"q": "covering index"}),
        lambda: client.post("/similar", json={"text": "a covering index for the query"}),
        lambda: client.post("/ask", json={"question": "what is a covering index?"}),
    ):
        response = await send()
        assert response.status == 200, await response.text()

    async def embedded_again():
        status = await (await client.get("/status")).json()
        return status["embedder"]["dims"] == 256 and status["pending"] == 0

    await wait_until(embedded_again, timeout=30)
    body = await (await client.get("/search", params={"q": "covering index"})).json()
    assert body["mode"] == "hybrid" and body["results"]


async def test_a_model_check_ollama_fails_drops_nothing_and_is_asked_again(
    make_client, settings, fake_ollama, monkeypatch
):
    # A query meets a replaced model while Ollama fails to describe it (/api/show): the
    # check in the background cannot say the model changed, so no vector is dropped and
    # the query is answered by keywords; once the pause after a failure is over (none
    # here), the next query checks again and the index starts over with the new model.
    from arcology_oracle.index import query_vectors

    monkeypatch.setattr(query_vectors, "QUERY_PAUSE_SECONDS", 0.0)
    client = await make_client(settings)
    before = await vector_counts(client.index)
    fake_ollama.state.remove_model("nomic-embed-text")
    fake_ollama.state.models.append(FakeModel("nomic-embed-text", kind="embedding", dims=128, salt="v2"))
    fake_ollama.state.fault_paths, fake_ollama.state.fail_status = {"/api/show"}, 500
    body = await (await client.get("/search", params={"q": "covering index"})).json()
    assert body["mode"] == "keyword" and body["results"]
    await client.index._model_check
    assert fake_ollama.state.count("/api/show")
    assert await vector_counts(client.index) == before
    assert (await (await client.get("/status")).json())["embedder"]["dims"] == 256

    fake_ollama.state.fail_status = None
    assert (await client.get("/search", params={"q": "covering index"})).status == 200

    async def embedded_again():
        status = await (await client.get("/status")).json()
        return status["embedder"]["dims"] == 128 and status["pending"] == 0

    await wait_until(embedded_again, timeout=30)
