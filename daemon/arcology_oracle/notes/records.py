"""Plain records that flow from the org reader to the store.

These are the only types shared by the org reading layer (``reader``, ``chunking``,
``files``) and the layers above it. They carry no behaviour beyond hashing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pickled_by_constructor(cls):
    """Pickle instances of the frozen, slotted dataclass ``cls`` as its constructor's
    arguments. Its default (``dataclasses._dataclass_setstate``) calls ``fields()`` for
    every object, and unpickling what parse workers sent took the writer thread 19% of a
    cold reconcile of 113k headings."""
    names = tuple(f.name for f in fields(cls))

    def __reduce__(self):
        return cls, tuple([getattr(self, name) for name in names])

    cls.__reduce__ = __reduce__
    return cls


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Heading:
    """One heading of an org file, or the file's own text before the first heading.

    ``level`` is 0 for the file-level record (the text before the first heading, whose
    ``title`` is the file's ``#+title`` or else its file name without ``.org``).
    ``node_id`` is the org-roam node the heading belongs to: its own ``:ID:``, else that of
    the nearest enclosing heading with an ID, else the file's ID, else ``None`` (a file
    org-roam does not know as a note). ``olp`` holds the titles of the enclosing headings,
    outermost first, excluding the file title and the heading itself (as org-roam's olp).
    ``body`` is the raw body with link markup kept and the property drawer removed;
    ``text`` is the same body with links turned into their descriptions, for embedding
    and keyword search (as the index keeps it, without the lines of a grounded model's
    reply in a heading that is the user's: :mod:`.oracle_words`). Lines are 1-based and inclusive, counted in the file as read.
    ``date`` (ISO) is when the heading happened, as far as the file says, and
    ``date_source`` where that came from: ``daily`` (a file named by a date),
    ``created`` (a ``:CREATED:`` property), ``timestamp`` (the first timestamp of the
    heading line or its own text), ``closed``, ``filename``/``file-date`` (the file's name
    or ``#+date``), or the parent's source when inherited; None when nothing says (the
    store then falls back on the file's modification time, source ``mtime``).
    """

    node_id: str | None
    own_id: str | None
    level: int
    title: str
    olp: tuple[str, ...]
    tags: tuple[str, ...]
    todo: str | None
    properties: dict[str, str]
    body: str
    text: str
    start_line: int
    end_line: int
    node_title: str
    links: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    date: str | None = None
    date_source: str | None = None

    @property
    def is_node(self) -> bool:
        """True when this heading (or file record) is itself an org-roam node."""
        return self.own_id is not None

    def content_hash(self) -> str:
        """A hash of everything stored for this heading except its line numbers."""
        parts = [
            self.node_id or "",
            self.own_id or "",
            str(self.level),
            self.title,
            "\x1f".join(self.olp),
            "\x1f".join(self.tags),
            self.todo or "",
            "\x1f".join(f"{k}={v}" for k, v in sorted(self.properties.items())),
            self.body,
            self.node_title,
        ]
        return sha256_hex("\x1e".join(parts))


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a dialogue (:mod:`.dialogue`): its ordinal in the heading, ``speaker`` ("" for text before the first
    speaker line), ``text`` as written (links as their descriptions) including the
    ``Name:`` prefix, 1-based ``start_line``/``end_line`` within the body, ``when``
    (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM``: the turn's own time, else the heading's
    date) and whether a structural marker precedes it (``marker``)."""

    ordinal: int
    speaker: str
    text: str
    start_line: int
    end_line: int
    when: str | None
    marker: bool = False


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a heading's text that gets one embedding.

    ``text`` is what is embedded (outline path plus a window of the body), without any
    model-specific prefix; ``hash`` is ``sha256_hex(text)`` and identifies the vector.
    """

    ordinal: int
    text: str
    hash: str
    # A scene of a dialogue: the ordinals of its first and last turns (inclusive); the
    # first chunk of a dialogue heading also carries all its turns, for the store.
    first_turn: int | None = None
    last_turn: int | None = None
    dialogue: tuple[Turn, ...] = ()


@dataclass(frozen=True, slots=True)
class EllamaSession:
    """An ellama session saved as org (:mod:`.ellama`): the nicks its turn headings are
    titled with (``User`` of ``** User:``, ``Ellama`` of ``** Ellama:``), those headings'
    level, and the grounded model (``llama3.2+notes``) its ``.session.el`` file names as
    its provider's, else None."""

    user: str
    assistant: str
    level: int
    model: str | None


@dataclass(slots=True)
class ParsedFile:
    """The result of reading one org file.

    ``problems`` lists human-readable reasons for parts that could not be read (each
    already logged once by the reader); the headings that could be read are still here.
    """

    path: str
    title: str
    file_id: str | None
    headings: list[Heading] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # A gptel chat's responses, as file lines (first, last), when its bounds are saved
    # (notes/chats.py); None for every other file.
    responses: tuple[tuple[int, int], ...] | None = None
    # An ellama session's nicks and model (notes/ellama.py); None for every other file.
    ellama: EllamaSession | None = None
    # The setup files it names and how they were when read (notes/setup_files.Seen): it is
    # read again when one of them changes.
    setup_files: tuple[tuple[str, int, int, int, int, str], ...] = ()
    # Those it names only in its private parts, left out of ``setup_files`` (a
    # NAMED_IN_PRIVATE row there stands for them): their names may not be stored.
    private_setup: tuple[tuple[str, int, int, int, int, str], ...] = ()
    # Kept out whole by the privacy rule (its file tags, its setup files' or a file-level
    # ROAM_EXCLUDE: notes/privacy.py): nothing of it may be stored, not even its path.
    private: bool = False
    # The :ID:s of the headings the privacy rule kept out of a file read in part (their
    # own tags, inherited ones, ROAM_EXCLUDE, a PGP block), so that the index forgets
    # what names them (index/kept_out.py); never those of headings left out as unreadable.
    kept_out_ids: tuple[str, ...] = ()
