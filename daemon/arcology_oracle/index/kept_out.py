"""Rejected link suggestions naming a node the privacy rule now keeps out: forgotten.

A rejection (``link_rejections``: two node IDs) is made between nodes the index holds.
When one of them becomes private (its file's tags, its own heading's tag, a
``ROAM_EXCLUDE``, an exclude glob), its ID must not stay in the database. Which nodes are
private is not stored anywhere (nothing of a private note is), so it is found as the
indexer reads: during one reconcile or one batch of paths, :class:`KeptOutNodes` notes
the rejected nodes that

* the reader kept out of a file it read (``ParsedFile.kept_out_ids``: a heading's own
  private tag, an inherited one, ``ROAM_EXCLUDE``, a PGP block), or
* are defined in a file read private whole (an ``:ID:`` property line naming them
  anywhere in its bytes), or
* were held by a file now read private, or now excluded (a glob matches its path), or
  are defined in a file moved to where a glob excludes it (the watcher gives its new
  path: its ``:ID:`` lines are read, nothing else of it).

At the end, the rejections naming one of those the index does not hold then are deleted
(:meth:`~arcology_oracle.store.links.LinkGraph.forget_rejections_of`): a node moved to
another file read in the same batch keeps its rejections. A node merely gone (its note
deleted, or the notes directory emptied, as an unmounted drive leaves it) keeps them, as
does one left out for a reason that is not privacy (a heading that is no node for Org,
as with a line typed between it and its drawer; text that cannot be read): they hold
again when it comes back, as the README promises.

Cost: nothing when there is no rejection (most indexes); else one regular-expression
pass over each file read private whole, and over each excluded file the watcher names.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from pathlib import Path

from ..notes.files import is_excluded
from ..store import Store
from .regular_files import read_regular_file

# An :ID: property line (drawers in any letter case, as the reader reads them).
_ID_LINE = re.compile(rb"(?im)^[ \t]*:id:[ \t]+(\S+)")


class KeptOutNodes:
    """The rejected nodes found kept out during one indexer operation (see the module
    docstring). Used on the indexer's thread only."""

    def __init__(self, store: Store | None = None) -> None:
        self._store = store
        self._rejected: dict[bytes, str] = {}
        if store is not None:
            self._rejected = {node.encode(): node for node in store.rejected_nodes()}
        self._found: set[str] = set()

    def kept_out(self, ids: tuple[str, ...]) -> None:
        """The IDs the reader kept out of a file it read (``ParsedFile.kept_out_ids``)."""
        if self._rejected:
            self._found.update(i for i in ids if i.encode() in self._rejected)

    def private_file(self, rel: str, data: bytes) -> None:
        """``rel``, read private whole (``data``, its bytes): the rejected nodes its
        ``:ID:`` lines define, and those it held (see :meth:`held_by`)."""
        self._defined_in(data)
        self.held_by(rel)

    def held_by(self, rel: str) -> None:
        """Before the rows of ``rel``, now private or excluded, are deleted: the rejected
        nodes it held (an encrypted note's IDs are not in its readable bytes)."""
        if self._rejected and self._store is not None:
            self._found |= self._store.own_ids_of(rel) & set(self._rejected.values())

    def left_out(self, rel: str, root: Path, real_root: str, exclude_globs: Sequence[str]) -> None:
        """``rel`` is no note to index. When a glob excludes it (the user keeps it out, as
        a private tag would): the rejected nodes it held, and, a file being there (a note
        moved in), those its ``:ID:`` lines define. Left out for another reason (a hidden
        folder, an editor's backup or lock): nothing, and nothing is read; a note moved
        to a hidden trash folder is deleted, and keeps its rejections."""
        if not self._rejected or not is_excluded(rel, exclude_globs):
            return
        self.held_by(rel)
        with contextlib.suppress(OSError):  # gone again, unreadable, or held open by its writer
            if (read := read_regular_file(real_root, root / rel)) is not None:
                self._defined_in(read[0])

    def _defined_in(self, data: bytes) -> None:
        """The rejected nodes an ``:ID:`` line of ``data`` defines."""
        if self._rejected:
            self._found.update(self._rejected[m[1]] for m in _ID_LINE.finditer(data) if m[1] in self._rejected)

    def forget(self) -> int:
        """Delete the rejections naming a node found that the index does not hold; how many."""
        if not self._found or self._store is None:
            return 0
        found, self._found = self._found, set()
        return self._store.forget_rejections_of(found)
