"""``#+SETUPFILE:``, whose keywords Org reads as if they were written in the note: here
the tags they give the whole file (``#+FILETAGS``), which can make it private
(:mod:`.privacy`); and their lines, for the TODO keywords they declare
(:func:`setup_file_lines`, :mod:`.todo_keywords`).

As Org reads them (checked with Emacs 28.2 and Org 9.5): a setup file's name is relative
to the note's directory (``~`` expanded, quotes stripped), and the setup files a setup
file names are relative to its own directory as named (not through a symbolic link);
its ``#+FILETAGS`` count wherever they stand, as in the note
(:func:`~.privacy.keyword_values`). A setup file given by URL is not fetched
(nothing leaves this machine), nor one that is not a readable regular file; each file is
read once, at most :data:`MAX_DEPTH` deep, its first :data:`MAX_BYTES`.

A URL setup file fails closed: Org fetches it, and its ``#+FILETAGS`` may make the note
private, so a note (or a setup file) naming one is private (its tags as Emacs may read
them hold ``crypt``, :data:`~.privacy.CRYPT_TAG`), and the log says so once a process,
without naming it (the note is read again at each change and each question asked from
it). A copy of that file beside the note, named instead, makes it readable. A local setup
file that cannot be read (missing, not readable) gives no tags, as Org reads it (Org
only warns): that one fails open.

A note depends on its setup files: one that gains a private tag makes the note private
without a byte of the note changing. :func:`read_setup_files` gives, with the tags, each
setup file it looked at and how it was when it did (:data:`Seen`); the index keeps that
with the note and reads the note again when :func:`any_changed` says one of them is not
as it was (``Indexer``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from .codings import emacs_may_read
from .disk import read_regular_file, read_regular_file_with_stat
from .org_syntax import decode_org_bytes, split_lines
from .privacy import CRYPT_TAG, file_tags, keyword_values

log = logging.getLogger(__name__)
MAX_DEPTH = 8
MAX_BYTES = 1 << 20
_SETUPFILE_RE = re.compile(r"^[ \t]*#\+setupfile:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)

# A setup file looked at: its path as named (made absolute, not resolved: a link pointed
# elsewhere counts), then the inode, size, mtime and ctime in nanoseconds of the file
# read (all -1: nothing there, or not a regular file; those of the path when it could not
# be opened, whose ctime a chmod moves), and a hash of its bytes when it had changed
# within RACY_NS of being read ("" otherwise): a write in the same tick of the file
# system's clock keeps every number, so such a file is compared by its bytes.
Seen = tuple[str, int, int, int, int, str]
_State = tuple[int, int, int, int]
_ABSENT: _State = (-1, -1, -1, -1)
RACY_NS = 2_000_000_000
# Stands, among a note's setup files as the index stores them, for those it names only in
# its private parts, whose names are kept in memory only (index/private_files.py). Never
# as it was (no file's path is ""): a process that does not know them reads the note again.
NAMED_IN_PRIVATE: Seen = ("", -2, -2, -2, -2, "")
_url_said = False  # the log line about a URL setup file, said once a process


def read_setup_files(
    lines: Sequence[str], directory: Path, *, elsewhere: list[str] | None = None
) -> tuple[tuple[str, ...], tuple[Seen, ...]]:
    """``(tags, seen)``: the ``#+FILETAGS`` tags of the setup files the note ``lines`` (in
    ``directory``) names, theirs included, in order, without repeats; and every setup
    file looked at for them, readable or not, under each name it was given, in the order
    met. ``((), ())`` when the note names none.

    A setup file is read as UTF-8, as the reader reads notes; Emacs reads it as it reads
    a note, in the coding its cookie names or one it guesses
    (:func:`~.codings.emacs_may_read`). The tags of those other texts (and of the setup
    files they name) are appended to ``elsewhere``, when given: they are not the file's
    tags (mostly mojibake), but a private tag among them makes the note private. A tag
    holding U+FFFD is not one of them: that coding could not read those bytes, and Emacs
    reading them so shows no letters (raw bytes); as U+FFFD may be any letters
    (:meth:`~.privacy.Privacy.tags_exclude`), every note naming a Japanese setup file
    would be private by some coding's reading of it."""
    tags: dict[str, None] = {}
    seen: dict[str, Seen] = {}
    if any("#+" in line for line in lines):
        other: dict[str, None] = {}
        _collect(lines, directory, tags, seen, set(), 0, other)
        if elsewhere is not None:
            elsewhere += (tag for tag in other if "\ufffd" not in tag)
    return tuple(tags), tuple(seen.values())


def split_private_names(
    lines: Sequence[str], kept: Iterable[tuple[int, int]], seen: Sequence[Seen], directory: Path
) -> tuple[tuple[Seen, ...], tuple[Seen, ...]]:
    """``seen`` (:func:`read_setup_files`' of the note ``lines`` in ``directory``) as the
    index may store it, and the setup files it may not: those named only in the lines out
    of the ``kept`` spans (first and last line of each heading read, from 1), its private
    parts; :data:`NAMED_IN_PRIVATE` stands for them in the first."""
    public_lines = [""] * len(lines)
    for first, last in kept:
        public_lines[first - 1 : last] = lines[first - 1 : last]
    if not any(not public and setup_file_names([line]) for line, public in zip(lines, public_lines)):
        return tuple(seen), ()
    public = {s[0] for s in read_setup_files(public_lines, directory)[1]}
    hidden = tuple(s for s in seen if s[0] not in public)
    if not hidden:
        return tuple(seen), ()
    return (*(s for s in seen if s[0] in public), NAMED_IN_PRIVATE), hidden


def setup_file_names(lines: Sequence[str]) -> tuple[str, ...]:
    """The setup files the note ``lines`` names, as written (Org's keywords: wherever they
    stand, not inside src or example blocks)."""
    return tuple(keyword_values(lines, _SETUPFILE_RE))


def any_changed(seen: Iterable[Sequence], states: dict[str, tuple] | None = None) -> bool:
    """Whether any setup file of ``seen`` (:data:`Seen` rows, as :func:`read_setup_files`
    gave them) is not as it was: written, replaced, made readable or not, gone or come.
    ``states``: what each path was found to be, kept across calls (one look a file)."""
    states = {} if states is None else states
    for path, *state, digest in seen:
        if path not in states:
            states[path] = _state(path)
        if tuple(state) != states[path]:
            return True
        if digest and _digest_of(path, states) != digest:
            return True
    return False


def changed_since(recorded: str, states: dict[str, tuple] | None = None) -> bool:
    """Whether a setup file of ``recorded`` (the JSON of a note's :data:`Seen` rows, as the
    index keeps it) is not as it was; False for a note that names none (``"[]"``).
    ``states``: as for :func:`any_changed` (notes sharing a setup file look at it once)."""
    return recorded != "[]" and any_changed(json.loads(recorded), states)


def notes_to_read_again(recorded: Iterable[tuple[str, str]]) -> list[str]:
    """The notes of ``recorded`` (``(path, recorded JSON)``) a setup file of which changed
    since they were read, each setup file looked at once."""
    states: dict[str, tuple] = {}
    verdicts: dict[str, bool] = {}  # notes read at the same time record the same JSON
    for _, seen in recorded:
        if seen not in verdicts:
            verdicts[seen] = seen != "[]" and any_changed(json.loads(seen), states)
    return [path for path, seen in recorded if verdicts[seen]]


def to_json(seen: Sequence[Seen]) -> str:
    """``seen`` as the index keeps it: JSON in ASCII, so that a path that is not UTF-8
    (its bytes kept as surrogates) is kept and comes back as it was."""
    return json.dumps(seen)


def _state(path: str) -> _State:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return _ABSENT
    return _numbers(st) if stat.S_ISREG(st.st_mode) else _ABSENT


def _numbers(st: os.stat_result) -> _State:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _digest_of(path: str, states: dict[str, tuple]) -> str:
    key = "digest:" + path
    if key not in states:
        data = read_regular_file(path, MAX_BYTES)
        states[key] = "" if data is None else hashlib.sha256(data).hexdigest()
    return states[key]


def look(path: str, *, follow: bool = True) -> tuple[bytes | None, Seen]:
    """The bytes of the file ``path`` a note depends on (a setup file; an ellama session's
    ``.session.el``, :mod:`.ellama`), its first :data:`MAX_BYTES` (None if it cannot be
    read), and how it was (:data:`Seen`: :func:`any_changed` then tells when it changes,
    comes or goes). Without ``follow``, a symlink at ``path`` is not read (None), its
    target looked at only as :func:`any_changed` does (a stat: no byte of it is read)."""
    data, st = read_regular_file_with_stat(path, MAX_BYTES, follow=follow)
    if st is None:  # not opened: gone, or not readable
        return None, (path, *_state(path), "")
    if data is None:
        return None, (path, *_ABSENT, "")
    racy = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS
    return data, (path, *_numbers(st), hashlib.sha256(data).hexdigest() if racy else "")


def _say_url_once() -> None:
    global _url_said
    if not _url_said:
        _url_said = True
        log.info("a note names a #+SETUPFILE by URL, which is not fetched: it is kept out as private "
                 "(name a copy of that file beside the note to have it indexed)")


def _named_paths(lines: Sequence[str], directory: Path) -> Iterator[str | None]:
    """The path of each setup file ``lines`` (in ``directory``) names, made absolute (``~``
    expanded, quotes stripped), as Org reads it; None for one named by URL."""
    for value in keyword_values(lines, _SETUPFILE_RE):
        name = value.strip().strip('"')
        if not name:
            continue
        yield None if "://" in name else os.path.abspath(directory / os.path.expanduser(name))


def setup_file_lines(lines: Sequence[str], directory: Path) -> list[list[str]]:
    """The lines of every local setup file the note ``lines`` (in ``directory``) names,
    theirs included, as the reader reads them (UTF-8; each file once, at most
    :data:`MAX_DEPTH` deep, its first :data:`MAX_BYTES`); none named by URL (not fetched)."""
    found: list[list[str]] = []
    read: set[str] = set()

    def walk(lines: Sequence[str], directory: Path, depth: int) -> None:
        for path in _named_paths(lines, directory) if depth < MAX_DEPTH else ():
            real = os.path.realpath(path) if path else ""
            if not path or real in read or (data := read_regular_file(path, MAX_BYTES)) is None:
                continue
            read.add(real)
            found.append(split_lines(decode_org_bytes(data)))
            walk(found[-1], Path(path).parent, depth + 1)

    walk(lines, directory, 0)
    return found


def _collect(
    lines: Sequence[str], directory: Path, tags: dict[str, None], seen: dict[str, Seen], read: set[str], depth: int,
    other: dict[str, None],
) -> None:
    """Into ``tags``, those of the setup files ``lines`` name as the reader reads them;
    into ``other``, those of the texts Emacs may read from them instead."""
    if depth >= MAX_DEPTH:
        return
    for path in _named_paths(lines, directory):
        if path is None:  # not fetched: what Org would read there may make the note private
            _say_url_once()
            other[CRYPT_TAG] = None
            continue
        if path in seen:
            continue
        data, seen[path] = look(path)
        real = os.path.realpath(path)  # a file read once, whatever its names: no loop
        if data is None or real in read:
            continue
        read.add(real)
        text = decode_org_bytes(data)
        setup = split_lines(text)
        tags.update(dict.fromkeys(file_tags(setup)))
        # Its own setup files are relative to its folder as named, as Org reads them.
        _collect(setup, Path(path).parent, tags, seen, read, depth + 1, other)
        for text in emacs_may_read(data, utf8="\ufffd" not in text):
            setup = split_lines(text)
            other.update(dict.fromkeys(file_tags(setup)))
            _collect(setup, Path(path).parent, other, seen, read, depth + 1, other)
