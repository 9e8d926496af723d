"""Writing what the indexer read: a file's headings, chunks and links replaced in one
transaction, files touched and deleted, and the vectors no chunk uses any more dropped.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..notes.privacy import Privacy
from ..notes.records import Chunk, ParsedFile
from ..notes.setup_files import to_json as setup_json
from .db import NOTES_DIR
from .file_rows import HEADING_COLUMNS, FileRows, rows_of, stored_as
from .file_rows import to_json as _to_json
from .oracle_words import oracle_sql
from .vector_sync import VectorSync

READING_RULES = "reading_rules"  # meta key: the rules the indexed files were read by
# meta key: the highest heading id ever given out. A heading id is never given out again:
# readers hold ids across statements and reads (/search's two halves, /suggest-links), and
# an id held across a write must name its heading or none, never the next heading indexed
# (``headings.id`` has no AUTOINCREMENT: max(id) + 1 gave the ids of the last note indexed
# again, or deleted, to the next headings). Ids of a savepoint rolled back may be given
# again: no reader saw them.
log = logging.getLogger(__name__)

HEADING_IDS_GIVEN = "heading_ids_given"
# A heading row: its id and file, then the columns file_rows builds.
_INSERT_HEADING = (
    f"INSERT INTO headings (id, file, {HEADING_COLUMNS})"
    f" VALUES (?, ?, {', '.join('?' * len(HEADING_COLUMNS.split(',')))})"
)


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store remembers of a file to decide whether to read it again."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    # The setup files it names, as notes.setup_files.read_setup_files saw them (JSON).
    setup: str = "[]"


class FileWrites(VectorSync):
    """The indexer's writes (see the module docstring)."""

    def file_states(self, pause: Callable[[], None] | None = None) -> dict[str, FileState]:
        """Every indexed file's path, size, mtime, content hash and setup files; ``pause``,
        when given, is called every 256 files (a reconcile's give-way to the reads in flight,
        :mod:`arcology_oracle.index.give_way`: a million headings' files took ~0.5-0.9 s of
        Python here, beside a start's first queries)."""
        states: dict[str, FileState] = {}
        for i, r in enumerate(self.conn.execute("SELECT path, size, mtime_ns, hash, setup FROM files")):
            if pause is not None and not i % 256:
                pause()
            states[r["path"]] = FileState(r["path"], r["size"], r["mtime_ns"], r["hash"], r["setup"])
        return states

    def setup_records(self) -> list[tuple[str, str]]:
        """``(path, setup)`` of every file that names a setup file (``setup`` as in
        :class:`FileState`), through the partial index of migration m018."""
        return [tuple(r) for r in self.conn.execute("SELECT path, setup FROM files WHERE setup != '[]'")]

    def recorded_reading_rules(self) -> str | None:
        """The rules the indexed files were read by (:meth:`renew_reading_rules`), or None."""
        return self.get_meta(READING_RULES)

    def renew_reading_rules(self, rules: str, *, tagged: frozenset[str] | None = None) -> bool:
        """Record ``rules`` (what decides how a file is read into the index: the private
        tags, the chunking, the reader's version); when they differ from the rules recorded, or none are, every
        file is marked changed first, in the same transaction, so that the next reconcile
        reads each again (a tag made private leaves the index, a new chunk size takes
        effect). With ``tagged`` (the tags newly made private, when nothing else changed),
        only the files with a heading holding one of them (in any case, as the privacy
        rule compares tags) and those with no heading stored (such a note keeps its
        title: one its file tags now make private must leave whole) are: the others
        would read the same. Returns whether the rules differed."""
        if self.get_meta(READING_RULES) == rules:
            return False
        with self.transaction():
            self.conn.executemany("UPDATE files SET mtime_ns = 0, hash = '' WHERE id = ?", [(f,) for f in self._read_again(tagged)])
            self._set_meta(READING_RULES, rules)
        return True

    def notes_dir(self) -> str | None:
        """The real path of the notes directory the index was last read from
        (:meth:`remember_notes_dir`), or None (an index older than this key, or never read)."""
        held = self.get_meta(NOTES_DIR)
        return None if held is None else os.fsdecode(held)

    def remember_notes_dir(self, real_path: str) -> None:
        """Record ``real_path`` as the notes directory the index holds (a reconcile of it
        has begun): the CLI falls back on it when no directory is given
        (:func:`~arcology_oracle.store.db.remembered_notes_dir`), and ``doctor`` does not
        compare the index with another directory's notes. A warning says so when the
        index held another directory's notes (they leave it)."""
        held = self.notes_dir()
        if held == real_path:
            return
        if held is not None and self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone():
            log.warning("the index %s held the notes of %s: now those of %s", self.path, held, real_path)
        with self.transaction():  # the OS's bytes: a name need not be UTF-8
            self._set_meta(NOTES_DIR, os.fsencode(real_path))

    def read_again_under(self, rules: str, tagged: frozenset[str] | None = None) -> list[str]:
        """The paths of the files :meth:`renew_reading_rules` would mark changed for
        ``rules`` and ``tagged`` (none when they are the rules recorded): until read again,
        they may hold a heading those rules make private."""
        if self.get_meta(READING_RULES) == rules:
            return []
        ids = self._read_again(tagged)
        return [path for file_id, path in self.conn.execute("SELECT id, path FROM files") if file_id in ids]

    def _read_again(self, tagged: frozenset[str] | None) -> set[int]:
        """The ids of the files to read again when the rules change (see :meth:`renew_reading_rules`)."""
        if tagged is None:
            return {f for (f,) in self.conn.execute("SELECT id FROM files")}
        hidden = Privacy.from_tags(tagged)
        files = {f for f, tags in self.conn.execute("SELECT file, tags FROM headings WHERE tags != '[]'")
                 if hidden.tags_exclude(json.loads(tags))}  # fmt: skip
        return files | {f for (f,) in self.conn.execute(
            "SELECT id FROM files WHERE NOT EXISTS (SELECT 1 FROM headings WHERE file = files.id)")}  # fmt: skip

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content hash did not change."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def replace_file(
        self,
        parsed: ParsedFile,
        *,
        size: int,
        mtime_ns: int,
        file_hash: str,
        chunks: Sequence[Sequence[Chunk]],
    ) -> int:
        """Replace everything stored for ``parsed.path`` in one transaction.

        ``chunks[i]`` are the chunks of ``parsed.headings[i]``. Vectors of texts that no
        chunk uses any more are deleted. Returns how many of the new chunks have no vector
        yet (the embedding work this change created). A file read again into exactly the
        rows stored (:func:`.file_rows.stored_as`; after a change of the reading rules
        that does not touch it) keeps them: only its size, mtime, hash and setup files
        are recorded. A file the privacy rule keeps out whole (``parsed.private``) is
        stored as nothing at all: what was stored for it is deleted.
        """
        if parsed.private:  # kept out whole by the privacy rule: not even its path is stored
            self.delete_file(parsed.path)
            return 0
        if len(chunks) != len(parsed.headings):
            raise ValueError("one list of chunks per heading is required")
        rows = rows_of(parsed, mtime_ns, chunks)
        problems, setup = _to_json(parsed.problems), setup_json(parsed.setup_files)
        new_hashes = {c.hash for cs in chunks for c in cs}
        with self.transaction():
            row = self.conn.execute(
                "SELECT id, title, file_node, problems FROM files WHERE path = ?", (parsed.path,)
            ).fetchone()
            same_file = row is not None and tuple(row[1:]) == (parsed.title, parsed.file_id, problems)
            if same_file and stored_as(self.conn, row[0], rows):
                self.conn.execute(
                    "UPDATE files SET size = ?, mtime_ns = ?, hash = ?, setup = ? WHERE id = ?",
                    (size, mtime_ns, file_hash, setup, row[0]),
                )
                return self._count_unembedded(new_hashes)
            old_hashes = self._delete_file_rows(parsed.path)
            cur = self.conn.execute(
                "INSERT INTO files (path, size, mtime_ns, hash, title, file_node, problems, setup) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (parsed.path, size, mtime_ns, file_hash, parsed.title, parsed.file_id, problems, setup),
            )
            self._insert_rows(cur.lastrowid, rows)
            self.drop_unused_vectors(old_hashes - new_hashes)
            return self._count_unembedded(new_hashes)

    def append_headings(
        self,
        parsed: ParsedFile,
        *,
        size: int,
        mtime_ns: int,
        file_hash: str,
        chunks: Sequence[Sequence[Chunk]],
    ) -> int | None:
        """Add ``parsed.headings`` (headings appended to the end of the indexed file
        ``parsed.path``, already read in the file's context) without touching its other
        rows, and record the file's new size, mtime and hash. None when the file is not
        indexed; else how many of the new chunks have no vector yet. Which of them are
        the oracle's words is as a full read of the file decides (the file's own
        ``:ROLE:`` reaches them; notes/oracle_words.py)."""
        if len(chunks) != len(parsed.headings):
            raise ValueError("one list of chunks per heading is required")
        with self.transaction():
            row = self.conn.execute("SELECT id FROM files WHERE path = ?", (parsed.path,)).fetchone()
            if row is None:
                return None
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, hash = ? WHERE id = ?", (size, mtime_ns, file_hash, row[0])
            )
            ids = self._insert_rows(row[0], rows_of(parsed, mtime_ns, chunks))
            # Read without the file's record, the appended headings (level 1) did not see
            # it: a :ROLE: oracle in the file's drawer makes them the oracle's words too, as
            # a full read does. Only its :ROLE:: a file record that is the oracle's because
            # it holds a grounded chat's reply passes that to no heading below it.
            self.conn.execute(
                "UPDATE headings SET oracle = 1 WHERE id BETWEEN ? AND ? AND EXISTS"
                f" (SELECT 1 FROM headings r WHERE r.file = ? AND r.level = 0 AND {oracle_sql('r')})",
                (ids.start, ids.stop - 1, row[0]),
            )
            self.conn.execute("DELETE FROM summaries WHERE file = ?", (parsed.path,))
            return self._count_unembedded({c.hash for cs in chunks for c in cs})

    def file_row(self, path: str) -> dict | None:
        """The indexed file's state, title and node ID, or None."""
        row = self.conn.execute("SELECT size, mtime_ns, hash, title, file_node FROM files WHERE path = ?", (path,)).fetchone()
        return dict(row) if row is not None else None

    def _insert_rows(self, file_rowid: int, rows: FileRows) -> range:
        """Insert ``rows`` (:func:`.file_rows.rows_of`) for the file ``file_rowid``; the ids
        its headings got."""
        # Heading ids are chosen here (we hold the write lock) so that headings, chunks
        # and links each go in with one executemany; above every id given out before
        # (HEADING_IDS_GIVEN; max(id) for a database written before it was kept).
        first = self.conn.execute(
            "SELECT max(coalesce((SELECT max(id) FROM headings), 0),"
            " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0)) + 1",
            (HEADING_IDS_GIVEN,),
        ).fetchone()[0]
        ids = range(first, first + len(rows.headings))
        self.conn.executemany(
            _INSERT_HEADING,
            [(heading_id, file_rowid, *row) for heading_id, row in zip(ids, rows.headings)],
        )
        if rows.headings:
            self._fts_pending.append((ids[0], ids[-1]))
            new_rows = "SELECT DISTINCT node_id FROM headings WHERE id BETWEEN ? AND ?"
            self._headings_of(self._notes_in(file_rowid, new_rows, (ids[0], ids[-1])))
            self._set_meta(HEADING_IDS_GIVEN, str(ids[-1]))
        self.conn.executemany(
            "INSERT INTO chunks (heading, ordinal, text, hash, first_turn, last_turn) VALUES (?, ?, ?, ?, ?, ?)",
            [(ids[i], *rest) for i, *rest in rows.chunks],
        )
        if rows.turns:
            first_turn = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM turns").fetchone()[0]
            self.conn.executemany(
                "INSERT INTO turns (id, heading, ordinal, speaker, text, start_line, end_line, date, cjk_text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(first_turn + n, ids[i], *rest) for n, (i, *rest) in enumerate(rows.turns)],
            )
            # the turns' keyword index
            self.conn.execute(
                "INSERT INTO turns_fts(rowid, text, cjk_text) SELECT id, text, cjk_text FROM turns WHERE id >= ?", (first_turn,)
            )
        self.conn.executemany(
            "INSERT INTO links (heading, src_node, dst_node) VALUES (?, ?, ?)", [(ids[i], *rest) for i, *rest in rows.links]
        )
        self.conn.executemany(
            "INSERT INTO node_labels (heading, node, label) VALUES (?, ?, ?)", [(ids[i], *rest) for i, *rest in rows.labels]
        )
        return ids

    def delete_file(self, path: str) -> bool:
        """Delete a file and everything derived from it. Returns whether it was indexed."""
        with self.transaction():
            exists = self.conn.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone()
            self.drop_unused_vectors(self._delete_file_rows(path))
        return exists is not None

    def _delete_file_rows(self, path: str) -> set[str]:
        row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return set()
        self._flush_fts()  # the delete trigger must find every heading in FTS
        self._headings_of(self._notes_in(row[0], "SELECT DISTINCT node_id FROM headings WHERE file = ?", (row[0],)))
        hashes = {
            r[0]
            for r in self.conn.execute(
                "SELECT c.hash FROM chunks c JOIN headings h ON h.id = c.heading WHERE h.file = ?",
                (row[0],),
            )
        }
        # Cascades remove headings, chunks and links; the trigger keeps FTS in step.
        self.conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        self.conn.execute("DELETE FROM summaries WHERE file = ?", (path,))
        return hashes

    def _notes_in(self, file_rowid: int, sql: str, args: tuple) -> set[str]:
        """The keys (``answers.retrieval.note_key``'s) of the notes of the headings ``sql``
        selects the ``node_id`` of, in the file ``file_rowid``."""
        nodes = {node for (node,) in self.conn.execute(sql, args)}
        if None in nodes:
            nodes.discard(None)
            path = self.conn.execute("SELECT path FROM files WHERE id = ?", (file_rowid,)).fetchone()[0]
            nodes.add(f"file:{path}")
        return nodes
