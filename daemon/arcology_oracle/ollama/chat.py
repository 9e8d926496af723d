"""Chatting with the user's local model through Ollama's ``/api/chat``.

:class:`OllamaChat` is the only chat client of the core (rag, summaries, conversations).
Every failure leaves it as :class:`~arcology_oracle.errors.ServiceUnavailable` (or
:class:`~arcology_oracle.errors.ModelNotFound`) naming the host and the model, whether it
happens before the first token or midway through a stream (Ollama then sends an
``{"error": ...}`` line, or the connection breaks).

Streams are async generators. Closing one early (``aclose()``, ``break`` inside
``contextlib.aclosing``) or cancelling the task that iterates it (once or more:
:func:`~.client.cancelled_once`) closes the HTTP response at once, which is how Ollama
learns to stop generating.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from ..config import Settings
from ..errors import ServiceUnavailable
from .client import OllamaConnection, cancelled_once, close_unless_cancelled, translate_errors

Message = Mapping[str, Any]


class OllamaChat(OllamaConnection):
    """Chat with ``settings.chat_model`` (or a per-call ``model``) at ``settings.ollama_host``."""

    def __init__(self, settings: Settings, model: str | None = None):
        super().__init__(settings.ollama_host, timeout=settings.chat_timeout, connect_timeout=settings.connect_timeout)
        self.model = model or settings.chat_model

    async def stream_parts(
        self,
        messages: Sequence[Message],
        model: str | None = None,
        options: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Ollama's streamed chat parts as dicts (``message.content``, ``done``, and on the
        last part ``done_reason``, ``prompt_eval_count``, ``eval_count``...).

        ``extra`` goes to ``ollama.AsyncClient.chat`` as is (``keep_alive``, ``format``,
        ``think``...). Raises ServiceUnavailable/ModelNotFound, also midway.
        """
        model = model or self.model
        try:
            with translate_errors(self.host, model):
                stream = await self.client.chat(
                    model=model, messages=[dict(m) for m in messages], stream=True, options=dict(options or {}) or None, **extra
                )
                try:
                    # Each read in a task of its own: see cancelled_once.
                    while (part := await cancelled_once(anext(stream, None))) is not None:
                        yield part.model_dump(exclude_none=True)
                finally:
                    await close_unless_cancelled(stream.aclose)
        except ServiceUnavailable as exc:
            if repr(model) not in str(exc):
                # The connection messages name only the host; say which model was wanted.
                exc.args = (f"{exc} (chat model {model!r})",)
                exc.model = model
            raise

    async def stream_chat(
        self,
        messages: Sequence[Message],
        model: str | None = None,
        options: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> AsyncIterator[str]:
        """The answer's text pieces as the model produces them (empty pieces skipped)."""
        async with aclosing(self.stream_parts(messages, model, options, **extra)) as parts:
            async for part in parts:
                text = (part.get("message") or {}).get("content") or ""
                if text:
                    yield text

    async def chat(
        self,
        messages: Sequence[Message],
        model: str | None = None,
        options: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> str:
        """The whole answer (streamed underneath, so a long answer never hits a read timeout)."""
        pieces: list[str] = []
        async with aclosing(self.stream_chat(messages, model, options, **extra)) as stream:
            async for piece in stream:
                pieces.append(piece)
        return "".join(pieces)
