"""A capture :mod:`.note_io` appended without a write lease, after another program wrote
to the note's end between the read of the note and the append, or while the note was
read (a reader can see the first pages of another program's write before its last).
The capture's hash covers what stood before its separator as read
(:meth:`.note_state.NoteState.kept`): when the note ended otherwise where the capture
landed (a whole line where a part was read, a line without its ending where one ended
the file), the hash names a file that never was, and forgetting the capture would be
refused as if the user had edited above it. Its hash line is then rewritten in place
for the note as it really ended: as many bytes, all of them the capture's own, under a
write lease taken now, so no other program writes meanwhile (the note is read again
under it: until it was granted, another program could write there). Without one (another
program keeps the note open), the capture stays as written and the log says so."""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable

from .leases import LEASE_ATTEMPTS, release_lease, take_lease
from .note_files import write_all
from .note_state import NoteState, note_state

log = logging.getLogger(__name__)


def settle_lead(
    fd: int, start: int, payload: bytes, read: NoteState, gap: bytes,
    build: Callable[[bytes, bytes, str], bytes], real_rel: str, shown: str,
) -> bytes:  # fmt: skip
    """The capture ``payload`` (``gap`` its separator), appended at byte ``start`` of the
    note (``shown`` in the log; open as ``fd``, read as ``read``; ``build`` and ``real_rel`` as for
    :func:`.note_io.append_note`), as it now stands in the note: rebuilt with the hash of
    what precedes it there and rewritten where only its hash line changes (the same
    length, the same line ending), else as written."""
    try:  # the capture is written: whatever fails now, it succeeded (a retry would write it twice)
        payload, why = _settle(fd, start, payload, read, gap, build, real_rel)
    except OSError as exc:
        why = exc.strerror or str(exc)
    if why is not None:
        log.warning("a capture appended to %s as another program wrote there keeps a hash of the note as read (%s): "
                    "forgetting it will be refused; delete it in Emacs", shown, why)  # fmt: skip
    return payload


def _settle(
    fd: int, start: int, payload: bytes, read: NoteState, gap: bytes,
    build: Callable[[bytes, bytes, str], bytes], real_rel: str,
) -> tuple[bytes, str | None]:  # fmt: skip
    """:func:`settle_lead`'s work: the capture as it stands, and None or why it stays as written."""
    if note_state(os.pread(fd, start, 0), os.fstat(fd)).kept() == read.kept():
        return payload, None
    if not take_lease(fd, LEASE_ATTEMPTS):
        return payload, "open in another program"
    try:  # read again under the lease: until it was granted, another program could write there
        return _rewrite(fd, start, payload, read, gap, build, real_rel)
    finally:
        release_lease(fd)


def _rewrite(
    fd: int, start: int, payload: bytes, read: NoteState, gap: bytes,
    build: Callable[[bytes, bytes, str], bytes], real_rel: str,
) -> tuple[bytes, str | None]:  # fmt: skip
    """Under the write lease: the capture as it stands at byte ``start`` (``payload``,
    its hash line rewritten for what precedes it now when that ends otherwise than
    ``read``), and None, or ``payload`` and why it stays."""
    now = os.pread(fd, start + len(payload), 0)
    if now[start:] != payload:
        return payload, "written over meanwhile"
    before = note_state(now[:start], os.fstat(fd))
    if before.kept() == read.kept():
        return payload, None
    if before.eol != read.eol:
        return payload, "another line ending"
    fixed = build(read.eol, before.kept() + gap, real_rel)[len(before.kept()) :]
    if len(fixed) != len(payload):
        return payload, "another length"
    first = next(i for i, (a, b) in enumerate(zip(payload, fixed)) if a != b)
    last = len(payload) - next(i for i, (a, b) in enumerate(zip(reversed(payload), reversed(fixed))) if a != b)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_APPEND)  # else Linux's pwrite appends at the end
    write_all(fd, fixed[first:last], start + first)
    os.fsync(fd)
    return fixed, None
