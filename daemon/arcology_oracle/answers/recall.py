"""``/recall``: the notes for a question, without an answer (for agents and scripts).

The notes are those ``/ask`` would give the model (:func:`.context.gather_context`: the
same relevance gate, privacy, date range read from the question, and the oracle's own
answers left out unless ``oracle_answers_as_evidence``; but a window of a conversation
shows the oracle's turns in it, labelled, since here they are what was said). With ``multi_query`` the chat
model first writes up to three more search strings (prompt ``recall_queries``); each is
searched and the lists are fused by reciprocal rank.
"""

from __future__ import annotations

import logging
import re
from contextlib import aclosing

from ..errors import BadRequest, ServiceUnavailable
from .context import gather_context
from .oracle import Oracle
from .retrieval import NOTHING_TO_SEARCH, RRF_K, nothing_to_search, one_line
from .when import DateRange

log = logging.getLogger(__name__)
MAX_EXTRA_QUERIES = 3
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def search_strings(reply: str, question: str) -> list[str]:
    """Up to three search strings from the model's ``reply`` (one per line; list marks
    and quotes dropped; the question itself and repeats left out)."""
    out: list[str] = []
    for line in reply.splitlines():
        text = _LIST_MARK.sub("", line).strip().strip("\"'`").strip()
        if text and text.lower() != question.lower() and text.lower() not in (o.lower() for o in out):
            out.append(text[:300])
        if len(out) >= MAX_EXTRA_QUERIES:
            break
    return out


async def recall(
    oracle: Oracle,
    question: str,
    *,
    k: int = 8,
    multi_query: bool = False,
    date_range: DateRange | None = None,
    model: str | None = None,
) -> dict:
    """The notes for ``question`` as JSON-able data: ``notes`` (best first, each a
    source with its ``text``: a window of dialogue verbatim, with its ``speakers`` and
    ``end_line``, or a heading's text on one line), ``queries`` searched, ``date_range`` used (or None),
    ``mode`` ("keyword" when any query was searched without its embedding, as
    :class:`.oracle.Reply`'s; else "vector"), and ``multi_query_error`` when the model
    could not write search strings (then only the question was searched); ``note`` when
    nothing was found because the question is only stop words or particles ("の", "the")."""
    question = (question or "").strip()
    if not question:
        raise BadRequest("question must not be empty")
    date_range = date_range or await oracle.question_range(question)
    queries, error = [question], None
    if multi_query:
        try:
            queries += await _more_queries(oracle, question, model)
        except ServiceUnavailable as exc:
            error = str(exc)
            log.info("recall: no extra search strings (%s)", exc)
    fused: dict[tuple, list] = {}
    mode = "vector"
    for query in queries:
        context = await gather_context(oracle.index, query, k=k, date_range=date_range, with_answers=True)
        mode = "keyword" if context.mode == "keyword" else mode
        for rank, source in enumerate(context.sources, start=1):
            key = (source.file, source.line, source.end_line)
            entry = fused.setdefault(key, [0.0, source, context.window_texts.get(source.n)])
            entry[0] += 1.0 / (RRF_K + rank)
    best = sorted(fused.values(), key=lambda item: item[0], reverse=True)[:k]
    notes = []
    for score, source, window in best:
        if window is None:  # a heading: its text, on one line
            row = await oracle.index.read(lambda s, src=source: s.heading_at(src.file, src.line))
            window = one_line(row["text"] if row else "", 2000)
        notes.append({**source.as_dict(), "fused_score": round(score, 6), "text": window})
    return {
        "question": question,
        "queries": queries,
        "date_range": date_range.as_dict() if date_range else None,
        "notes": notes,
        "mode": mode,
        **({"multi_query_error": error} if error else {}),
        **({"note": NOTHING_TO_SEARCH} if not notes and date_range is None and nothing_to_search(question) else {}),
    }


async def _more_queries(oracle: Oracle, question: str, model: str | None) -> list[str]:
    messages = [
        {"role": "system", "content": oracle.prompts.render("recall_queries")},
        {"role": "user", "content": question},
    ]
    pieces = []
    async with aclosing(oracle.llm.stream_chat(messages, model=model or oracle.llm.model)) as stream:
        async for piece in stream:
            pieces.append(piece)
    return search_strings("".join(pieces), question)
