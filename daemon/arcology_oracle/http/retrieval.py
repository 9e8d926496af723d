"""How an answer says the notes were searched where its body cannot: the
``X-Arcology-Oracle-Retrieval`` header, ``vector`` (with the question's embedding) or
``keyword`` (without it: no embedder, or it did not answer within ``search_embed_wait``),
as ``/ask``'s ``"mode"`` says. Sent by ``GET /ask`` and the compatible APIs' grounded
chats (whose bodies are the APIs' own shapes); none when no notes were searched (a model
not grounded, a conversation with no question)."""

from __future__ import annotations

RETRIEVAL = "X-Arcology-Oracle-Retrieval"


def retrieval_headers(mode: str | None) -> dict[str, str]:
    """``{RETRIEVAL: mode}``, or no header when the notes were not searched (``mode`` None)."""
    return {RETRIEVAL: mode} if mode else {}
