"""The list the schema migrations register in, and the tokenizers they fixed.

A migration is a function ``mNNN_name(conn)`` decorated with :func:`migration`; its name
is what a database records once it has had it (see :mod:`.migrate`). They are written in
:mod:`.migrations_m001`, :mod:`.migrations_m011`, :mod:`.migrations_m021` and
:mod:`.migrations_m031` and put in order by :mod:`.migrations`.
"""

from __future__ import annotations

from collections.abc import Callable

Migration = Callable[[object], None]
MIGRATIONS: list[Migration] = []

# headings_fts's tokenizer, as m001 made it (m004 kept it), for code that must tokenize the
# same way (a migration that changes it changes this too).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
# headings_exact's (m008): the same words, not stemmed.
FTS_EXACT_TOKENIZE = "unicode61 remove_diacritics 2"


def migration(fn: Migration) -> Migration:
    """Register ``fn`` after those registered before it."""
    MIGRATIONS.append(fn)
    return fn
