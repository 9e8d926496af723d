"""Whether a place in the saved notes is private, for text a client sends from there.

A client sends a part of a note (the heading at point, a region, a conversation's
subtree, an excerpt of a long buffer) with the file and line it comes from. A note the
index never reads for where it is (a hidden folder, ``exclude_globs``:
:func:`~arcology_oracle.notes.files.is_private_path`, the one rule for both) and an
encrypted note (``.gpg``, ``.age``: Emacs shows it decrypted) are private whole. Cut out of
its file, that part has lost what may make it private: a tag inherited from a heading
above it, the file's ``#+filetags``, the file's ``ROAM_EXCLUDE``, the ``exclude_globs``
the file matches. The part is judged by itself too (:func:`~arcology_oracle.notes.cleaning.strip_private`;
for a capture, :func:`why_private_text`); this judges the place, by reading the saved
file with the indexer's own reader.

The place a client names is not always where the whole text comes from: an excerpt of a
long buffer, or a region, may start inside a private subtree whose heading is cut off
above it while point (the line sent) is below that subtree; an unsaved buffer's lines are
no longer the saved file's. A client that judges privacy itself may still send such text
(Emacs's ``arcology-oracle-private-tags`` may lack one of the daemon's ``private_tags``;
it knows nothing of ``exclude_globs``), so :func:`without_saved_private_lines` also takes
out of the text every line the saved file holds only in its private parts.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

from ..config import Settings
from ..notes import setup_files
from ..notes.cleaning import private_lines
from ..notes.codings import emacs_may_read
from ..notes.disk import read_regular_file
from ..notes.org_syntax import decode_org_bytes, split_lines
from ..notes.files import is_encrypted_name, is_excluded, is_excluded_file, is_private_path, resolve_inside
from ..notes.privacy import PGP_MARKER, Privacy
from .index_api import NotesIndex


async def is_private_place(index: NotesIndex, path: str | None, line: int | None) -> bool:
    """Whether ``line`` (1 when None) of the saved file ``path`` (relative to the notes
    directory) is in a part the index leaves out, or the file is private by where it is
    (a hidden folder or ``exclude_globs``, :func:`~arcology_oracle.notes.files.is_private_path`;
    reached through a symlink, ``exclude_globs`` by its real path; a hard link, by its
    other names: as the index excludes it). False without ``path``, for a path outside the notes
    directory, for anything but a regular file (a FIFO is not read) and for a file not
    saved yet (a new buffer's text is judged by itself). The file is read on a worker
    thread."""
    if not path:
        return False
    return await asyncio.to_thread(_saved_line_is_private, index.settings, path, line or 1)


async def is_private_file(index: NotesIndex, path: str | None) -> bool:
    """Whether the saved file ``path`` is private as a whole: by where it is (as
    :func:`is_private_place` judges it), or every line of it private (its file tags,
    its setup files', a file-level ``ROAM_EXCLUDE``). For the file an unsaved buffer is a
    state of, whose lines are not the saved file's. False as :func:`is_private_place` is."""
    if not path:
        return False
    return await asyncio.to_thread(_saved_line_is_private, index.settings, path, None)


async def without_saved_private_lines(index: NotesIndex, text: str, path: str | None) -> str:
    """``text`` without the lines that the saved file ``path`` holds in its private parts
    and nowhere else (compared without the blanks around them; the first and last lines,
    which a client may have cut anywhere, also when they are a part of such a line and of
    no public one). What is left of a private line is text the file also holds in public.
    ``text`` as it is without ``path``, or when the file cannot be read."""
    if not path or not text:
        return text
    return await asyncio.to_thread(_without_private_lines, index.settings, text, path)


async def why_private_source(index: NotesIndex, text: str, path: str | None, line: int | None) -> str | None:
    """Why ``text``, sent from ``line`` of the saved file ``path`` (no line: from a buffer
    of it with unsaved edits), comes from a private part of that file, or None: the place
    is private (:func:`is_private_place`), the file is private whole
    (:func:`is_private_file`), or ``text`` holds a line the file holds only in its private
    parts (as :func:`without_saved_private_lines` would leave out). The reason names
    ``path`` (which the client sent) and never repeats a word of ``text``. None without
    ``path``, and as :func:`is_private_place` is False."""
    if not path:
        return None
    if line is not None and await is_private_place(index, path, line):
        return f"{path} is private at line {line}"
    if await is_private_file(index, path):
        return f"{path} is private"
    if await without_saved_private_lines(index, text, path) != text:
        return f"this text holds lines {path} holds only in its private parts"
    return None


async def why_private_text(index: NotesIndex, text: str, path: str | None, tags: Iterable[str] = ()) -> str | None:
    """Why ``text``, to be captured with ``tags`` as the body of a heading of its own, holds
    private parts of its own, or None. Read by itself as the index reads an org text
    (:func:`~arcology_oracle.notes.cleaning.private_lines`: a heading tagged private or
    ``crypt`` in it, its ``#+filetags``, its ``ROAM_EXCLUDE``, the setup files it names,
    looked for beside ``path``), a line of it is private; and the capture escapes its
    heading lines and keywords, so in a public heading that line would be indexed. None
    when the capture is private whole: ``tags`` make it so, or its text holds a PGP
    block (its heading's own text: the rule leaves that heading out)."""
    settings = index.settings
    if Privacy.from_tags(settings.private_tags).tags_exclude(tags) or PGP_MARKER in text:
        return None
    data = text.encode("utf-8", "replace")
    private, _ = await asyncio.to_thread(
        private_lines, data, settings.private_tags, root=settings.roam_dir, path=path or "buffer.org"
    )
    if any(private):
        return "this text holds private parts of its own (a heading tagged private or crypt, #+filetags, ROAM_EXCLUDE)"
    return None


def _without_private_lines(settings: Settings, text: str, path: str) -> str:
    try:
        file = resolve_inside(settings.roam_dir, path)
    except ValueError:
        return text
    _, private, public = _read_saved(settings, file, path)
    if not private:
        return text
    lines = text.split("\n")
    last = len(lines) - 1

    def held_private(i: int, line: str) -> bool:
        return any(_held_private(form, i == 0 or i == last, private, public) for form in _forms(line))

    return "\n".join(line for i, line in enumerate(lines) if not held_private(i, line))


def _forms(line: str) -> list[str]:
    """The lines a line of a client's text (split at line feeds) may be read as: with
    each NUL as U+FFFD (as the reader reads a NUL); with its carriage returns dropped
    (as the reader reads a saved file holding line feeds too, and as a prompt or an
    embedding gets the text), and each part between them (as a capture writes it, and
    as the reader reads a file of carriage returns only). A line is judged in every form
    it may take."""
    forms = [line, line.replace("\x00", "\ufffd")] if "\x00" in line else [line]
    if "\r" in line:
        forms += [form.replace("\r", "") for form in forms] + [part for form in forms for part in form.split("\r")]
    return forms


def _held_private(line: str, edge: bool, private: frozenset[str], public: str) -> bool:
    """Whether ``line`` is a line held only in private parts; at the text's ``edge``
    (first or last line), a part of one too, and of no public line (a client cuts there)."""
    words = line.strip()
    if not words:
        return False
    if words in private:
        return True
    return edge and words not in public and any(words in p for p in private)


def _saved_line_is_private(settings: Settings, path: str, line: int | None) -> bool:
    """Whether ``line`` of the saved file ``path`` is private; with ``line`` None, whether
    the whole file is."""
    try:
        file = resolve_inside(settings.roam_dir, path)
    except ValueError:
        return False
    # Private by its name (hidden, excluded) or, reached through a symlink, excluded by its
    # real one (as the index: a link to a file in a hidden folder is read).
    real_root = os.path.realpath(settings.roam_dir)
    real_rel = os.path.relpath(os.path.realpath(file), real_root).replace(os.sep, "/")
    if is_private_path(path, settings.exclude_globs) or is_excluded(real_rel, settings.exclude_globs):
        return True
    if is_excluded_file(settings.roam_dir, file, settings.exclude_globs):  # a hard link to an excluded file
        return True
    # An encrypted note (epa-file's .gpg, age.el's .age): Emacs shows it decrypted, the
    # saved bytes are ciphertext the reader finds nothing private in. Private whole.
    if is_encrypted_name(path) or is_encrypted_name(real_rel):
        return True
    flags = _read_saved(settings, file, path)[0]
    if not flags:  # no such file, or no text
        return False
    if line is None:
        return all(flags)
    # One past the last line is where a file's final newline leaves Emacs's point.
    return flags[min(max(line, 1), len(flags)) - 1]


def _read_saved(settings: Settings, file: Path, path: str) -> tuple[tuple[bool, ...], frozenset[str], str]:
    """:func:`~arcology_oracle.notes.cleaning.private_lines` of the saved ``file``, the
    lines (without the blanks around them) it holds only in its private parts, and its
    public lines joined by newlines (empty when no line is private), each line in every
    text Emacs may read from its bytes (:func:`~arcology_oracle.notes.codings.emacs_may_read`);
    remembered while it is the same file (device, inode, size, times) and its setup
    files are as they were read (a private tag added to one makes the note private with
    no change to the note): Emacs asks again at every move to another heading of an
    unsaved buffer, and reading a large note costs about 120 ms a megabyte."""
    try:
        st = os.stat(file)
    except OSError:
        return (), frozenset(), ""
    key = (str(file), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, settings.private_tags)
    with _lock:
        remembered = _remembered.get(key)
        if remembered is not None:
            _remembered.move_to_end(key)
    if remembered is not None and not setup_files.any_changed(remembered[1]):
        return remembered[0], remembered[2], remembered[3]
    data = read_regular_file(file)
    flags, seen = ((), ()) if data is None else private_lines(data, settings.private_tags, root=settings.roam_dir, path=path)
    only_private, public_text = frozenset(), ""
    if any(flags):
        public: list[str] = []
        private: set[str] = set()
        for text in (decode_org_bytes(data), *emacs_may_read(data)):
            lines = [line.strip() for line in split_lines(text)]
            if len(lines) == len(flags):  # (a decoding whose lines are not the reader's is no help)
                public += [line for line, flag in zip(lines, flags) if not flag]
                private.update(line for line, flag in zip(lines, flags) if flag and line)
        only_private = frozenset(private - set(public))
        public_text = "\n".join(public)
    with _lock:
        _remembered[key] = (flags, seen, only_private, public_text)
        while len(_remembered) > REMEMBERED_FILES:
            _remembered.popitem(last=False)
    return flags, only_private, public_text


REMEMBERED_FILES = 32
# key -> (each line private or not, the setup files read to say so, the lines held only
# in private parts, the public lines joined)
_remembered: OrderedDict[tuple, tuple[tuple[bool, ...], tuple, frozenset[str], str]] = OrderedDict()
_lock = threading.Lock()
