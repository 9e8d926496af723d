"""Notes a reader connection does not show: those the index could not bring up to date.

A note the store could not take (its disk full, the database locked by another program)
keeps its old rows, which may hold a heading the user has made private since; until it
is taken, nothing of it may be served. Nothing can be written to say so (the store is
what refuses), so each reader connection hides such notes itself: TEMP views named
``files`` and ``headings`` (the connection's own, nothing written to the database),
which unqualified names in a statement find before the tables of ``main``, leave out
the rows of those notes. Every answer reads its headings or files through them: a hit
of the vector or keyword index whose heading is hidden has no row to show. The keyword
indexes read their content from ``main.headings`` (FTS5 qualifies its content table),
so they are unchanged.

With no note hidden there are no views, and statements read the tables as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection

_VIEWS = ("headings", "files")


def hide_notes(conn, paths: Collection[str]) -> None:
    """Make ``conn`` (a reader's) show none of the rows of the notes ``paths`` (relative
    to the notes directory); an empty ``paths`` shows them all again."""
    for name in _VIEWS:
        conn.execute(f"DROP VIEW IF EXISTS temp.{name}")
    if not paths:
        return
    conn.execute("PRAGMA temp_store = MEMORY")  # the views' schema: never a file
    hidden = _literal(json.dumps(sorted(paths)))
    conn.execute(
        "CREATE TEMP VIEW files AS SELECT * FROM main.files"
        f" WHERE path NOT IN (SELECT value FROM json_each({hidden}))"
    )
    conn.execute(
        "CREATE TEMP VIEW headings AS SELECT * FROM main.headings WHERE file NOT IN"
        f" (SELECT id FROM main.files WHERE path IN (SELECT value FROM json_each({hidden})))"
    )


def hiding(conn) -> bool:
    """Whether ``conn`` hides any note now (a statement reading chunks by themselves
    must then keep to the headings shown)."""
    return conn.execute("SELECT 1 FROM temp.sqlite_master WHERE type = 'view' AND name = 'headings'").fetchone() is not None


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (a view's statement takes no parameters)."""
    return "'" + text.replace("'", "''") + "'"
