"""Named schema migrations, each applied in its own transaction with its record.

A migration is a function ``mNNN_name(conn)``; :func:`.migrate.migrate` applies those not
yet recorded in ``_migrations``, in order. Never edit an applied migration: add a new one.
The vector table is not created here: it is made when the first vectors are stored, which
also fixes their dimension (see ``Store.store_vectors``).

They are written in :mod:`.migrations_m001` (m001-m010), :mod:`.migrations_m011`
(m011-m020), :mod:`.migrations_m021` (m021-m030) and :mod:`.migrations_m031` (m031 on),
registered in :mod:`.migration_registry` in the order they are imported here.
"""

from __future__ import annotations

from . import migrations_m001, migrations_m011, migrations_m021, migrations_m031  # noqa: F401  (each registers its migrations, in this order)
from .migration_registry import FTS_EXACT_TOKENIZE, FTS_TOKENIZE, MIGRATIONS, Migration

__all__ = ["FTS_EXACT_TOKENIZE", "FTS_TOKENIZE", "MIGRATIONS", "Migration"]
