"""The /similar routes over a directory of notes, in process, for the ranking tests."""

from __future__ import annotations


async def scores_by_route(
    make_settings, fake_ollama, query_file, node: str, k: int, *, line: int | None = None
) -> list[dict[str, float]]:
    """Node ID -> score, in the order each route ranks them for ``node``, over an index
    of ``query_file``'s directory (reconciled and embedded by ``fake_ollama``):
    /similar?node=, POST /similar (``query_file``'s text, with its node) and, given
    ``line``, /similar?file=&line= of that line of ``query_file``."""
    from arcology_oracle.answers.search import similar_to_line, similar_to_node, similar_to_text
    from arcology_oracle.index.service import OracleIndex

    index = OracleIndex(make_settings(roam_dir=query_file.parent, ollama_host=fake_ollama.url))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        found = [
            (await similar_to_node(index, node, k=k))[1],
            (await similar_to_text(index, query_file.read_text(), k=k, node=node))[1],
        ]
        if line is not None:
            found.append((await similar_to_line(index, query_file.name, line, k=k))[1])
    finally:
        await index.close()
    return [{r.node_id: r.score for r in results} for results in found]
