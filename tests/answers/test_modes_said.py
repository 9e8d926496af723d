"""``/summarize``, ``/converse`` and ``/recall`` say how their notes were found, as
``/ask`` does: ``"mode": "keyword"`` when the question's embedding did not come within
``search_embed_wait`` (the embedder hung) and they grounded on keyword matches, "vector"
once it comes; a summary of a note named by node or file searched nothing (null).
The real daemon, the fake Ollama hung on /api/embed; asserted on events, never on time."""

from __future__ import annotations

from arcology_oracle.http.ask_schemas import Conversation, Recalled, Summary
from tests.answers.test_ask_waits import EMBED_TIMEOUT, post
from tests.org_samples import IDS
from tests.runners import start_daemon

CONVERSATION = "* Tomatoes\n** What about tomato blight?\n"


async def answers(daemon) -> dict[str, object]:
    """Each route's answer (the summary's both ways) to the same question, each as
    /openapi.json describes it (its models forbid a field they do not name)."""
    got: dict[str, object] = {}
    for name, path, body in [
        ("summarize", "/summarize", {"question": "tomato blight", "stream": False}),
        ("summarize_stream", "/summarize", {"question": "tomato blight", "stream": True}),
        ("converse", "/converse", {"org": CONVERSATION}),
        ("recall", "/recall", {"question": "tomato blight"}),
    ]:
        status, got[name] = await post(daemon, path, body)
        assert status == 200, (name, got[name])
    for name, model in [("summarize", Summary), ("converse", Conversation), ("recall", Recalled)]:
        assert model.model_validate(got[name]).mode == got[name]["mode"], name
    return got


async def test_summarize_converse_and_recall_say_keyword_mode_while_the_embedder_hangs(tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": EMBED_TIMEOUT},
    )  # fmt: skip
    state = fake_ollama.state
    try:
        state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})
        got = await answers(daemon)
        assert state.hanging.is_set() and not state.hang_release.is_set()  # all came while the embedding hung
        assert got["summarize"]["mode"] == "keyword" and got["summarize"]["used_notes"], got["summarize"]
        events = got["summarize_stream"]
        assert events[0]["type"] == "sources" and events[0]["mode"] == "keyword", events
        assert got["converse"]["mode"] == "keyword" and got["converse"]["sources"], got["converse"]
        assert got["recall"]["mode"] == "keyword" and got["recall"]["notes"], got["recall"]

        # A note named by its ID is read, not searched.
        status, summary = await post(daemon, "/summarize", {"node": IDS["blight"], "stream": False})
        assert status == 200 and summary["mode"] is None, summary
        status, events = await post(daemon, "/summarize", {"node": IDS["blight"], "stream": True})
        assert status == 200 and events[0]["type"] == "sources" and events[0]["mode"] is None, events

        # The embedding came after all: the same question is answered by vector search.
        state.configure({"hang": False})
        state.release()
        await state.wait_for("/api/embed")
        got = await answers(daemon)
        assert got["summarize"]["mode"] == "vector", got["summarize"]
        assert got["summarize_stream"][0]["mode"] == "vector", got["summarize_stream"]
        assert got["converse"]["mode"] == "vector", got["converse"]
        assert got["recall"]["mode"] == "vector", got["recall"]
    finally:
        state.release()
        daemon.stop()
