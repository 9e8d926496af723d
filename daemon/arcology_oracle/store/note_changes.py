"""Which notes the last writes of headings changed, recorded in ``meta`` for the caches
that derive values from a note's headings alone (:mod:`.holdings`, :mod:`.note_text_cache`,
the re-ranking's word counts): at a new generation of the headings they forget the notes
changed since their own, not everything.

Every transaction that inserts or deletes headings renews ``NODES_GENERATION``
(:mod:`.connection`) and appends to :data:`NOTES_CHANGED` that token with the notes it
inserted or deleted headings of (:func:`appended`): each note's key as
``answers.retrieval.note_key`` gives it (its node ID, or ``file:`` and the path of a file
that is no node) as a :func:`digest` keyed by a secret of this process, never the key: the
note may have become private, and nothing of a private note is stored, not its path. A
writer of another process has another secret: its writes cannot be told from here
(:func:`since` answers None, and the caches forget everything). A heading row is never changed once its transaction commits (a file's
rows are replaced by new ones), so a note none of these writes names has the headings it
had. Readers ask :func:`since` their cache's token: the notes changed after it, or None
(forget everything) when the record does not reach back to it, ends at another token than
the database's (a writer that kept no record), or a write changed too many notes to list
(a cold index).

Why: every save forgot every note's text, word counts and holding, and the first section
query after it read and counted ~30-130 candidate notes again (1.6-2x the CPU of the next
query; BENCHMARKS.md, issue 29, eighteenth round); a save changes one note or a few.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Collection

NOTES_CHANGED = "notes_changed"  # meta key: [[token, secret's id, [digests] or null], ...], oldest first
# What the record keeps: the last writes, as many as list at most this many notes in all
# (at most ~20 KB of meta, read and rewritten in ~0.4 ms by each write of headings), and
# no write listing more.
MAX_NOTES = 512
MAX_WRITES = 64
# This process's secret (never stored) and its id (stored with each write it records).
_SECRET = secrets.token_bytes(16)
_SECRET_ID = secrets.token_hex(4)


def digest(note: str) -> str:
    """``note``'s key as the record holds it: 8 bytes of BLAKE2b keyed by this process's secret."""
    return hashlib.blake2b(note.encode("utf-8", "surrogatepass"), key=_SECRET, digest_size=8).hexdigest()


def appended(record: str | None, token: str, notes: Collection[str] | None) -> str:
    """``record`` (:data:`NOTES_CHANGED`'s value, or None) with the write of generation
    ``token`` that changed ``notes`` (None: not known, every note) appended, and the oldest
    writes left out to keep within :data:`MAX_NOTES` and :data:`MAX_WRITES`."""
    writes = _parsed(record) or []
    listed = None if notes is None or len(notes) > MAX_NOTES else sorted({digest(note) for note in notes})
    writes.append([token, _SECRET_ID, listed])
    total = keep = 0
    for _, _, listed_then in reversed(writes):  # newest first; the newest is always kept
        total += len(listed_then or ())
        if keep and (total > MAX_NOTES or keep == MAX_WRITES):
            break
        keep += 1
        if listed_then is None:  # every note changed there: nothing older tells more
            break
    return json.dumps(writes[len(writes) - keep :], ensure_ascii=False, separators=(",", ":"))


def since(record: str | None, current: str | None, token: str | None) -> frozenset[str] | None:
    """The digests (:func:`digest`) of the notes changed after the generation ``token`` up to
    ``current`` (the database's ``NODES_GENERATION``, read with ``record`` in one snapshot
    or before it), or None when ``record`` cannot tell (see the module docstring)."""
    writes = _parsed(record)
    if token is None or not writes or current is None or token == current:
        return frozenset() if token == current and token is not None else None
    tokens = [w[0] for w in writes]
    if current not in tokens or token not in tokens[: tokens.index(current)]:
        return None
    changed: set[str] = set()
    for _, secret_id, notes in writes[tokens.index(token) + 1 : tokens.index(current) + 1]:
        if notes is None or secret_id != _SECRET_ID:
            return None
        changed.update(notes)
    return frozenset(changed)


def _parsed(record: str | None) -> list[list] | None:
    if not record:
        return None
    try:
        writes = json.loads(record)
    except ValueError:
        return None
    ok = isinstance(writes, list) and all(isinstance(w, list) and len(w) == 3 for w in writes)
    return writes if ok else None
