"""Opening SQLite connections with sqlite-vec loaded, in one place.

The stdlib ``sqlite3`` of pyenv and python.org builds cannot load extensions, so we use
``sqlean.py`` (its own SQLite build, wheels for Linux, macOS and Windows) and fall back to
the stdlib module only where sqlean is missing and the stdlib can load extensions. One
process always uses one driver: loading vec0 into two SQLite builds in one process crashes.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import stat
import struct
import sys
import urllib.parse
from array import array
from pathlib import Path
from types import ModuleType

import numpy as np
import sqlite_vec

from ..errors import StoreError

log = logging.getLogger(__name__)


def _pick_driver() -> ModuleType:
    try:
        import sqlean

        return sqlean
    except ImportError:  # pragma: no cover - sqlean is a dependency; this is the escape hatch
        import sqlite3

        if hasattr(sqlite3.Connection, "enable_load_extension"):
            return sqlite3
        raise StoreError(
            "no SQLite driver that can load sqlite-vec: install sqlean.py "
            "(pip install sqlean.py) or use a Python built with loadable extensions"
        ) from None


sqlite = _pick_driver()
DatabaseError = sqlite.DatabaseError
OperationalError = sqlite.OperationalError
IntegrityError = sqlite.IntegrityError


def make_folder(path: Path | str) -> None:
    """Create the folder of the database ``path`` and its missing parents, each readable
    by this account only (0700, as the XDG base directory rules ask of the folders a
    program creates under ``$XDG_DATA_HOME``): the index holds the text of the notes, and
    other accounts, which the daemon does not answer, could read it from there. Folders
    that exist are left as they are. :class:`StoreError` when one cannot be made."""
    folder = Path(path).parent
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    try:
        if not folder.is_dir():  # (a file where a folder should be)
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        for each in reversed(missing):
            try:
                os.mkdir(each, 0o700)
            except FileExistsError:  # (made meanwhile)
                pass
    except OSError as exc:  # (an unwritable HOME, under the default database's folder)
        raise StoreError(f"cannot create the folder of the index database {path}: {exc.strerror}: "
                         "give another with --db (or ARCOLOGY_ORACLE_DB)") from None


def _create_private(path: Path | str) -> None:
    """Create the database file ``path``, empty (SQLite takes it for an empty database),
    readable by this account only, unless it exists: SQLite makes it 0644 (the umask's),
    and its WAL and shared-memory files take its permissions. Another account could read
    the notes' text from it in a folder of yours others may enter (a ``--db`` beside
    your notes, a project folder). Failures are SQLite's to report when it opens it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError:
        pass


def open_lock_file(db_path: Path | str, suffix: str, unguarded: str) -> tuple[Path, int | None]:
    """``<db_path><suffix>`` beside the database's real path (a symlink to the database
    locks the same file), and its descriptor, opened for reading and writing (created,
    0600, with the database's folder: :func:`make_folder`); the descriptor None, with
    a warning ending in ``unguarded`` (what then goes unprotected), when it cannot be."""
    real = os.path.realpath(db_path)
    path = Path(real + suffix)
    make_folder(real)
    try:
        return path, os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        log.warning("cannot create %s (%s): %s", path, exc.strerror or exc, unguarded)
        return path, None


def connect(path: Path | str, *, readonly: bool = False) -> "sqlite.Connection":
    """Open ``path`` with sqlite-vec loaded, WAL mode, foreign keys on and Row factory,
    creating its folder (:class:`StoreError` when that cannot be done).

    The connection runs in autocommit mode (``isolation_level=None``): callers open
    transactions explicitly (see ``Store.transaction``).
    """
    if str(path) != ":memory:":
        make_folder(path)
        if not readonly:
            _create_private(path)
    # A URI: a name's "#", "?" and "%" are quoted, or SQLite reads them as the URI's own.
    uri = f"file:{urllib.parse.quote(Path(path).as_posix())}?mode=ro" if readonly else str(path)
    conn = sqlite.connect(uri, uri=readonly, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite.Row
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA busy_timeout = 10000")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        # Checkpoint every 40 MB of WAL, not every 4 MB: each checkpoint copies the pages
        # written since the last one and syncs, and a bulk index rewrites the same index
        # pages in many commits (checkpoints were 70% of its commit time). The writer
        # store turns this off and checkpoints on a thread instead (store/checkpoints.py);
        # the indexer truncates the WAL after each change anyway (Store.checkpoint).
        conn.execute("PRAGMA wal_autocheckpoint = 10000")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Overwrite deleted content: text of a note made private must not survive in free pages.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


NOTES_DIR = "notes_dir"  # meta key: the real path of the notes directory last read into the index
EMBED_MODEL = "embed_model"  # meta key: the embedding model the index's vectors come from


def remembered_notes_dir(path: Path | str) -> str | None:
    """The notes directory the database at ``path`` was last read from (the :data:`NOTES_DIR`
    meta key :meth:`~arcology_oracle.store.Store.remember_notes_dir` writes), read without
    opening it as a store (no migration, nothing written); None when there is no such
    database or it does not say (an empty file, an index older than the key).

    A database that is there but cannot be read (locked by another program's write past
    the busy timeout, unreadable, not a database) raises :class:`StoreError`, one line
    saying what is wrong and what to do: the caller must not guess another directory,
    whose notes an ``index`` would then put in place of the index's."""
    held = _remembered(path, NOTES_DIR)
    return None if held is None else os.fsdecode(held)  # (stored as the OS's bytes)


def remembered_embed_model(path: Path | str) -> str | None:
    """The embedding model the index at ``path`` holds vectors of (:data:`EMBED_MODEL`),
    read as :func:`remembered_notes_dir` reads; None when it does not say, or cannot be
    read (opening it as a store says why, or rebuilds one that is no database)."""
    try:
        return _remembered(path, EMBED_MODEL)
    except StoreError:
        return None


def _remembered(path: Path | str, key: str):
    """The value of ``meta`` ``key`` of the database at ``path`` (see :func:`remembered_notes_dir`)."""
    if str(path) == ":memory:":
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        conn = connect(path, readonly=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            conn.close()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, sqlite.DatabaseError) as exc:
        if isinstance(exc, sqlite.OperationalError) and str(exc).startswith("no such table"):
            return None  # (an empty file is an empty database)
        raise StoreError(_unreadable(path, exc)) from None
    return None if row is None else row[0]


def _unreadable(path: Path | str, exc: Exception) -> str:
    """What to tell of the database ``path`` that ``exc`` kept from being read."""
    why = exc.strerror if isinstance(exc, OSError) else str(exc)
    if is_corruption(exc):
        return (f"the index database {path} is not a usable database ({why}), so which notes it held is unknown: "
                "give the notes directory (`arcology-oracle index DIR` rebuilds it from DIR)")
    if "locked" in why or "busy" in why:
        return (f"the index database {path} is locked by another program's write ({why}): "
                "try again when it is done")
    return (f"cannot read the index database {path} ({why}): check its permissions and its directory's, "
            "or give another with --db")


def is_corruption(exc: Exception) -> bool:
    """Whether ``exc`` says the file is no (longer a) SQLite database."""
    text = str(exc).lower()
    return any(m in text for m in ("not a database", "malformed", "corrupt", "disk image"))


def pack_vector(vector) -> bytes:
    """float32 little-endian bytes of ``vector`` (the form vec0 stores). struct packs a
    list of Python floats twice as fast as array or numpy (10 µs for 768, against 21);
    a float32 array row is its own bytes."""
    if isinstance(vector, np.ndarray):
        return vector.astype("<f4", copy=False).tobytes()
    return _float32s(len(vector)).pack(*vector)


@functools.lru_cache(maxsize=8)
def _float32s(n: int) -> struct.Struct:
    return struct.Struct(f"<{n}f")


def unpack_vector(blob: bytes) -> list[float]:
    """Inverse of :func:`pack_vector`."""
    arr = array("f")
    arr.frombytes(blob)
    if sys.byteorder != "little":  # pragma: no cover
        arr.byteswap()
    return arr.tolist()


def limit(k: int) -> str:
    """``LIMIT k`` as SQL text (``k`` made an int, so nothing else can get in). A bound
    ``LIMIT ?`` after an ORDER BY on an expression or a join (on SQLite 3.50, any FTS5
    ``MATCH``'s too) made SQLite compile the
    statement again at every run (it reads the bound value to plan, then marks the
    statement stale at the next bind): replayed, 0.57 of the 1.57 ms of /similar's
    nearest-headings statement at 20k; about 3% of a /similar's CPU (BENCHMARKS.md,
    issue 30, thirty-first round). Each distinct ``k`` is one more cached statement;
    callers pass few."""
    return f"LIMIT {int(k)}"
