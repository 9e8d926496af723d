"""Prompts: the packaged templates (``prompts/default.toml``) overlaid with the user's
``prompts_file``, and the system and user messages of a grounded question.

Note and buffer text goes into a prompt delimited as data (``<note>``, ``<buffer>``);
:func:`escape_data` defuses anything in it that could close those delimiters.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ConfigError
from .sources import NoteContext

log = logging.getLogger(__name__)

DEFAULT_BUFFER_QUESTION = "What else have I written that relates to this?"

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_NOTE_TAG = re.compile(r"<(/?)(note|notes|buffer)\b", re.IGNORECASE)


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
