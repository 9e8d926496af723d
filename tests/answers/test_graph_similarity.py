"""The graph signal of /similar and /suggest-links (answers/graph.py): notes cited from
the same places, or sharing a rare tag or ref, are related even when their words differ;
the setting turns it off, and exclude_linked still leaves linked notes out."""

from __future__ import annotations

G1, G2, H1, H2, T1, T2 = (f"2222bbbb-0000-4000-8000-00000000000{i}" for i in range(1, 7))


def cited_notes(roam) -> None:
    """G1 and G2 share no word but are both cited by H1 and H2 (H1 also cites H2); T1
    and T2 share only a tag that no other note has, and a ref."""
    def note(name, node, title, text, extra=""):
        (roam / f"{name}.org").write_text(f":PROPERTIES:\n:ID: {node}\n{extra}:END:\n#+title: {title}\n{text}\n")

    note("g1", G1, "Zymurgy", "Zymurgy quarterly ferments mead in oak.")
    note("g2", G2, "Cartography", "Cartography plots coastlines with theodolites.")
    for name, node in (("h1", H1), ("h2", H2)):
        note(name, node, f"Hub {name}", f"Reading list [[id:{G1}][one]] [[id:{G2}][two]] [[id:{H2}][next]]")
    note("t1", T1, "Velocipedes", "Velocipedes with wooden wheels.\n#+filetags: :penny_farthing:", ":ROAM_REFS: @dunlop1888\n")
    note("t2", T2, "Vulcanised rubber", "Vulcanised rubber tyres.\n#+filetags: :penny_farthing:", ":ROAM_REFS: @dunlop1888\n")


async def similar_ids(client, node, **params):
    resp = await client.get("/similar", params={"node": node, "k": "3", **params})
    assert resp.status == 200
    return [r["node_id"] for r in (await resp.json())["results"]]


async def test_cocited_and_tagged_notes_rank_first_with_the_graph(make_client, make_settings, fake_ollama, roam_dir):
    cited_notes(roam_dir)
    on = await make_client(make_settings(ollama_host=fake_ollama.url, graph_similarity=True))
    assert G2 in await similar_ids(on, G1)
    assert T2 in await similar_ids(on, T1)
    assert H1 in await similar_ids(on, G1, k="10")
    linked_out = await similar_ids(on, G1, k="10", exclude_linked="true")
    assert G2 in linked_out and H1 not in linked_out and H2 not in linked_out
    resp = await on.get("/suggest-links", params={"node": G1})
    body = await resp.json()
    assert body["graph"] is True and G2 in [s["node_id"] for s in body["suggestions"][:3]]


async def test_the_setting_turns_the_graph_off(make_client, make_settings, fake_ollama, roam_dir):
    cited_notes(roam_dir)
    off = await make_client(make_settings(ollama_host=fake_ollama.url, graph_similarity=False))
    assert G2 not in await similar_ids(off, G1)
    resp = await off.get("/suggest-links", params={"node": G1})
    assert (await resp.json())["graph"] is False
    assert T2 not in await similar_ids(off, T1)


async def test_an_index_from_before_the_labels_table_is_filled_by_its_migration(make_settings, fake_ollama, roam_dir):
    from arcology_oracle.answers import graph
    from arcology_oracle.index.service import OracleIndex
    from arcology_oracle.store import Store

    cited_notes(roam_dir)
    settings = make_settings(ollama_host=fake_ollama.url)
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    store = Store.open(settings.db_path)
    with store.transaction():
        store.conn.execute("DROP TABLE node_labels")
        store.conn.execute("DELETE FROM _migrations WHERE name = 'm007_node_labels'")
    store.close()
    store = Store.open(settings.db_path)  # migrates again: the labels of what is indexed
    try:
        assert store.label_holders(T1) == {"tag:penny_farthing": {T1, T2}, "ref:@dunlop1888": {T1, T2}}
        assert T2 in graph.graph_scores(store, T1)
    finally:
        store.close()


async def test_notes_tied_in_the_graph_keep_their_text_order(make_settings, fake_ollama, tmp_path):
    """Notes that share nothing with the query but one tag (all of them) score the same
    in the graph: the fusion must not let the order of their node IDs decide between
    them, so the text's order stands. (Breaking the tie by ID put the text's last first.)"""
    from arcology_oracle.answers.search import similar_to_node
    from arcology_oracle.index.service import OracleIndex

    roam = tmp_path / "tied-roam"
    roam.mkdir()
    words = "quince medlar sorrel fennel lovage".split()
    query = "2222cccc-0000-4000-8000-000000000009"
    # The fewer of the query's words a note holds, the smaller its ID (first by ID).
    notes = {f"2222cccc-0000-4000-8000-00000000000{n}": words[:n] for n in (4, 3, 2, 1)}
    for node, shared in [(query, words), *notes.items()]:
        (roam / f"{node}.org").write_text(
            f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: {' '.join(shared)}\n#+filetags: :orchard:\n\n"
            f"{' '.join(shared)} in the garden.\n"
        )
    index = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url, graph_similarity=True))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        _, results = await similar_to_node(index, query, k=4)
    finally:
        await index.close()
    assert [r.node_id for r in results] == list(notes)


async def test_which_graph_tied_notes_make_the_cut_is_the_same_in_every_process(tmp_path, fake_ollama):
    """Sixteen notes share only the query's one link (all link to one hub): tied in the
    graph, and with the graph weighing double each beats the text-only notes, so three
    of the sixteen fill k=3. Which three must not follow the order of a set of strings
    (it did: string hashes change with each process, so two daemons answered differently
    and the benchmark's recall against exact search fell to ~0.97): equal scores go in
    node ID order. (A link, not a tag: a tag on 17 of 21 notes is no graph feature.)"""
    from tests.runners import start_daemon

    roam = tmp_path / "tied-roam"
    roam.mkdir()
    query = "2222dddd-0000-4000-8000-000000000000"
    hub = "2222dddd-0000-4000-8000-000000000300"
    tied = [f"2222dddd-0000-4000-8000-0000000001{i:02d}" for i in range(16)]
    to_hub = f" [[id:{hub}][see]]"
    notes = {query: ("quince medlar sorrel", to_hub)}
    notes |= {f"2222dddd-0000-4000-8000-00000000020{i}": ("quince medlar sorrel", "") for i in range(3)}
    # One text for all sixteen: tied by the text too, which reads the ranking deeper than
    # k (moves.depth), so that only the node IDs can tell them apart.
    notes |= {node: ("lathe chisel dovetail", to_hub) for node in tied}
    notes[hub] = ("yew", "")
    for node, (words, link) in notes.items():
        (roam / f"{node}.org").write_text(f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: {words}\n\n{words}.{link}\n")
    answers = []
    for seed in ("1", "2"):
        d = await start_daemon(
            tmp_path, roam_dir=roam, ollama_url=fake_ollama.url, embedded=True,
            env={"PYTHONHASHSEED": seed, "ARCOLOGY_ORACLE_GRAPH_WEIGHT": "2"},
        )  # fmt: skip
        try:
            status, body = await d.get_json("/similar", node=query, k="3")
        finally:
            d.stop()
        assert status == 200
        answers.append([r["node_id"] for r in body["results"]])
    assert answers == [tied[:3], tied[:3]]


async def test_the_rarest_features_kept_are_chosen_by_name_among_equally_rare_ones(make_settings, tmp_path, monkeypatch):
    """The query links to ten notes, each linked from one other note only: ten features
    held by two nodes each. With room for three, the three first by name are kept (the
    ten used to come in the order of a set of strings, so which survived the cut
    depended on the process)."""
    from arcology_oracle.answers import graph
    from arcology_oracle.index.service import OracleIndex
    from arcology_oracle.store import Store

    roam = tmp_path / "features-roam"
    roam.mkdir()
    query = "2222eeee-0000-4000-8000-000000000000"
    linked = [f"2222eeee-0000-4000-8000-0000000001{i:02d}" for i in range(10)]
    others = [f"2222eeee-0000-4000-8000-0000000002{i:02d}" for i in range(10)]

    def note(node, text):
        (roam / f"{node}.org").write_text(f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: Note {node[-3:]}\n{text}\n")

    note(query, " ".join(f"[[id:{node}][to]]" for node in linked))
    for target, other in zip(linked, others):
        note(target, "A target.")
        note(other, f"Also [[id:{target}][to]].")
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    monkeypatch.setattr(graph, "MAX_FEATURES", 1)  # room for 3 features
    store = Store.open(settings.db_path)
    try:
        assert set(graph.graph_scores(store, query)) == set(others[:3])
    finally:
        store.close()


async def test_a_tag_most_notes_carry_does_not_outrank_the_text(make_settings, fake_ollama, tmp_path):
    """Sixteen of twenty notes carry the query's tag (a kind of note, like ``essay``) and
    share no word with it; three untagged notes share its words. The tag is held by more
    than √N notes, so it is no graph feature and the three come first. (Before, the
    sixteen tied at the top of the graph's ranking and the fusion put them first.)"""
    from arcology_oracle.answers.search import similar_to_node
    from arcology_oracle.index.service import OracleIndex

    roam = tmp_path / "kinds-roam"
    roam.mkdir()
    query = "2222ffff-0000-4000-8000-000000000000"
    kin = [f"2222ffff-0000-4000-8000-00000000020{i}" for i in range(3)]
    notes = {query: ("quince medlar sorrel", ":essay:")}
    notes |= {node: ("quince medlar sorrel", "") for node in kin}
    notes |= {f"2222ffff-0000-4000-8000-0000000001{i:02d}": (f"lathe{i} chisel{i} dovetail{i}", ":essay:") for i in range(16)}
    for node, (words, tags) in notes.items():
        filetags = f"#+filetags: {tags}\n" if tags else ""
        (roam / f"{node}.org").write_text(f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: {words}\n{filetags}\n{words}.\n")
    index = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url, graph_similarity=True))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        _, results = await similar_to_node(index, query, k=10)
    finally:
        await index.close()
    assert {r.node_id for r in results[:3]} == set(kin)


async def test_the_node_count_the_labels_are_judged_by_follows_writes(make_settings, fake_ollama, roam_dir):
    """``Store.node_count`` is remembered between queries and across writes that change no
    heading (vectors stored while notes are embedded), and counted again after a write
    that does."""
    from arcology_oracle.index.service import OracleIndex
    from arcology_oracle.store import Store

    cited_notes(roam_dir)
    settings = make_settings(ollama_host=fake_ollama.url)
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    store = Store.open(settings.db_path)
    try:
        before = store.node_count()
        assert before >= 6 and store.node_count() == before
        await index.write(lambda writer: writer.clear_link_rejections())  # a write of no heading
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        assert store.node_count() == before
        store.conn.set_trace_callback(None)
        assert not [s for s in statements if "COUNT(DISTINCT own_id)" in s], statements
        (roam_dir / "extra.org").write_text(":PROPERTIES:\n:ID: 2222bbbb-0000-4000-8000-000000000099\n:END:\n#+title: Extra\n")
        await index.reconcile()
        assert store.node_count() == before + 1
    finally:
        store.close()
        await index.close()


async def test_each_result_shown_has_its_headings_snippet_and_role(make_client, make_settings, fake_ollama, roam_dir):
    """/similar makes snippets and roles for the results it returns only (answers/graph.py,
    retrieval.finished), those the graph alone found among them: each is its heading's
    text as one line, links as their descriptions."""
    cited_notes(roam_dir)
    on = await make_client(make_settings(ollama_host=fake_ollama.url, graph_similarity=True))
    resp = await on.get("/similar", params={"node": G1, "k": "10"})
    shown = {r["node_id"]: (r["snippet"], r["role"]) for r in (await resp.json())["results"]}
    assert shown[G2] == ("Cartography plots coastlines with theodolites.", None)
    assert shown[H1] == ("Reading list one two next", None)
    assert all(snippet for snippet, _ in shown.values())


def test_a_result_whose_snippet_is_not_made_cannot_be_shown():
    import pytest

    from arcology_oracle.answers.retrieval import Pending

    pending = Pending(node_id=G1, heading_id=G1, title="t", heading="t", olp=[], file="g1.org", line=1, score=1.0,
                      snippet="", row={"id": 1, "text": "x", "title": "t", "file": "g1.org", "start_line": 1})  # fmt: skip
    with pytest.raises(TypeError):
        pending.as_dict()


async def test_the_fusion_copies_no_result_for_a_score_the_calibration_replaces(make_settings, fake_ollama, roam_dir, monkeypatch):
    """With a query vector every result is scored again by the calibration
    (:func:`.relevance.rescore`): the fusion gives only the order, and copying each of
    the ~30 results it ranks for its own score was ~2% of a ``/similar?node=`` at 20k
    headings. Without a vector (keyword mode) the calibration caps by those scores:
    there they are still made. The answers are those of the fusion either way."""
    from arcology_oracle.answers import graph
    from arcology_oracle.answers.search import node_query, similar_to_node
    from arcology_oracle.index.service import OracleIndex
    from arcology_oracle.store import Store

    cited_notes(roam_dir)
    settings = make_settings(ollama_host=fake_ollama.url, graph_similarity=True)
    index = OracleIndex(settings)
    await index.start()
    copies = []
    scored = graph._with_score
    monkeypatch.setattr(graph, "_with_score", lambda r, s: copies.append(r.node_id) or scored(r, s))
    try:
        await index.reconcile()
        await index.embed_pending()
        _, results = await similar_to_node(index, G1, k=3)
    finally:
        await index.close()
    assert G2 in [r.node_id for r in results]
    assert copies == []
    store = Store.open(settings.db_path)
    try:
        _, text, _ = node_query(store, G1)
        mode, by_words = graph.similar_with_graph(
            store, settings, G1, k=3, vector=None, text=text, exclude_nodes=frozenset({G1}), whole_notes=True,
        )
    finally:
        store.close()
    assert mode == "keyword" and copies  # keyword mode: the fusion's scores are the ones shown
