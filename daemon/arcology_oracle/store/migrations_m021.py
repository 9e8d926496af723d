"""Migrations m021 to m030.

Never edit an applied migration (``tests/store/test_migrations_pinned.py`` holds each one's
code): add a new one in :mod:`.migrations_m031`.
"""

from __future__ import annotations

from .migration_registry import migration


@migration
def m021_reread_gptel_bounds(conn) -> None:
    # A gptel chat's reasoning and tool calls, and a response ending the file, are the
    # model's words (notes/chats.py): they were read as the user's prompt. The next
    # reconcile re-reads the chats whose bounds are saved, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (
            SELECT file FROM headings
            WHERE properties LIKE '%GPTEL_BOUNDS%' OR body LIKE '%gptel--bounds%'
        );
        """
    )


@migration
def m022_reread_turns_past_midnight(conn) -> None:
    # A turn stamped with a time earlier than the turn before it is on the next day
    # (notes/dialogue.py: a chat log kept past midnight): the next reconcile re-reads the
    # files whose turns carry a time of day, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT h.file FROM headings h WHERE h.id IN (SELECT heading FROM turns WHERE date LIKE '%T%'));
        """
    )


@migration
def m023_reread_org_ai_chats(conn) -> None:
    # An org-ai chat (a #+begin_ai block) is dialogue, its replies the oracle's words when
    # its model is a grounded one (notes/chats.py): the next reconcile re-reads the files
    # holding such a block, and only those.
    conn.executescript(
        r"""
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT file FROM headings WHERE lower(body) LIKE '%#+begin\_ai%' ESCAPE '\');
        """
    )


@migration
def m024_reread_oracle_titles(conn) -> None:
    # A turn titled "Oracle" followed by a word ("Oracle of Delphi") is the user's subject,
    # not the oracle's (notes/conversations.py, is_marker_title): the next reconcile
    # re-reads the conversations holding a heading whose title starts with "oracle".
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT file FROM headings WHERE lower(ltrim(title)) LIKE 'oracle%')
          AND id IN (SELECT h.file FROM headings h JOIN turns t ON t.heading = h.id);
        """
    )


@migration
def m025_reread_turns_a_few_minutes_back(conn) -> None:
    # A turn stamped a little earlier than the turn before it (clocks apart, a turn edited
    # in) is on the same day, only one more than half a day back on the next
    # (notes/dialogue.py; m022's reader put every time going back on the next day): the
    # next reconcile re-reads the files whose turns carry a time of day, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT h.file FROM headings h WHERE h.id IN (SELECT heading FROM turns WHERE date LIKE '%T%'));
        """
    )


@migration
def m026_reread_org_ai_blocks_as_org_reads_them(conn) -> None:
    # A #+begin_ai shown inside a source or example block, or never closed, is no org-ai
    # chat (notes/chats.py; m023's reader read it as one, the user's note as the oracle's
    # words), and a quoted :model "llama3.2+notes" is that grounded model (m023's reader
    # kept the quotes, its replies the user's): the next reconcile re-reads the files
    # holding such a line, and only those.
    conn.executescript(
        r"""
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT file FROM headings WHERE lower(body) LIKE '%#+begin\_ai%' ESCAPE '\');
        """
    )


@migration
def m027_reread_gptel_state_without_bounds(conn) -> None:
    # A file where gptel saved its state (GPTEL_* properties) but no bounds holds no reply
    # of the model's (notes/chats.py): its headings were read as prompts with replies, and
    # with a grounded model hidden as the oracle's words. The next reconcile re-reads
    # those files, and only those.
    conn.executescript(
        r"""
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (
            SELECT file FROM headings
            WHERE level = 0 AND properties LIKE '%GPTEL\_%' ESCAPE '\' AND properties NOT LIKE '%GPTEL\_BOUNDS%' ESCAPE '\'
        );
        """
    )


@migration
def m028_reread_turns_hours_back(conn) -> None:
    # A turn stamped more than three hours earlier than the turn before it is on the next
    # day (notes/dialogue.py: a reply the next morning to an evening's message; m025's
    # reader put it on the same day unless it was more than half a day back): the next
    # reconcile re-reads the files whose turns carry a time of day, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (SELECT h.file FROM headings h WHERE h.id IN (SELECT heading FROM turns WHERE date LIKE '%T%'));
        """
    )


@migration
def m029_reread_replies_in_the_users_headings(conn) -> None:
    # A heading holding a grounded model's reply (a gptel chat's, an org-ai block's with
    # llama3.2+notes) and lines of the user's besides is the user's, kept without the
    # reply (notes/oracle_words.py): it was kept whole as the oracle's words. The next
    # reconcile re-reads the files holding a grounded model's turn, and only those.
    conn.executescript(
        """
        UPDATE files SET mtime_ns = 0, hash = ''
        WHERE id IN (
            SELECT h.file FROM headings h
            WHERE h.id IN (SELECT heading FROM turns WHERE speaker LIKE '%+notes' OR speaker LIKE '%+notes:%')
        );
        """
    )


@migration
def m030_reread_ellama_sessions(conn) -> None:
    # An ellama session saved as org (its .session.el beside it) is dialogue, the replies
    # of a grounded model the oracle's words (notes/ellama.py): they were read as the
    # user's notes. The next reconcile re-reads the files whose first heading is titled
    # like an ellama turn ("User:"), and only those: no other file can be a session.
    first_headings = (
        "SELECT h.file FROM headings h WHERE h.level > 0 AND rtrim(h.title) LIKE '%:' AND h.start_line ="
        " (SELECT min(f.start_line) FROM headings f WHERE f.file = h.file AND f.level > 0)"
    )
    conn.execute(f"UPDATE files SET mtime_ns = 0, hash = '' WHERE id IN ({first_headings})")
