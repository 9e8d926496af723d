"""Migrations m031 on.

Never edit an applied migration (``tests/store/test_migrations_pinned.py`` holds each one's
code): add a new one at the end.
"""

from __future__ import annotations

from .migration_registry import migration
from .migrations_m021 import m029_reread_replies_in_the_users_headings


@migration
def m031_forget_private_files(conn) -> None:
    # A file the privacy rule keeps out whole (its file tags, a file-level ROAM_EXCLUDE)
    # kept its row in files: its path, its file name as title, its size, time and hash.
    # Nothing of it is stored now (store/writes.py), and unchanged on disk it would never
    # be read again. Such a row has no heading, and nothing tells it from an empty note's:
    # every file with no heading stored is forgotten, with its summaries, and the next
    # reconcile reads them again (a public note comes back, a private one stays out).
    conn.executescript(
        """
        DELETE FROM summaries
        WHERE file IN (SELECT path FROM files WHERE NOT EXISTS (SELECT 1 FROM headings WHERE file = files.id));
        DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM headings WHERE file = files.id);
        """
    )


@migration
def m032_reread_links_in_replies(conn) -> None:
    # An id: link a grounded model's reply wrote, in a heading of the user's, is the
    # model's citation, no link of the user's note (notes/oracle_words.py): it was kept
    # as one. The next reconcile re-reads the files holding a grounded model's turn, as
    # m029 has them re-read.
    m029_reread_replies_in_the_users_headings(conn)


@migration
def m033_reread_for_rejections_of_private_nodes(conn) -> None:
    # A rejected link suggestion (link_rejections) kept the ID of a node later made
    # private. The indexer now forgets such a rejection when it reads the node kept out
    # (index/kept_out.py), but an unchanged note is not read. So when a rejection names a
    # node the index does not hold, every file is read again at the next reconcile (its
    # bytes hashed; parsed only if they changed): one defining that node (private now)
    # has its rejections forgotten. Deleting every such rejection here would also take
    # those of notes merely gone for a while (deleted then restored, or the notes
    # directory emptied as an unmounted drive leaves it), which the rejections outlive.
    conn.execute(
        "UPDATE files SET mtime_ns = 0 WHERE EXISTS (SELECT 1 FROM link_rejections r WHERE"
        " NOT EXISTS (SELECT 1 FROM headings WHERE own_id = r.src_node)"
        " OR NOT EXISTS (SELECT 1 FROM headings WHERE own_id = r.dst_node))"
    )


@migration
def m034_reparse_for_rejections_of_private_nodes(conn) -> None:
    # The indexer now learns which nodes the privacy rule keeps out from the reader, as it
    # parses a note (index/kept_out.py), no more from the :ID: lines of every note read:
    # a node left out for another reason (a line typed between its heading and its
    # drawer) kept its rejections no more. So when a rejection names a node the index does
    # not hold, every file is parsed again at the next reconcile (m033 only had them
    # hashed): one defining that node, private now, has its rejections forgotten.
    conn.execute(
        "UPDATE files SET mtime_ns = 0, hash = '' WHERE EXISTS (SELECT 1 FROM link_rejections r WHERE"
        " NOT EXISTS (SELECT 1 FROM headings WHERE own_id = r.src_node)"
        " OR NOT EXISTS (SELECT 1 FROM headings WHERE own_id = r.dst_node))"
    )


@migration
def m035_chunk_hashes_cover_their_headings(conn) -> None:
    # The nearest headings' statement (Search.knn_headings, every /similar and /search)
    # goes from each of its ~100 nearest texts to the chunks holding it by chunks_hash,
    # then read each chunk's row for its heading and first_turn: a row of ~500 characters
    # of text, on pages scattered over the table. The index now holds both, so the rows
    # are not read (about 1% of a /similar's CPU at 20k headings: BENCHMARKS.md, issue 30,
    # thirty-fourth round). Same name, so INDEXED BY chunks_hash still finds it; one
    # index rebuilt, in this migration's transaction (a few seconds at a million chunks).
    conn.execute("DROP INDEX chunks_hash")
    conn.execute("CREATE INDEX chunks_hash ON chunks(hash, heading, first_turn)")
