"""Line endings as Emacs decides them: which one a file has, and its lines cut at it.
What a capture writes (:mod:`.capture`) and what a forget takes go by them."""

from __future__ import annotations


def file_eol(data: bytes) -> bytes:
    """The line ending Emacs gives the file (its ``buffer-file-coding-system``), checked
    with Emacs 28 on mixed files: any lone LF makes it ``unix`` (LF; CRs stay as ``^M``),
    else any CRLF ``dos`` (lone CRs stay as ``^M``), else any CR ``mac``; a file without
    any line ending is ``unix``."""
    crlf = data.count(b"\r\n")
    if data.count(b"\n") > crlf:
        return b"\n"
    if crlf:
        return b"\r\n"
    return b"\r" if b"\r" in data else b"\n"


def split_keeping_ends(data: bytes, eol: bytes) -> list[bytes]:
    """The file's lines, each with its line ending (the last one may have none)."""
    pieces = data.split(eol)
    lines = [p + eol for p in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines
