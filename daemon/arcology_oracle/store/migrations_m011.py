"""Migrations m011 on: dialogue turns, re-reads for the reader's later rules, indexes.

Never edit an applied migration (``tests/store/test_migrations_pinned.py`` holds each one's
code): add a new one at the end. Past m020, start a module ``migrations_m021.py``.
"""

from __future__ import annotations

from .migration_registry import FTS_TOKENIZE, migration


@migration
def m011_dialogue_turns(conn) -> None:
    # Dialogue headings (notes/dialogue.py) are kept per turn, with speaker and time, and
    # their chunks are scenes naming their first and last turn, so that retrieval works
    # at the turn level (answers/windows.py). turns_fts gets new rows from
    # Store.replace_file, deletes through the trigger. Every file is read again.
    conn.executescript(
        f"""
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            heading INTEGER NOT NULL REFERENCES headings(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            date TEXT
        );
        CREATE INDEX turns_heading ON turns(heading, ordinal);
        CREATE INDEX turns_speaker ON turns(speaker COLLATE NOCASE);
        ALTER TABLE chunks ADD COLUMN first_turn INTEGER;
        ALTER TABLE chunks ADD COLUMN last_turn INTEGER;
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, content='turns', content_rowid='id', tokenize='{FTS_TOKENIZE}'
        );
        INSERT INTO turns_fts(turns_fts, rank) VALUES ('secure-delete', 1);
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        UPDATE files SET mtime_ns = 0, hash = '';
        """
    )


@migration
def m012_reread_conversations(conn) -> None:
    # /converse conversations and gptel chats are read as dialogue now (notes/chats.py):
    # the next reconcile re-reads the files that may hold one, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (
            SELECT file FROM headings
            WHERE json_extract(properties, '$.ROLE') IS NOT NULL
               OR properties LIKE '%GPTEL_%'
               OR body LIKE '%gptel%'
        );
        """
    )


@migration
def m013_reread_dialogue(conn) -> None:
    # Each turn of a dialogue is embedded alone too, next to its scenes
    # (notes/turns.scene_chunks): the next reconcile re-reads the files holding
    # dialogue, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT h.file FROM headings h WHERE h.id IN (SELECT heading FROM turns));
        """
    )


@migration
def m014_role_index(conn) -> None:
    # The headings that carry a :ROLE: (conversations, the oracle's answers), by file:
    # whether a result's file holds any is then one probe, where every /similar and
    # /search read and parsed the properties of every heading of its results' files
    # (LinkGraph.role_outlines: 0.19 -> 0.03 ms for 30 files at 20k headings).
    # Spelled out, not has_role(): the index keeps the condition it was made with.
    conn.executescript(
        "CREATE INDEX IF NOT EXISTS headings_role ON headings(file) WHERE json_extract(properties, '$.ROLE') IS NOT NULL;"
    )


@migration
def m015_turn_bigrams(conn) -> None:
    # Turns get their text's CJK bigrams as headings have (m005): a Japanese question searched a column
    # turns_fts lacked, and was refused. 々〆〇 are CJK now (人々). Files with turns or those, read again.
    conn.executescript(
        f"""
        ALTER TABLE turns ADD COLUMN cjk_text TEXT NOT NULL DEFAULT '';
        DROP TRIGGER turns_ad;
        DROP TABLE turns_fts;
        CREATE VIRTUAL TABLE turns_fts USING fts5(text, cjk_text, content='turns', content_rowid='id', tokenize='{FTS_TOKENIZE}');
        INSERT INTO turns_fts(turns_fts, rank) VALUES ('secure-delete', 1);
        INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text, cjk_text) VALUES ('delete', old.id, old.text, old.cjk_text);
        END;
        UPDATE files SET mtime_ns = 0, hash = '' WHERE id IN (SELECT h.file FROM headings h
          WHERE h.id IN (SELECT heading FROM turns) OR h.title || h.olp_text || h.text GLOB '*[々〆〇]*');
        """
    )


@migration
def m016_reread_for_drawer_values(conn) -> None:
    # The reader now ends a property drawer only at a line that is just ":END:" (a value
    # holding ":END:" ended it early), and reads a key as Org does: its first line
    # counts and "KEY+" lines add to it. A ROAM_EXCLUDE after such a value, written as
    # ROAM_EXCLUDE+ or repeated was missed, and excluded text was indexed. A repeated
    # key leaves no trace in the index to find it by: every file is read again (FTS5
    # secure-delete, m002, takes the excluded text out of the keyword indexes).
    conn.executescript("UPDATE files SET mtime_ns = 0, hash = '';")


@migration
def m017_turn_dates(conn) -> None:
    # A question that names a time reads the turns dated in its range (answers/windows.py):
    # without an index, every turn of every chat log was read for it.
    conn.executescript("CREATE INDEX IF NOT EXISTS turns_date ON turns(date);")


@migration
def m018_setup_files(conn) -> None:
    # A note depends on the setup files it names (notes/setup_files.py): files.setup keeps
    # which, and how they were when the note was read, so that a setup file made private
    # has its notes read again (index/indexer.py). Notes read before this recorded none:
    # those naming a setup file (it shows in their headings' stored text) are read again.
    conn.executescript(
        """
        ALTER TABLE files ADD COLUMN setup TEXT NOT NULL DEFAULT '[]';
        CREATE INDEX files_with_setup ON files(id) WHERE setup != '[]';
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT file FROM headings WHERE body LIKE '%#+setupfile:%');
        """
    )


@migration
def m019_reread_for_setup_files(conn) -> None:
    # m018 missed notes whose #+SETUPFILE line left nothing in the index to find it by
    # (under a private heading, in a note kept out, before a PGP block): every file is
    # read again, so that each records its setup files. One that reads the same keeps
    # its rows (store/file_rows.py): this costs the parsing.
    conn.executescript("UPDATE files SET mtime_ns = 0, hash = '';")


@migration
def m020_oracle_words(conn) -> None:
    # Which headings are the oracle's words (notes/oracle_words.py) is decided when a file
    # is read and kept here, where every /similar and /search worked it out again with
    # subqueries (+2 ms a /similar at 20k headings). Only files with a :ROLE: or dialogue
    # can hold any: those are read again (a read that differs only here rewrites them).
    conn.executescript(
        """
        ALTER TABLE headings ADD COLUMN oracle INTEGER NOT NULL DEFAULT 0;
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT file FROM headings WHERE json_extract(properties, '$.ROLE') IS NOT NULL)
           OR id IN (SELECT h.file FROM headings h WHERE h.id IN (SELECT heading FROM turns));
        """
    )
