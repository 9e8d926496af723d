"""Migrations m001 to m010: the index's tables as first made, and the first re-reads.

Never edit an applied migration (``tests/store/test_migrations_pinned.py`` holds each one's
code): add a new one in :mod:`.migrations_m011`.
"""

from __future__ import annotations

import json

from .migration_registry import FTS_EXACT_TOKENIZE, migration


@migration
def m001_initial(conn) -> None:
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);

        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT NOT NULL,
            title TEXT NOT NULL,
            file_node TEXT,
            problems TEXT NOT NULL DEFAULT '[]'
        );

        CREATE TABLE headings (
            id INTEGER PRIMARY KEY,
            file INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            node_id TEXT,
            own_id TEXT,
            level INTEGER NOT NULL,
            title TEXT NOT NULL,
            olp TEXT NOT NULL,          -- JSON list of ancestor heading titles
            olp_text TEXT NOT NULL,     -- the same, joined, for FTS
            tags TEXT NOT NULL,         -- JSON list
            todo TEXT,
            properties TEXT NOT NULL,   -- JSON object
            body TEXT NOT NULL,         -- raw, links kept, for display
            text TEXT NOT NULL,         -- links as descriptions, for FTS and embedding
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            node_title TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            date TEXT,
            hash TEXT NOT NULL
        );
        CREATE INDEX headings_file ON headings(file, start_line);
        CREATE INDEX headings_node ON headings(node_id);
        CREATE INDEX headings_own_id ON headings(own_id) WHERE own_id IS NOT NULL;

        CREATE TABLE links (
            heading INTEGER NOT NULL REFERENCES headings(id) ON DELETE CASCADE,
            src_node TEXT,
            dst_node TEXT NOT NULL
        );
        CREATE INDEX links_src ON links(src_node);
        CREATE INDEX links_dst ON links(dst_node);
        CREATE INDEX links_heading ON links(heading);

        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            heading INTEGER NOT NULL REFERENCES headings(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE INDEX chunks_heading ON chunks(heading);
        CREATE INDEX chunks_hash ON chunks(hash);

        -- One row per distinct embedded text; its id is the rowid of its vector.
        CREATE TABLE embeddings (
            id INTEGER PRIMARY KEY,
            hash TEXT NOT NULL UNIQUE
        );

        CREATE VIRTUAL TABLE headings_fts USING fts5(
            title, olp_text, text,
            content='headings', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER headings_ai AFTER INSERT ON headings BEGIN
            INSERT INTO headings_fts(rowid, title, olp_text, text)
            VALUES (new.id, new.title, new.olp_text, new.text);
        END;
        CREATE TRIGGER headings_ad AFTER DELETE ON headings BEGIN
            INSERT INTO headings_fts(headings_fts, rowid, title, olp_text, text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text);
        END;
        CREATE TRIGGER headings_au AFTER UPDATE ON headings BEGIN
            INSERT INTO headings_fts(headings_fts, rowid, title, olp_text, text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text);
            INSERT INTO headings_fts(rowid, title, olp_text, text)
            VALUES (new.id, new.title, new.olp_text, new.text);
        END;

        CREATE TABLE summaries (
            key TEXT PRIMARY KEY,       -- sha256 of (model, prompt name, note content hash)
            summary TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        """
    )


@migration
def m002_private_deletes(conn) -> None:
    # Deleted note text must not linger: FTS5 secure-delete removes terms from the index
    # at once instead of leaving them in old segments until a merge, and summaries are
    # tied to their file so that re-indexing it drops them.
    conn.executescript(
        """
        INSERT INTO headings_fts(headings_fts, rank) VALUES ('secure-delete', 1);
        DROP TABLE summaries;
        CREATE TABLE summaries (
            key TEXT PRIMARY KEY,       -- sha256 of (model, prompt name, note content hash)
            file TEXT,                  -- the note's file: its summaries go when it changes
            summary TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX summaries_file ON summaries(file);
        """
    )


@migration
def m003_fts_inserts_per_transaction(conn) -> None:
    # New headings reach headings_fts in one INSERT ... SELECT per transaction, made by
    # Store (see Store._flush_fts): a trigger per row cost most of a cold index.
    # Deletes and updates keep their triggers.
    conn.executescript("DROP TRIGGER headings_ai;")


@migration
def m004_heading_date_sources(conn) -> None:
    # Where each heading's date came from (see notes.Heading), and dates that can be
    # filtered on. Every file is read again at the next reconcile (its hash no longer
    # matches) so that old rows get their sources; vectors stay, keyed by chunk text.
    conn.executescript(
        """
        ALTER TABLE headings ADD COLUMN date_source TEXT;
        CREATE INDEX headings_date ON headings(date) WHERE date IS NOT NULL;
        UPDATE files SET hash = '', mtime_ns = 0;
        """
    )


@migration
def m005_fts_context_and_cjk(conn) -> None:
    # headings.olp_text now holds the heading's context for keyword search (the file
    # title above a heading, outline path, aliases, tags: a heading titled "Overview" is
    # found by its note's title), and two new columns hold CJK bigrams (cjk.py) so that
    # Japanese and Chinese keywords match. headings_fts gets the new columns; it is
    # rebuilt from the rows as they are, and every file is marked changed so that the next
    # reconcile re-reads it and fills the new values (vectors are kept: chunks are not
    # changed by this).
    conn.executescript(
        """
        ALTER TABLE headings ADD COLUMN cjk_head TEXT NOT NULL DEFAULT '';
        ALTER TABLE headings ADD COLUMN cjk_text TEXT NOT NULL DEFAULT '';
        DROP TRIGGER headings_ad;
        DROP TRIGGER headings_au;
        DROP TABLE headings_fts;
        CREATE VIRTUAL TABLE headings_fts USING fts5(
            title, olp_text, text, cjk_head, cjk_text,
            content='headings', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        INSERT INTO headings_fts(headings_fts, rank) VALUES ('secure-delete', 1);
        INSERT INTO headings_fts(headings_fts) VALUES ('rebuild');
        CREATE TRIGGER headings_ad AFTER DELETE ON headings BEGIN
            INSERT INTO headings_fts(headings_fts, rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text, old.cjk_head, old.cjk_text);
        END;
        CREATE TRIGGER headings_au AFTER UPDATE ON headings BEGIN
            INSERT INTO headings_fts(headings_fts, rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text, old.cjk_head, old.cjk_text);
            INSERT INTO headings_fts(rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES (new.id, new.title, new.olp_text, new.text, new.cjk_head, new.cjk_text);
        END;
        UPDATE files SET mtime_ns = 0, hash = '';
        """
    )


@migration
def m006_link_rejections(conn) -> None:
    # Link suggestions the user turned down (POST /suggest-links/reject): node IDs, not
    # heading rows, so that re-indexing (which replaces every heading of a file) and the
    # doctor's repair leave them alone. Not note text: nothing here is private.
    conn.executescript(
        """
        CREATE TABLE link_rejections (
            src_node TEXT NOT NULL,
            dst_node TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (src_node, dst_node)
        ) WITHOUT ROWID;
        """
    )


@migration
def m007_node_labels(conn) -> None:
    # Each node's tags ("tag:X", inherited ones included) and ROAM_REFS ("ref:Y"), one row
    # each, so that the graph signal finds the nodes sharing one with an index lookup:
    # scanning the tags of every heading took ~260 ms at 100k headings. Kept by
    # Store.replace_file; filled here from what is already indexed.
    from ..notes.org_syntax import split_roam_list
    from .labels import node_labels

    conn.executescript(
        """
        CREATE TABLE node_labels (
            heading INTEGER NOT NULL REFERENCES headings(id) ON DELETE CASCADE,
            node TEXT NOT NULL,
            label TEXT NOT NULL
        );
        CREATE INDEX node_labels_label ON node_labels(label);
        CREATE INDEX node_labels_node ON node_labels(node);
        CREATE INDEX node_labels_heading ON node_labels(heading);
        """
    )
    rows = conn.execute("SELECT id, own_id, tags, properties FROM headings WHERE own_id IS NOT NULL").fetchall()
    for heading_id, node, tags, properties in rows:
        refs = split_roam_list(json.loads(properties).get("ROAM_REFS", ""))
        for label in node_labels(json.loads(tags), refs):
            conn.execute("INSERT INTO node_labels (heading, node, label) VALUES (?, ?, ?)", (heading_id, node, label))


@migration
def m008_fts_exact_words(conn) -> None:
    # A second keyword index of the same columns without the Porter stemmer, so that
    # /search can score a word written as the user wrote it above a word that merely
    # shares its stem (Store.fts_scores sums both BM25 scores). CJK bigrams, which no
    # stemmer changes, are in both like every word that stemming leaves alone. Kept in
    # step with headings by the triggers below and by Connection._flush_fts.
    conn.executescript(
        f"""
        CREATE VIRTUAL TABLE headings_exact USING fts5(
            title, olp_text, text, cjk_head, cjk_text,
            content='headings', content_rowid='id',
            tokenize='{FTS_EXACT_TOKENIZE}'
        );
        INSERT INTO headings_exact(headings_exact, rank) VALUES ('secure-delete', 1);
        INSERT INTO headings_exact(headings_exact) VALUES ('rebuild');
        CREATE TRIGGER headings_exact_ad AFTER DELETE ON headings BEGIN
            INSERT INTO headings_exact(headings_exact, rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text, old.cjk_head, old.cjk_text);
        END;
        CREATE TRIGGER headings_exact_au AFTER UPDATE ON headings BEGIN
            INSERT INTO headings_exact(headings_exact, rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES ('delete', old.id, old.title, old.olp_text, old.text, old.cjk_head, old.cjk_text);
            INSERT INTO headings_exact(rowid, title, olp_text, text, cjk_head, cjk_text)
            VALUES (new.id, new.title, new.olp_text, new.text, new.cjk_head, new.cjk_text);
        END;
        """
    )


@migration
def m009_reread_for_drawer_case(conn) -> None:
    # The reader now knows property drawers written in any letter case (":properties:" ...
    # ":end:", as Org and org-roam read them); before, their IDs, aliases and refs were
    # lost and their ROAM_EXCLUDE ignored, so excluded text was indexed. Every file is
    # marked changed so that the next reconcile re-reads it: excluded headings go (FTS5
    # secure-delete, m002), the IDs are found.
    conn.executescript("UPDATE files SET mtime_ns = 0, hash = '';")


@migration
def m010_reread_oracle_citations(conn) -> None:
    # The reader no longer counts the links of the oracle's own answers (:ROLE: oracle)
    # and of the "Sources:" lists the daemon writes as the user's links (the link graph,
    # suggestions and similarity read them). The files holding either are marked changed
    # so the next reconcile re-reads them; no other file is touched.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = '' WHERE id IN (
            SELECT file FROM headings
            WHERE json_extract(properties, '$.ROLE') IS NOT NULL OR body LIKE '%Sources:%'
        );
        """
    )
