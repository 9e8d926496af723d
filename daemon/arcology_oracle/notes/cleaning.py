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
from .setup_files import Seen


def strip_private(
    text: str, private_tags: Iterable[str] = DEFAULT_PRIVATE_TAGS, *, root: Path | None = None,
    path: str | None = None,
) -> str:
    """``text`` without its private, crypt and excluded parts (whole subtrees; the whole
    text when its ``#+filetags``, its setup files' or its file-level ``ROAM_EXCLUDE``
    exclude it, giving ``""``).

    ``root`` (the notes directory) and ``path`` (the file the text is a state of, relative
    to it): where the setup files the text names are looked for, as the index looks for
    them beside the saved file; without ``path``, at the top of ``root`` (where a new
    note is made), and names that are absolute or start with ``~`` anywhere. Without
    ``root``, setup files are not read.

    The kept lines are returned as they are, joined with ``\\n`` (drawers, planning
    lines and keywords included: only privacy decides what goes)."""
    data = text.encode("utf-8", errors="replace")
    lines, kept, _ = _kept_lines(data, private_tags, root, path or "buffer.org")
    return "\n".join(line for line, keep in zip(lines, kept) if keep)


def private_lines(
    data: bytes, private_tags: Iterable[str] = DEFAULT_PRIVATE_TAGS, *, root: Path | None = None,
    path: str = "buffer.org",
) -> tuple[tuple[bool, ...], tuple[Seen, ...]]:
    """For each line of the org file ``data``, whether it is in a part the index leaves
    out; and the setup files read to decide it (:data:`~.setup_files.Seen` rows: when
    one of them changes, so may the answer). ``root`` and ``path``: where the file is
    saved, for its setup files (see :func:`~.reader.read_org_bytes`)."""
    _, kept, seen = _kept_lines(data, private_tags, root, path)
    return tuple(not keep for keep in kept), seen


def _kept_lines(
    data: bytes, private_tags: Iterable[str], root: Path | None, path: str
) -> tuple[list[str], list[bool], tuple[Seen, ...]]:
    """The lines of ``data``, for each whether the reader keeps it, and the setup files
    the reader read."""
    parsed = read_org_bytes(data, path, frozenset(private_tags), log_problems=False, root=root)
    lines = split_lines(decode_org_bytes(data))
    kept = [False] * len(lines)
    for heading in parsed.headings:
        kept[heading.start_line - 1 : heading.end_line] = [True] * (heading.end_line - heading.start_line + 1)
    return lines, kept, parsed.setup_files
