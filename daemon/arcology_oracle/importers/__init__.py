"""Chat logs into org: reading exports of conversations (a pure stage, beside notes/).

Each format's reader turns a file into :class:`.model.Conversation` objects, and
:mod:`.render` writes each as one org file in the dialogue format its docstring defines
(the format the index reads per turn). Only :mod:`.writing` touches the disk: the command
(``arcology-oracle import``, ``cli_import.py``) stages and writes the files with it.

Formats (:data:`FORMATS`): ``chatgpt`` and ``claude`` data exports
(:mod:`.chat_exports`), ``transcript``, ``vtt`` and ``srt`` (:mod:`.transcripts`),
``markdown`` (:mod:`.markdown`). For the four file formats FILE may be a directory: every
file in it with the format's extensions (:data:`EXTENSIONS`) is one conversation.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .chat_exports import read_chatgpt, read_claude
from .markdown import read_markdown
from .model import Conversation, MalformedExport, Message
from .transcripts import read_srt, read_transcript, read_vtt

__all__ = ["FORMATS", "Conversation", "MalformedExport", "Message", "read_export"]

FORMATS = ("chatgpt", "claude", "transcript", "vtt", "srt", "markdown")
# Where each format's files go by default, relative to the roam directory.
DEFAULT_DIRS = {
    "chatgpt": "imported/chatgpt", "claude": "imported/claude", "transcript": "imported/transcripts",
    "vtt": "imported/transcripts", "srt": "imported/transcripts", "markdown": "imported/markdown",
}  # fmt: skip
EXTENSIONS = {"transcript": (".txt", ".log"), "vtt": (".vtt",), "srt": (".srt",), "markdown": (".md", ".markdown")}


def read_export(
    fmt: str,
    path: Path,
    *,
    me: str = "Me",
    date: datetime.datetime | None = None,
    speakers: Iterable[str] = (),
    on_progress: Callable[[int, int], None] | None = None,
) -> Iterator[Conversation]:
    """The conversations in ``path`` (a file, or for the file formats a directory), one
    at a time; ``on_progress(done, total)`` counts bytes of JSON exports and files of a
    directory. Raises :class:`MalformedExport` (OSError for a file it cannot read)."""
    if fmt in ("chatgpt", "claude"):
        reader = read_chatgpt if fmt == "chatgpt" else read_claude
        with open(path, "rb") as fh:
            yield from reader(fh, str(path), me=me, on_progress=on_progress)
        return
    if fmt not in EXTENSIONS:
        raise ValueError(f"unknown format {fmt!r}")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in EXTENSIONS[fmt]) if path.is_dir() else [path]
    for n, file in enumerate(files, 1):
        if fmt == "markdown":
            yield read_markdown(file, date=date, speakers=speakers)
        elif fmt == "transcript":
            yield read_transcript(file, date=date)
        else:
            yield (read_vtt if fmt == "vtt" else read_srt)(file, date=date)
        if on_progress:
            on_progress(n, len(files))
