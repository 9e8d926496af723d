"""The files the privacy rule keeps out whole, as the indexer last read them: remembered
in the daemon's memory only, never in the database.

Nothing of a private file is stored, not even its path or its name (the one rule of
:mod:`arcology_oracle.notes.privacy`; ``ParsedFile.private``). So that a reconcile does
not read one again while it is unchanged, and so that one private through a setup file
comes back when that setup file changes (``LiveIndex`` looks at :attr:`setup_records`
with the store's), the indexer remembers them here as the store remembers the others:
path, size, mtime, hash and setup files. A new process reads each once, at its first
reconcile: about 0.1 ms a note, for its tags only (notes/reader.py stops there).

Changed on the indexer's thread only; :attr:`setup_records` is replaced whole, so any
thread may read it.
"""

from __future__ import annotations

import os

from ..notes.records import ParsedFile
from ..notes.setup_files import to_json as setup_json
from ..store.writes import FileState


class PrivateFiles:
    """The private files seen, by root-relative path (see the module docstring)."""

    def __init__(self) -> None:
        self._states: dict[str, FileState] = {}
        self.setup_records: tuple[tuple[str, str], ...] = ()  # (path, setup), as Store.setup_records

    def __contains__(self, rel: str) -> bool:
        return rel in self._states

    def shown(self, rels: list[str], most: int = 5) -> str:
        """``rels`` for a log line: the first ``most`` names of those not private when
        last read, the private ones only counted (their names are theirs to keep)."""
        named = [rel for rel in rels if rel not in self._states]
        hidden = len(rels) - len(named)
        parts = named[:most] + (["..."] if len(named) > most else []) + ([f"{hidden} private"] if hidden else [])
        return ", ".join(parts)

    def states(self) -> dict[str, FileState]:
        return dict(self._states)

    def keep(self, parsed: ParsedFile, st: os.stat_result, file_hash: str) -> None:
        self._states[parsed.path] = FileState(parsed.path, st.st_size, st.st_mtime_ns, file_hash, setup_json(parsed.setup_files))

    def touch(self, rel: str, st: os.stat_result) -> None:
        """A new size and mtime for a private file whose bytes did not change."""
        state = self._states[rel]
        self._states[rel] = FileState(rel, st.st_size, st.st_mtime_ns, state.hash, state.setup)

    def drop(self, rel: str) -> None:
        self._states.pop(rel, None)

    def clear(self) -> None:
        """Forget them all: the reading rules changed, each must be read again."""
        self._states.clear()

    def publish(self) -> None:
        """Make the setup files of the private files seen :attr:`setup_records`."""
        self.setup_records = tuple((s.path, s.setup) for s in self._states.values() if s.setup != "[]")
