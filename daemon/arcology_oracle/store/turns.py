"""Reading dialogue turns (m011): keyword search over turns, the scenes a vector found,
and turns by heading and ordinal, for :mod:`arcology_oracle.answers.windows`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..notes.conversations import GROUNDED_SUFFIX, is_grounded_speaker
from ..notes.oracle_words import Spans, held_replies
from .connection import StoreBase
from .db import limit as limit_sql
from .oracle_words import oracle_turn_sql

_TURN_COLUMNS = "t.id, t.heading, t.ordinal, t.speaker, t.text, t.start_line, t.end_line, t.date"


def _turn(row) -> dict:
    return {k: row[k] for k in ("id", "heading", "ordinal", "speaker", "text", "start_line", "end_line", "date")}


class Turns(StoreBase):
    """The turns of dialogue headings (see the module docstring)."""

    def has_turns(self) -> bool:
        """Whether any heading is indexed as a dialogue."""
        return self.conn.execute("SELECT 1 FROM turns LIMIT 1").fetchone() is not None

    def turn_search(self, match: str, k: int) -> list[tuple[int, int, str, float]]:
        """Turns matching the FTS5 ``match`` (quoted, see ``retrieval.fts_query``):
        ``(heading, ordinal, speaker, -bm25)``, best first."""
        rows = self.conn.execute(
            "SELECT t.heading, t.ordinal, t.speaker, -bm25(turns_fts) AS score FROM turns_fts"
            f" JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ? ORDER BY bm25(turns_fts) {limit_sql(k)}",
            (match,),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def known_speakers(self, names: Sequence[str]) -> set[str]:
        """Those of ``names`` that speak in some dialogue (as written there)."""
        out: set[str] = set()
        for name in dict.fromkeys(n.removesuffix("'s") for n in names):
            row = self.conn.execute("SELECT speaker FROM turns WHERE speaker = ? COLLATE NOCASE LIMIT 1", (name,)).fetchone()
            if row:
                out.add(row[0])
        return out

    def scenes_for_hashes(self, hashes: Sequence[str]) -> dict[str, list[tuple[int, int, int]]]:
        """For each chunk text hash that is a scene: ``(heading, first_turn, last_turn)``
        of every scene with that text."""
        out: dict[str, list[tuple[int, int, int]]] = {}
        for start in range(0, len(hashes), 500):
            part = list(hashes[start : start + 500])
            marks = ",".join("?" * len(part))
            for r in self.conn.execute(
                f"SELECT hash, heading, first_turn, last_turn FROM chunks"
                f" WHERE hash IN ({marks}) AND first_turn IS NOT NULL",
                part,
            ):
                out.setdefault(r[0], []).append((r[1], r[2], r[3]))
        return out

    def turns_between(self, spans: Iterable[tuple[int, int, int]]) -> dict[tuple[int, int], dict]:
        """The turns of each ``(heading, first, last)`` span (ordinals inclusive), by
        ``(heading, ordinal)``."""
        out: dict[tuple[int, int], dict] = {}
        for heading, first, last in spans:
            for r in self.conn.execute(
                f"SELECT {_TURN_COLUMNS} FROM turns t WHERE t.heading = ? AND t.ordinal BETWEEN ? AND ?",
                (heading, first, last),
            ):
                out[(r["heading"], r["ordinal"])] = _turn(r)
        return out

    def turns_in_range(self, since: str, until: str, limit: int) -> list[tuple[int, int]]:
        """``(heading, ordinal)`` of the turns dated from ``since`` to ``until`` (ISO days,
        both included), oldest first, at most ``limit``."""
        # A turn's date is a day or a day and a time (2024-03-05T09:00): every one of
        # until's day sorts below until + "~" (m017's index answers the range).
        rows = self.conn.execute(
            "SELECT heading, ordinal FROM turns WHERE date >= ? AND date < ?"
            f" ORDER BY date, heading, ordinal {limit_sql(limit)}",
            (since, until + "~"),
        )
        return [(r[0], r[1]) for r in rows]

    def dialogue_members(self, headings: Sequence[int]) -> set[int]:
        """Those of ``headings`` whose text is some dialogue's turns: a dialogue heading,
        or a heading inside the lines of another heading's turns in its file (the turn
        headings of a conversation, :mod:`arcology_oracle.notes.chats`)."""
        ids = json.dumps(list(headings))
        rows = self.conn.execute(
            "SELECT id, file, start_line FROM headings WHERE id IN (SELECT value FROM json_each(?))", (ids,)
        ).fetchall()
        spans = self.conn.execute(
            "SELECT r.id, r.file, min(t.start_line), max(t.end_line) FROM headings r JOIN turns t ON t.heading = r.id"
            " WHERE r.file IN (SELECT file FROM headings WHERE id IN (SELECT value FROM json_each(?))) GROUP BY r.id",
            (ids,),
        ).fetchall()
        return {
            r[0] for r in rows
            if any(r[0] == s[0] or (r[1] == s[1] and s[2] <= r[2] <= s[3]) for s in spans)
        }  # fmt: skip

    def oracle_turns(self, headings: Iterable[int]) -> set[tuple[int, int]]:
        """``(heading, ordinal)`` of the turns of ``headings`` that are the oracle's own
        answers (:func:`.oracle_words.oracle_turn_sql`): a turn starting at a heading with
        ``:ROLE: oracle``, one the conversation reader gave the ``Oracle`` (an answer marked
        by the ``:oracle:`` tag or its title), or one spoken by a grounded model (a gptel
        chat with ``llama3.2+notes``: its answers cited the user's notes, they are none)."""
        rows = self.conn.execute(
            "SELECT t.heading, t.ordinal FROM turns t JOIN headings r ON r.id = t.heading"
            " LEFT JOIN headings o ON o.file = r.file AND o.start_line = t.start_line"
            f" WHERE t.heading IN (SELECT value FROM json_each(?)) AND {oracle_turn_sql('t', 'o')}",
            (json.dumps(sorted(set(headings))),),
        )
        return {(r[0], r[1]) for r in rows}

    def replies_held(self, rows: Iterable[dict]) -> dict[int, Spans]:
        """By id, the grounded model's replies (their first and last file lines) that each
        of the heading ``rows`` (as :meth:`~.reads.Reads.file_headings` gives them) is the
        user's note without: a heading of the user's own lines holding such a reply, which
        the index keeps without it (:func:`arcology_oracle.notes.oracle_words.held_replies`,
        from the replies its file's turns hold). The oracle's words are none of these: they
        are left out whole."""
        rows = [r for r in rows if not r["oracle"]]
        paths = sorted({r["file"] for r in rows})
        if not paths:
            return {}
        replies: dict[str, list[tuple[int, int]]] = {}
        for path, speaker, first, last in self.conn.execute(
            "SELECT f.path, t.speaker, t.start_line, t.end_line FROM files f JOIN headings h ON h.file = f.id"
            # The pattern as SQL text, as oracle_words.py writes it: a bound LIKE pattern
            # made SQLite compile this statement again at every run (issue 30's
            # thirty-first round, BENCHMARKS.md).
            " JOIN turns t ON t.heading = h.id WHERE f.path IN (SELECT value FROM json_each(?))"
            f" AND t.speaker LIKE '%{GROUNDED_SUFFIX}%' ORDER BY t.start_line, t.end_line",
            (json.dumps(paths),),
        ):
            if is_grounded_speaker(speaker):
                replies.setdefault(path, []).append((first, last))
        out: dict[int, Spans] = {}
        for r in rows:
            if r["file"] in replies:
                held = held_replies(replies[r["file"]], level=r["level"], title=r["title"],
                                    start_line=r["start_line"], end_line=r["end_line"], body=r["body"])  # fmt: skip
                if held:
                    out[r["id"]] = held
        return out

    def turn_counts(self, headings: Sequence[int]) -> dict[int, int]:
        """How many turns each of ``headings`` has (dialogue headings only)."""
        out: dict[int, int] = {}
        for heading in headings:
            row = self.conn.execute("SELECT count(*) FROM turns WHERE heading = ?", (heading,)).fetchone()
            if row[0]:
                out[heading] = row[0]
        return out
