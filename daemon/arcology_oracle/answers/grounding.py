"""What the Ollama- and OpenAI-compatible APIs add to a plain proxy: grounded model
names and grounding a conversation in the notes. No HTTP here (see
:mod:`arcology_oracle.http.compat`; translating OpenAI's shapes to Ollama's and back is
:mod:`arcology_oracle.http.compat.openai_shapes`).

Grounded model names
    Every upstream chat model ``M`` is also offered as ``M+notes`` (``llama3.2+notes``,
    ``qwen2.5:7b+notes``; a ``:latest`` tag is left out of the listed name). ``+`` is
    valid in neither an Ollama model name nor a tag, so a grounded name never hides a
    real model, and it survives gptel (a symbol such as ``llama3.2+notes``), the Emacs
    ``llm`` package, and the ollama and openai Python clients unchanged. Accepted
    spellings: ``M+notes``, ``name+notes:tag`` (how Ollama-style clients may normalise
    the listed name) and ``name:tag+notes``.

Which models can chat
    The ``capabilities`` that ``/api/show`` reports (``"completion"``); an Ollama too old
    to report them is asked nothing more: models whose family is BERT-like or whose name
    contains ``embed`` are taken for embedding models, all others for chat models.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BadRequest
from ..notes.cleaning import private_lines, strip_private
from ..notes.conversations import GROUNDED_SUFFIX
from .context import gather_context
from .index_api import NotesIndex
from .prompts import grounding_system_message, load_prompts
from .search import question_range
from .sources import Source, sources_org_block

NOTES_K = 8
# How much of the conversation before the latest user message goes into retrieval.
QUERY_TURNS = 4
QUERY_CHARS = 2000

# --------------------------------------------------------------------------- model names


def grounded_name(upstream_name: str) -> str:
    """The grounded variant's listed name: ``llama3.2:latest`` -> ``llama3.2+notes``."""
    name = upstream_name.removesuffix(":latest")
    return name + GROUNDED_SUFFIX


def split_model(name: str) -> tuple[str, bool]:
    """``(upstream model, grounded?)`` for a model name a client sent."""
    if name.endswith(GROUNDED_SUFFIX):
        return name[: -len(GROUNDED_SUFFIX)], True
    head, slash, last = name.rpartition("/")
    marker = GROUNDED_SUFFIX + ":"
    if marker in last:
        return head + slash + last.replace(marker, ":", 1), True
    return name, False


def same_model(a: str, b: str) -> bool:
    """Whether two names mean the same offered model (``:latest`` implied, any grounded spelling)."""
    (base_a, grounded_a), (base_b, grounded_b) = split_model(a), split_model(b)
    return grounded_a == grounded_b and base_a.removesuffix(":latest") == base_b.removesuffix(":latest")


def can_chat(name: str, capabilities: Sequence[str] | None, details: Mapping[str, Any] | None) -> bool:
    """Whether the upstream model chats (see the module docstring)."""
    if capabilities is not None:
        return "completion" in capabilities
    details = details or {}
    families = [details.get("family"), *(details.get("families") or [])]
    family_text = " ".join(str(f) for f in families if f).lower()
    return "bert" not in family_text and "embed" not in name.lower()


def entry_name(entry: Mapping[str, Any]) -> str:
    """The name of an ``/api/tags`` entry."""
    return str(entry.get("name") or entry.get("model") or "")


def with_grounded_variants(models: Sequence[Mapping[str, Any]], chat_names: set[str]) -> list[dict[str, Any]]:
    """The ``/api/tags`` entries unchanged, each chat model followed by its grounded variant."""
    out: list[dict[str, Any]] = []
    for entry in models:
        out.append(dict(entry))
        name = entry_name(entry)
        if name in chat_names:
            grounded = grounded_name(name)
            out.append({**entry, "name": grounded, "model": grounded})
    return out


# --------------------------------------------------------------------------- grounding


@dataclass
class Grounding:
    """A conversation ready for the upstream model, and the notes put into it. ``mode``:
    how the notes were searched ("vector" or "keyword", as ``/ask`` says it); None when
    they were not (no question)."""

    messages: list[dict[str, Any]]
    sources: list[Source] = field(default_factory=list)
    mode: str | None = None

    @property
    def used_notes(self) -> bool:
        return bool(self.sources)


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def conversation_query(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str | None]:
    """The latest user message, and the recent conversation before it (for retrieval)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if last is None:
        return "", None
    question = message_text(messages[last])
    lines: list[str] = []
    size = 0
    for message in reversed([m for m in messages[:last] if m.get("role") in ("user", "assistant")][-QUERY_TURNS:]):
        text = message_text(message).strip()
        if not text:
            continue
        line = f"{message['role']}: {text}"[: QUERY_CHARS - size]
        lines.insert(0, line)
        size += len(line)
        if size >= QUERY_CHARS:
            break
    return question, "\n".join(lines) or None


# The block sources_text appends, as it comes back in the history of a conversation.
_SOURCES_BLOCK = re.compile(r"\n*Sources:\n(?:- \[\d+\] \[\[[^\n]*\]\]\n?)+\s*\Z")


def strip_sources_blocks(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the sources blocks of earlier grounded answers removed: their
    numbers refer to notes of an earlier turn, and a model copies what it sees."""
    out = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str):
            message = {**message, "content": _SOURCES_BLOCK.sub("", content)}
        out.append(dict(message))
    return out


def insert_notes(messages: Sequence[Mapping[str, Any]], notes_message: str, model_system: str | None = None
                 ) -> list[dict[str, Any]]:  # fmt: skip
    """``messages`` with a system message holding the notes after the leading system
    messages. Without any, the model's own ``SYSTEM`` prompt (``model_system``, from its
    Modelfile) comes first: Ollama gives it to the model only when the conversation does
    not start with a system message, so the notes alone would have dropped it."""
    at = 0
    while at < len(messages) and messages[at].get("role") == "system":
        at += 1
    added = [{"role": "system", "content": notes_message}]
    if at == 0 and model_system:
        added.insert(0, {"role": "system", "content": model_system})
    return [dict(m) for m in messages[:at]] + added + [dict(m) for m in messages[at:]]


def _without_private(index: NotesIndex, text: str) -> str:
    """``text`` (org text a client sent) without its private parts, as the index reads
    them (:func:`~arcology_oracle.notes.cleaning.strip_private`); unchanged, byte for byte,
    when it has none. Reads setup files: call it off the event loop."""
    settings = index.settings
    if not text or not any(private_lines(text.encode("utf-8", "replace"), settings.private_tags, root=settings.roam_dir)[0]):
        return text
    return strip_private(text, settings.private_tags, root=settings.roam_dir)


def _private_whole(before: str, after: str) -> None:
    """BadRequest when the latest message had words and none is left once cleaned."""
    if before.strip() and not after.strip():
        raise BadRequest("your latest message is private (private or crypt tags, ROAM_EXCLUDE, PGP): nothing was sent")


async def without_private_parts(index: NotesIndex, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the private parts of their text taken out (:func:`_without_private`:
    a gptel chat in an org buffer sends its headings as they are, private ones too); a
    tool's message, the daemon's own answer, as it is. BadRequest when the latest user
    message is private whole."""
    def clean() -> list[dict[str, Any]]:
        return [
            {**m, "content": _without_private(index, m["content"])}
            if m.get("role") != "tool" and isinstance(m.get("content"), str) else dict(m)
            for m in messages
        ]  # fmt: skip

    cleaned = await asyncio.to_thread(clean)
    _private_whole(conversation_query(messages)[0], conversation_query(cleaned)[0])
    return cleaned


async def ground_messages(index: NotesIndex, messages: Sequence[Mapping[str, Any]], *, k: int = NOTES_K,
                          model_system: str | None = None) -> Grounding:  # fmt: skip
    """Retrieve notes for the latest user message (and the conversation before it) and
    add them as a system message (:func:`insert_notes`, keeping ``model_system``); without
    it when the relevance gate finds none. The messages' private parts are taken out
    first (:func:`without_private_parts`): they reach neither retrieval nor the model.
    Earlier answers lose their sources blocks either way (see :func:`strip_sources_blocks`).
    No heading whose text is one of the conversation's messages is a note of it."""
    messages = await without_private_parts(index, messages)
    question, buffer = conversation_query(messages)
    messages = strip_sources_blocks(messages)
    if not question.strip():
        return Grounding(messages)
    date_range = await question_range(index, question)
    # The conversation's own turns are no notes of it (a gptel chat saved in the notes
    # is indexed, and matches its next question best of all).
    turns = [message_text(m) for m in messages if m.get("role") in ("user", "assistant")]
    context = await gather_context(index, question, buffer=buffer, k=k, date_range=date_range, seen=turns)
    if not context.used_notes or not context.sources:
        return Grounding(messages, mode=context.mode)
    notes = grounding_system_message(context, load_prompts(index.settings))
    return Grounding(insert_notes(messages, notes, model_system), list(context.sources), context.mode)


async def without_private_prompt(index: NotesIndex, prompt: str, *others: str | None) -> tuple[str | None, ...]:
    """An ``/api/generate`` prompt and ``others`` (its system text, its suffix; None stays
    None) without their private parts, as :func:`without_private_parts` cleans messages;
    BadRequest when the prompt is private whole."""
    cleaned = await asyncio.to_thread(lambda: tuple(text and _without_private(index, text) for text in (prompt, *others)))
    _private_whole(prompt, cleaned[0])
    return cleaned


async def ground_prompt(index: NotesIndex, prompt: str, system: str | None, *, k: int = NOTES_K,
                        model_system: str | None = None) -> tuple[str, str | None, list[Source], str | None]:  # fmt: skip
    """For ``/api/generate``: the prompt and the system text without their private parts
    (as :func:`ground_messages` cleans messages; BadRequest when the prompt is private
    whole), the notes appended to that system text, the sources (no notes appended and
    no sources when none is relevant), and how the notes were searched (as
    :class:`Grounding`'s ``mode``). Without a ``system`` of the client's, the notes follow
    the model's own (``model_system``), which Ollama uses only for a request without one."""
    prompt, system = await without_private_prompt(index, prompt, system)
    if not prompt.strip():
        return prompt, system, [], None
    context = await gather_context(index, prompt, k=k, date_range=await question_range(index, prompt))
    if not context.used_notes or not context.sources:
        return prompt, system, [], context.mode
    notes = grounding_system_message(context, load_prompts(index.settings))
    base = system or model_system
    return prompt, (f"{base}\n\n{notes}" if base else notes), list(context.sources), context.mode


def sources_text(sources: Sequence[Source], roam_dir: Path | None = None) -> str:
    """The block appended to a grounded answer: a blank line, ``Sources:``, then one
    ``- [n] [[id:...][Title]]`` per note ("" without sources)."""
    if not sources:
        return ""
    return "\n\nSources:\n" + sources_org_block(list(sources), roam_dir).strip("\n") + "\n"
