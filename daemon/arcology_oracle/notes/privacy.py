"""What is private: the one predicate that decides which org text is never stored,
returned or put in a prompt.

The reader (:mod:`arcology_oracle.notes.reader`) asks :meth:`Privacy.excludes` about the file
and about each heading, and leaves an excluded heading out with its whole subtree; text
sent by clients is cleaned by running it through that same reader
(:func:`arcology_oracle.notes.cleaning.strip_private`), so the index and the cleaning cannot
disagree. A heading (or the file) is private when:

* its own or inherited tags, ``#+filetags`` included, contain ``crypt`` or one of the
  configured ``private_tags`` (compared case-insensitively). Tags are read with Org's
  tag characters, ``[[:alnum:]_@#%]`` (``org-tag-re``), so ``:private:#health:`` holds
  ``private``;
* it has a ``ROAM_EXCLUDE`` property whose value is anything but ``nil``, as current
  org-roam (2.2, ``org-roam-db-node-p``) decides with ``org-entry-get``: ``t``, ``yes``,
  ``NIL`` and an empty value exclude, ``nil`` does not. The value is read as
  ``org-entry-get`` reads it (:func:`~arcology_oracle.notes.orgparse_safe.entry_values`:
  the first ``ROAM_EXCLUDE`` line in any letter case, then each ``ROAM_EXCLUDE+`` line),
  in a drawer that ends at a line that is just ``:END:``. On the file (the drawer before
  the first heading) it excludes the whole file;
* its own text holds a PGP armor header (``-----BEGIN PGP MESSAGE-----``, as
  org-crypt writes); before the first heading this drops only the text there.

``#+FILETAGS`` keywords count wherever they stand in the file, as Org collects them
(checked with Emacs 28.2 and Org 9.5.5 in batch mode): after the first heading too, indented,
inside drawers and greater blocks (quote, center, special); not inside src, example,
export, comment or verse blocks, whose lines are not keywords. Values are split on
whitespace and ``:``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..org_tags import is_tag_char

DEFAULT_PRIVATE_TAGS: frozenset[str] = frozenset({"private"})
CRYPT_TAG = "crypt"
PGP_MARKER = "-----BEGIN PGP MESSAGE-----"
ROAM_EXCLUDE = "ROAM_EXCLUDE"



_FILETAGS_RE = re.compile(r"^[ \t]*#\+filetags:(.*)$", re.IGNORECASE)
_BLOCK_BEGIN_RE = re.compile(r"^[ \t]*#\+begin_(src|example|export|comment|verse)(?:[ \t]|$)", re.IGNORECASE)
_HEADING_RE = re.compile(r"^\*+ ")


@dataclass(frozen=True, slots=True)
class Privacy:
    """The privacy rules for one configuration: ``hidden`` are the case-folded tags that
    make text private (the configured private tags and ``crypt``)."""

    hidden: frozenset[str]

    @classmethod
    def from_tags(cls, private_tags: Iterable[str] = DEFAULT_PRIVATE_TAGS) -> Privacy:
        return cls(frozenset(t.casefold() for t in private_tags) | {CRYPT_TAG})

    def tags_exclude(self, tags: Iterable[str]) -> bool:
        """Whether one of ``tags`` (own and inherited) makes text private. A tag holding
        U+FFFD (bytes of a note that is not UTF-8, Latin-1 say, which the reader cannot
        decode) makes it private when it may be a private tag as Emacs reads it: each
        run of U+FFFD standing for one or more non-ASCII letters (``:priv\ufffd:`` is
        ``:privé:``)."""
        return any(t.casefold() in self.hidden or ("\ufffd" in t and self._may_be_hidden(t)) for t in tags)

    def _may_be_hidden(self, tag: str) -> bool:
        pattern = "[^\\x00-\\x7f]+".join(re.escape(part) for part in re.split("\ufffd+", tag.casefold()))
        return any(re.fullmatch(pattern, hidden) for hidden in self.hidden)

    def excludes(self, *, tags: Iterable[str], properties: Mapping[str, str], text: str = "") -> bool:
        """Whether a heading (or the file) with these tags (inherited ones included),
        properties (upper-cased keys) and own ``text`` is private; see the module
        docstring. A heading under a private one is private too: the caller passes that on."""
        return self.tags_exclude(tags) or roam_excluded(properties) or PGP_MARKER in text


def roam_excluded(properties: Mapping[str, str]) -> bool:
    """org-roam 2.2's rule: ``ROAM_EXCLUDE`` is set to anything but ``nil``
    (``org-entry-get`` reads the value ``nil`` as nil; the empty value is ``""``)."""
    value = properties.get(ROAM_EXCLUDE)
    return value is not None and value.strip() != "nil"


def file_tags(lines: Sequence[str]) -> tuple[str, ...]:
    """The tags of every ``#+FILETAGS`` keyword in the file, in order, without repeats."""
    tags: dict[str, None] = {}
    for value in keyword_values(lines, _FILETAGS_RE):
        for word in value.split():
            tags.update((t, None) for t in word.split(":") if t)
    return tuple(tags)


def keyword_values(lines: Sequence[str], keyword: re.Pattern[str]) -> list[str]:
    """The values (``keyword``'s group 1) of every line matching ``keyword`` that Org
    reads as a keyword: wherever it stands, but not inside src, example, export, comment
    or verse blocks (see the module docstring)."""
    values: list[str] = []
    block_end: re.Pattern[str] | None = None
    open_until: dict[str, int] = {}  # block name -> a line before which it has no end line
    # Only lines holding "#+" can be keywords or block lines (a comprehension finds them
    # several times faster than a loop that tests every line).
    for i in [i for i, line in enumerate(lines) if "#+" in line]:
        line = lines[i]
        if block_end is not None:
            if block_end.match(line):
                block_end = None
            continue
        begin = _BLOCK_BEGIN_RE.match(line)
        if begin:
            name = begin[1].lower()
            if i < open_until.get(name, -1):
                continue
            end = re.compile(rf"^[ \t]*#\+end_{name}[ \t]*$", re.IGNORECASE)
            closed_at = _block_end(lines, i + 1, end)
            if closed_at < 0:
                open_until[name] = -closed_at
            else:
                block_end = end
            continue
        m = keyword.match(line)
        if m:
            values.append(m[1])
    return values


def _block_end(lines: Sequence[str], start: int, end: re.Pattern[str]) -> int:
    """The line that ends a block opened before ``start``, or minus the line of the next
    heading (or of the end of the file) when it ends nowhere before it: in Org such a
    "block" is none, and its lines are read as they are. (Remembering that bound keeps a
    file of many unclosed blocks linear.)"""
    for i in range(start, len(lines)):
        line = lines[i]
        if _HEADING_RE.match(line):
            return -i
        if end.match(line):
            return i
    return -len(lines)
