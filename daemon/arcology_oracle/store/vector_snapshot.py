"""The in-memory vector index saved beside the database, so a restart need not read every
vector: its sign bits, int8 rows, scales, norms, ids and centre (0.88 KB per 768-d
vector) with the generation token of the vectors they copy. A snapshot of another
generation is never used, and is deleted when found (it may hold vectors of notes deleted
or made private since), as is one that cannot be read.
"""

from __future__ import annotations

import mmap
import os
import secrets
from collections.abc import Iterator
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
            # 0600, as the database (store/db.py _create_private): vectors say much of the text.
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), "wb") as f:
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
    it did. A snapshot of another generation, or unreadable, is deleted.

    The arrays are mapped, copy-on-write, not read: a query then reads the pages it
    touches (the sign bits of every row, the int8 rows of a few hundred), where reading
    it all (0.88 KB a vector, 880 MB at a million) made the first query after a restart
    wait 0.4-2.8 s against a warm query's 45 ms (BENCHMARKS.md, issue 30). Changes to the
    index go to private pages, never to the file; a later snapshot replaces the file,
    and the mapping keeps the one it was made from.

    The kernel is told that a query reads the int8 rows at random, a few hundred of them
    (``madvise``: no read-around, each costs one page). With the snapshot out of the OS's
    cache (after a reboot), the first query after a start at a million vectors took
    440-640 ms without that advice, reading most of the rows' 768 MB around the few it
    needed, and 100-160 ms with it; :func:`prefetch` then brings the rest in for the
    queries after it (BENCHMARKS.md, issue 30)."""
    try:
        with open(path, "rb") as f:
            saved, centered_at = np.load(f, allow_pickle=False).tolist()
            if saved != generation:
                raise ValueError("another generation")
            arrays = {name: _mapped(f, *where, _ADVICE.get(name)) for name, *where in _layout(f)}
    except FileNotFoundError:
        return False
    except (OSError, ValueError, EOFError):
        path.unlink(missing_ok=True)
        return False
    index.install(generation, int(centered_at), arrays)
    return True


def prefetch(path: Path) -> None:
    """Have the kernel read the snapshot at ``path`` into its page cache now, without
    copying it here, so that the queries after the first find the int8 rows there
    (they are mapped for random reads: one page per row, read when touched). Every
    other array first (what each query reads whole, or the first queries need), then
    the rows, in steps: one advice reads at most a few megabytes (8 MB on a Linux VM).
    Nothing where the platform cannot advise, or when the file is gone or unreadable."""
    if not hasattr(os, "posix_fadvise"):
        return
    try:
        with open(path, "rb") as f:
            np.load(f, allow_pickle=False)
            ranges = sorted((name in _ADVICE, offset, size) for name, _, _, offset, size in _layout(f))
            for _, offset, size in ranges:
                for at in range(offset, offset + size, _PREFETCH_STEP):
                    os.posix_fadvise(f.fileno(), at, min(_PREFETCH_STEP, offset + size - at), os.POSIX_FADV_WILLNEED)
    except (OSError, ValueError, EOFError):
        return


_PREFETCH_STEP = 8 << 20
# The arrays a query reads at random, as ``madvise`` advice (absent where the platform has none).
_ADVICE = {"q": getattr(mmap, "MADV_RANDOM", None)}


def _layout(f) -> Iterator[tuple[str, tuple[int, ...], np.dtype, int, int]]:
    """Each array :func:`save` wrote after ``f``'s position: ``(name, shape, dtype,
    offset, size in bytes)``, ``f`` moved past it. ValueError for anything but a plain
    version 1.0 array or a file cut short."""
    end = os.fstat(f.fileno()).st_size
    for name in VectorIndex.SNAPSHOT_ARRAYS:
        if np.lib.format.read_magic(f) != (1, 0):
            raise ValueError("not a version 1.0 array")
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(f)
        if dtype.hasobject or fortran_order:
            raise ValueError("not a plain C-ordered array")
        offset = f.tell()
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if offset + size > end:
            raise ValueError("snapshot cut short")
        f.seek(offset + size)
        yield name, shape, dtype, offset, size


def _mapped(f, shape: tuple[int, ...], dtype: np.dtype, offset: int, size: int, advice: int | None) -> np.ndarray:
    """The array at ``offset`` of ``f``'s file (see :func:`_layout`), mapped
    copy-on-write, with ``advice`` given to the kernel."""
    if size == 0:
        return np.empty(shape, dtype)
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    mapping = mmap.mmap(f.fileno(), offset + size - start, access=mmap.ACCESS_COPY, offset=start)
    if advice is not None and hasattr(mapping, "madvise"):
        mapping.madvise(advice)
    count = int(np.prod(shape, dtype=np.int64))
    return np.frombuffer(mapping, dtype, count=count, offset=offset - start).reshape(shape)
