"""The in-memory vector index saved beside the database, so a restart need not read every
vector: its sign bits, int8 rows, scales, norms, ids and centre (0.88 KB per 768-d
vector) with the generation token of the vectors they copy. A snapshot of another
generation is never used, and is deleted when found (it may hold vectors of notes deleted
or made private since), as is one that cannot be read.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import numpy as np

from .vectors import VectorIndex


def save(index: VectorIndex, path: Path) -> bool:
    """Write ``index`` to ``path`` (atomically) unless it holds nothing or ``path``
    already holds this generation; True if written."""
    with index.lock:
        generation, centered_at, arrays = index.state()
        if generation is None or generation == index.saved_generation:
            return False
        tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "wb") as f:
                np.save(f, np.array([generation, str(centered_at)]))
                for name in VectorIndex.SNAPSHOT_ARRAYS:
                    np.save(f, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        index.saved_generation = generation
        return True


def restore(index: VectorIndex, path: Path, generation: str) -> bool:
    """Load the snapshot at ``path`` into ``index`` if it holds ``generation``; True if
    it did. A snapshot of another generation, or unreadable, is deleted."""
    try:
        with open(path, "rb") as f:
            saved, centered_at = np.load(f, allow_pickle=False).tolist()
            if saved != generation:
                raise ValueError("another generation")
            arrays = {name: np.load(f, allow_pickle=False) for name in VectorIndex.SNAPSHOT_ARRAYS}
    except FileNotFoundError:
        return False
    except (OSError, ValueError, EOFError):
        path.unlink(missing_ok=True)
        return False
    index.install(generation, int(centered_at), arrays)
    return True
