"""A fake Ollama server: a real aiohttp app on loopback that speaks Ollama's HTTP API.

The real ``ollama`` client, the daemon, Emacs and a browser all talk to it over TCP, so
nothing above the socket is mocked. What it answers:

* Embeddings carry meaning (:func:`fake_embedding`: a signed, hashed bag of stemmed words
  plus a little character-trigram signal, L2-normalised), so texts sharing content words
  are close and unrelated texts are near-orthogonal. Deterministic across processes.
* Chat/generate replies are deterministic (:func:`fake_reply`): they cite every ``[n]``
  source marker found in the system/user messages and echo the start of the last user
  message, streamed word by word as NDJSON.
* Every request body is recorded per endpoint in :class:`FakeOllamaState`, and faults
  (HTTP errors, garbage, wrong dimensions, hangs, latency, gated or broken streams,
  missing models) are switched on that object, or over HTTP with ``POST /_fake/config``
  for out-of-process tests.

Entry points: :func:`make_app` (for pytest-aiohttp's ``aiohttp_server``),
:class:`FakeOllama` / :func:`running_fake_ollama` (own server, can go down and up on the
same port), and ``python -m tests.fakes.fake_ollama`` (see :func:`main`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import math
import os
import re
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

OLLAMA_VERSION = "0.6.8"
DEFAULT_DIMS = 256
TASK_PREFIXES = (
    "search_document:",
    "search_query:",
    "search_result:",
    "classification:",
    "clustering:",
)
# Small on purpose: enough to keep "the", "of", "how" from dominating short texts.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her
    his how i if in into is it its me my no not of on or our she so than that the their them
    then there these they this those to was we were what when where which who why will with
    would you your about also just only very over under up down out more most some any all
    each other such own same too should""".split()
)
_WORD_RE = re.compile(r"\w+")
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_MARKER_RE = re.compile(r"\[(\d{1,3})\]")
_SOURCE_LINE_RE = re.compile(r"^\s*\[(\d{1,3})\]\s*(.+?)\s*$", re.MULTILINE)
_PIECE_RE = re.compile(r"\S+\s*|\s+")
# Weights of the two signals in a vector: words dominate, trigrams only nudge spelling
# variants ("hydrate"/"hydration") together.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.2
_BUCKETS_PER_WORD = 2


# --------------------------------------------------------------------------- embeddings


def strip_task_prefix(text: str) -> str:
    """``text`` without a leading nomic-style task prefix such as ``search_query: ``."""
    stripped = text.lstrip()
    lowered = stripped.lower()
    for prefix in TASK_PREFIXES:
        if lowered.startswith(prefix):
            return stripped[len(prefix) :]
    return text


def stem(word: str) -> str:
    """Crude suffix stripping: ``-ing``, ``-ed``, ``-es`` (after s/x/z/ch/sh), ``-s``.

    A suffix is removed only when at least three characters remain.
    """
    if word.endswith("ing") and len(word) >= 6:
        return word[:-3]
    if word.endswith("ed") and len(word) >= 5:
        return word[:-2]
    if word.endswith("es") and len(word) >= 5 and (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) >= 4:
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """Lower-cased, prefix-stripped, stopword-free, stemmed words of ``text`` (unicode aware)."""
    words = _WORD_RE.findall(strip_task_prefix(text).lower())
    return [stem(w) for w in words if w not in STOPWORDS]


def _feature_hash(feature: str, salt: str) -> int:
    digest = hashlib.blake2b(f"{salt}\x00{feature}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@functools.lru_cache(maxsize=200_000)
def _word_features(word: str, dims: int, salt: str) -> tuple[tuple[int, float], ...]:
    """The sparse (index, value) contribution of one stemmed word: itself plus its trigrams."""
    acc: dict[int, float] = defaultdict(float)

    def add(feature: str, weight: float, buckets: int) -> None:
        h = _feature_hash(feature, salt)
        for i in range(buckets):
            sign = 1.0 if (h >> (60 + i)) & 1 else -1.0
            acc[((h >> (20 * i)) & 0xFFFFF) % dims] += sign * weight

    add("w:" + word, _WORD_WEIGHT, _BUCKETS_PER_WORD)
    padded = f"#{word}#"
    if len(padded) > 4:
        for i in range(len(padded) - 2):
            add("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT, 1)
    return tuple(acc.items())


def fake_embedding(text: str, dims: int = DEFAULT_DIMS, *, salt: str = "") -> list[float]:
    """A deterministic unit vector of length ``dims`` for ``text``.

    Signed feature hashing (blake2b, stable across processes) of the content words
    (:func:`content_words`), each into two buckets, plus low-weight character trigrams of
    each word. Task prefixes are ignored, so ``"search_query: bread"`` equals ``"bread"``.
    A text without content words gives the fixed vector ``[1, 0, 0, ...]``. ``salt``
    gives another, unrelated vector space (a different model).
    """
    if dims < 1:
        raise ValueError("dims must be >= 1")
    vec = [0.0] * dims
    for word, n in Counter(content_words(text)).items():
        for index, value in _word_features(word, dims, salt):
            vec[index] += n * value
    norm = math.sqrt(math.fsum(x * x for x in vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two equal-length vectors (0.0 if either is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def count_tokens(text: str) -> int:
    """The fake tokenizer: one token per word and per punctuation character."""
    return len(_TOKEN_RE.findall(text))


def _truncate_tokens(text: str, limit: int) -> str:
    matches = list(_TOKEN_RE.finditer(text))
    if len(matches) <= limit:
        return text
    return text[: matches[limit - 1].end()] if limit > 0 else ""


# --------------------------------------------------------------------------- chat replies


def parse_sources(text: str) -> dict[int, str]:
    """``{n: rest of line}`` for every line of ``text`` that starts with a ``[n]`` marker."""
    return {int(n): title for n, title in _SOURCE_LINE_RE.findall(text)}


def fake_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    """The fake model's deterministic answer to a chat.

    ``"Based on your notes [1] [3]: <first 12 words of the last user message>..."`` where
    the markers are every distinct ``[n]`` found in system/user messages, in numeric
    order; without markers it starts ``"I found nothing in your notes: "``. ``...`` is
    appended only when the user message had more than 12 words.
    """
    prompt = "\n".join(_content(m) for m in messages if m.get("role") in ("system", "user"))
    markers = sorted({int(n) for n in _MARKER_RE.findall(prompt)})
    last_user = next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")
    words = last_user.split()
    echo = " ".join(words[:12]) + ("..." if len(words) > 12 else "")
    if markers:
        return f"Based on your notes {' '.join(f'[{n}]' for n in markers)}: {echo}"
    return f"I found nothing in your notes: {echo}"


def split_pieces(text: str) -> list[str]:
    """Stream pieces of ``text``: one word plus its trailing whitespace each; they join back to ``text``."""
    return _PIECE_RE.findall(text)


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


# --------------------------------------------------------------------------- models


_FAMILIES = {
    # name prefix -> (architecture, parameter size, quantization, hidden size, context)
    "nomic-embed-text": ("nomic-bert", "137M", "F16", 768, 2048),
    "all-minilm": ("bert", "23M", "F16", 384, 512),
    "mxbai-embed-large": ("bert", "334M", "F16", 1024, 512),
    "llama3.2": ("llama", "3.2B", "Q4_K_M", 3072, 131072),
    "qwen2.5": ("qwen2", "7.6B", "Q4_K_M", 3584, 32768),
}


def full_name(name: str) -> str:
    """Ollama's canonical name: ``"llama3.2"`` -> ``"llama3.2:latest"``."""
    name = name.strip()
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


@dataclass
class FakeModel:
    """One installed model. ``kind`` is ``"embedding"`` or ``"chat"``.

    ``dims`` is the embedding length an embedding model returns (and what ``/api/show``
    reports); ``context_length`` is in fake tokens (:func:`count_tokens`); ``salt`` picks
    another vector space (see :func:`fake_embedding`); ``system`` is its Modelfile's
    ``SYSTEM`` ("" for none), which ``/api/show`` reports as Ollama does.
    """

    name: str
    kind: str = "embedding"
    dims: int = DEFAULT_DIMS
    context_length: int | None = None
    family: str | None = None
    salt: str = ""
    system: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("embedding", "chat"):
            raise ValueError(f"kind must be 'embedding' or 'chat', not {self.kind!r}")
        arch, _, _, hidden, ctx = self._family_row()
        if self.family is None:
            self.family = arch
        if self.context_length is None:
            self.context_length = ctx
        if self.kind == "chat" and self.dims == DEFAULT_DIMS:
            self.dims = hidden

    def _family_row(self) -> tuple[str, str, str, int, int]:
        base = self.name.split(":", 1)[0].rsplit("/", 1)[-1]
        if base in _FAMILIES:
            return _FAMILIES[base]
        if self.kind == "embedding":
            return ("bert", "100M", "F16", self.dims, 512)
        return ("llama", "1B", "Q4_K_M", 2048, 8192)

    @property
    def tag_name(self) -> str:
        return full_name(self.name)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.tag_name.encode()).hexdigest()

    @property
    def capabilities(self) -> list[str]:
        return ["embedding"] if self.kind == "embedding" else ["completion"]

    def details(self) -> dict[str, Any]:
        _, size, quant, _, _ = self._family_row()
        return {
            "parent_model": "",
            "format": "gguf",
            "family": self.family,
            "families": [self.family],
            "parameter_size": size,
            "quantization_level": quant,
        }

    def tag_entry(self) -> dict[str, Any]:
        return {
            "name": self.tag_name,
            "model": self.tag_name,
            "modified_at": "2025-01-01T12:00:00.000000000Z",
            "size": 100_000_000 + int(self.digest[:6], 16),
            "digest": self.digest,
            "details": self.details(),
        }

    def show(self) -> dict[str, Any]:
        arch = self.family
        hidden = self.dims if self.kind == "embedding" else self._family_row()[3]
        return {
            "license": "fake license",
            "modelfile": f"# Modelfile generated by fake ollama\nFROM {self.tag_name}\n",
            "parameters": f"num_ctx {self.context_length}",
            "template": "{{ .Prompt }}",
            "details": self.details(),
            "model_info": {
                "general.architecture": arch,
                "general.parameter_count": 100_000_000,
                f"{arch}.embedding_length": hidden,
                f"{arch}.context_length": self.context_length,
            },
            "capabilities": self.capabilities,
            "modified_at": "2025-01-01T12:00:00.000000000Z",
            **({"system": self.system} if self.system else {}),
        }


def default_models(dims: int = DEFAULT_DIMS) -> list[FakeModel]:
    """nomic-embed-text (``dims``), all-minilm (384), llama3.2 and qwen2.5:7b."""
    return [
        FakeModel("nomic-embed-text", "embedding", dims),
        FakeModel("all-minilm", "embedding", 384),
        FakeModel("llama3.2", "chat"),
        FakeModel("qwen2.5:7b", "chat"),
    ]


def guess_kind(name: str) -> str:
    """``"embedding"`` for names that look like embedding models (embed, minilm, bge, e5), else ``"chat"``."""
    base = name.lower().rsplit("/", 1)[-1]
    return "embedding" if re.search(r"embed|minilm|bge|(^|-)e5", base) else "chat"


def _as_model(value: FakeModel | Mapping[str, Any] | str) -> FakeModel:
    """A FakeModel from itself, a name, or a dict of FakeModel fields (kind guessed from the name if absent)."""
    if isinstance(value, FakeModel):
        return value
    if isinstance(value, str):
        value = {"name": value}
    return FakeModel(**{"kind": guess_kind(value["name"]), **value})


# --------------------------------------------------------------------------- state


@dataclass(repr=False, eq=False)
class FakeOllamaState:
    """Everything a test can set or read. Mutate fields at any time; they apply to the next request.

    Faults apply to ``/api/*`` paths in ``fault_paths`` (``None``: all of them), checked in
    this order after the body is recorded: ``hang``, ``fail_status``, ``garbage``; then the
    model is looked up; then the delays; ``wrong_dims``/``chat_*_midway`` shape the answer.
    """

    models: list[FakeModel] = field(default_factory=default_models)
    # HTTP status for an injected failure (body {"error": fail_message}); None = off.
    fail_status: int | None = None
    fail_message: str = "fake ollama: injected failure"
    # How many more requests fail_status applies to; None = until cleared.
    fail_count: int | None = None
    fault_paths: set[str] | None = None
    # Requests on the faulted paths served normally before the faults below apply.
    faults_after: int = 0
    # 200 with a body (or NDJSON line) that is not JSON.
    garbage: bool = False
    # Embedding endpoints answer vectors of this length instead of the model's.
    wrong_dims: int | None = None
    # Requests wait on hang_release (or shutdown, or hang_max seconds) before any byte is sent.
    hang: bool = False
    hang_max: float = 30.0
    hang_release: asyncio.Event = field(default_factory=asyncio.Event)
    # Simulated compute: per request, per embedded text, per streamed piece (seconds).
    delay_per_request: float = 0.0
    delay_per_text: float = 0.0
    delay_per_piece: float = 0.0
    # Most requests served at once (like OLLAMA_NUM_PARALLEL); None = unlimited.
    parallel: int | None = None
    # Streams wait on this event after their first piece (None = no gate).
    stream_gate: asyncio.Event | None = None
    # After this many pieces (all of them, if fewer: instead of the last frame), send an
    # {"error": ...} line and end the stream.
    chat_error_midway: int | None = None
    chat_error_message: str = "an error was encountered while running the model: fake failure"
    # After this many pieces (all of them, if fewer), drop the connection without
    # finishing the chunked body.
    chat_abort_midway: int | None = None
    # This many of a streamed answer's last pieces come in its final (done) frame, as
    # Ollama's tool-call parser sends text it held back because it looked like a call.
    chat_held_pieces: int = 0
    # Computes the embeddings of a list of texts instead of fake_embedding (the benchmarks'
    # hash or sentence-transformers vectors: lists or a numpy array), in a worker thread.
    vectors: Callable[[list[str]], Any] | None = None
    # Fixed reply text, or a function of the messages; None = fake_reply.
    chat_reply: str | Callable[[list[dict[str, Any]]], str] | None = None
    # Tool calls ({"name", "arguments"}) answering a chat that offers tools, until a tool
    # result comes back; the reply then quotes the results. None = answer with text.
    chat_tool_calls: list[dict[str, Any]] | None = None
    version: str = OLLAMA_VERSION

    # Records (read these in tests).
    requests: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    headers: dict[str, list[dict[str, str]]] = field(default_factory=lambda: defaultdict(list))
    embed_texts_total: int = 0
    embed_batches: list[int] = field(default_factory=list)
    # Set when a request starts hanging / when any stream has sent its first piece.
    hanging: asyncio.Event = field(default_factory=asyncio.Event)
    first_piece_sent: asyncio.Event = field(default_factory=asyncio.Event)
    # Clients that went away while a request hung, waited on the gate or was streaming.
    client_disconnects: int = 0
    client_gone: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.models = [_as_model(m) for m in self.models]
        self._initial_models = [replace(m) for m in self.models]
        self._shutdown = asyncio.Event()
        self._changed: asyncio.Condition | None = None
        self._sem: tuple[int, asyncio.Semaphore] | None = None

    def __repr__(self) -> str:
        counts = {p: len(b) for p, b in self.requests.items()}
        return f"<FakeOllamaState models={[m.tag_name for m in self.models]} requests={counts}>"

    # -- models

    def model(self, name: str) -> FakeModel | None:
        """The installed model called ``name`` (``:latest`` implied), or None."""
        wanted = full_name(name)
        return next((m for m in self.models if m.tag_name == wanted), None)

    def remove_model(self, name: str) -> None:
        """Uninstall ``name`` (no error if absent)."""
        wanted = full_name(name)
        self.models[:] = [m for m in self.models if m.tag_name != wanted]

    def add_model(self, name: str, kind: str | None = None, dims: int = DEFAULT_DIMS, **kw: Any) -> FakeModel:
        """Install (or replace) a model and return it; ``kind`` defaults to :func:`guess_kind`."""
        self.remove_model(name)
        model = FakeModel(name, kind or guess_kind(name), dims, **kw)
        self.models.append(model)
        return model

    # -- records

    def count(self, path: str) -> int:
        """How many requests ``path`` (e.g. ``"/api/embed"``) has received."""
        return len(self.requests.get(path, ()))

    @property
    def embedded_texts(self) -> list[str]:
        """Every text received by /api/embed and /api/embeddings, in arrival order."""
        texts: list[str] = []
        for path, bodies in self.requests.items():
            if path in ("/api/embed", "/api/embeddings"):
                for body in bodies:
                    texts.extend(_embed_inputs(body, path) or [])
        return texts

    @property
    def chats(self) -> list[list[dict[str, Any]]]:
        """The ``messages`` of every /api/chat request, in arrival order."""
        return [list(b.get("messages") or []) for b in self.requests.get("/api/chat", ())]

    def clear_records(self) -> None:
        """Forget recorded requests and counters (configuration is kept)."""
        self.requests.clear()
        self.headers.clear()
        self.embed_texts_total = 0
        self.embed_batches.clear()
        self.hanging.clear()
        self.first_piece_sent.clear()
        self.client_disconnects = 0
        self.client_gone.clear()

    async def wait_for(self, path: str, count: int = 1) -> None:
        """Return once ``path`` has received at least ``count`` requests (wrap in a timeout)."""
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.count(path) >= count)

    def release(self) -> None:
        """Let hanging requests and gated streams go on."""
        self.hang_release.set()
        if self.stream_gate is not None:
            self.stream_gate.set()

    # -- configuration as JSON (the control API)

    CONFIG_FIELDS = (
        "fail_status", "fail_message", "fail_count", "fault_paths", "faults_after", "garbage", "wrong_dims",
        "hang", "hang_max", "delay_per_request", "delay_per_text", "delay_per_piece", "parallel",
        "chat_error_midway", "chat_error_message", "chat_abort_midway", "chat_held_pieces", "chat_reply",
        "chat_tool_calls", "version",
    )  # fmt: skip

    def configure(self, changes: Mapping[str, Any]) -> None:
        """Apply JSON-style changes; see :data:`CONFIG_FIELDS` plus ``models``, ``stream_gate``.

        ``hang: true`` installs a fresh, unset ``hang_release``; ``stream_gate: true``
        installs a closed gate, ``false`` opens and removes it; ``models`` replaces the
        list (each a name or a FakeModel field dict). Raises ValueError on unknown keys.
        """
        unknown = set(changes) - set(self.CONFIG_FIELDS) - {"models", "stream_gate"}
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        for key, value in changes.items():
            if key == "models":
                self.models[:] = [_as_model(m) for m in value]
            elif key == "stream_gate":
                if value:
                    self.stream_gate = asyncio.Event()
                else:
                    if self.stream_gate is not None:
                        self.stream_gate.set()
                    self.stream_gate = None
            elif key == "fault_paths":
                self.fault_paths = None if value is None else set(value)
            else:
                if key == "hang" and value and not self.hang:
                    self.hang_release = asyncio.Event()
                    self.hanging.clear()
                setattr(self, key, value)

    def config(self) -> dict[str, Any]:
        """The current configuration as JSON-able data."""
        out: dict[str, Any] = {k: getattr(self, k) for k in self.CONFIG_FIELDS}
        out["fault_paths"] = None if self.fault_paths is None else sorted(self.fault_paths)
        if callable(out["chat_reply"]):
            out["chat_reply"] = "<function>"
        out["stream_gate"] = None if self.stream_gate is None else self.stream_gate.is_set()
        out["models"] = [asdict(m) for m in self.models]
        return out

    def snapshot(self) -> dict[str, Any]:
        """Configuration plus records, as served by ``GET /_fake/state``."""
        return {
            "config": self.config(),
            "counts": {p: len(b) for p, b in self.requests.items()},
            "embed_texts_total": self.embed_texts_total,
            "embed_batches": list(self.embed_batches),
            "requests": {p: list(b) for p, b in self.requests.items()},
        }

    # -- internals used by the handlers

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def _record(self, path: str, body: dict[str, Any], headers: Mapping[str, str]) -> None:
        self.requests[path].append(body)
        self.headers[path].append(dict(headers))
        if path in ("/api/embed", "/api/embeddings"):
            texts = _embed_inputs(body, path)
            if texts is not None:
                self.embed_texts_total += len(texts)
                self.embed_batches.append(len(texts))
        cond = self._condition()
        async with cond:
            cond.notify_all()

    def _client_left(self) -> None:
        self.client_disconnects += 1
        self.client_gone.set()

    def _semaphore(self) -> asyncio.Semaphore | None:
        if not self.parallel:
            return None
        if self._sem is None or self._sem[0] != self.parallel:
            self._sem = (self.parallel, asyncio.Semaphore(self.parallel))
        return self._sem[1]


def make_state(**options: Any) -> FakeOllamaState:
    """A state from keyword options: any FakeOllamaState field, plus ``dims`` (of nomic-embed-text)."""
    dims = options.pop("dims", None)
    if dims is not None and "models" not in options:
        options["models"] = default_models(dims)
    return FakeOllamaState(**options)


def _embed_inputs(body: Mapping[str, Any], path: str) -> list[str] | None:
    """The texts of an embed request body, or None when the input is malformed."""
    value = body.get("prompt") if path == "/api/embeddings" else body.get("input")
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if (value or path == "/api/embeddings") else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


# --------------------------------------------------------------------------- HTTP


STATE_KEY = web.AppKey("fake_ollama_state", FakeOllamaState)


class _Aborted(Exception):
    """The server is shutting down while a request waits."""


class _ClientGone(Exception):
    """The client closed its connection while its request waited or streamed."""


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ns(seconds: float) -> int:
    return max(1, int(seconds * 1e9))


def _disconnected(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _watch_disconnect(request: web.Request) -> None:
    # aiohttp (without handler_cancellation) does not tell a handler that its client left;
    # polling the transport is the only portable way to notice while we wait.
    while not _disconnected(request):
        await asyncio.sleep(0.01)


async def _wait_event(
    state: FakeOllamaState, event: asyncio.Event, limit: float | None, request: web.Request | None = None
) -> None:
    """Wait for ``event`` (or ``limit`` seconds).

    Raises _Aborted if the server shuts down first, _ClientGone if ``request``'s client leaves.
    """
    waiters = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(state._shutdown.wait())]
    if request is not None:
        waiters.append(asyncio.ensure_future(_watch_disconnect(request)))
    try:
        await asyncio.wait(waiters, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waiters:
            w.cancel()
    if state._shutdown.is_set():
        raise _Aborted
    if request is not None and _disconnected(request) and not event.is_set():
        raise _ClientGone


async def _sleep(state: FakeOllamaState, seconds: float) -> None:
    if seconds > 0:
        await _wait_event(state, state._shutdown, seconds)


def _faulted(state: FakeOllamaState, path: str) -> bool:
    return state.fault_paths is None or path in state.fault_paths


async def _read_json(request: web.Request) -> dict[str, Any] | web.Response:
    raw = await request.read()
    if not raw.strip():
        return _error(400, "missing request body")
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _error(400, f"invalid JSON: {exc}")
    if not isinstance(body, dict):
        return _error(400, "invalid request: body must be a JSON object")
    return body


def _api(handler: Callable[..., Any]) -> Callable[[web.Request], Any]:
    """Wrap an /api handler: parse and record the body, then apply the pre-answer faults."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        state = request.app[STATE_KEY]
        path = request.path
        body: dict[str, Any] = {}
        if request.method == "POST":
            parsed = await _read_json(request)
            if isinstance(parsed, web.Response):
                return parsed
            body = parsed
        await state._record(path, body, request.headers)
        try:
            if _faulted(state, path) and state.faults_after > 0:
                state.faults_after -= 1
            elif _faulted(state, path):
                if state.hang:
                    state.hanging.set()
                    await _wait_event(state, state.hang_release, state.hang_max, request)
                if state.fail_status is not None:
                    status, message = state.fail_status, state.fail_message
                    if state.fail_count is not None:
                        state.fail_count -= 1
                        if state.fail_count <= 0:
                            state.fail_status = state.fail_count = None
                    return _error(status, message)
                if state.garbage:
                    ctype = "application/x-ndjson" if _streams(path, body) else "application/json"
                    return web.Response(body=b'{"model": "garbage", "embeddings": [[0.1, 0.2\n<html>oops',
                                        content_type=ctype)  # fmt: skip
            sem = state._semaphore()
            async with sem if sem is not None else contextlib.nullcontext():
                return await handler(request, state, body)
        except _Aborted:
            if request.transport is not None:
                request.transport.abort()
            raise web.HTTPServiceUnavailable() from None
        except (_ClientGone, ConnectionResetError):
            state._client_left()
            raise web.HTTPServiceUnavailable() from None
        except asyncio.CancelledError:
            # With handler_cancellation (pytest-aiohttp's TestServer, FakeOllama) aiohttp
            # cancels the handler when its client disconnects.
            if not state._shutdown.is_set():
                state._client_left()
            raise

    return wrapper


def _streams(path: str, body: Mapping[str, Any]) -> bool:
    return path in ("/api/chat", "/api/generate") and body.get("stream", True) is not False


def _lookup(state: FakeOllamaState, body: Mapping[str, Any], key: str = "model") -> FakeModel | web.Response:
    name = body.get(key)
    if not isinstance(name, str) or not name.strip():
        return _error(400, "model is required")
    model = state.model(name)
    if model is None:
        return _error(404, f"model {json.dumps(name)} not found, try pulling it first")
    return model


async def root(request: web.Request) -> web.Response:
    return web.Response(text="Ollama is running")


@_api
async def version(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    return web.json_response({"version": state.version})


@_api
async def tags(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    return web.json_response({"models": [m.tag_entry() for m in state.models]})


@_api
async def ps(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    used = {full_name(b["model"]) for bs in state.requests.values() for b in bs if isinstance(b.get("model"), str)}
    loaded = [
        {**m.tag_entry(), "expires_at": "2099-01-01T00:00:00Z", "size_vram": 0, "context_length": m.context_length}
        for m in state.models
        if m.tag_name in used
    ]
    return web.json_response({"models": loaded})


@_api
async def show(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    name = body.get("model") or body.get("name")
    if not isinstance(name, str) or not name.strip():
        return _error(400, "model is required")
    model = state.model(name)
    if model is None:
        return _error(404, f"model '{name}' not found")
    return web.json_response(model.show())


async def _embed_vectors(
    state: FakeOllamaState, model: FakeModel, texts: list[str], body: Mapping[str, Any]
) -> tuple[list[list[float]], int] | web.Response:
    options = body.get("options") if isinstance(body.get("options"), dict) else {}
    limit = int(options.get("num_ctx") or model.context_length or 2048)
    prepared, tokens = [], 0
    for text in texts:
        n = count_tokens(text)
        if n > limit:
            if body.get("truncate") is False:
                return _error(400, "the input length exceeds the context length")
            text, n = _truncate_tokens(text, limit), limit
        prepared.append(text)
        tokens += n
    await _sleep(state, state.delay_per_request + state.delay_per_text * len(texts))
    if state.vectors is not None and not state.wrong_dims:
        computed = await asyncio.to_thread(state.vectors, prepared) if prepared else []
        return (computed.tolist() if hasattr(computed, "tolist") else [list(v) for v in computed]), tokens
    dims = state.wrong_dims or model.dims
    return [fake_embedding(t, dims, salt=model.salt) for t in prepared], tokens


@_api
async def embed(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    started = time.monotonic()
    model = _lookup(state, body)
    if isinstance(model, web.Response):
        return model
    if model.kind != "embedding":
        return _error(400, f"{json.dumps(body['model'])} does not support embeddings")
    texts = _embed_inputs(body, "/api/embed")
    if texts is None:
        return _error(400, "invalid input type")
    result = await _embed_vectors(state, model, texts, body)
    if isinstance(result, web.Response):
        return result
    vectors, tokens = result
    return web.json_response(
        {
            "model": body["model"],
            "embeddings": vectors,
            "total_duration": _ns(time.monotonic() - started),
            "load_duration": 1_000_000,
            "prompt_eval_count": tokens,
        }
    )


@_api
async def embeddings(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.Response:
    model = _lookup(state, body)
    if isinstance(model, web.Response):
        return model
    if model.kind != "embedding":
        return _error(400, f"{json.dumps(body['model'])} does not support embeddings")
    prompt = body.get("prompt") or ""
    if not isinstance(prompt, str):
        return _error(400, "invalid input type")
    if not prompt:
        return web.json_response({"embedding": []})
    result = await _embed_vectors(state, model, [prompt], body)
    if isinstance(result, web.Response):
        return result
    return web.json_response({"embedding": result[0][0]})


def _tool_calls(state: FakeOllamaState, body: Mapping[str, Any], messages: list[dict[str, Any]]) -> list | None:
    """The tool calls to answer with: ``chat_tool_calls`` when tools are offered and
    the conversation does not end with a tool result, as Ollama frames them."""
    if not (state.chat_tool_calls and body.get("tools")) or messages[-1].get("role") == "tool":
        return None
    return [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in state.chat_tool_calls]


def _reply_text(state: FakeOllamaState, messages: list[dict[str, Any]], body: Mapping[str, Any]) -> str:
    reply = state.chat_reply
    if state.chat_tool_calls and messages[-1].get("role") == "tool":
        results = [_content(m) for m in messages if m.get("role") == "tool"]
        return "From the tools: " + " | ".join(r[:300] for r in results)
    text = reply(messages) if callable(reply) else reply if reply is not None else fake_reply(messages)
    if body.get("format"):
        text = json.dumps({"answer": text})
    return text


async def _complete(
    request: web.Request, state: FakeOllamaState, body: dict[str, Any], messages: list[dict[str, Any]], kind: str
) -> web.StreamResponse:
    """Answer /api/chat (kind "chat") or /api/generate (kind "generate")."""
    started = time.monotonic()
    model = _lookup(state, body)
    if isinstance(model, web.Response):
        return model
    if model.kind != "chat":
        return _error(400, f"{json.dumps(body['model'])} does not support {kind}")

    calls = _tool_calls(state, body, messages) if kind == "chat" and messages else None

    def frame(piece: str, done: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"model": body["model"], "created_at": _now()}
        if kind == "chat":
            out["message"] = {"role": "assistant", "content": piece}
            if calls and (not done or body.get("stream", True) is False):
                out["message"]["tool_calls"] = calls
        else:
            out["response"] = piece
        out["done"] = done
        return out

    if not messages:  # Ollama answers an empty prompt by just loading the model.
        return web.json_response({**frame("", True), "done_reason": "load"})

    pieces = [""] if calls else split_pieces(_reply_text(state, messages, body))
    done_reason = "stop"
    options = body.get("options") if isinstance(body.get("options"), dict) else {}
    limit = options.get("num_predict")
    if isinstance(limit, int) and 0 <= limit < len(pieces):
        pieces, done_reason = pieces[:limit], "length"
    prompt_tokens = sum(count_tokens(_content(m)) for m in messages)
    await _sleep(state, state.delay_per_request)

    def final(content: str) -> dict[str, Any]:
        total = _ns(time.monotonic() - started)
        return {
            **frame(content, True),
            "done_reason": done_reason,
            "total_duration": total,
            "load_duration": 1_000_000,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": 1_000_000,
            "eval_count": len(pieces),
            "eval_duration": max(1, total // 2),
        }

    if body.get("stream", True) is False:
        await _sleep(state, state.delay_per_piece * len(pieces))
        return web.json_response(final("".join(pieces)))

    response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    await response.prepare(request)

    async def send(obj: dict[str, Any]) -> None:
        await response.write(json.dumps(obj).encode() + b"\n")

    held = len(pieces) - min(max(state.chat_held_pieces, 0), len(pieces))
    try:
        for i, piece in enumerate([*pieces[:held], None]):
            # A fault midway comes at the latest instead of the last frame.
            if state.chat_abort_midway is not None and i >= min(state.chat_abort_midway, held):
                if request.transport is not None:
                    request.transport.abort()
                return response
            if state.chat_error_midway is not None and i >= min(state.chat_error_midway, held):
                await send({"error": state.chat_error_message})
                await response.write_eof()
                return response
            if piece is None:
                break
            await _sleep(state, state.delay_per_piece)
            await send(frame(piece, False))
            if i == 0:
                state.first_piece_sent.set()
                if state.stream_gate is not None:
                    await _wait_event(state, state.stream_gate, None, request)
        await send(final("".join(pieces[held:])))
        await response.write_eof()
    except (_ClientGone, ConnectionResetError):
        state._client_left()
    except _Aborted:
        if request.transport is not None:
            request.transport.abort()
    return response


@_api
async def chat(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.StreamResponse:
    messages = body.get("messages") or []
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return _error(400, "invalid message format")
    return await _complete(request, state, body, messages, "chat")


@_api
async def generate(request: web.Request, state: FakeOllamaState, body: dict[str, Any]) -> web.StreamResponse:
    messages = []
    if isinstance(body.get("system"), str) and body["system"]:
        messages.append({"role": "system", "content": body["system"]})
    if isinstance(body.get("prompt"), str) and body["prompt"]:
        messages.append({"role": "user", "content": body["prompt"]})
    if len(messages) == 1 and messages[0]["role"] == "system":
        messages = []
    return await _complete(request, state, body, messages, "generate")


async def control_config(request: web.Request) -> web.Response:
    state = request.app[STATE_KEY]
    body = await _read_json(request)
    if isinstance(body, web.Response):
        return body
    try:
        state.configure(body)
    except (ValueError, TypeError) as exc:
        return _error(400, str(exc))
    return web.json_response(state.config())


async def control_state(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE_KEY].snapshot())


async def control_stats(request: web.Request) -> web.Response:
    """Request counts and embedding totals, without the recorded bodies (for benchmarks)."""
    state = request.app[STATE_KEY]
    return web.json_response(
        {
            "counts": {p: len(b) for p, b in state.requests.items()},
            "embed_texts_total": state.embed_texts_total,
            "embed_batches": list(state.embed_batches),
        }
    )


async def control_release(request: web.Request) -> web.Response:
    request.app[STATE_KEY].release()
    return web.json_response({"ok": True})


async def control_reset(request: web.Request) -> web.Response:
    """Restore the default faults and the models the state started with; clear the records."""
    state = request.app[STATE_KEY]
    state.release()
    state.models[:] = [replace(m) for m in state._initial_models]
    defaults = FakeOllamaState(models=[])
    for f in fields(FakeOllamaState):
        if f.name in state.CONFIG_FIELDS:
            setattr(state, f.name, getattr(defaults, f.name))
    state.stream_gate = None
    state.hang_release = asyncio.Event()
    state.clear_records()
    return web.json_response(state.config())


def make_app(state: FakeOllamaState | None = None, **options: Any) -> web.Application:
    """The fake's aiohttp application, serving ``state`` (default: ``make_state(**options)``).

    Routes: ``GET|HEAD /``, ``GET /api/version``, ``GET /api/tags``, ``GET /api/ps``,
    ``POST /api/show|embed|embeddings|chat|generate``; control: ``POST /_fake/config``,
    ``GET /_fake/state``, ``GET /_fake/stats``, ``POST /_fake/release``,
    ``POST /_fake/reset``. Shutting the app down aborts requests that hang or wait on a
    gate, so cleanup never blocks.
    """
    if state is None:
        state = make_state(**options)
    elif options:
        raise TypeError("pass either a state or options, not both")
    app = web.Application(client_max_size=256 * 1024 * 1024)
    app[STATE_KEY] = state

    async def on_startup(app: web.Application) -> None:
        app[STATE_KEY]._shutdown.clear()

    async def on_shutdown(app: web.Application) -> None:
        app[STATE_KEY]._shutdown.set()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.router.add_get("/", root)
    app.router.add_get("/api/version", version)
    app.router.add_get("/api/tags", tags)
    app.router.add_get("/api/ps", ps)
    app.router.add_post("/api/show", show)
    app.router.add_post("/api/embed", embed)
    app.router.add_post("/api/embeddings", embeddings)
    app.router.add_post("/api/chat", chat)
    app.router.add_post("/api/generate", generate)
    app.router.add_post("/_fake/config", control_config)
    app.router.add_get("/_fake/state", control_state)
    app.router.add_get("/_fake/stats", control_stats)
    app.router.add_post("/_fake/release", control_release)
    app.router.add_post("/_fake/reset", control_reset)
    return app


# --------------------------------------------------------------------------- own server


class FakeOllama:
    """The fake on its own aiohttp runner; ``stop()``/``start()`` simulate Ollama going down and up.

    The first ``start()`` binds ``port`` (0: a free one); later starts rebind the same port,
    so ``url`` stays valid. While stopped, connections are refused.
    """

    def __init__(self, state: FakeOllamaState | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 access_log: bool = False, **options: Any) -> None:  # fmt: skip
        self.state = state if state is not None else make_state(**options)
        self.host = host
        self.port = port
        self._access_log = access_log
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (valid once started)."""
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        """Serve (again). Idempotent."""
        if self._runner is not None:
            return
        runner = web.AppRunner(
            make_app(self.state),
            handle_signals=False,
            handler_cancellation=True,
            shutdown_timeout=1.0,
            access_log=log if self._access_log else None,
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        server = site._server
        if self.port == 0 and server is not None and getattr(server, "sockets", None):
            self.port = server.sockets[0].getsockname()[1]
        self._runner = runner

    async def stop(self) -> None:
        """Stop listening and drop every connection, aborting waiting requests. Idempotent."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> FakeOllama:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


@contextlib.asynccontextmanager
async def running_fake_ollama(state: FakeOllamaState | None = None, **options: Any) -> AsyncIterator[FakeOllama]:
    """Start a :class:`FakeOllama` on 127.0.0.1 (free port unless ``port=``) and stop it after.

    ``options``: ``host``, ``port``, ``dims`` and any :class:`FakeOllamaState` field.
    """
    server_kw = {k: options.pop(k) for k in ("host", "port", "access_log") if k in options}
    fake = FakeOllama(state if state is not None else make_state(**options), **server_kw)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


# --------------------------------------------------------------------------- CLI


def _parse_embed_model(spec: str) -> FakeModel:
    name, _, dims = spec.partition("=")
    return FakeModel(name, "embedding", int(dims) if dims else DEFAULT_DIMS)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.fakes.fake_ollama", description="Run the fake Ollama server.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument("--dims", type=int, default=DEFAULT_DIMS, help="dimensions of nomic-embed-text")
    p.add_argument("--port-file", type=Path, help="write the bound port here (atomically) once listening")
    p.add_argument("--embed-model", action="append", default=[], metavar="NAME[=DIMS]",
                   help="install only these embedding models (repeatable)")  # fmt: skip
    p.add_argument("--chat-model", action="append", default=[], metavar="NAME",
                   help="install only these chat models (repeatable)")  # fmt: skip
    p.add_argument("--config", type=json.loads, default={}, metavar="JSON",
                   help='initial faults, as for POST /_fake/config, e.g. \'{"delay_per_text": 0.01}\'')  # fmt: skip
    p.add_argument("--access-log", action="store_true")
    return p


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Run until ``stop`` is set."""
    models = default_models(args.dims)
    if args.embed_model:
        models = [_parse_embed_model(s) for s in args.embed_model] + [m for m in models if m.kind == "chat"]
    if args.chat_model:
        models = [m for m in models if m.kind == "embedding"] + [FakeModel(n, "chat") for n in args.chat_model]
    state = FakeOllamaState(models=models)
    state.configure(args.config)
    async with running_fake_ollama(state, host=args.host, port=args.port, access_log=args.access_log) as fake:
        if args.port_file:
            tmp = args.port_file.with_name(args.port_file.name + ".tmp")
            tmp.write_text(f"{fake.port}\n")
            os.replace(tmp, args.port_file)
        print(fake.url, flush=True)
        log.info("fake ollama listening on %s", fake.url)
        await stop.wait()


def main(argv: Iterable[str] | None = None) -> int:
    """CLI entry: print the URL (``http://HOST:PORT``) on stdout, serve until SIGTERM/SIGINT, exit 0."""
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    logging.basicConfig(level=logging.INFO if args.access_log else logging.WARNING, stream=sys.stderr)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve(args, stop)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
