"""Which note a capture goes into: today's daily, or the capture inbox, and why.

:func:`place` decides it from the files as they are now (Emacs's lock and auto-save
files, symlinks, encrypted names, the file system's name limits, the index's
exclusions), so every one of its checks is a system call that a slow notes directory
(NFS, sshfs) can stall for seconds: it is called from a worker thread, once per
capture, never on the event loop every other request waits on.

The capture goes to the capture inbox instead, and :attr:`Placement.note` says why,
when Emacs holds the daily (its lock ``.#NAME``, or ``#NAME#`` auto-saved since its
last save), the client's editor says it holds the daily unsaved, the daily is a symlink
leading out of the notes directory (never indexed), or it is encrypted (``.gpg``,
``.age``: a capture in clear would sit in it unseen, and go at Emacs's next save). When
the inbox cannot take it either, nothing is written (Conflict).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadRequest, Conflict
from ..notes.disk import emacs_holds
from ..notes.files import is_encrypted_name
from . import capture_places
from .note_files import leads_out

LOCKED_NOTE = "today's daily note has unsaved edits in Emacs (it is locked, or auto-saved since): written to the capture inbox instead"
UNSAVED_NOTE = "today's daily note has unsaved edits in the editor (the request says so): written to the capture inbox instead"
LEADS_OUT_NOTE = "today's daily note is a link to a file outside the notes directory: written to the capture inbox instead"
ENCRYPTED_NOTE = "today's daily note is encrypted (Emacs would never show a capture in clear there): written to the capture inbox instead"


@dataclass(frozen=True)
class Placement:
    """The note ``rel`` a capture goes into; ``note`` says why it is not the daily;
    ``left_out`` why the index never reads ``rel`` (:func:`.capture_places.left_out`)."""

    rel: str
    note: str | None
    left_out: str | None


def place(root: Path, daily: str, inbox: str, held: Collection[str], exclude_globs: Sequence[str]) -> Placement:
    """Where a capture for the daily ``daily`` goes (see the module docstring); ``held``
    names the notes the client's editor holds unsaved (:func:`unsaved_among`). BadRequest
    for a daily path no file system holds, Conflict when neither note can take it.
    Reads the file system: call it from a worker thread."""
    check_path_fits(root, daily)
    rel, note = daily, None
    if emacs_holds(root / daily):
        rel, note = inbox, LOCKED_NOTE
    elif daily in held:
        rel, note = inbox, UNSAVED_NOTE
    elif leads_out(root, daily):
        rel, note = inbox, LEADS_OUT_NOTE
    elif encrypted(root, daily):
        rel, note = inbox, ENCRYPTED_NOTE
    if rel == inbox and (emacs_holds(root / inbox) or inbox in held or encrypted(root, inbox)):
        raise Conflict(
            f"both today's daily note ({daily}) and the capture inbox ({inbox}) have unsaved edits in Emacs "
            "or cannot be written (an encrypted note is never written in clear); save one and try again",
            retry=not encrypted(root, inbox),  # saved, the inbox takes it; encrypted, it never will
        )
    return Placement(rel, note, capture_places.left_out(root, rel, exclude_globs))


def check_path_fits(root: Path, rel: str) -> None:
    """BadRequest unless each name in ``rel`` and the whole path ``root/rel`` are short
    enough for the file system, checked before anything is created."""
    try:
        name_max, path_max = os.pathconf(root, "PC_NAME_MAX"), os.pathconf(root, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    shown = rel if len(rel) <= 80 else rel[:77] + "..."
    for name in Path(rel).parts:
        if len(os.fsencode(name)) > name_max:
            raise BadRequest(f"the note path {shown} holds a name of {len(os.fsencode(name))} bytes; a file name "
                             f"can have at most {name_max}: nothing was written")  # fmt: skip
    length = len(os.fsencode(root / rel))
    if length >= path_max:
        raise BadRequest(f"the note path {shown} is too long: {length} bytes with the notes directory, at most "
                         f"{path_max - 1} fit: nothing was written")  # fmt: skip


def encrypted(root: Path, rel: str) -> bool:
    """Whether the note ``rel`` is one Emacs keeps encrypted, by its name or its real one."""
    return is_encrypted_name(rel) or is_encrypted_name(os.path.realpath(root / rel))


def unsaved_among(root: Path, notes: Collection[str], unsaved: Collection[str]) -> set[str]:
    """Those of ``notes`` that one of ``unsaved`` (normalised paths relative to ``root``,
    without ``..``) names by its true name, every symlink resolved, as Emacs names a
    file, or that one of them is by another name (a hard link: Emacs visits the two as
    one file). Each is compared by a few system calls: its last names with the note's, and
    the folder before them with the note's deepest existing folder (the same directory);
    by true name only when its last name is a symlink. A request of many deep paths held
    the daemon for seconds when each was resolved name by name. Call it from a worker
    thread."""
    targets, files = [], {}
    for note in notes:
        if (target := _true_name(root, note)) is not None:
            anchor = os.path.dirname(target)
            while not os.path.isdir(anchor) and anchor != os.path.dirname(anchor):
                anchor = os.path.dirname(anchor)  # a folder the first capture creates
            with contextlib.suppress(OSError):
                targets.append((note, target, os.stat(anchor), os.path.relpath(target, anchor).split(os.sep)))
            with contextlib.suppress(OSError, ValueError):
                files[note] = os.stat(target)
    held: set[str] = set()
    for name in dict.fromkeys(unsaved):
        parts, path = name.split("/"), os.path.join(root, name)
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except (OSError, ValueError):
            link = False
        # Another name of the note (a hard link): Emacs visits it as the same file.
        with contextlib.suppress(OSError, ValueError):
            found = os.stat(path)
            held.update(note for note, st in files.items() if os.path.samestat(found, st))
        for note, target, anchor, tail in targets:
            if note in held or not (link or parts[-len(tail):] == tail):
                continue
            if link:
                same = _true_name(root, name) == target
            else:
                folder = os.path.join(root, *parts[: len(parts) - len(tail)])
                try:  # the same directory, and (a folder the note's lacks) not there either
                    same = os.path.samestat(os.stat(folder), anchor)
                    first = os.path.join(folder, tail[0])
                    if same and len(tail) > 1 and os.path.lexists(first):
                        same = os.path.islink(first) and _true_name(root, name) == target
                except (OSError, ValueError):
                    same = False
            if same:
                held.add(note)
    return held


def _true_name(root: Path, rel: str) -> str | None:
    """``root/rel`` with every symlink resolved (as Emacs names a file it visits), or
    None for a name no path can be (a NUL in it)."""
    try:
        return os.path.realpath(root / rel)
    except (OSError, ValueError):
        return None
