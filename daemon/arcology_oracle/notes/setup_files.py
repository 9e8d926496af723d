"""``#+SETUPFILE:``, whose keywords Org reads as if they were written in the note: here
the tags they give the whole file (``#+FILETAGS``), which can make it private
(:mod:`.privacy`).

As Org reads them (checked with Emacs 28.2 and Org 9.5): a setup file's name is relative
to the note's directory (``~`` expanded, quotes stripped), and the setup files a setup
file names are relative to its own; its ``#+FILETAGS`` count wherever they stand, as in
the note (:func:`~.privacy.keyword_values`). A setup file given by URL is not fetched
(nothing leaves this machine), nor one that is not a readable regular file; each file is
read once, at most :data:`MAX_DEPTH` deep, its first :data:`MAX_BYTES`.

A note depends on its setup files: one that gains a private tag makes the note private
without a byte of the note changing. :func:`read_setup_files` gives, with the tags, each
setup file it looked at and how it was when it did (:data:`Seen`); the index keeps that
with the note and reads the note again when :func:`any_changed` says one of them is not
as it was (``Indexer``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from .disk import read_regular_file
from .org_syntax import decode_org_bytes, split_lines
from .privacy import file_tags, keyword_values

MAX_DEPTH = 8
MAX_BYTES = 1 << 20
_SETUPFILE_RE = re.compile(r"^[ \t]*#\+setupfile:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)

# A setup file looked at: its path as the note names it (made absolute; through any
# symbolic link, so a link pointed elsewhere counts), then its inode, size, mtime and
# ctime in nanoseconds as they were just before it was read (all -1: not a regular file,
# or gone). The ctime moves on every write, rename or change of permissions.
Seen = tuple[str, int, int, int, int]
_ABSENT = (-1, -1, -1, -1)


def read_setup_files(lines: Sequence[str], directory: Path) -> tuple[tuple[str, ...], tuple[Seen, ...]]:
    """``(tags, seen)``: the ``#+FILETAGS`` tags of the setup files the note ``lines`` (in
    ``directory``) names, theirs included, in order, without repeats; and every setup
    file looked at for them, readable or not, in the order met. ``((), ())`` when the note
    names none."""
    tags: dict[str, None] = {}
    seen: dict[str, Seen] = {}  # by real path: each file is read once
    if any("#+" in line for line in lines):
        _collect(lines, directory, tags, seen, 0)
    return tuple(tags), tuple(seen.values())


def any_changed(seen: Iterable[Sequence], states: dict[str, tuple[int, int, int, int]] | None = None) -> bool:
    """Whether any setup file of ``seen`` (:data:`Seen` rows, as :func:`read_setup_files`
    gave them) is not as it was: written, replaced, made readable or not, gone or come.
    ``states``: each path's state once looked at, kept across calls (one look a file)."""
    states = {} if states is None else states
    for row in seen:
        path = row[0]
        if path not in states:
            states[path] = _state(path)
        if tuple(row[1:]) != states[path]:
            return True
    return False


def changed_since(recorded: str) -> bool:
    """Whether a setup file of ``recorded`` (the JSON of a note's :data:`Seen` rows, as the
    index keeps it) is not as it was; False for a note that names none (``"[]"``)."""
    return recorded != "[]" and any_changed(json.loads(recorded))


def notes_to_read_again(recorded: Iterable[tuple[str, str]]) -> list[str]:
    """The notes of ``recorded`` (``(path, recorded JSON)``) a setup file of which changed
    since they were read, each setup file looked at once."""
    states: dict[str, tuple[int, int, int, int]] = {}
    verdicts: dict[str, bool] = {}  # notes read at the same time record the same JSON
    for _, seen in recorded:
        if seen not in verdicts:
            verdicts[seen] = seen != "[]" and any_changed(json.loads(seen), states)
    return [path for path, seen in recorded if verdicts[seen]]


def _state(path: str) -> tuple[int, int, int, int]:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return _ABSENT
    if not stat.S_ISREG(st.st_mode):
        return _ABSENT
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _collect(
    lines: Sequence[str], directory: Path, tags: dict[str, None], seen: dict[str, Seen], depth: int
) -> None:
    if depth >= MAX_DEPTH:
        return
    for value in keyword_values(lines, _SETUPFILE_RE):
        name = value.strip().strip('"')
        if not name or "://" in name:
            continue
        path = os.path.abspath(directory / os.path.expanduser(name))  # an absolute name stays as it is
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen[real] = (path, *_state(path))  # before the read: a write after it shows as a change
        data = read_regular_file(real, MAX_BYTES)
        if data is None:
            continue
        setup = split_lines(decode_org_bytes(data))
        tags.update(dict.fromkeys(file_tags(setup)))
        _collect(setup, Path(real).parent, tags, seen, depth + 1)
