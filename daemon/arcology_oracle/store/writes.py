"""Writing what the indexer read: a file's headings, chunks and links replaced in one
transaction, files touched and deleted, and the vectors no chunk uses any more dropped.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..notes import cjk
from ..notes.privacy import Privacy
from ..notes.records import Chunk, Heading, ParsedFile
from .labels import node_labels
from .vector_sync import VectorSync

# json.dumps with keyword arguments builds a new encoder per call (0.9 s of a profiled
# cold index of 22,695 headings: four calls per heading).
_to_json = json.JSONEncoder(ensure_ascii=False).encode

READING_RULES = "reading_rules"  # meta key: the rules the indexed files were read by


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

    def file_states(self) -> dict[str, FileState]:
        """Every indexed file's path, size, mtime, content hash and setup files."""
        rows = self.conn.execute("SELECT path, size, mtime_ns, hash, setup FROM files")
        return {r["path"]: FileState(r["path"], r["size"], r["mtime_ns"], r["hash"], r["setup"]) for r in rows}

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
        rule compares tags) are: the others would read the same. Returns whether the
        rules differed."""
        if self.get_meta(READING_RULES) == rules:
            return False
        with self.transaction():
            if tagged is None:
                self.conn.execute("UPDATE files SET mtime_ns = 0, hash = ''")
            else:
                hidden = Privacy.from_tags(tagged)
                files = {f for f, tags in self.conn.execute("SELECT file, tags FROM headings WHERE tags != '[]'")
                         if hidden.tags_exclude(json.loads(tags))}  # fmt: skip
                self.conn.executemany("UPDATE files SET mtime_ns = 0, hash = '' WHERE id = ?", [(f,) for f in files])
            self._set_meta(READING_RULES, rules)
        return True

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
        yet (the embedding work this change created).
        """
        if len(chunks) != len(parsed.headings):
            raise ValueError("one list of chunks per heading is required")
        with self.transaction():
            old_hashes = self._delete_file_rows(parsed.path)
            cur = self.conn.execute(
                "INSERT INTO files (path, size, mtime_ns, hash, title, file_node, problems, setup) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (parsed.path, size, mtime_ns, file_hash, parsed.title, parsed.file_id, _to_json(parsed.problems),
                 _to_json(parsed.setup_files)),  # fmt: skip
            )
            file_rowid = cur.lastrowid
            self._insert_headings(file_rowid, parsed, mtime_ns, chunks)
            new_hashes = {c.hash for cs in chunks for c in cs}
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
        indexed; else how many of the new chunks have no vector yet."""
        if len(chunks) != len(parsed.headings):
            raise ValueError("one list of chunks per heading is required")
        with self.transaction():
            row = self.conn.execute("SELECT id FROM files WHERE path = ?", (parsed.path,)).fetchone()
            if row is None:
                return None
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, hash = ? WHERE id = ?", (size, mtime_ns, file_hash, row[0])
            )
            self._insert_headings(row[0], parsed, mtime_ns, chunks)
            self.conn.execute("DELETE FROM summaries WHERE file = ?", (parsed.path,))
            return self._count_unembedded({c.hash for cs in chunks for c in cs})

    def file_row(self, path: str) -> dict | None:
        """The indexed file's state, title and node ID, or None."""
        row = self.conn.execute("SELECT size, mtime_ns, hash, title, file_node FROM files WHERE path = ?", (path,)).fetchone()
        return dict(row) if row is not None else None

    def _insert_headings(self, file_rowid: int, parsed: ParsedFile, mtime_ns: int, chunks: Sequence[Sequence[Chunk]]) -> None:
        # Headings nothing in the file dates are dated by the file's modification time.
        mtime_day = datetime.date.fromtimestamp(mtime_ns / 1e9).isoformat()
        # Heading ids are chosen here (we hold the write lock) so that headings, chunks
        # and links each go in with one executemany.
        first = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM headings").fetchone()[0]
        ids = range(first, first + len(parsed.headings))
        self.conn.executemany(
            "INSERT INTO headings (id, file, node_id, own_id, level, title, olp, olp_text, tags, todo,"
            " properties, body, text, start_line, end_line, node_title, aliases, date, date_source, hash,"
            " cjk_head, cjk_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_heading_row(heading_id, file_rowid, h, mtime_day, parsed.title) for heading_id, h in zip(ids, parsed.headings)],
        )
        if parsed.headings:
            self._fts_pending.append((ids[0], ids[-1]))
            self._headings_changed = True
        self.conn.executemany(
            "INSERT INTO chunks (heading, ordinal, text, hash, first_turn, last_turn) VALUES (?, ?, ?, ?, ?, ?)",
            [(heading_id, c.ordinal, c.text, c.hash, c.first_turn, c.last_turn)
             for heading_id, cs in zip(ids, chunks) for c in cs],
        )  # fmt: skip
        self._write_turns(ids, parsed.headings, chunks, mtime_day)
        self.conn.executemany(
            "INSERT INTO links (heading, src_node, dst_node) VALUES (?, ?, ?)",
            [(heading_id, h.node_id, dst) for heading_id, h in zip(ids, parsed.headings) for dst in h.links],
        )
        # Tags and refs of nodes, for the graph signal of similarity (store/links.py).
        self.conn.executemany(
            "INSERT INTO node_labels (heading, node, label) VALUES (?, ?, ?)",
            [(heading_id, h.own_id, label) for heading_id, h in zip(ids, parsed.headings) if h.own_id
             for label in node_labels(h.tags, h.refs)],
        )  # fmt: skip

    def _write_turns(self, ids: range, headings: Sequence[Heading], chunks: Sequence[Sequence[Chunk]], day: str) -> None:
        """The turns of the dialogue headings (carried by their first chunk), and their
        keyword index."""
        rows = [
            (heading_id, t.ordinal, t.speaker, t.text, t.start_line, t.end_line, t.when or h.date or day,
             cjk.bigrams(t.text))
            for heading_id, h, cs in zip(ids, headings, chunks) if cs and cs[0].dialogue
            for t in cs[0].dialogue
        ]  # fmt: skip
        if not rows:
            return
        first = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM turns").fetchone()[0]
        self.conn.executemany(
            "INSERT INTO turns (id, heading, ordinal, speaker, text, start_line, end_line, date, cjk_text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(first + i, *row) for i, row in enumerate(rows)],
        )
        self.conn.execute(
            "INSERT INTO turns_fts(rowid, text, cjk_text) SELECT id, text, cjk_text FROM turns WHERE id >= ?", (first,)
        )

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
        self._headings_changed = True
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


def _heading_row(heading_id: int, file_rowid: int, h: Heading, mtime_day: str, file_title: str) -> tuple:
    context = _context(h, file_title)
    return (
        heading_id,
        file_rowid,
        h.node_id,
        h.own_id,
        h.level,
        h.title,
        _json_list(h.olp),
        context,
        _json_list(h.tags),
        h.todo,
        _to_json(h.properties) if h.properties else "{}",
        h.body,
        h.text,
        h.start_line,
        h.end_line,
        h.node_title,
        _json_list(h.aliases),
        h.date or mtime_day,
        h.date_source if h.date else "mtime",
        h.content_hash(),
        cjk.bigrams(h.title + "\n" + context),
        cjk.bigrams(h.text),
    )


def _context(h: Heading, file_title: str) -> str:
    """What keyword search knows a heading by besides its title and text: its file's
    title (for a heading below the file level), outline path, aliases and tags."""
    parts = ([file_title] if h.level else []) + list(h.olp) + list(h.aliases) + list(h.tags)
    return " / ".join(parts)


def _json_list(values: Sequence[str]) -> str:
    return _to_json(list(values)) if values else "[]"
