"""Org text sent by clients, cleaned of what the index never holds either.

Buffers (``/ask``), conversations (``/converse``) and any other org text a client sends
go through :func:`strip_private` before they reach retrieval or a prompt. It does not
judge privacy itself: it reads the text with the indexer's own reader
(:func:`arcology_oracle.notes.reader.read_org_bytes`, which asks
:class:`arcology_oracle.notes.privacy.Privacy`) and keeps exactly the lines of the headings
the reader keeps, so a line is cleaned away if and only if indexing the same text as a
file would leave it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .org_syntax import decode_org_bytes, split_lines
from .privacy import DEFAULT_PRIVATE_TAGS
from .reader import read_org_bytes


def strip_private(text: str, private_tags: Iterable[str] = DEFAULT_PRIVATE_TAGS) -> str:
    """``text`` without its private, crypt and excluded parts (whole subtrees; the whole
    text when its ``#+filetags`` or file-level ``ROAM_EXCLUDE`` exclude it, giving ``""``).

    The kept lines are returned as they are, joined with ``\\n`` (drawers, planning
    lines and keywords included: only privacy decides what goes)."""
    lines, kept = _kept_lines(text.encode("utf-8", errors="replace"), private_tags, None, "buffer.org")
    return "\n".join(line for line, keep in zip(lines, kept) if keep)


def private_lines(
    data: bytes, private_tags: Iterable[str] = DEFAULT_PRIVATE_TAGS, *, root: Path | None = None,
    path: str = "buffer.org",
) -> tuple[bool, ...]:
    """For each line of the org file ``data``, whether it is in a part the index leaves
    out. ``root`` and ``path``: where the file is saved, for its setup files (see
    :func:`~.reader.read_org_bytes`)."""
    return tuple(not keep for keep in _kept_lines(data, private_tags, root, path)[1])


def _kept_lines(data: bytes, private_tags: Iterable[str], root: Path | None, path: str) -> tuple[list[str], list[bool]]:
    """The lines of ``data`` and, for each, whether the reader keeps it."""
    parsed = read_org_bytes(data, path, frozenset(private_tags), log_problems=False, root=root)
    lines = split_lines(decode_org_bytes(data))
    kept = [False] * len(lines)
    for heading in parsed.headings:
        kept[heading.start_line - 1 : heading.end_line] = [True] * (heading.end_line - heading.start_line + 1)
    return lines, kept
