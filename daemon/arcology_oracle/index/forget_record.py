"""The forget journal's record (:mod:`.forget_journal`): its bytes on disk, and what a
note's bytes are to the forget it records (:func:`state_of`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .note_files import UNNAMED

MAGIC = b"arcology-oracle forget record 1\n"
_SHA_TAG = b"sha256:"
_TRAILER = len(_SHA_TAG) + 64 + 1


@dataclass(frozen=True)
class Record:
    """A parsed record: the note ``rel`` below the real notes directory ``root``, file
    ``(dev, ino)`` of ``size`` bytes, the capture at ``[start, end)``, ``prefix_sha256``
    of the bytes before it, ``rest`` its bytes from ``start`` on; ``named``: the log may
    name the note (the index held it as public when the forget began; a record without
    it, an older version's, names none)."""

    root: str
    rel: str
    dev: int
    ino: int
    start: int
    end: int
    size: int
    prefix_sha256: str
    rest: bytes
    named: bool = False

    @property
    def shown(self) -> str:
        """How the log names the note: ``rel`` when ``named``, else :data:`~.note_files.UNNAMED`."""
        return self.rel if self.named else UNNAMED

    @property
    def tail(self) -> bytes:
        """What the rewrite writes at ``start``: the bytes after the capture."""
        return self.rest[self.end - self.start :]


def encode(record: Record) -> bytes:
    """``record`` as its file holds it: :data:`MAGIC`, one line of JSON (the fields but
    ``rest``, and ``rest_length``; an older version ignores ``named``), ``rest``, then ``sha256:`` and the hex SHA-256 of all
    that, and a line ending."""
    fields = ("root", "rel", "dev", "ino", "start", "end", "size", "prefix_sha256", "named")
    header = {k: getattr(record, k) for k in fields}
    body = MAGIC + json.dumps({**header, "rest_length": len(record.rest)}, sort_keys=True).encode() + b"\n" + record.rest
    return body + _SHA_TAG + hashlib.sha256(body).hexdigest().encode() + b"\n"


def decode(data: bytes) -> Record | None:
    """The record ``data`` holds, or None when it is torn or damaged."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _TRAILER:
        return None
    body, trailer = data[:-_TRAILER], data[-_TRAILER:]
    if trailer != _SHA_TAG + hashlib.sha256(body).hexdigest().encode() + b"\n":
        return None
    line_end = body.find(b"\n", len(MAGIC))
    if line_end < 0:
        return None
    try:
        header = json.loads(body[len(MAGIC) : line_end])
        rest = body[line_end + 1 :]
        numbers = (int(header[k]) for k in ("dev", "ino", "start", "end", "size"))
        named = header.get("named") is True  # (an older version's record has none: not named)
        record = Record(str(header["root"]), str(header["rel"]), *numbers, str(header["prefix_sha256"]), rest, named)
    except (ValueError, KeyError, TypeError):
        return None
    if header.get("rest_length") != len(rest) or not 0 <= record.start <= record.end <= record.size:
        return None
    return record if record.size - record.start == len(rest) else None


def state_of(found: bytes, record: Record) -> str:
    """``"finished"``, ``"unfinished"`` or ``"other"``: what the note's bytes ``found``
    are to the forget of ``record`` (see the module docstring): unfinished only when they
    are exactly ``before + tail[:j] + rest[j:]`` for some ``j``."""
    start, rest, tail = record.start, record.rest, record.tail
    if len(found) < start or hashlib.sha256(memoryview(found)[:start]).hexdigest() != record.prefix_sha256:
        return "other"
    now = memoryview(found)[start:]
    if now == tail:
        return "finished"
    if len(now) != len(rest):
        return "other"
    j = _common_prefix(now, memoryview(tail))  # the longest j that can be: a shorter one asks more of now[j:]
    return "unfinished" if now[j:] == memoryview(rest)[j:] else "other"


def _common_prefix(a: memoryview, b: memoryview) -> int:
    """How many bytes ``a`` and ``b`` begin with alike."""
    n, step, i = min(len(a), len(b)), 1 << 16, 0
    while i < n:
        k = min(n, i + step)
        if a[i:k] != b[i:k]:
            while a[i] == b[i]:
                i += 1
            return i
        i = k
    return n
