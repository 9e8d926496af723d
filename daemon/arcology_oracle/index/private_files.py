"""The files the privacy rule keeps out whole, as the indexer last read them: remembered
in the daemon's memory only, never in the database.

Nothing of a private file is stored, not even its path or its name (the one rule of
:mod:`arcology_oracle.notes.privacy`; ``ParsedFile.private``). So that a reconcile does
not read one again while it is unchanged, and so that one private through a setup file
comes back when that setup file changes (``LiveIndex`` looks at :attr:`setup_records`
with the store's), the indexer remembers them here as the store remembers the others:
path, size, mtime, hash and setup files. A new process reads each once, at its first
reconcile: about 0.1 ms a note, for its tags only (notes/reader.py stops there).

It remembers too the setup files a public note names in its private parts (a
``#+SETUPFILE:`` line under a private heading): the store keeps the others and
:data:`~arcology_oracle.notes.setup_files.NAMED_IN_PRIVATE` in their place, which makes a
new process read the note again (:meth:`with_named_privately`).

It also remembers the files that could not be read whose privacy is not known (never
read, private when last read, or what makes a note private changed since), and the
files left out for where they lead (a link whose real path ``exclude_globs`` match, or
outside the notes): the log names none of those nor the private ones
(:meth:`PrivateFiles.shown`).

Changed on the indexer's thread only; :attr:`setup_records` is replaced whole, so any
thread may read it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..notes.records import ParsedFile
from ..notes.setup_files import to_json as setup_json
from ..store.writes import FileState


class PrivateFiles:
    """The private files seen, by root-relative path (see the module docstring)."""

    def __init__(self) -> None:
        self._states: dict[str, FileState] = {}
        self._unsure: set[str] = set()  # could not be read, and may be private
        self._left_out: set[str] = set()  # a link the index does not follow (left_out)
        self.setup_records: tuple[tuple[str, str], ...] = ()  # (path, setup), as Store.setup_records
        self._named_privately: dict[str, str] = {}  # public note -> every setup file it names (JSON)

    def __contains__(self, rel: str) -> bool:
        return rel in self._states

    def among(self, rels: list[str]) -> frozenset[str]:
        """Those of ``rels`` private as last read, or unread and maybe private: what the
        log must not name, taken before the files are read again (see :meth:`shown`)."""
        return frozenset(rel for rel in rels if rel in self._states or rel in self._unsure or rel in self._left_out)

    def shown(self, rels: list[str], were: frozenset[str] = frozenset(), most: int = 5) -> str:
        """``rels`` for a log line, once they were read again: the first ``most`` names of
        those public both before (``were``: :meth:`among` before the read) and after it,
        the others only counted (their names are theirs to keep): a note made private by
        the read, or deleted while private, is not named either, nor a link left out
        (:meth:`left_out`: an excluded note is private too)."""
        unread = [rel for rel in rels if rel in self._unsure]
        named = [rel for rel in rels if rel not in self._states and rel not in self._unsure and rel not in were
                 and rel not in self._left_out]  # fmt: skip
        hidden = len(rels) - len(named) - len(unread)
        parts = named[:most] + (["..."] if len(named) > most else [])
        parts += ([f"{hidden} private"] if hidden else []) + ([f"{len(unread)} unreadable"] if unread else [])
        return ", ".join(parts)

    def left_out(self, rels: Iterable[str]) -> None:
        """``rels`` are there but the index does not read them for where they lead: links
        whose real path ``exclude_globs`` match (an excluded note under another name), or
        outside the notes. Counted, never named, until read or gone."""
        self._left_out.update(rels)

    def states(self) -> dict[str, FileState]:
        return dict(self._states)

    def keep(self, parsed: ParsedFile, st: os.stat_result, file_hash: str) -> None:
        self._unsure.discard(parsed.path)
        self._named_privately.pop(parsed.path, None)
        self._states[parsed.path] = FileState(parsed.path, st.st_size, st.st_mtime_ns, file_hash, setup_json(parsed.setup_files))

    def unsure(self, rel: str) -> None:
        """``rel`` could not be read and may be private: not named until it is read."""
        self._unsure.add(rel)

    def touch(self, rel: str, st: os.stat_result) -> None:
        """A new size and mtime for a private file whose bytes did not change."""
        state = self._states[rel]
        self._states[rel] = FileState(rel, st.st_size, st.st_mtime_ns, state.hash, state.setup)

    def drop(self, rel: str) -> None:
        """``rel`` was read public, or is gone."""
        self._states.pop(rel, None)
        self._unsure.discard(rel)
        self._left_out.discard(rel)
        self._named_privately.pop(rel, None)

    def public(self, parsed: ParsedFile) -> None:
        """``parsed`` was read public: :meth:`drop`, and the setup files it names in its
        private parts remembered (see the module docstring)."""
        self.drop(parsed.path)
        if parsed.private_setup:
            every = [s for s in parsed.setup_files if s[0]] + list(parsed.private_setup)
            self._named_privately[parsed.path] = setup_json(every)

    def with_named_privately(self, states: dict[str, FileState]) -> dict[str, FileState]:
        """The store's ``states`` with, for each note remembered naming setup files in its
        private parts, all the setup files it names."""
        for rel, setup in self._named_privately.items():
            if (state := states.get(rel)) is not None:
                states[rel] = FileState(rel, state.size, state.mtime_ns, state.hash, setup)
        return states

    def clear(self) -> None:
        """Forget them all: the reading rules changed, each must be read again."""
        self._states.clear()

    def publish(self) -> None:
        """Make the setup files of the private files seen :attr:`setup_records`."""
        self.setup_records = (
            *((s.path, s.setup) for s in self._states.values() if s.setup != "[]"), *self._named_privately.items()
        )
