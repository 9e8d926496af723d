"""Taking back a capture :mod:`.note_io` could not write whole (a full disk, an I/O
error): the note cut back to its size before, or deleted with the folders made for it
when the capture created it, only while a write lease keeps every other program out.
Without one, another program may have appended after the part written (between the read
of that part and the cut, or the cut and the delete), and cutting or deleting would take
its bytes too: the part is then left, and the refusal says where."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..errors import Conflict
from .note_files import remove_created

log = logging.getLogger(__name__)


def take_back(
    fd: int, size: int, payload: bytes, rel: str, exc: OSError, created: tuple[Path, ...], leased: bool, shown: str
) -> None:
    """After a failed append of ``payload`` to the note ``rel`` (open as ``fd``, ``size``
    bytes before): under a write lease (``leased``), the file cut back to ``size`` when
    what follows is a part of ``payload`` (so nobody else's bytes), and removed with the
    folders made for it when this capture ``created`` it (else the next capture would
    find it empty and write no head); a Conflict saying so. Else a Conflict saying what
    part of the capture is left at the end of the file. The client never gets a success
    for a capture that may not be on disk, nor is half a heading left unsaid. The log
    names the note as ``shown`` (see :data:`.note_io.UNNAMED`), the Conflict as ``rel``."""
    reason = exc.strerror or str(exc)
    why = "no other program could be kept from writing it meanwhile"
    if leased:
        try:
            written = os.pread(fd, len(payload) + 1, size)
            if payload.startswith(written):
                os.ftruncate(fd, size)
                if created and size == 0:
                    remove_created(created, fd)
                else:
                    os.fsync(fd)
                raise Conflict(f"writing the capture into {rel} failed ({reason}): nothing was written", retry=False) from None
            why = "another program wrote after it"
        except OSError as again:
            why = again.strerror or str(again)
    log.error("a failed capture into %s could not be taken back (%s)", shown, why)
    raise Conflict(
        f"writing the capture into {rel} failed ({reason}), and the part of it written could not be taken back "
        f"({why}): look at the end of that note",
        retry=False,
    ) from None
