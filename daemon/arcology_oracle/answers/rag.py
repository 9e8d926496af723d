"""Answering from the notes: context gathering, prompts, ask, summarize and converse.

The flow of a question: :func:`gather_context` retrieves candidate headings (hybrid
search over the question and the buffer the user is looking at), keeps those that pass
the **relevance gate**, drops near-duplicates, groups them by node and fits them into the
context budget; :func:`grounding_system_message` turns that into the system prompt with
the notes numbered and delimited as data. :class:`Oracle` then asks the chat model and
hands back a :class:`Reply` whose text streams.

The relevance gate: with vectors, a heading is relevant when the cosine similarity of
its best chunk to the question (or buffer) vector reaches ``settings.min_vector_similarity``
(0.35: measured with all-MiniLM-L6-v2 on examples/roam, answerable questions scored
0.42-0.80 and unrelated ones 0.10-0.29), or when it holds every word of a question of two
or more words (names and error codes that embeddings blur). In keyword mode (no vectors,
embedder down) a heading is relevant when it contains at least
``settings.min_keyword_coverage`` of the query's content words (capped at
``KEYWORD_TERMS`` words for long buffers). When no heading is relevant the model is asked
without notes and told to say so (``used_notes`` is False).

Privacy: note text reaches a prompt only from the index, where excluded, crypt and
private headings never are; this module never reads org files. Text sent by clients
(buffers, conversations) loses its private, crypt and excluded subtrees first
(:func:`arcology_oracle.orgconv.strip_private`).

No aiohttp.web here: the http layer and the CLI both drive :class:`Oracle`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import math
import re
import tomllib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import BadRequest, ConfigError, NotFound
from ..notes import conversations as orgconv
from ..store import Store, rag_store
from . import retrieval

log = logging.getLogger(__name__)

KEYWORD_TERMS = 6  # a long buffer needs this many shared words, not half its vocabulary
BUFFER_QUERY_CHARS = 4000  # how much of the buffer is embedded / searched
DEDUP_JACCARD = 0.8
DEFAULT_BUFFER_QUESTION = "What else have I written that relates to this?"
SUMMARY_VERSION = "1"  # bump to invalidate every cached summary

_WORD = re.compile(r"\w+", re.UNICODE)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_BRACKET_NUMBER = re.compile(r"[ \t]?\[\d{1,3}\]")
_NOTE_TAG = re.compile(r"<(/?)(note|notes|buffer)\b", re.IGNORECASE)


# -- sources --------------------------------------------------------------------------


@dataclass(slots=True)
class Source:
    """One note given to the model, numbered as the model cites it (``[n]``).

    ``title`` is the node's title, ``heading`` the best-matching heading in it, ``line``
    that heading's line. ``score`` is the relevance the gate used (cosine similarity in
    vector mode, keyword coverage in keyword mode). ``node_id`` is None for a file
    org-roam does not know as a note (no ID).
    """

    n: int
    node_id: str | None
    title: str
    heading: str
    file: str
    line: int
    score: float
    olp: list[str] = field(default_factory=list)
    date: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def org_link(self, roam_dir: Path | None = None) -> str:
        """``[[id:NODE][Title]]``, or ``[[file:REL::LINE][Title]]`` for a note without ID
        (absolute when ``roam_dir`` is given)."""
        label = org_link_label(self.title if self.heading == self.title or not self.heading else f"{self.title}: {self.heading}")
        if self.node_id:
            return f"[[id:{self.node_id}][{label}]]"
        path = str(roam_dir / self.file) if roam_dir else self.file
        return f"[[file:{path}::{self.line}][{label}]]"

    def markdown_link(self) -> str:
        label = self.title if self.heading == self.title or not self.heading else f"{self.title}: {self.heading}"
        target = f"id:{self.node_id}" if self.node_id else f"{self.file}:{self.line}"
        return f"{label} ({target})"


def org_link_label(text: str) -> str:
    """``text`` made safe as an org link description (no brackets, one line)."""
    return " ".join(text.replace("[", "(").replace("]", ")").split())


def sources_org_block(sources: Sequence[Source], roam_dir: Path | None = None) -> str:
    """An org list of the sources, ``- [n] [[id:...][Title]]`` per line."""
    return "\n".join(f"- [{s.n}] {s.org_link(roam_dir)}" for s in sources)


def sources_markdown_block(sources: Sequence[Source]) -> str:
    """A markdown list of the sources, ``[n] Title (id:...)`` per line."""
    return "\n".join(f"- [{s.n}] {s.markdown_link()}" for s in sources)


def sources_text_block(sources: Sequence[Source]) -> str:
    """Plain text: ``[n] Title <id:ID>`` per line (for terminals and curl)."""
    lines = []
    for s in sources:
        label = s.title if s.heading == s.title or not s.heading else f"{s.title}: {s.heading}"
        target = f"id:{s.node_id}" if s.node_id else f"{s.file}:{s.line}"
        lines.append(f"[{s.n}] {label} <{target}>")
    return "\n".join(lines)


@dataclass(slots=True)
class NoteContext:
    """The notes chosen for a question. ``notes_block`` is the numbered notes, ready for
    the ``{notes}`` of a prompt; ``used_notes`` is False when the gate let nothing
    through (then ``sources`` is empty). ``mode`` is "vector" or "keyword";
    ``best_score`` the best relevance seen (gate diagnostics)."""

    sources: list[Source]
    notes_block: str
    used_notes: bool
    mode: str = "keyword"
    best_score: float | None = None


# -- prompts --------------------------------------------------------------------------


class Prompts:
    """Named prompt templates: the packaged defaults overlaid with the user's file."""

    def __init__(self, templates: Mapping[str, str]):
        self.templates = dict(templates)

    def render(self, name: str, **values: Any) -> str:
        """Template ``name`` with the ``{placeholders}`` given in ``values`` filled in;
        other braces are kept. Values are inserted as they are, never re-read."""
        template = self.templates[name]
        text = _PLACEHOLDER.sub(lambda m: str(values[m[1]]) if m[1] in values else m[0], template)
        return text.strip()

    def fingerprint(self, *names: str) -> str:
        """A short hash of the named templates (part of cache keys)."""
        digest = hashlib.sha256("\x1e".join(self.templates[n] for n in names).encode()).hexdigest()
        return digest[:16]


_DEFAULTS: dict[str, str] | None = None
_USER_CACHE: dict[Path, tuple[int, dict[str, str]]] = {}


def _read_prompt_file(text: str, where: str) -> dict[str, str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    bad = [k for k, v in data.items() if not isinstance(v, str)]
    if bad:
        raise ConfigError(f"{where}: every prompt must be a string; not: {', '.join(bad)}")
    return data


def default_prompts() -> dict[str, str]:
    global _DEFAULTS
    if _DEFAULTS is None:
        text = resources.files("arcology_oracle").joinpath("prompts/default.toml").read_text(encoding="utf-8")
        _DEFAULTS = _read_prompt_file(text, "prompts/default.toml")
    return dict(_DEFAULTS)


def load_prompts(settings: Settings | None = None) -> Prompts:
    """The defaults overlaid with ``settings.prompts_file`` (re-read when it changes).
    Unknown names in the user's file are kept (for later use) but warned about."""
    templates = default_prompts()
    path = settings.prompts_file if settings else None
    if path is not None:
        try:
            mtime = path.stat().st_mtime_ns
        except OSError as exc:
            raise ConfigError(f"cannot read prompts file {path}: {exc.strerror}") from None
        cached = _USER_CACHE.get(path)
        if cached is None or cached[0] != mtime:
            user = _read_prompt_file(path.read_text(encoding="utf-8"), str(path))
            unknown = sorted(set(user) - set(templates))
            if unknown:
                log.warning("prompts file %s: unknown prompt names %s", path, ", ".join(unknown))
            _USER_CACHE[path] = (mtime, user)
        templates.update(_USER_CACHE[path][1])
    return Prompts(templates)


def today() -> str:
    return _dt.date.today().isoformat()


def escape_data(text: str) -> str:
    """Note or buffer text with anything that could close its delimiter defused."""
    return _NOTE_TAG.sub(lambda m: f"<{m[1]}\u200b{m[2]}", text)


def grounding_system_message(context: NoteContext, prompts: Prompts | None = None, *, name: str = "ask") -> str:
    """The system prompt for a question: prompt ``name`` ("ask" or "converse") with the
    numbered notes, or "ask_no_notes" when the gate let no note through."""
    prompts = prompts or load_prompts()
    if not context.used_notes:
        return prompts.render("ask_no_notes", today=today())
    return prompts.render(name, notes=context.notes_block, today=today())


def user_message(question: str, buffer: str | None, prompts: Prompts | None = None, *, buffer_chars: int = 6000) -> str:
    """The user turn of a question: the buffer (delimited as data, cut to ``buffer_chars``)
    then the question (a default one when only a buffer was given)."""
    prompts = prompts or load_prompts()
    question = question.strip() or DEFAULT_BUFFER_QUESTION
    block = ""
    if buffer and buffer.strip():
        text = buffer.strip()
        if len(text) > buffer_chars:
            text = text[:buffer_chars].rstrip() + "\n[…]"
        block = f"The text I am looking at:\n<buffer>\n{escape_data(text)}\n</buffer>\n\n"
    return prompts.render("ask_user", buffer=block, question=question)


# -- gathering context ---------------------------------------------------------------


def _terms(text: str) -> set[str]:
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in retrieval._STOPWORDS or len(word) < 2:
            continue
        out.add(_stem(word))
    return out


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def keyword_coverage(query_terms: set[str], text: str) -> float:
    """The share of the query's content words found in ``text`` (at most KEYWORD_TERMS
    words are required, so a long buffer is not held to half its vocabulary)."""
    if not query_terms:
        return 0.0
    shared = len(query_terms & _terms(text))
    return min(1.0, shared / min(len(query_terms), KEYWORD_TERMS))


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < 3:
        return {tuple(words)}
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass(slots=True)
class _Candidate:
    heading_id: int
    row: dict
    fused: float
    relevance: float
    excerpt: str


def _recency_weight(date: str | None, mtime_ns: int | None, half_life: float, now: _dt.date) -> float:
    """0.5 .. 1.0: halves the distance to 0.5 every ``half_life`` days of age."""
    day = None
    if date:
        try:
            day = _dt.date.fromisoformat(date[:10])
        except ValueError:
            day = None
    if day is None and mtime_ns:
        day = _dt.datetime.fromtimestamp(mtime_ns / 1e9).date()
    if day is None:
        return 0.75
    age = max(0, (now - day).days)
    return 0.5 + 0.5 * 0.5 ** (age / half_life)


def _excerpt(row: dict, chunks: list[tuple[str, str]], best_hash: str | None, cap: int) -> str:
    text = (row["text"] or "").strip()
    if len(text) <= cap:
        return text
    # A long heading: its best-matching window, not its first characters.
    for text_hash, chunk_text in chunks:
        if text_hash == best_hash:
            head, _, body = chunk_text.partition("\n\n")
            text = body.strip() or text
            break
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


def select_context(
    store: Store,
    settings: Settings,
    *,
    question: str,
    buffer: str | None,
    vectors: Sequence[Sequence[float]],
    k: int,
    exclude_nodes: frozenset[str] = frozenset(),
    now: _dt.date | None = None,
) -> NoteContext:
    """The synchronous part of :func:`gather_context` (runs on a reader thread)."""
    pool = max(4 * k, 40)
    vectors = [v for v in vectors if v is not None]
    mode = "vector" if vectors and store.has_vector_table() else "keyword"
    rankings: list[list[int]] = []
    if mode == "vector":
        for vector in vectors:
            rankings.append([h for h, _ in retrieval.vector_hits(store, vector, pool)])
    if question:
        rankings.append([h for h, _, _ in retrieval.keyword_hits(store, question, pool)])
    if buffer:
        rankings.append([h for h, _, _ in retrieval.keyword_hits(store, buffer, pool, any_term=True)])
    fused = retrieval.reciprocal_rank_fusion(*rankings)[:pool]
    ids = [h for h, _ in fused]
    rows = store.headings(ids)
    chunks = rag_store.heading_chunks(store, ids)
    files = rag_store.file_info(store, [r["file"] for r in rows.values()])
    stored = store.vectors_for_hashes([h for cs in chunks.values() for h, _ in cs]) if mode == "vector" else {}
    question_terms = _terms(question)
    query_terms = question_terms | _terms((buffer or "")[:BUFFER_QUERY_CHARS])
    buffer_norm = _normal(buffer) if buffer else ""
    cap = max(400, settings.context_chars // 3)
    half_life = settings.recency_half_life_days
    now = now or _dt.date.today()

    candidates: list[_Candidate] = []
    best_score: float | None = None
    for heading_id, score in fused:
        row = rows.get(heading_id)
        if row is None or (row["node_id"] is not None and row["node_id"] in exclude_nodes):
            continue
        best_hash, relevance = None, None
        for text_hash, _ in chunks.get(heading_id, ()):
            vector = stored.get(text_hash)
            if vector is None:
                continue
            sim = max(_dot(vector, q) for q in vectors)
            if relevance is None or sim > relevance:
                best_hash, relevance = text_hash, sim
        file_title = files.get(row["file"], {}).get("title") or ""
        words = " ".join([file_title, *row["olp"], row["title"], row["node_title"], row["text"] or ""])
        if relevance is not None:
            # Vector mode; a heading holding every word of a question (names, error
            # codes: what embeddings blur) passes too.
            passed = relevance >= settings.min_vector_similarity or (
                len(question_terms) >= 2 and keyword_coverage(question_terms, words) >= 1.0
            )
        else:  # keyword mode, or this heading's chunks are not embedded yet
            relevance = keyword_coverage(query_terms, words)
            passed = relevance >= settings.min_keyword_coverage
        best_score = relevance if best_score is None else max(best_score, relevance)
        if not passed:
            continue
        excerpt = _excerpt(row, chunks.get(heading_id, []), best_hash, cap)
        if buffer_norm and excerpt and _normal(excerpt) in buffer_norm:
            continue  # already in front of the model, as the buffer
        if half_life:
            score *= _recency_weight(row["date"], files.get(row["file"], {}).get("mtime_ns"), half_life, now)
        candidates.append(_Candidate(heading_id, row, score, relevance, excerpt))
    candidates.sort(key=lambda c: c.fused, reverse=True)

    # Near-duplicates (copied paragraphs, the same text in two files) are given once.
    kept: list[_Candidate] = []
    kept_shingles: list[set] = []
    for cand in candidates:
        sh = _shingles(" ".join([cand.row["title"], cand.excerpt]))
        if any(_jaccard(sh, other) >= DEDUP_JACCARD for other in kept_shingles):
            continue
        kept.append(cand)
        kept_shingles.append(sh)

    # Group by node (first appearance orders the notes) within the budget.
    groups: dict[str, list[_Candidate]] = {}
    budget = settings.context_chars
    for cand in kept:
        key = cand.row["node_id"] or f"file:{cand.row['file']}"
        if key not in groups and len(groups) >= k:
            continue
        cost = len(cand.excerpt) + len(cand.row["title"]) + 40 + (0 if key in groups else 120)
        if cost > budget:
            if groups:
                continue
            cand.excerpt = cand.excerpt[: max(0, budget - 200)]
            cost = budget
        budget -= cost
        groups.setdefault(key, []).append(cand)

    sources: list[Source] = []
    blocks: list[str] = []
    for n, members in enumerate(groups.values(), start=1):
        best = max(members, key=lambda c: c.relevance)
        row = best.row
        date = next((c.row["date"] for c in members if c.row["date"]), None)
        sources.append(
            Source(
                n=n,
                node_id=row["node_id"],
                title=row["node_title"],
                heading=row["title"],
                file=row["file"],
                line=row["start_line"],
                score=round(float(best.relevance), 4),
                olp=list(row["olp"]),
                date=date,
            )
        )
        file_title = files.get(row["file"], {}).get("title") or row["node_title"]
        blocks.append(_note_block(n, row["node_title"], date, row["file"], file_title, members))
    return NoteContext(
        sources=sources,
        notes_block="\n\n".join(blocks),
        used_notes=bool(sources),
        mode=mode,
        best_score=None if best_score is None else round(float(best_score), 4),
    )


def _note_block(n: int, title: str, date: str | None, path: str, file_title: str, members: list[_Candidate]) -> str:
    lines = [f'<note n="{n}">', f"[{n}] {org_link_label(title)}"]
    if date:
        lines.append(f"Date: {date}")
    lines.append(f"File: {path}")
    for cand in sorted(members, key=lambda c: c.row["start_line"]):
        row = cand.row
        outline = " > ".join([file_title, *row["olp"], row["title"]]) if row["level"] else file_title
        lines.append("")
        lines.append(f"## {outline}")
        if cand.excerpt:
            lines.append(escape_data(cand.excerpt))
    lines.append("</note>")
    return "\n".join(lines)


async def gather_context(
    index,
    question: str,
    *,
    buffer: str | None = None,
    k: int = 8,
    exclude_nodes: Iterable[str] = (),
) -> NoteContext:
    """The notes to answer ``question`` with (see the module docstring), from a hybrid
    search over the question and, when given, ``buffer`` (so a buffer alone finds its
    related notes). At most ``k`` notes, within ``settings.context_chars`` characters.
    ``index`` is an :class:`~arcology_oracle.service.OracleIndex`. Raises BadRequest
    when both are empty; works without an embedder (keyword mode)."""
    question = (question or "").strip()
    buffer = (buffer or "").strip() or None
    if not question and not buffer:
        raise BadRequest("give a question or a buffer")
    if k < 1:
        raise BadRequest("k must be at least 1")
    vectors: list[list[float]] = []
    if await index.has_vectors():
        if question:
            vectors.append(await index.query_vector(question))
        if buffer:
            vectors.append(await index.query_vector(buffer[:BUFFER_QUERY_CHARS], document=True))
    vectors = [v for v in vectors if v is not None]
    settings = index.settings
    excluded = frozenset(exclude_nodes)
    return await index.read(
        lambda store: select_context(
            store,
            settings,
            question=question,
            buffer=buffer[:BUFFER_QUERY_CHARS] if buffer else None,
            vectors=vectors,
            k=k,
            exclude_nodes=excluded,
        )
    )


# -- answering ------------------------------------------------------------------------


@dataclass(slots=True)
class Reply:
    """An answer whose sources are known and whose text is still to come.

    Iterate ``pieces`` (an async generator; close it with ``contextlib.aclosing`` or by
    cancelling) to receive the text as the model writes it; the first ``__anext__``
    raises ServiceUnavailable/ModelNotFound when the model cannot be reached, so callers
    can still answer 503 before they start streaming. ``cached`` is True when the text
    comes from the summaries cache (no model call).
    """

    sources: list[Source]
    used_notes: bool
    pieces: AsyncIterator[str]
    model: str
    cached: bool = False

    async def text(self) -> str:
        """The whole text (consumes ``pieces``)."""
        out: list[str] = []
        async with aclosing(self.pieces) as pieces:
            async for piece in pieces:
                out.append(piece)
        return "".join(out)


class Oracle:
    """Questions, summaries and conversations over one index with one chat client.

    ``index`` is an :class:`~arcology_oracle.service.OracleIndex`, ``llm`` an
    :class:`~arcology_oracle.ollama.chat.OllamaChat` (anything with its ``stream_chat``).
    """

    def __init__(self, index, llm, prompts: Prompts | None = None):
        self.index = index
        self.llm = llm
        self.settings: Settings = index.settings
        self._prompts = prompts

    @property
    def prompts(self) -> Prompts:
        return self._prompts or load_prompts(self.settings)

    async def _point(self, file: str | None, line: int | None) -> dict | None:
        """The indexed heading at ``file``:``line`` (None when there is none)."""
        if not file:
            return None
        return await self.index.read(lambda s: s.heading_at(file, line or 1))

    async def ask(
        self,
        question: str,
        *,
        buffer: str | None = None,
        file: str | None = None,
        line: int | None = None,
        k: int = 8,
        model: str | None = None,
    ) -> Reply:
        """Answer ``question`` (about ``buffer``, when given) from the notes.

        ``file``/``line`` is where the user is: the note at that point is not offered
        as a source (it is the buffer; without a buffer, that heading's indexed text
        stands in for it). Private, crypt and excluded parts of the buffer
        are cut out first (:func:`orgconv.strip_private`), as the indexer does. Retrieval happens here; the model is called when
        ``Reply.pieces`` is first iterated.
        """
        question = (question or "").strip()
        if buffer:
            buffer = orgconv.strip_private(buffer, self.settings.private_tags)
            if not buffer.strip() and not question:
                raise BadRequest("the buffer is private (private or crypt tags) and there is no question")
        point = await self._point(file, line)
        exclude = [point["node_id"]] if point and point["node_id"] else []
        if not (buffer or "").strip() and point is not None:
            buffer = " > ".join([*point["olp"], point["title"]]) + "\n" + (point["text"] or "")
        context = await gather_context(self.index, question, buffer=buffer, k=k, exclude_nodes=exclude)
        prompts = self.prompts
        messages = [
            {"role": "system", "content": grounding_system_message(context, prompts)},
            {"role": "user", "content": user_message(question, buffer, prompts, buffer_chars=self.settings.context_chars // 2)},
        ]
        model = model or self.llm.model
        return Reply(context.sources, context.used_notes, self.llm.stream_chat(messages, model=model), model)

    # -- summaries ------------------------------------------------------------------

    async def _note(self, node: str | None, file: str | None) -> tuple[list[dict], str, Source]:
        """The headings of a note, its text for a prompt, and it as source [1]."""

        def read(store: Store):
            rows = rag_store.subtree(store, node_id=node, path=file)
            if not rows:
                return None, None
            return rows, rag_store.file_info(store, [rows[0]["file"]]).get(rows[0]["file"], {}).get("title")

        rows, file_title = await self.index.read(read)
        if not rows:
            what = f"node with ID {node!r}" if node else f"file {file!r}"
            raise NotFound(f"no {what} in the index")
        first = rows[0]
        file_title = file_title or first["node_title"]
        blocks = []
        for row in rows:
            outline = " > ".join([file_title, *row["olp"], row["title"]]) if row["level"] else file_title
            text = (row["text"] or "").strip()
            blocks.append(f"## {outline}" + (f"\n{text}" if text else ""))
        source = Source(
            n=1,
            node_id=node or first["node_id"],
            title=first["node_title"],
            heading=first["title"],
            file=first["file"],
            line=first["start_line"],
            score=1.0,
            olp=list(first["olp"]),
            date=first["date"],
        )
        return rows, "\n\n".join(blocks), source

    def _parts(self, text: str) -> list[str]:
        """``text`` cut into pieces of at most ``context_chars``, at heading, then
        paragraph, then line boundaries."""
        limit = self.settings.context_chars
        if len(text) <= limit:
            return [text]
        units: list[str] = []
        for block in re.split(r"\n(?=## )", text):
            if len(block) <= limit:
                units.append(block)
                continue
            for para in block.split("\n\n"):
                while len(para) > limit:
                    cut = para.rfind("\n", 0, limit)
                    cut = cut if cut > limit // 2 else limit
                    units.append(para[:cut])
                    para = para[cut:].lstrip("\n")
                units.append(para)
        parts: list[str] = []
        current = ""
        for unit in units:
            if current and len(current) + 2 + len(unit) > limit:
                parts.append(current)
                current = unit
            else:
                current = f"{current}\n\n{unit}" if current else unit
        if current:
            parts.append(current)
        return parts

    async def _summary_stream(
        self, text: str, title: str, question: str | None, model: str
    ) -> AsyncIterator[str]:
        """One note's summary: one streamed call for a short note; for a long one a
        running summary over its parts, then a streamed roll-up."""
        prompts = self.prompts
        system = {"role": "system", "content": prompts.render("summarize_system")}
        parts = self._parts(text)
        if len(parts) == 1:
            name = "summarize_question" if question else "summarize_note"
            user = prompts.render(name, title=title, note=escape_data(parts[0]), question=question or "")
            stream = self.llm.stream_chat([system, {"role": "user", "content": user}], model=model)
        else:
            focus = f"Keep only what bears on this question: {question}" if question else ""
            summary = "(nothing yet)"
            for i, part in enumerate(parts, start=1):
                user = prompts.render(
                    "summarize_part", title=title, summary=summary, note=escape_data(part), part=i, parts=len(parts), focus=focus
                )
                summary = (await self.llm.chat([system, {"role": "user", "content": user}], model=model)).strip()
            user = prompts.render("summarize_rollup", title=title, summary=summary, focus=focus)
            stream = self.llm.stream_chat([system, {"role": "user", "content": user}], model=model)
        async with aclosing(stream) as pieces:
            async for piece in pieces:
                yield piece

    def summary_key(self, model: str, note_text: str) -> str:
        """The cache key of a generic summary: model, prompts and the note's content."""
        prompts = self.prompts
        fingerprint = prompts.fingerprint("summarize_system", "summarize_note", "summarize_part", "summarize_rollup")
        content = hashlib.sha256(note_text.encode("utf-8")).hexdigest()
        raw = "\x1f".join(["summary", SUMMARY_VERSION, model, fingerprint, content])
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    async def summarize(
        self,
        *,
        node: str | None = None,
        file: str | None = None,
        question: str | None = None,
        k: int = 5,
        model: str | None = None,
    ) -> Reply:
        """A summary of a note (``node`` ID or ``file``), focused on ``question`` when
        given; or, with only a question, of the top notes for it (each contextually,
        then together, citing them by number).

        A generic summary is cached by the note's content, the model and the prompts: a
        second request for an unchanged note makes no model call (``Reply.cached``), an
        edited note gets a new one. Raises NotFound, BadRequest.
        """
        question = (question or "").strip() or None
        model = model or self.llm.model
        if node or file:
            rows, text, source = await self._note(node, file)
            if question:
                return Reply([source], True, self._summary_stream(text, source.title, question, model), model)
            key = self.summary_key(model, text)
            cached = await self.index.read(lambda s: s.cached_summary(key))
            if cached is not None:
                return Reply([source], True, _once(cached), model, cached=True)
            return Reply([source], True, self._caching(self._summary_stream(text, source.title, None, model), key, source.file), model)
        if not question:
            raise BadRequest("give a node, a file or a question")
        context = await gather_context(self.index, question, k=k)
        if not context.used_notes:
            return Reply([], False, _once(f"None of your notes is relevant enough to summarize for: {question}"), model)
        return Reply(context.sources, True, self._summarize_many(context.sources, question, model), model)

    async def _caching(self, stream: AsyncIterator[str], key: str, file: str) -> AsyncIterator[str]:
        out: list[str] = []
        async with aclosing(stream) as pieces:
            async for piece in pieces:
                out.append(piece)
                yield piece
        text = "".join(out)
        if text.strip():
            await self.index.write(lambda s: s.cache_summary(key, text, file))

    async def _summarize_many(self, sources: list[Source], question: str, model: str) -> AsyncIterator[str]:
        summaries = []
        for src in sources:
            _, text, _ = await self._note(src.node_id, None if src.node_id else src.file)
            out: list[str] = []
            async with aclosing(self._summary_stream(text, src.title, question, model)) as pieces:
                async for piece in pieces:
                    out.append(piece)
            # Brackets in a note's own summary are not our numbers: drop them.
            text = _BRACKET_NUMBER.sub("", "".join(out)).strip()
            summaries.append(f"[{src.n}] {org_link_label(src.title)}\n{escape_data(text)}")
        prompts = self.prompts
        messages = [
            {"role": "system", "content": prompts.render("summarize_system")},
            {"role": "user", "content": prompts.render("summarize_together", question=question, summaries="\n\n".join(summaries))},
        ]
        async with aclosing(self.llm.stream_chat(messages, model=model)) as pieces:
            async for piece in pieces:
                yield piece

    # -- conversations -------------------------------------------------------------

    async def converse(
        self, org: str, *, k: int = 8, model: str | None = None, marker: str = "oracle", when: _dt.datetime | None = None
    ) -> "ConverseResult":
        """Answer the conversation held in the org subtree ``org`` (see
        :mod:`arcology_oracle.orgconv`) with a new heading one level below its root."""
        conversation = orgconv.parse_conversation(orgconv.strip_private(org, self.settings.private_tags), marker=marker)
        # The last message is the question; what came before (a follow-up's "it")
        # steers retrieval as a buffer does.
        history = conversation.history[-BUFFER_QUERY_CHARS:] or None
        context = await gather_context(self.index, conversation.question, buffer=history, k=k)
        messages = [
            {"role": "system", "content": grounding_system_message(context, self.prompts, name="converse")},
            *conversation.messages(),
        ]
        model = model or self.llm.model
        answer = (await self.llm.chat(messages, model=model)).strip()
        heading = orgconv.render_answer(
            answer,
            sources_org_block(context.sources),
            level=conversation.level + 1,
            model=model,
            when=when or _dt.datetime.now(),
            used_notes=context.used_notes,
        )
        return ConverseResult(heading, answer, context.sources, context.used_notes, model)


@dataclass(slots=True)
class ConverseResult:
    """``org`` is the heading to insert; ``answer`` the model's text alone."""

    org: str
    answer: str
    sources: list[Source]
    used_notes: bool
    model: str


async def _once(text: str) -> AsyncIterator[str]:
    yield text
