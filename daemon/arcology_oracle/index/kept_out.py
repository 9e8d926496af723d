"""Rejected link suggestions naming a node the privacy rule now keeps out: forgotten.

A rejection (``link_rejections``: two node IDs) is made between nodes the index holds.
When one of them becomes private (its file's tags, its own heading's tag, a
``ROAM_EXCLUDE``, an exclude glob), its ID must not stay in the database. Which nodes are
private is not stored anywhere (nothing of a private note is), so it is found as the
indexer reads: during one reconcile or one batch of paths, :class:`KeptOutNodes` notes
the rejected nodes that

* are defined in a file read (an ``:ID:`` property line naming them: the node is written
  there, so the index not holding it means the privacy rule kept it out), or
* were held by a file now read private, or now excluded (a glob matches its path).

At the end, the rejections naming one of those the index does not hold then are deleted
(:meth:`~arcology_oracle.store.links.LinkGraph.forget_rejections_of`): a node moved to
another file read in the same batch keeps its rejections. A node merely gone (its note
deleted, or the notes directory emptied, as an unmounted drive leaves it) is written
nowhere and keeps them: they hold again when it comes back, as the README promises.

Cost: nothing when there is no rejection (most indexes); else one regular-expression
pass over each file read.
"""

from __future__ import annotations

import re

from ..store import Store

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

    def read(self, data: bytes) -> None:
        """The bytes of a file read: the rejected nodes an ``:ID:`` line of it defines."""
        if self._rejected:
            self._found.update(self._rejected[m[1]] for m in _ID_LINE.finditer(data) if m[1] in self._rejected)

    def held_by(self, rel: str) -> None:
        """Before the rows of ``rel``, now private or excluded, are deleted: the rejected
        nodes it held (an encrypted note's IDs are not in its readable bytes)."""
        if self._rejected and self._store is not None:
            self._found |= self._store.own_ids_of(rel) & set(self._rejected.values())

    def forget(self) -> int:
        """Delete the rejections naming a node found that the index does not hold; how many."""
        if not self._found or self._store is None:
            return 0
        found, self._found = self._found, set()
        return self._store.forget_rejections_of(found)
