"""Indexing a capture without reading the whole note again (a capture must cost about
the same on a 4 MB daily as on a 40 KB one).

A capture only appends a level-1 heading. What Org makes of that heading depends on the
rest of the file in a few ways only, and those are kept: the file's tags (every
``#+filetags`` line, wherever it stands), the setup files it names (every
``#+SETUPFILE`` line, wherever it stands: their file tags are the file's), the text
before the first heading (the file's drawer, whose ``ROAM_EXCLUDE`` or file tags can
make the whole file private, and the gptel markers that change chunking), the file's
path (a daily's date) and its title. Nothing before the heading changes: the last
heading before it ends on the same line as before, and blocks and drawers never reach
across a heading. So the appended headings are read from a short stand-in file (that
head, the ``#+SETUPFILE`` lines, one ``#+filetags`` line with all the file's tags, and
the appended text), their lines moved to where they are in the real file;
``tests/index/test_appends.py`` checks that this gives exactly the records a full read
of the whole file gives.

The store records the file as it is after the append (size, mtime, hash of exactly the
bytes known), so the watcher, seeing that write, finds nothing to do.
"""

from __future__ import annotations

import dataclasses

from ..notes.org_syntax import decode_org_bytes, split_lines
from ..notes.reader import read_org_bytes
from ..notes.records import Chunk, Heading, ParsedFile
from ..notes.oracle_words import without_replies
from .parsing import ParseOptions


def appended_headings(
    head: tuple[str, ...], tags: tuple[str, ...], lines: int, added: bytes, rel: str, options: ParseOptions,
    *, title: str, file_id: str | None, setups: tuple[str, ...] = (),
) -> tuple[list[Heading], list[list[Chunk]]]:
    """The records (and their chunks) of the headings ``added`` appends to the file
    ``rel``, which had ``lines`` lines, ``head`` before its first heading, the file tags
    ``tags`` and named the setup files ``setups`` (as written); ``title`` and ``file_id``
    are the file's as indexed. ``added`` starts with a heading, or with one line ending
    and then a heading."""
    stand_in_head = [*head, *(f"#+SETUPFILE: {name}" for name in setups)]
    stand_in_head += [f"#+filetags: :{':'.join(tags)}:"] if tags else []
    new = split_lines(decode_org_bytes(added).lstrip("\r\n"))
    data = "\n".join([*stand_in_head, *new, ""]).encode("utf-8", "surrogateescape")
    stand_in = read_org_bytes(data, rel, options.private_tags, log_problems=False, root=options.root)
    shift = lines - len(stand_in_head)
    mine = [
        dataclasses.replace(h, start_line=h.start_line + shift, end_line=h.end_line + shift)
        for h in stand_in.headings
        if h.level > 0 and h.start_line > len(stand_in_head)
    ]
    file_level = [h for h in stand_in.headings if h.level == 0]
    whole = ParsedFile(path=rel, title=title, file_id=file_id, headings=[*file_level, *mine])
    whole, chunks = without_replies(whole, options.chunk_chars, options.chunk_overlap)
    return whole.headings[len(file_level) :], chunks[len(file_level) :]
