"""The only code that writes the user's notes: appending a capture and removing one, so
that no byte anyone else wrote is ever lost, hidden or changed.

**Appending** (:func:`append_note`) writes in place with ``O_APPEND``, one ``write`` of
the whole capture: whatever another program appends before or after lands in the file
too (the kernel places each ``O_APPEND`` write at the end, atomically). Nothing is
renamed, so symlinks, hard links, permissions, owners and extended attributes stay; no
temporary file exists, so none can be left behind (:meth:`.memory.Memory.clean_up`
clears the ones older versions could leave). The tail of the file is read first, for
its line ending and whether a separator line ending is needed; a write lease (below) is
taken when it can be, so no other program can write between that read and the append.
When it cannot, room for the capture is reserved on the disk first (:mod:`.room`: a full
disk refuses it before a byte is written, as no part could be taken back), and the
capture starts with a line ending whatever the file ended with, so its heading starts a
line whatever another program appended meanwhile (after a final line ending, that makes
an empty line: a forget removes it, and refuses once it is gone). When another program
wrote to the end between the read and the append (or during the read), the capture's
hash is set for the note as it ended where the capture landed (:mod:`.unleased_lead`).
A lease does not stop a rename: a program that saves by renaming a new file over the
note (a sync tool, an editor's first save with backups) leaves the append in the file
that lost the name. That is checked after the write: the capture is taken out of
that file again (when nothing follows it) and appended anew to the file the name holds.

**Removing** (:func:`remove_from_note`) must take bytes out, which no single system
call does without a race against another writer, so it runs only under a Linux write
lease (``F_SETLEASE``, ``F_WRLCK``): the kernel grants it only while no other process
has the file open, and any process that opens it meanwhile (to write or truncate) waits
until it is released. So between reading the file, checking the capture's hash and
writing the result, no other write can happen, and none can be dropped. A file another
program keeps open cannot be leased: the forget is refused (409), never guessed. The
bytes after the capture are moved down with ``pwrite`` then the file is truncated: a
crash in between can duplicate some of those bytes, never lose them, and a record kept
beside the database meanwhile (:mod:`.forget_journal`) lets the daemon's next start
finish the rewrite. An editor that
saves by renaming a new file over the note (Emacs's first save with backups) does not
open it; that case is caught after the write (the path no longer names the same file),
the old file is put back byte for byte and the forget is refused. Where leases are not
available (not Linux, a file owned by another user), forget is refused with 409.

Every refusal is a :class:`~arcology_oracle.errors.Conflict` naming the path and what is
wrong: a directory, a FIFO or other non-regular file (opened without blocking, so the
writer never hangs), a read-only file (no write permission bit, as Emacs would refuse to
save it), a directory that cannot be created or written, a file in UTF-16/32 or with
bytes that are not UTF-8 (the daemon writes UTF-8 only; a UTF-8 BOM stays), or a capture
holding characters outside ASCII into a file Emacs reads in another coding (a cookie,
Local Variables, ISO 2022 escape sequences: :func:`~arcology_oracle.notes.codings.emacs_coding`). A note whose
real path (after every symlink) is outside the roam directory raises :class:`LeadsOut`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import Conflict
from ..notes.capture import Removal
from ..notes.org_escape import LOCAL_VARIABLES_REACH, hides_local_variables
from .forget_journal import Journal, pending, place_of, settle
# prepare_leases is part of this module's interface (the daemon calls it at start).
from .leases import LEASE_ATTEMPTS, no_lease_reason, prepare_leases, release_lease, take_lease  # noqa: F401
# Part of this module's interface too (index/memory.py uses them through it).
from .note_files import LeadsOut, check_encoding, leads_out, open_note, read_all, read_note, real_path_of, remove_created, still_names, unlink_if_names, write_all  # noqa: F401
from . import note_files
from .note_state import NoteState, note_state, state_key
from .room import reserve_at_end
from .take_back import take_back
from .unleased_lead import settle_lead

log = logging.getLogger(__name__)
# What the log says for a note it may not name: one the index does not hold (private by
# its tags, left out by exclude_globs, or not read yet). The caller, which knows, passes
# ``shown`` (:func:`append_note`, :func:`remove_from_note`); answers to the client that
# asked for the write name the note whatever it is (that client named or was told it).
UNNAMED = note_files.UNNAMED
REPLACED_ATTEMPTS = 3  # appends tried while another program keeps renaming files over the note

@dataclass(frozen=True)
class Appended:
    """What :func:`append_note` wrote: ``added`` at byte ``start``, the heading on
    1-based ``line``; ``before`` is the state of the file before, ``after`` its state
    after when nothing but ``added`` was written meanwhile (else None); ``real_rel`` the
    file's real path relative to the roam directory; ``created`` the file and the folders
    made for it, deepest first, when it was created here (else empty)."""

    before: NoteState
    added: bytes
    start: int
    line: int
    st: os.stat_result
    after: NoteState | None
    real_rel: str
    created: tuple[Path, ...] = ()


def append_note(
    root: Path, rel: str, build: Callable[[bytes, bytes, str], bytes], head: bytes | None, known: NoteState | None = None,
    shown: str = UNNAMED,
) -> Appended:
    """Append ``build(eol, lead, real_rel)`` to the note ``rel`` (``eol`` its line
    ending; ``lead`` what must come first: ``head`` for a file created here, else a line
    ending when the file does not end with one (after AFTER_TEXT or AFTER_BLANKS, not
    written) or no write lease was granted (two when it does: the file's own, or
    FILE_START when it is empty, not written, then the empty line), else nothing;
    ``real_rel`` its real path relative to the real roam directory, which the capture's
    hash names), creating it with ``head`` (LF line endings) when
    ``head`` is given and it does not exist. ``known`` is the state this daemon left the
    file in after its last append: when the file is still exactly that file (same inode,
    size, mtime and change time), it is not read again, so a capture costs the same on a large note as
    on a small one. ``build`` must give the same bytes for the same arguments: it is
    called again when the note's end changed meanwhile (:mod:`.unleased_lead`). An
    earlier forget's record is settled first (:func:`settled_for`). ``shown`` names
    the note in the log (:data:`UNNAMED` unless the caller knows it is not private).
    See the module docstring."""
    with settled_for(root, rel):
        for _ in range(REPLACED_ATTEMPTS):
            appended = _append(root, rel, build, head, known, shown)
            if appended is not None:
                return appended
            known = None  # another file has the name now
    raise Conflict(f"{rel} was replaced by another program each time the capture was written: nothing was written; "
                   "try again", retry=True)  # fmt: skip


def _append(
    root: Path, rel: str, build: Callable[[bytes, bytes, str], bytes], head: bytes | None, known: NoteState | None,
    shown: str,
) -> Appended | None:
    """One attempt of :func:`append_note`; None (the capture taken back) when ``rel`` names
    another file than the one written once the write is done."""
    opened = open_note(root, rel, append=True, create=head is not None)
    assert opened is not None
    fd, st, created = opened
    try:
        real_rel = real_path_of(root, fd, rel)
        leased = take_lease(fd, 1)
        try:
            st = os.fstat(fd)
            if known is not None and known.key == state_key(st) and (st.st_size == 0 or known.ends_with_eol == _ends_with(fd, st, known.eol)):
                state = known
            else:
                data = read_all(fd)
                check_encoding(data, rel)
                state = note_state(data, os.fstat(fd))
            lead = head if created and head and state.key[2] == 0 else b""
            # Unleased, another program may append between the read and the write: a
            # line ending first keeps the heading at the start of a line whatever it did.
            separator = not lead and (not state.ends_with_eol or not leased)
            gap = state.eol if separator else b""
            kept = state.kept() if separator else b""  # in the hash, not written again
            payload = build(state.eol, lead or kept + gap, real_rel)[len(kept) :]
            size = os.fstat(fd).st_size
            if state.coding and not payload.isascii():
                raise Conflict(f"{rel} is read by Emacs as {state.coding} (its coding cookie or Local Variables say so, "
                               "or its escape sequences), and the capture holds characters outside ASCII, which "
                               "arcology-oracle writes in UTF-8 only: nothing was written", retry=False)  # fmt: skip
            _keep_local_variables(fd, size, payload, rel, state.eol)
            if not leased:  # a part written to a full disk could not be taken back
                size = reserve_at_end(fd, size, len(payload), rel, created)
            try:
                write_all(fd, payload)
                end = os.lseek(fd, 0, os.SEEK_CUR)
                os.fsync(fd)
            except OSError as exc:  # cut back only under a lease held since the read (a later one covers nothing before it)
                take_back(fd, size, payload, rel, exc, created, leased, shown)
            if not still_names(root / rel, fd):  # renamed over meanwhile: not the note any more
                _withdraw(fd, end, payload, shown, leased)
                return None
            if separator and not leased and end - len(payload) != state.key[2]:  # written to meanwhile
                payload = settle_lead(fd, end - len(payload), payload, state, gap, build, real_rel, shown)
            after = os.fstat(fd)
        finally:
            if leased:
                release_lease(fd)
        start = end - len(payload)
        alone = start == state.key[2] and after.st_size == end
        # The heading's line: after every line there was (a separator ends the last one,
        # or is an empty line of its own after a final line ending).
        line = state.lines + 1 + lead.count(b"\n") + (1 if separator and state.ends_with_eol else 0)
        if not alone:
            line = (os.pread(fd, start, 0) + gap).count(state.eol) + lead.count(b"\n") + 1
        # A new file's head is not in ``state``: it is read again at the next capture. Nor
        # is an empty line before the capture (unleased, after a final line ending): the
        # heading above it grows by a line, which reading the capture alone cannot say.
        new_state = state.after(payload, after) if alone and not lead and not (separator and state.ends_with_eol) else None
        return Appended(state, payload, start, line, after, new_state, real_rel, created)
    finally:
        os.close(fd)


def _keep_local_variables(fd: int, size: int, payload: bytes, rel: str, eol: bytes) -> None:
    """Conflict when ``payload`` appended to the file would hide its ``Local Variables``
    block from Emacs (:func:`~arcology_oracle.notes.org_escape.hides_local_variables`)."""
    span = min(size, 4 * LOCAL_VARIABLES_REACH)  # at most 4 bytes a character
    tail = os.pread(fd, span, size - span).decode("utf-8", "replace")
    added = payload.decode("utf-8", "replace")
    if hides_local_variables(tail, added, eol.decode()):
        raise Conflict(
            f"{rel} has a Local Variables block near its end, which Emacs reads only in the last {LOCAL_VARIABLES_REACH} "
            f"characters of a file: {len(added)} more characters at the end would hide it. Nothing was written: capture "
            "into another note, or move the block to the very end",
            retry=False,
        )


def _withdraw(fd: int, end: int, payload: bytes, shown: str, leased: bool) -> None:
    """``payload``, appended up to byte ``end`` of a file that lost the note's name (``shown`` in the log) to
    another while it was written, cut off again when nothing follows it (that file may
    live on, as an editor's backup); else left, and logged. Only under a write lease
    (``leased``: the append's; else one taken now): without one, a program holding that
    file open could append between the check and the cut, and its bytes would go."""
    own = not leased and take_lease(fd, 1)
    why: object = "written after" if leased or own else "open in another program"
    try:
        if (leased or own) and os.fstat(fd).st_size == end and os.pread(fd, len(payload), end - len(payload)) == payload:
            os.ftruncate(fd, end - len(payload))
            return os.fsync(fd)
    except OSError as exc:
        why = exc
    finally:
        if own:
            release_lease(fd)
    log.warning("a capture written into %s as another program replaced it stays in the replaced file (%s)", shown, why)


def _put_back(fd: int, data: bytes, start: int, rel: str, exc: OSError, journal: Journal, shown: str) -> None:
    """After a forget's rewrite failed part way (the lease still held): the note's bytes
    ``data`` from ``start`` on written back and the journal's record removed, then a
    Conflict saying nothing changed (or, if even that fails, what the note may now hold:
    the record stays, and the daemon's next start or forget finishes the forget)."""
    reason = exc.strerror or str(exc)
    try:
        write_all(fd, data[start:], start)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    except OSError as again:
        log.error("a failed forget in %s could not be undone (%s)", shown, again)
        raise Conflict(
            f"forgetting in {rel} failed ({reason}) and the note could not be put back ({again.strerror or again}): "
            "part of it may be there twice until the daemon finishes the forget (at its next start or forget)",
            retry=False,
        ) from None
    journal.clear()
    raise Conflict(f"forgetting in {rel} failed ({reason}): not changed", retry=False) from None


def _ends_with(fd: int, st: os.stat_result, eol: bytes) -> bool:
    return os.pread(fd, len(eol), st.st_size - len(eol)) == eol if st.st_size >= len(eol) else False


@contextmanager
def journal_for(root: Path) -> Iterator[Journal]:
    """The :class:`~.forget_journal.Journal` of the notes directory ``root`` (one that
    records nothing when none is registered), held for one forget at a time; a record an
    earlier forget left is settled first (Conflict when it cannot be now)."""
    place = place_of(root)
    if place is None:
        yield Journal(None, root)
        return
    path, lock = place
    with lock:
        if os.path.lexists(path):
            settle(path, root)
            if os.path.lexists(path):
                raise Conflict("an earlier forget was interrupted and cannot be finished now (its note may be open in "
                               "another program; the daemon's log says why): not changed; try again", retry=True)  # fmt: skip
        yield Journal(path, root)


@contextmanager
def settled_for(root: Path, rel: str) -> Iterator[None]:
    """Held while a capture appends to the note ``rel``: when an earlier forget left its
    record (one ``lstat`` tells; none: the only cost), it is settled first; Conflict when
    it is still there and names this note (the append would make the note none of the
    rewrite's states, and that forget could never be finished)."""
    place = place_of(root)
    if place is None or not os.path.lexists(place[0]):
        yield
        return
    path, lock = place
    with lock:
        settle(path, root)
        record = pending(path)
        if record is not None and _same_file(os.path.join(record.root, record.rel), os.path.join(root, rel)):
            raise Conflict(f"an earlier forget in {record.rel} is unfinished (the daemon was stopped in the middle of "
                           "it, and the note cannot be finished now: it may be open in another program or read-only; "
                           "the daemon's log says why): nothing was written; try again", retry=True)  # fmt: skip
        yield


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except OSError:
        return False


def remove_from_note(
    root: Path, rel: str, plan: Callable[[bytes, str], Removal | None], shown: str = UNNAMED
) -> tuple[Removal, bytes, os.stat_result] | None:
    """Remove what ``plan(bytes, real_rel)`` says from the note ``rel`` (``real_rel`` as
    for :func:`append_note`), under a write lease; None
    when it does not exist or ``plan`` returns None. Returns the removal, the new bytes
    and the stat after. ``plan``'s exceptions pass through, the file untouched. The
    in-place rewrite is recorded first in the notes directory's forget journal, when
    one is registered (:func:`journal_for`, which holds it: one forget at a time)."""
    with journal_for(root) as journal:
        return _remove(root, rel, plan, journal, shown)


def _remove(
    root: Path, rel: str, plan: Callable[[bytes, str], Removal | None], journal: Journal, shown: str
) -> tuple[Removal, bytes, os.stat_result] | None:
    opened = open_note(root, rel, append=False, create=False)
    if opened is None:
        return None
    fd = opened[0]
    try:
        if not take_lease(fd, LEASE_ATTEMPTS):
            reason, retry = no_lease_reason(fd)
            raise Conflict(f"{rel} {reason}", retry=retry)
        try:
            data = read_all(fd)
            removal = plan(data, real_path_of(root, fd, rel))
            if removal is None:
                return None
            if removal.whole_file:  # created for this capture, nothing else in it
                if os.fstat(fd).st_nlink > 1:  # given another name since the plan: that name would keep it
                    raise Conflict(f"{rel} was given another name (a hard link) while being edited: not changed; "
                                   "try again", retry=True)  # fmt: skip
                try:
                    gone = unlink_if_names(root / rel, fd)
                except OSError as exc:
                    where = os.path.relpath((root / rel).parent, root)
                    where = "the notes directory" if where == "." else f"the directory {where}"
                    raise Conflict(f"{rel} holds nothing but the capture, but it cannot be deleted from {where} "
                                   f"({exc.strerror or exc}): not changed", retry=False) from None  # fmt: skip
                if not gone:
                    raise Conflict(f"{rel} was replaced by another program while it was being edited: not changed; "
                                   "try again", retry=True)  # fmt: skip
                if os.fstat(fd).st_nlink:  # linked once more in that instant: no name keeps the capture
                    os.ftruncate(fd, 0)
                    os.fsync(fd)
                return removal, b"", os.fstat(fd)
            tail = data[removal.end :]
            journal.write(rel, fd, data, removal.start, removal.end, named=shown != UNNAMED)
            try:
                write_all(fd, tail, removal.start)
                os.ftruncate(fd, removal.start + len(tail))
                os.fsync(fd)
            except OSError as exc:
                _put_back(fd, data, removal.start, rel, exc, journal, shown)
            after = os.fstat(fd)
            if not still_names(root / rel, fd):  # renamed away meanwhile: this is no longer the note
                write_all(fd, data[removal.start :], removal.start)
                os.ftruncate(fd, len(data))
                os.fsync(fd)
                journal.clear()
                raise Conflict(f"{rel} was replaced by another program while it was being edited: not changed; "
                               "try again", retry=True)  # fmt: skip
            journal.clear()
            return removal, data[: removal.start] + tail, after
        finally:
            release_lease(fd)
    finally:
        os.close(fd)

