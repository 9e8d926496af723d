"""What a capture needs to know of a note before it appends to it (:class:`NoteState`),
read from the note's bytes, and what the capture's hash covers before the separator it
writes after the note's end (:meth:`NoteState.kept`)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from ..notes.capture import AFTER_BLANKS, AFTER_TEXT, BOM, FILE_START, file_eol
from ..notes.capture_blanks import is_blank_line
from ..notes.codings import emacs_coding
from ..notes.org_syntax import HEADING_LINE_RE, decode_org_bytes, split_lines
from ..notes.privacy import file_tags
from ..notes.setup_files import setup_file_names


@dataclass(frozen=True)
class NoteState:
    """What a capture needs to know of a note, for the file whose identity is ``key``
    (device, inode, size, mtime, change time): its line ending, whether it ends with one, how many
    lines the reader counts, the lines before its first heading, its ``#+filetags``
    tags and the setup files it names (see :mod:`.appends`), the SHA-256 of its
    bytes (a ``hashlib`` object), and whether it ends with a line of blanks only
    (:func:`~arcology_oracle.notes.capture_blanks.is_blank_line`, without a line ending),
    and the coding other than UTF-8 Emacs reads it in, if any
    (:func:`~arcology_oracle.notes.codings.emacs_coding`: only ASCII may be added then)."""

    key: tuple[int, int, int, int, int]
    eol: bytes
    ends_with_eol: bool
    lines: int
    head: tuple[str, ...]
    tags: tuple[str, ...]
    sha: object
    setups: tuple[str, ...] = ()
    blank_end: bool = False
    coding: str | None = None

    @property
    def hexdigest(self) -> str:
        return self.sha.hexdigest()  # type: ignore[attr-defined]

    def kept(self) -> bytes:
        """What a capture's hash covers before the separator line ending written after
        this file's end, that is not written again: the file's last line ending (the
        separator then makes an empty line), FILE_START when the file is empty, or
        AFTER_TEXT (AFTER_BLANKS) when the separator ends its last line, of text (of
        blanks), so that a forget never takes a line ending of the user's for the
        capture's (:func:`~arcology_oracle.notes.capture.plan_forget`)."""
        if self.ends_with_eol:
            return self.eol if self.lines else FILE_START
        return AFTER_BLANKS if self.blank_end else AFTER_TEXT

    def after(self, added: bytes, st: os.stat_result) -> NoteState:
        """The state once ``added`` (a capture: whole lines, no file keyword) is appended."""
        sha = self.sha.copy()  # type: ignore[attr-defined]
        sha.update(added)
        lines = self.lines + added.count(self.eol) - (0 if self.ends_with_eol or not self.lines else 1)
        return NoteState(state_key(st), self.eol, added.endswith(self.eol), lines, self.head, self.tags, sha, self.setups,
                         coding=self.coding)  # fmt: skip


def state_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """The identity of a file's version: device, inode, size, mtime and change time."""
    # The change time too: a same-size rewrite keeps the mtime the daemon saw when made
    # in the same tick of the file system's clock, or set back by os.utime (which itself
    # sets the change time to now).
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def note_state(data: bytes, st: os.stat_result) -> NoteState:
    """The :class:`NoteState` of a file read whole (``data``, stat ``st`` taken after the
    read). Its key's size is that of ``data``: a read while another program writes the
    file may end before what a stat then counts (the first pages of a write are seen
    before the last), and a capture written after it must know the file grew."""
    key = (st.st_dev, st.st_ino, len(data), st.st_mtime_ns, st.st_ctime_ns)
    eol = file_eol(data)
    lines = split_lines(decode_org_bytes(data))
    first = next((i for i, line in enumerate(lines) if HEADING_LINE_RE.match(line)), len(lines))
    body = data.removeprefix(BOM)
    return NoteState(key, eol, body.endswith(eol) or not body, len(lines), tuple(lines[:first]),
                     file_tags(lines), hashlib.sha256(data), setup_file_names(lines),
                     is_blank_line(body.rsplit(eol, 1)[-1]), emacs_coding(data))  # fmt: skip
