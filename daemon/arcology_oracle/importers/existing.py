"""The files an import finds already in the notes: by their file-level ``:ID:``, and the
encrypted ones by their names.

An import writes each conversation to the file holding its ID, wherever the user moved
it, else to a new file in the target (:mod:`.writing`). A chat the user encrypted since
(``M-x epa-encrypt-file`` writes ``NAME.org.gpg`` beside ``NAME.org``; age.el ``.age``)
holds no readable ID: it is known by the name it was imported under, so that a later
import does not write its conversation again in plain text, where the index reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..notes.disk import read_regular_file
from ..notes.files import is_encrypted_name, plain_name
from .render import file_id_of
from .staging import STAGING_PREFIX

HEAD_BYTES = 4096


class Existing:
    """What is below ``roam`` (the resolved roam directory; hidden and excluded folders
    too, an import's staging directories not, symlinked folders not followed):

    ``ids``: file-level ``:ID:`` -> path of each org file. Of two files with one ID, the
    one below ``target`` first, then the first in sorted order.

    ``encrypted``: plain name (``NAME.org``) -> path of each encrypted copy of an org
    file (``NAME.org.gpg``, ``NAME.org.age``, and their Emacs backups), the first in
    sorted order.

    Only regular files are read, each opened without blocking and checked once open
    (:func:`~..notes.disk.read_regular_file`): a FIFO, a socket or a directory put in a
    listed file's place is skipped, never waited on."""

    def __init__(self, roam: Path, target: Path) -> None:
        self.ids: dict[str, Path] = {}
        self.encrypted: dict[str, Path] = {}
        paths: list[tuple[bool, Path]] = []
        encrypted: list[Path] = []
        inside = str(target.resolve()).rstrip(os.sep) + os.sep
        for directory, dirs, files in os.walk(roam):
            if directory == str(roam):
                dirs[:] = [d for d in dirs if not d.startswith(STAGING_PREFIX)]
            elsewhere = not (directory + os.sep).startswith(inside)  # os.walk's folders are real: roam is resolved
            paths += [(elsewhere, Path(directory, name)) for name in files if name.endswith(".org")]
            encrypted += [Path(directory, name) for name in files if is_encrypted_name(name)]
        for path in sorted(encrypted):
            if plain_name(path.name).endswith(".org"):
                self.encrypted.setdefault(plain_name(path.name), path)
        for _, path in sorted(paths):
            head = read_regular_file(path, HEAD_BYTES)  # a FIFO swapped in since the walk must not hang the scan
            if head is None:
                continue
            file_id = file_id_of(head.decode("utf-8", "replace"))
            if file_id:
                self.ids.setdefault(file_id, path)

