"""Sources: the notes given to the model, numbered as it cites them, and their
renderings as org links, markdown and plain text.

A :class:`Source` is one note; :class:`NoteContext` is the set chosen for one question
(built by :mod:`arcology_oracle.answers.context`), with the numbered notes ready for a
prompt. No I/O here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..notes.model_text import quiet
from ..notes.org_escape import inert


@dataclass(slots=True)
class Source:
    """One note given to the model, numbered as the model cites it (``[n]``).

    ``title`` is the node's title, ``heading`` the best-matching heading in it, ``line``
    that heading's line. ``score`` is the relevance the gate used (cosine similarity in
    vector mode, keyword coverage in keyword mode). ``node_id`` is None for a file
    org-roam does not know as a note (no ID).
    """

    n: int
    node_id: str | None
    title: str
    heading: str
    file: str
    line: int
    score: float
    olp: list[str] = field(default_factory=list)
    date: str | None = None
    # A window of dialogue (answers/windows.py): who speaks in it and its last line.
    speakers: list[str] | None = None
    end_line: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def label(self) -> str:
        """``Title``, or ``Title: Heading`` when the heading is another one."""
        return self.title if self.heading == self.title or not self.heading else f"{self.title}: {self.heading}"

    def org_link(self, roam_dir: Path | None = None) -> str:
        """``[[id:NODE][Title]]``, or ``[[file:REL::LINE][Title]]`` for a note without ID
        (absolute when ``roam_dir`` is given)."""
        label = written_label(self.label)
        if self.node_id:
            return f"[[id:{self.node_id}][{label}]]"
        path = str(roam_dir / self.file) if roam_dir else self.file
        return f"[[file:{path}::{self.line}][{label}]]"

    def markdown_link(self) -> str:
        label = self.title if self.heading == self.title or not self.heading else f"{self.title}: {self.heading}"
        target = f"id:{self.node_id}" if self.node_id else f"{self.file}:{self.line}"
        return f"{label} ({target})"


def org_link_label(text: str) -> str:
    """``text`` made safe as an org link description (no brackets, one line) and inert
    as captured text is (:func:`~arcology_oracle.notes.org_escape.inert`: a title's
    ``<<<target>>>`` written in a sources list would take over the links of the file it
    is written into)."""
    return inert(" ".join(text.replace("[", "(").replace("]", ")").split()))


def written_label(text: str) -> str:
    """:func:`org_link_label` for a sources list written into a note: with no link that
    runs code and no active timestamp either (a zero-width space after its ``<``: a cited
    title's appointment would be on the agenda twice,
    :func:`~arcology_oracle.notes.model_text.quiet`). Prompts get titles as they are."""
    return quiet(org_link_label(text), verbatim=True)


def sources_org_block(sources: Sequence[Source], roam_dir: Path | None = None) -> str:
    """An org list of the sources, ``- [n] [[id:...][Title]]`` per line."""
    return "\n".join(f"- [{s.n}] {s.org_link(roam_dir)}" for s in sources)


def sources_plain_block(sources: Sequence[Source]) -> str:
    """An org list of the sources without links, ``- [n] Title: Heading`` per line: what
    an answer written into a note shows, so that org-roam lists no backlink for it (the
    targets are in its ``:SOURCES:`` property, :func:`source_targets`)."""
    return "\n".join(f"- [{s.n}] {written_label(s.label)}" for s in sources)


def source_targets(sources: Sequence[Source]) -> str:
    """The sources' targets in order, space-separated, the ``:SOURCES:`` property's value:
    ``ID::REL::LINE`` for a heading of a node (its node's bare ID, never ``id:``:
    org-roam collects links even in property drawers, never a bare ID; then where the
    heading cited is, so that it opens there, and before org-roam knows the ID), or
    ``file:REL::LINE`` for a note without one. ID and REL are percent-encoded (a space
    would split the list, a ``::`` the target; a UUID stays as it is). Older answers
    hold bare IDs; Emacs reads all three."""
    return " ".join(
        f"{quote(s.node_id, safe='')}::{quote(s.file)}::{s.line}" if s.node_id else f"file:{quote(s.file)}::{s.line}"
        for s in sources
    )


def sources_markdown_block(sources: Sequence[Source]) -> str:
    """A markdown list of the sources, ``[n] Title (id:...)`` per line."""
    return "\n".join(f"- [{s.n}] {s.markdown_link()}" for s in sources)


def sources_text_block(sources: Sequence[Source]) -> str:
    """Plain text: ``[n] Title <id:ID>`` per line (for terminals and curl)."""
    lines = []
    for s in sources:
        label = s.title if s.heading == s.title or not s.heading else f"{s.title}: {s.heading}"
        target = f"id:{s.node_id}" if s.node_id else f"{s.file}:{s.line}"
        lines.append(f"[{s.n}] {label} <{target}>")
    return "\n".join(lines)


@dataclass(slots=True)
class NoteContext:
    """The notes chosen for a question. ``notes_block`` is the numbered notes, ready for
    the ``{notes}`` of a prompt; ``used_notes`` is False when the gate let nothing
    through (then ``sources`` is empty). ``mode`` is "vector" or "keyword";
    ``best_score`` the best relevance seen (gate diagnostics)."""

    sources: list[Source]
    notes_block: str
    used_notes: bool
    mode: str = "keyword"
    best_score: float | None = None
    # The text of each window of dialogue among the sources, by number (verbatim).
    window_texts: dict[int, str] = field(default_factory=dict)

