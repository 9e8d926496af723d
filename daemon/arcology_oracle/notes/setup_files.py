"""``#+SETUPFILE:``, whose keywords Org reads as if they were written in the note: here
the tags they give the whole file (``#+FILETAGS``), which can make it private
(:mod:`.privacy`).

As Org reads them (checked with Emacs 28.2 and Org 9.5): a setup file's name is relative
to the note's directory (``~`` expanded, quotes stripped), and the setup files a setup
file names are relative to its own; its ``#+FILETAGS`` count wherever they stand, as in
the note (:func:`~.privacy.keyword_values`). A setup file given by URL is not fetched
(nothing leaves this machine), nor one that is not a readable regular file; each file is
read once, at most :data:`MAX_DEPTH` deep, its first :data:`MAX_BYTES`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .disk import read_regular_file
from .org_syntax import decode_org_bytes, split_lines
from .privacy import file_tags, keyword_values

MAX_DEPTH = 8
MAX_BYTES = 1 << 20
_SETUPFILE_RE = re.compile(r"^[ \t]*#\+setupfile:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)


def setup_file_tags(lines: Sequence[str], directory: Path) -> tuple[str, ...]:
    """The ``#+FILETAGS`` tags of the setup files the note ``lines`` (in ``directory``)
    names, theirs included, in order, without repeats; () when it names none."""
    tags: dict[str, None] = {}
    if any("#+" in line for line in lines):
        _collect(lines, directory, tags, set(), 0)
    return tuple(tags)


def _collect(lines: Sequence[str], directory: Path, tags: dict[str, None], seen: set[str], depth: int) -> None:
    if depth >= MAX_DEPTH:
        return
    for value in keyword_values(lines, _SETUPFILE_RE):
        name = value.strip().strip('"')
        if not name or "://" in name:
            continue
        path = directory / os.path.expanduser(name)  # an absolute name stays as it is
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        data = read_regular_file(real, MAX_BYTES)
        if data is None:
            continue
        setup = split_lines(decode_org_bytes(data))
        tags.update(dict.fromkeys(file_tags(setup)))
        _collect(setup, Path(real).parent, tags, seen, depth + 1)
