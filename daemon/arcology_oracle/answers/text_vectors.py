"""The vector of a text sent to ``POST /similar``, made as the index makes a note's.

The index embeds a note heading by heading (:func:`~arcology_oracle.notes.turns.chunk_file`:
each heading's windows, each opened by its outline path line) and ``?node=`` searches by
the mean of those vectors. One embedding of the whole posted text saw only what the model
reads of it (MiniLM: its first ~256 word pieces) and none of the outline around a heading.
So a posted text is read and chunked the same way, with the privacy rule of the index
(a private or excluded heading in it is never embedded); each chunk's vector is taken
from the index when its hash is there (the unchanged parts of an unsaved buffer cost no
embedding) and embedded otherwise; the text's vector is their normalised mean, as a
note's is.

A text that starts with a heading is a part of a file (Emacs sends the heading at point
with its body): given the ``path`` and ``line`` it comes from, its headings get the
outline around them from the saved file (the file's title and the saved heading's
ancestors), so that an unchanged heading gets exactly its stored vector, and that saved
heading is named (``/similar`` then leaves it and its copies in other notes out, as
``?file=&line=`` does). Any other text is a whole note, titled by its ``#+title``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..config import Settings
from ..notes.reader import read_org_bytes
from ..notes.records import ParsedFile, sha256_hex
from ..notes.oracle_words import dialogues_of, oracle_words, own_body, without_replies
from ..store import Store
from . import mentions
from .index_api import NotesIndex
from .retrieval import mean_vector

# The most chunks of one text that are read or embedded (its first ~128,000 characters
# at the default chunk size): a pasted book must not make one request embed for minutes.
MAX_CHUNKS = 64
_STARTS_WITH_HEADING = re.compile(r"\A\s*\*+ ")


@dataclass(frozen=True)
class Posted:
    """A posted text as the index sees it: its ``vector`` (None when no chunk has one:
    the embedder is down and nothing is stored, or every heading of the text is
    private), ``heading``, the id of the saved heading it is an unsaved state of (None
    for a whole note or a text from no saved file), and ``words``, what it is searched
    by: the titles and texts of its headings as the index reads them (no drawers,
    keywords or private headings), after the context the index keeps for the saved
    heading (its file's title, outline, aliases and tags), or for a new first heading of
    a saved file that file's title, as ``?node=`` and ``?file=&line=`` search;
    ``own_words``, its headings' :func:`.mentions.own_words` after the titles above them
    (no tags, no links to notes: what names other notes); ``links``, the notes its
    headings link to; and ``note``, for a new first heading, the saved file's node (a
    saved heading's note is found through ``heading``)."""

    vector: list[float] | None
    heading: int | None
    words: str
    own_words: str = ""
    links: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class Reading:
    """What :func:`read_text` makes of a text: its ``chunks``' texts, and ``heading``,
    ``words``, ``own_words``, ``links`` and ``note`` as in :class:`Posted`."""

    chunks: list[str]
    heading: int | None
    words: str
    own_words: str = ""
    links: tuple[str, ...] = ()
    note: str | None = None


async def posted_text(
    index: NotesIndex, text: str, *, path: str | None = None, line: int | None = None, embed: bool = True
) -> Posted:
    """``text`` read as the module docstring says; ``path`` and ``line``: where in the
    saved notes it comes from. Without ``embed`` (the index has no vectors yet) it is
    only read: no vector."""
    settings = index.settings
    reading, stored = await index.read(lambda store: _read_and_stored(store, settings, text, path, line))
    if not embed:
        return Posted(None, reading.heading, reading.words, reading.own_words, reading.links, reading.note)
    missing = [t for t in dict.fromkeys(reading.chunks) if sha256_hex(t) not in stored]
    embedded = await index.document_vectors(missing) if missing else []
    found = {**stored, **{sha256_hex(t): v for t, v in zip(missing, embedded or [])}}
    vector = mean_vector([found[h] for h in map(sha256_hex, reading.chunks) if h in found])
    return Posted(vector, reading.heading, reading.words, reading.own_words, reading.links, reading.note)


def is_whole_note(text: str) -> bool:
    """Whether ``text`` is a whole note rather than a part of one (it does not start
    with a heading; see the module docstring)."""
    return not _STARTS_WITH_HEADING.match(text)


def _read_and_stored(
    store: Store, settings: Settings, text: str, path: str | None, line: int | None
) -> tuple[Reading, dict[str, list[float]]]:
    reading = read_text(store, settings, text, path, line)
    return reading, store.vectors_for_hashes(list({sha256_hex(t) for t in reading.chunks}))


def read_text(store: Store, settings: Settings, text: str, path: str | None, line: int | None) -> Reading:
    """``text`` read as the index would read it (see :class:`Reading`; at most
    ``MAX_CHUNKS`` chunks)."""
    # Its setup files too, where the saved file's are (or, unsaved, at the top of the notes).
    parsed = read_org_bytes(text.encode("utf-8", "replace"), path or "", frozenset(settings.private_tags),
                            log_problems=False, root=settings.roam_dir)  # fmt: skip
    saved = file = None
    if not is_whole_note(text):
        parsed, saved, file = _in_saved_outline(store, parsed, path, line)
    parsed, chunked = without_replies(parsed, settings.chunk_chars, settings.chunk_overlap)
    chunks = [c.text for heading_chunks in chunked for c in heading_chunks]
    # A text with no title of its own and no saved file: its path lines have no title.
    texts = (t.removeprefix(" > ").lstrip("\n") for t in chunks)
    # The context and the titles above, as the index will keep them: the saved heading's,
    # else (a new first heading of a saved file) its file's title, which is the note's
    # unless the heading has an ID of its own.
    context, above = ([saved["olp_text"]], mentions.titles_above(saved)) if saved else ([], [])
    if file is not None:
        first = parsed.headings[0] if parsed.headings else None
        context, above = [file["title"]], [first.title if first is not None and first.own_id else file["title"]]
    words = " ".join([*context, *(h.title + " " + h.text for h in parsed.headings)])
    # A reply names no note, as when saved: the oracle's headings are left out, and the
    # user's holding a reply are read without it.
    oracle, replies = oracle_words(parsed.headings, dialogues_of(chunked))
    own_words = mentions.own_words(
        ((h.title, own_body(h.body, h.end_line, replies.get(i, ())), h.properties)
         for i, h in enumerate(parsed.headings) if i not in oracle),
        above=above,
    )  # fmt: skip
    links = tuple(dict.fromkeys(link for h in parsed.headings for link in h.links))
    chunks = [t for t in texts if t.strip()][:MAX_CHUNKS]
    note = file["file_node"] if file is not None else None
    return Reading(chunks, saved["id"] if saved else None, words, own_words, links, note)


def _in_saved_outline(
    store: Store, parsed: ParsedFile, path: str | None, line: int | None
) -> tuple[ParsedFile, dict | None, dict | None]:
    """``parsed`` (a text that starts with a heading) without its empty file record, its
    headings under the saved outline of ``path`` around ``line``: the file's title, and
    the ancestors of the saved heading of the same title nearest ``line`` (or, renamed,
    of the heading at ``line``: :meth:`~arcology_oracle.store.Store.saved_heading`),
    whose row comes second; third, when there is no such heading but the file is saved
    (a new first heading), the file's row."""
    headings = [h for h in parsed.headings if h.level > 0]
    saved = store.saved_heading(path, headings[0].title, line or 1) if path and headings else None
    if saved is None:  # a file with no heading yet, or none saved: its title at most
        file = store.file_row(path) if path else None
        return replace(parsed, title=file["title"] if file else parsed.title, headings=headings), None, file
    ancestors = tuple(saved["olp"])
    headings = [replace(h, olp=ancestors + tuple(h.olp)) for h in headings]
    return replace(parsed, title=saved["file_title"], headings=headings), saved, None
