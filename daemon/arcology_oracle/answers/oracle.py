"""The oracle: ask, summarize and converse over the notes with a chat model.

:class:`Oracle` gathers the notes for a request (:mod:`~arcology_oracle.answers.context`),
builds the messages (:mod:`~arcology_oracle.answers.prompts`), and hands back a
:class:`Reply` whose text streams from the model, or a :class:`ConverseResult` (the org
heading to insert into a conversation). Generic note summaries are cached in the store,
keyed by the note's content, the model and the prompts.

Privacy: text sent by clients (buffers, conversations) loses its private, crypt and
excluded subtrees first (:func:`arcology_oracle.notes.cleaning.strip_private`, which reads
them as the indexer does); note text comes only from the index, where such headings
never are.

No aiohttp.web here: the http layer and the CLI both drive :class:`Oracle`.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace

from ..config import Settings
from ..errors import BadRequest, NotFound
from ..notes import conversations, model_text
from ..notes.cleaning import strip_private
from ..notes.note_ids import held_until
from ..notes.org_syntax import link_text
from ..store import Store
from .context import BUFFER_QUERY_CHARS, gather_context
from .held_sources import held_sources
from .index_api import NotesIndex
from .note_text import note_parts
from .note_text import note_text as _note_text
from .private_places import is_private_file, is_private_place, without_saved_private_lines
from .prompts import Prompts, escape_data, grounding_system_message, load_prompts, user_message
from .search import question_range
from .sources import Source, org_link_label, source_targets, sources_org_block, sources_plain_block
from .when import DateRange

SUMMARY_VERSION = "1"  # bump to invalidate every cached summary

_BRACKET_NUMBER = re.compile(r"[ \t]?\[\d{1,3}\]")


@dataclass(slots=True)
class Reply:
    """An answer whose sources are known and whose text is still to come.

    Iterate ``pieces`` (an async generator; close it with ``contextlib.aclosing`` or by
    cancelling) to receive the text as the model writes it; the first ``__anext__``
    raises ServiceUnavailable/ModelNotFound when the model cannot be reached, so callers
    can still answer 503 before they start streaming. ``cached`` is True when the text
    comes from the summaries cache (no model call). ``mode`` is how the notes were found:
    "vector" (with the query's embedding) or "keyword" (without one: no embedder, or it
    did not answer within ``search_embed_wait``), as ``/search`` says it; None when
    nothing was searched (a summary of a note named by node or file).
    """

    sources: list[Source]
    used_notes: bool
    pieces: AsyncIterator[str]
    model: str
    cached: bool = False
    date_range: DateRange | None = None
    mode: str | None = None

    async def text(self) -> str:
        """The whole text (consumes ``pieces``)."""
        out: list[str] = []
        async with aclosing(self.pieces) as pieces:
            async for piece in pieces:
                out.append(piece)
        return "".join(out)


class Oracle:
    """Questions, summaries and conversations over one index with one chat client.

    ``index`` is a :class:`~arcology_oracle.answers.index_api.NotesIndex`, ``llm`` an
    :class:`~arcology_oracle.ollama.chat.OllamaChat` (anything with its ``chat`` and ``stream_chat``).
    """

    def __init__(self, index: NotesIndex, llm, prompts: Prompts | None = None, ready: asyncio.Event | None = None):
        self.index = index
        self.ready = ready  # set once the index has read the notes (None: it has)
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
        visiting: str | None = None,
        k: int = 8,
        model: str | None = None,
        date_range: DateRange | None = None,
    ) -> Reply:
        """Answer ``question`` (about ``buffer``, when given) from the notes.

        The notes come from ``date_range`` when given, else from the time the question
        names, if any (``settings.parse_dates``; see :mod:`.when`); the range used is
        ``Reply.date_range``.

        ``file``/``line`` is where the user is: the note at that point is not offered
        as a source (it is the buffer; without a buffer, that heading's indexed text
        stands in for it). Private, crypt and excluded parts of the buffer are cut out
        first (:func:`~arcology_oracle.notes.cleaning.strip_private`), as the indexer does,
        with the setup files it names looked for beside ``visiting`` (the file the buffer
        is a state of, saved or not: Emacs sends ``file`` and ``line`` only for a saved
        buffer, whose lines are the saved file's), else beside ``file``;
        when that place of the saved file is private (:func:`.private_places.is_private_place`:
        an inherited tag, the file's tags), or, without ``file``, the saved ``visiting``
        is private whole (:func:`.private_places.is_private_file`: its tags,
        ``exclude_globs``), the buffer is not used at all; else the lines the saved file
        holds only in private parts are cut out of it too
        (:func:`.private_places.without_saved_private_lines`: an excerpt starting below a
        private heading cut off above it). Retrieval
        happens here; the model is called when ``Reply.pieces`` is first iterated.
        """
        question = (question or "").strip()
        # An unsaved buffer has no line of the saved file: its file is judged whole.
        private_place = await is_private_place(self.index, file, line) if file else await is_private_file(self.index, visiting)
        if private_place:  # its text was cut off from what makes it private: none of it goes
            buffer = None
            if not question:
                where = f"{file} is private at line {line or 1}" if file else f"{visiting} is private"
                raise BadRequest(f"{where} (private or crypt tags, ROAM_EXCLUDE, exclude_globs, a hidden folder) and there is no question")
        if buffer:
            # An excerpt or a region may start below a private heading cut off above it.
            buffer = await without_saved_private_lines(self.index, buffer, file or visiting)
            # On a worker thread: the setup files the text names are read from disk.
            buffer = await asyncio.to_thread(
                strip_private, buffer, self.settings.private_tags, root=self.settings.roam_dir, path=visiting or file
            )
            if not buffer.strip() and not question:
                raise BadRequest("the buffer is private (private or crypt tags, ROAM_EXCLUDE, PGP) and there is no question")
        point = None if private_place else await self._point(file, line)
        exclude = [point["node_id"]] if point and point["node_id"] else []
        if not (buffer or "").strip() and point is not None:
            buffer = " > ".join([*point["olp"], point["title"]]) + "\n" + (point["text"] or "")
        date_range = date_range or await self.question_range(question)
        context = await gather_context(
            self.index, question, buffer=buffer, k=k, exclude_nodes=exclude, date_range=date_range
        )
        prompts = self.prompts
        messages = [
            {"role": "system", "content": grounding_system_message(context, prompts)},
            {"role": "user", "content": user_message(question, buffer, prompts, buffer_chars=self.settings.context_chars // 2)},
        ]
        model = model or self.llm.model
        return Reply(context.sources, context.used_notes, self.llm.stream_chat(messages, model=model), model,
                     date_range=date_range, mode=context.mode)  # fmt: skip

    async def question_range(self, question: str) -> DateRange | None:
        """The date range ``question`` names (see :func:`.search.question_range`)."""
        return await question_range(self.index, question)

    # -- summaries ------------------------------------------------------------------

    async def _note(self, node: str | None, file: str | None) -> tuple[list[dict], str, Source]:
        """The headings of a note, its text for a prompt, and it as source [1]: without the
        oracle's own words in it (:func:`_note_text`). Raises NotFound, BadRequest."""
        keep = self.settings.oracle_answers_as_evidence
        found = await self.index.read(lambda store: _note_text(store, node, file, keep))
        what = f"node with ID {node!r}" if node else f"file {file!r}"
        if found is None:
            raise NotFound(f"no {what} in the index")
        if not found[0]:
            raise BadRequest(f"the {what} holds only the oracle's own words (:ROLE: oracle), not your notes")
        return found

    async def _summary_stream(
        self, text: str, title: str, question: str | None, model: str
    ) -> AsyncIterator[str]:
        """One note's summary: one streamed call for a short note; for a long one a
        running summary over its parts, then a streamed roll-up."""
        prompts = self.prompts
        system = {"role": "system", "content": prompts.render("summarize_system")}
        parts = note_parts(text, self.settings.context_chars)
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
            stream = self._summary_stream(text, source.title, None, model)
            return Reply([source], True, self._caching(stream, key, (node, file), text, source.file), model)
        if not question:
            raise BadRequest("give a node, a file or a question")
        context = await gather_context(self.index, question, k=k)
        notes = await self._notes_of(context.sources) if context.used_notes else []
        if not notes:
            none = f"None of your notes is relevant enough to summarize for: {question}"
            return Reply([], False, _once(none), model, mode=context.mode)
        return Reply([src for src, _ in notes], True, self._summarize_many(notes, question, model), model, mode=context.mode)

    async def _notes_of(self, sources: list[Source]) -> list[tuple[Source, str]]:
        """The notes of ``sources`` with their text for a summary prompt, numbered again
        from 1: without those that hold nothing of the user's (a chat of nothing but the
        oracle's replies, whose file's record matched) or left the index meanwhile."""
        keep = self.settings.oracle_answers_as_evidence
        found = await self.index.read(
            lambda store: [(src, _note_text(store, src.node_id, None if src.node_id else src.file, keep)) for src in sources]
        )
        kept = [(src, got[1]) for src, got in found if got and got[0]]
        return [(replace(src, n=n), text) for n, (src, text) in enumerate(kept, start=1)]

    async def _caching(
        self, stream: AsyncIterator[str], key: str, note: tuple[str | None, str | None], note_text: str, file: str
    ) -> AsyncIterator[str]:
        """``stream``, whose whole text is then cached under ``key``, but only if the
        ``note`` (node, file) still reads ``note_text``, checked in the same write: a
        note edited meanwhile (made private, even) must not leave a summary of what
        it said in the cache."""
        out: list[str] = []
        async with aclosing(stream) as pieces:
            async for piece in pieces:
                out.append(piece)
                yield piece
        summary = "".join(out)

        def cache(store: Store) -> None:
            now = _note_text(store, *note, self.settings.oracle_answers_as_evidence)
            if now is not None and now[1] == note_text:
                store.cache_summary(key, summary, file)

        if summary.strip():
            await self.index.write(cache)

    async def _summarize_many(self, notes: list[tuple[Source, str]], question: str, model: str) -> AsyncIterator[str]:
        summaries = []
        for src, text in notes:
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
        self, org: str, *, k: int = 8, model: str | None = None, marker: str = "oracle", when: _dt.datetime | None = None,
        file: str | None = None, line: int | None = None,
    ) -> "ConverseResult":
        """Answer the conversation held in the org subtree ``org`` (see
        :mod:`arcology_oracle.notes.conversations`) with a new heading one level below its
        root. ``file``/``line``: where its root is saved; a conversation in a private part
        of the saved file (:func:`.private_places.is_private_place`) is refused. The heading
        (its list and ``:SOURCES:``) names only the sources the index still holds once the
        model has answered (:func:`.held_sources.held_sources`)."""
        if await is_private_place(self.index, file, line):
            raise BadRequest(f"the conversation is private: {file} at line {line or 1} is in a private part of the notes"
                             " (private or crypt tags, ROAM_EXCLUDE, exclude_globs, a hidden folder)")  # fmt: skip
        org = await without_saved_private_lines(self.index, org, file)
        kept = await asyncio.to_thread(strip_private, org, self.settings.private_tags, root=self.settings.roam_dir, path=file)
        conversation = conversations.parse_conversation(kept, marker=marker)
        # The last message is the question; what came before (a follow-up's "it")
        # steers retrieval as a buffer does.
        history = conversation.history[-BUFFER_QUERY_CHARS:] or None
        # Its own turns are no sources of its answer (the user's last turn is indexed as
        # soon as the file is saved, and matches the question word for word).
        turns = [link_text(f"{conversation.title}\n{conversation.body}"), *(link_text(t.text) for t in conversation.turns)]
        context = await gather_context(self.index, conversation.question, buffer=history, k=k, seen=turns)
        messages = [
            {"role": "system", "content": grounding_system_message(context, self.prompts, name="converse")},
            *conversation.messages(),
        ]
        model = model or self.llm.model
        answer = (await self.llm.chat(messages, model=model)).strip()
        # A mangled ID would make every export of the file fail.
        lookup = await held_until(self.ready, self.settings.roam_dir, self.index.read)  # a new index knows no ID yet
        answer = await model_text.unknown_ids_quieted(answer, self.index.read, lookup)
        sources = await held_sources(self.index, context.sources)
        # Plain source lines and their IDs in a property, so that org-roam lists no
        # backlink from the conversation on every cited note (answer_source_links: as links).
        links = self.settings.answer_source_links
        heading = conversations.render_answer(
            answer,
            sources_org_block(sources) if links else sources_plain_block(sources),
            level=conversation.level + 1,
            model=model,
            when=when or _dt.datetime.now(),
            used_notes=context.used_notes,
            source_targets=None if links else source_targets(sources),
        )
        return ConverseResult(heading, answer, sources, context.used_notes, model, context.mode)


@dataclass(slots=True)
class ConverseResult:
    """``org`` is the heading to insert; ``answer`` the model's text alone; ``mode`` as :class:`Reply`'s."""

    org: str
    answer: str
    sources: list[Source]
    used_notes: bool
    model: str
    mode: str


async def _once(text: str) -> AsyncIterator[str]:
    yield text
