"""Search in SQL: FTS5 keyword matches, the k nearest vectors, stored vectors and whole
note texts read for re-scoring, and SQLite's BM25 over a handful of texts.

Nearest neighbours come from the in-memory index (:mod:`~arcology_oracle.store.vectors`),
re-scored exactly by sqlite-vec on the stored float32 vectors.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence

import numpy as np

from ..notes import cjk
from . import node_means, note_text_cache, vector_mean, vectors, word_counts
from .db import limit, pack_vector, sqlite, unpack_vector
from .snippets import SNIPPET_SQL, with_long_snippets
from .oracle_words import answer_sql, own_text_sql, users_chunk_sql
from .migrations import FTS_TOKENIZE
from .vector_sync import VEC_TABLE, VectorSync




# bm25() column weights of fts_scores (columns: title, olp_text, text, cjk_head, cjk_text).
# A heading's context -- its note's title, outline path, aliases, tags (olp_text; for
# CJK, cjk_head holds the bigrams of the title and the context) -- is shared by every
# heading of the note: it should say which note, not outweigh a heading's own words.
# Known-item heading MRR as the context weight goes 1 -> 0.9 -> 0.8 -> 0.75 -> 0.7 -> 0.5
# (BENCHMARKS.md, Quality on real notes): Japanese notes 0.784 -> 0.790 -> 0.816 -> 0.835
# -> 0.837 -> 0.862, English notes 0.896 flat down to 0.75, then 0.894, 0.884; the Info
# manuals 0.923 throughout. 0.75: the lowest that loses nowhere.
_SCORE_WEIGHTS = "1.0, 0.75, 1.0, 0.75, 1.0"

def _nearest(k: int) -> str:
    """The k nearest of the candidates, exactly, by sqlite-vec (parameters: the query
    vector, the candidates' rowids as JSON)."""
    return (
        "WITH near AS (SELECT e.hash AS hash, v.rowid AS rid, vec_distance_cosine(v.embedding, ?) AS d"
        f" FROM {VEC_TABLE} v JOIN embeddings e ON e.id = v.rowid WHERE v.rowid IN (SELECT value FROM json_each(?))"
        f" ORDER BY d, v.rowid {limit(k)})"
    )


def _l2(cosine_distance: float) -> float:
    """L2 distance of unit vectors from their cosine distance: |a - b|^2 = 2 (1 - cos)."""
    return math.sqrt(max(0.0, 2.0 * cosine_distance))


class Search(VectorSync):
    """Keyword and vector search (see the module docstring)."""

    def fts_search(self, match: str, k: int, *, snippets: bool = True) -> list[tuple[int, float, str | None]]:
        """Headings matching an FTS5 ``match`` expression: ``(heading id, bm25, snippet)``,
        the snippet None without ``snippets`` (each costs ~0.1 ms: most of the query).

        ``match`` must already be quoted (see ``retrieval.fts_query``). bm25 is negative;
        lower is better. Every column weighs the same (FTS5's bm25 reads a row as one
        document: a term's frequency summed over the columns, the row's whole length);
        weighting titles 4x ranked known items lower on the Info manuals and on real
        notes (BENCHMARKS.md, Quality).
        """
        snippet = SNIPPET_SQL if snippets else "NULL"
        rows = self.conn.execute(
            f"SELECT rowid, bm25(headings_fts) AS rank, {snippet} AS snip"
            f" FROM headings_fts WHERE headings_fts MATCH ? ORDER BY rank {limit(k)}",
            (match,),
        ).fetchall()
        found = with_long_snippets(self.conn, match, dict((r[0], r[2]) for r in rows)) if snippets else {}
        return [(r[0], r[1], found.get(r[0], r[2])) for r in rows]

    def word_counts(self, words: Sequence[str], at_most: int) -> dict[str, int]:
        """How many headings hold each of ``words`` (lower-case words or CJK bigrams, as
        ``headings_exact`` reads them: not stemmed), 0 for none and ``at_most`` for
        ``at_most`` or more. Remembered for the process and not refreshed by writes (see
        :mod:`.word_counts`), capped as they were asked: every caller must pass the same
        ``at_most`` (there is one, which only needs to know which words are rare).

        Counted by reading a word's list of headings only up to ``at_most``: FTS5's own
        count (its vocabulary table) reads the whole list, which for a common word at a
        million headings is most of a second's first query (112 ms against 4 ms for a
        note's 64 words; BENCHMARKS.md, issue 30). A word that is not one whole term of
        the index (``begin_src``: two terms) counts 0, as in the vocabulary."""
        cache = getattr(self, "_words", None)
        if cache is None:
            cache = self._words = word_counts.shared_counts(self._shared_key())
        found, missing = cache.lookup(words)
        if missing:
            # TEMP tables: the connection's own, nothing written to the database (which
            # may be open read-only). 'instance' rows come one at a time: LIMIT 1 reads
            # no more of the term than its first.
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.headings_exact_terms"
                " USING fts5vocab(main, 'headings_exact', 'instance')"
            )
            counts = dict.fromkeys(missing, 0)
            for word in missing:
                if word_counts.surely_one_term(word) or self.conn.execute(
                    "SELECT 1 FROM temp.headings_exact_terms WHERE term = ? LIMIT 1", (word,)
                ).fetchone():
                    counts[word] = self.conn.execute(
                        "SELECT count(*) FROM (SELECT 1 FROM headings_exact WHERE headings_exact MATCH ?"
                        f" {limit(at_most)})",
                        ('"' + word.replace('"', '""') + '"',),
                    ).fetchone()[0]
            cache.remember(counts)
            found.update(counts)
        return found

    def exact_word_hits(self, match: str, k: int) -> list[tuple[int, float, str | None, str]]:
        """The ``k`` headings best by BM25 on ``headings_exact`` (not stemmed) for an FTS5
        ``match`` (already quoted, as for :meth:`fts_search`), best first, as ``(heading
        id, score (higher better), node id or None, file path)``: what grouping them by
        note needs, in the same statement; the oracle's own answers
        (:meth:`~.links.LinkGraph.oracle_headings`) left out there too."""
        rows = self.conn.execute(
            f"SELECT x.rowid, -x.rank, h.node_id, f.path, {answer_sql('h')} FROM"
            " (SELECT rowid, bm25(headings_exact) AS rank FROM headings_exact"
            f"  WHERE headings_exact MATCH ? ORDER BY rank {limit(k)}) x"
            " JOIN headings h ON h.id = x.rowid JOIN files f ON f.id = h.file ORDER BY x.rank",
            (match,),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows if not r[4]]

    def fts_scores(self, matches: Sequence[str], k: int) -> list[tuple[int, float]]:
        """Headings matching any of ``matches`` (FTS5 expressions as for
        :meth:`fts_search`, matching disjoint sets of headings), best first, as ``(heading
        id, score)``, higher better: BM25 on the stemmed index plus BM25 on
        ``headings_exact``, which does not stem (migration m008), a heading's context
        weighing 0.75 of its own words (see ``_SCORE_WEIGHTS``). A word as written thus
        counts twice and a word sharing only its stem once: "sorting" finds "sorted",
        but a heading that says "sorting" comes first.

        Each expression gives each index's best ``k``; a heading among one index's only
        scores 0 in the other.
        """
        scores: dict[int, float] = {}
        for table in ("headings_fts", "headings_exact"):
            for match in matches:
                for rowid, rank in self.conn.execute(
                    f"SELECT rowid, bm25({table}, {_SCORE_WEIGHTS}) AS rank FROM {table}"
                    f" WHERE {table} MATCH ? ORDER BY rank {limit(k)}",
                    (match,),
                ):
                    scores[rowid] = scores.get(rowid, 0.0) - rank
        return sorted(scores.items(), key=lambda item: -item[1])[: int(k)]  # stable: ties in index order

    def fts_snippets(self, match: str, ids: Sequence[int]) -> dict[int, str]:
        """The snippets :meth:`fts_search` gives, for the headings ``ids`` only."""
        if not ids:
            return {}
        return with_long_snippets(self.conn, match, dict(
            self.conn.execute(
                f"SELECT rowid, {SNIPPET_SQL} FROM headings_fts"
                " WHERE headings_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))",
                (match, json.dumps(list(ids))),
            ).fetchall()
        ))  # fmt: skip

    def knn(self, vector: Sequence[float], k: int, skip=None) -> list[tuple[str, float]]:
        """The ``k`` nearest stored vectors as ``(text hash, L2 distance)``, nearest first.

        Candidates come from the in-memory index shared by this process's stores of the
        database (first brought up to date with what this connection sees); the best
        ``k`` plus a margin are re-scored exactly on their stored float32 vectors by
        sqlite-vec, in the statement that reads their text hashes, so quantisation never
        decides the order. (Reading the blobs into numpy instead took as long for 125
        candidates and up to twice as long for 400: BENCHMARKS.md, sqlite-vec.) ``skip``:
        vector row ids never searched (:meth:`~.reads.Reads.vector_rows_of`).
        """
        params = self._knn_params(vector, k, skip)
        if params is None:
            return []
        rows = self.conn.execute(f"{_nearest(k)} SELECT hash, d FROM near ORDER BY d, rid", params).fetchall()
        return [(text_hash, _l2(distance)) for text_hash, distance in rows]

    def knn_headings(self, vector: Sequence[float], k: int, skip=None) -> list[tuple[int, float]]:
        """The headings of the ``k`` nearest vectors (as :meth:`knn`) as ``(heading id,
        L2 distance of its nearest chunk)``, nearest first: one statement, where reading
        each hash's headings apart cost a query more. A heading with chunks of its own
        text besides a dialogue's scenes (:func:`.oracle_words.own_text_sql`: the user's,
        its scenes holding a grounded model's replies) is found by those chunks only."""
        params = self._knn_params(vector, k, skip)
        if params is None:
            return []
        rows = self.conn.execute(
            f"{_nearest(k)} SELECT c.heading, min(near.d) AS best FROM near JOIN chunks c ON c.hash = near.hash"
            f" WHERE c.first_turn IS NULL OR NOT {own_text_sql('c.heading')}"
            " GROUP BY c.heading ORDER BY best, min(near.rid)",
            params,
        ).fetchall()
        return [(heading_id, _l2(distance)) for heading_id, distance in rows]

    def _knn_params(self, vector: Sequence[float], k: int, skip=None) -> tuple | None:
        """The parameters of :func:`_nearest` for the in-memory index's candidates."""
        if not self.has_vector_table() or k <= 0:
            return None
        index = self._vector_index()
        index.sync(self.get_meta(vectors.META_KEY) or "", self._load_vectors)
        candidates = index.search(vector, int(k) + max(10, int(k) // 4), skip=skip)
        if not candidates:
            return None
        return pack_vector(np.asarray(vector, np.float32)), json.dumps([rowid for rowid, _ in candidates])

    def mean_vector(self) -> np.ndarray | None:
        """The mean of the stored vectors (:mod:`.vector_mean`), None when there are none:
        ``dot(query, it)`` is how close the average heading is to a query."""
        if not self.has_vector_table():
            return None
        index = self._vector_index()
        index.sync(self.get_meta(vectors.META_KEY) or "", self._load_vectors)
        return vector_mean.mean_of(index)

    def vectors_for_hashes(self, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The stored vector of each hash that has one, in one statement (a posted text
        asks for up to 64)."""
        if not hashes or not self.has_vector_table():
            return {}
        rows = self.conn.execute(
            f"SELECT e.hash, v.embedding FROM embeddings e JOIN {VEC_TABLE} v ON v.rowid = e.id"
            " WHERE e.hash IN (SELECT value FROM json_each(?))",
            (json.dumps(list(hashes)),),
        )
        return {text_hash: unpack_vector(blob) for text_hash, blob in rows}

    def heading_vectors_at(self, places: Sequence[tuple[str, int]]) -> list[list[np.ndarray]]:
        """For each ``(file path, line)``, the stored vectors (float64, each the float32
        one widened) of the chunks of the heading there (the one
        :meth:`~.reads.Reads.heading_at` finds), in no particular order: ``[]`` for a
        place with no heading or none of whose chunks is embedded. One statement, where
        a lookup per place, per heading and per chunk cost ~35 round trips for the ten
        results of a /similar (BENCHMARKS.md, issue 30, third round)."""
        out: list[list[np.ndarray]] = [[] for _ in places]
        if not places or not self.has_vector_table():
            return out
        rows = self.conn.execute(
            "WITH p(i, heading) AS (SELECT j.key, (SELECT h.id FROM headings h JOIN files f ON f.id = h.file"
            "  WHERE f.path = json_extract(j.value, '$[0]') AND h.start_line <= json_extract(j.value, '$[1]')"
            "  ORDER BY h.start_line DESC LIMIT 1) FROM json_each(?) j)"
            " SELECT p.i, v.embedding FROM p JOIN chunks c ON c.heading = p.heading"
            f" JOIN embeddings e ON e.hash = c.hash JOIN {VEC_TABLE} v ON v.rowid = e.id",
            (json.dumps([[path, int(line)] for path, line in places]),),
        ).fetchall()
        for i, blob in rows:
            out[i].append(np.frombuffer(blob, dtype="<f4").astype(np.float64))
        return out

    def node_vectors(self, node_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The normalised mean (float64, read-only) of the stored vectors of each node's
        chunks (its own headings and those below it without an ID of their own) that are
        the user's words (:func:`.oracle_words.users_chunk_sql`): the oracle's words in
        the note (an answer /converse wrote there, a dialogue's scenes holding its turns)
        count only in a node that holds nothing else. Nodes with no vector are absent. Each distinct
        text counts once, as in ``retrieval.stored_vector``. Means computed since the last write are served from
        memory (:mod:`.node_means`), the rest read in one query."""
        if not node_ids or not self.has_vector_table():
            return {}
        if not self.shares_reads:  # it may see its own uncommitted writes: share nothing
            return self._read_node_vectors(node_ids)
        cache = getattr(self, "_means", None)
        if cache is None:
            cache = self._means = node_means.shared_means(self._shared_key())
        token = self.write_generation()  # before the rows: see node_means
        found, missing = cache.lookup(token, list(dict.fromkeys(node_ids)))
        if missing:
            computed = self._read_node_vectors(missing)
            cache.remember(token, computed, missing)
            found.update(computed)
        return found

    def _read_node_vectors(self, node_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """:meth:`node_vectors` from the database."""
        # DISTINCT before the join: comparing 3 KB blobs for it cost half the query.
        rows = self.conn.execute(
            f"SELECT d.node_id, d.own, v.embedding FROM (SELECT DISTINCT h.node_id, e.id, {users_chunk_sql('c', 'h')}"
            " AS own FROM headings h JOIN chunks c ON c.heading = h.id JOIN embeddings e ON e.hash = c.hash"
            " WHERE h.node_id IN (SELECT value FROM json_each(?))) d"
            f" JOIN {VEC_TABLE} v ON v.rowid = d.id",
            (json.dumps(list(node_ids)),),
        ).fetchall()
        grouped: dict[str, tuple[list[bytes], list[bytes]]] = {}  # (the user's words', every chunk's)
        for node_id, own, blob in rows:
            users, every = grouped.setdefault(node_id, ([], []))
            every.append(blob)
            if own:
                users.append(blob)
        out = {}
        for node_id, (users, every) in grouped.items():
            blobs = users or every
            total = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).sum(axis=0, dtype=np.float64)
            norm = float(np.sqrt(total @ total))
            if norm:
                out[node_id] = total / norm
        return out

    def note_texts(
        self, heading_ids: Sequence[int], limit: int, *, cjk_bigrams: bool = False, notes: dict[int, str] | None = None
    ) -> dict[int, str]:
        """For each heading id, the titles and text of every heading of its note (its node,
        or for headings in no node, those of its file in no node), in one query; at most
        ``limit`` characters of each, from the start. ``notes``: the note of each heading
        id the caller knows it for (``answers.retrieval.note_key``): those texts, once read,
        are served from memory until a write changes the note (:mod:`.note_text_cache`). A heading's
        note is the one it was read in: ids are never given out again, nor a heading's node
        changed in place.

        With ``cjk_bigrams``, each text is followed by a newline and its CJK bigrams,
        exactly as :func:`~arcology_oracle.notes.cjk.bigrams` gives them for that text
        (nothing is added to a text without CJK), put together from the bigrams the
        index keeps of each heading's text: only titles and a heading cut off by
        ``limit`` are split here. Splitting whole notes took about a third of a
        ``/similar`` on Japanese notes (BENCHMARKS.md, issue 30)."""
        read = lambda ids: self._read_note_texts(ids, limit, cjk_bigrams)  # noqa: E731
        if not notes or not self.shares_reads:  # a transaction may see its own writes: share nothing
            return read(list(heading_ids))
        cache = getattr(self, "_texts", None)
        if cache is None:
            cache = self._texts = note_text_cache.shared_texts(self._shared_key())
        keys = {h: (notes[h], limit, cjk_bigrams) for h in heading_ids if h in notes}
        token = self.nodes_generation()  # before the rows
        return cache.texts(token, list(heading_ids), keys, read, self.notes_changed_since)

    def _read_note_texts(self, heading_ids: Sequence[int], limit: int, cjk_bigrams: bool) -> dict[int, str]:
        """:meth:`note_texts` from the database."""
        placeholders = ",".join("?" * len(heading_ids))
        rows = self.conn.execute(
            "WITH q(id, node_id, file) AS ("
            f"  SELECT id, node_id, file FROM headings WHERE id IN ({placeholders}))"
            f" SELECT q.id, h.title, h.text, {'h.cjk_text' if cjk_bigrams else 'NULL'} FROM q JOIN headings h"
            "  ON (q.node_id IS NOT NULL AND h.node_id = q.node_id)"
            "  OR (q.node_id IS NULL AND h.file = q.file AND h.node_id IS NULL)"
            " ORDER BY q.id, h.start_line",
            list(heading_ids),
        ).fetchall()
        parts: dict[int, list[tuple[str, str | None]]] = {}  # (piece, its stored bigrams or None)
        size: dict[int, int] = {}
        for heading_id, title, body, body_bigrams in rows:
            if size.get(heading_id, 0) < limit:
                parts.setdefault(heading_id, []).extend(((title, None), (body, body_bigrams)))
                size[heading_id] = size.get(heading_id, 0) + len(title) + len(body) + 2
        out = {}
        for heading_id, pieces in parts.items():
            text = "\n".join(piece for piece, _ in pieces)[:limit]
            if cjk_bigrams and not text.isascii():
                text = cjk.followed_by_bigrams(text, pieces, limit)
            out[heading_id] = text
        return out


def bm25_order(texts: Sequence[str], match: str) -> list[int]:
    """The positions in ``texts`` that the FTS5 expression ``match`` finds, best first (by
    :func:`bm25_scores`' score)."""
    rows = _scratch_bm25(texts, match, "SELECT rowid, NULL FROM notes WHERE notes MATCH ? ORDER BY rank")
    return [r - 1 for r, _ in rows]


def bm25_scores(texts: Sequence[str], match: str) -> dict[int, float]:
    """Position in ``texts`` -> BM25 score (higher is better) of the texts the FTS5
    expression ``match`` finds, by SQLite's own BM25 (the index's tokenizer, so "options"
    meets "option"; word statistics are those of ``texts`` alone). Texts it does not match
    are left out. Unsorted: the re-ranking needs the scores, and reading them sorted by
    FTS5's ``rank`` cost ~1 ms more per /similar at 20k chunks (BENCHMARKS.md)."""
    rows = _scratch_bm25(texts, match, "SELECT rowid, bm25(notes) FROM notes WHERE notes MATCH ?")
    return {r - 1: -score for r, score in rows}  # bm25() is negative, best lowest


def _scratch_bm25(texts: Sequence[str], match: str, sql: str) -> list[tuple]:
    """The rows of ``sql`` (with ``match`` as its parameter) over ``texts`` inserted as
    the rows 1..n of this thread's in-memory scratch FTS5 table ``notes``, inside one
    rolled-back transaction: it never touches the index file."""
    conn = _scratch()
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO notes (rowid, text) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(texts)])
        return conn.execute(sql, (match,)).fetchall()
    finally:
        conn.execute("ROLLBACK")


_scratch_local = threading.local()


def _scratch():
    """This thread's in-memory SQLite database with an empty FTS5 table ``notes`` (the
    index's tokenizer), for :func:`_scratch_bm25`. Never touches the index file.
    Contentless (``content=''``): ``bm25()`` and ``rank`` read the index and the rows'
    lengths, never the text, so copying ~70 KB of candidates' text into it for each
    /similar was work thrown away (~5% of this step: BENCHMARKS.md, issue 30,
    twenty-ninth round)."""
    conn = getattr(_scratch_local, "conn", None)
    if conn is None:
        conn = sqlite.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE notes USING fts5(text, tokenize='{FTS_TOKENIZE}', content='')")
        _scratch_local.conn = conn
    return conn
