"""The TODO keywords a file declares for itself, which Org reads as a heading's state
when one starts its title (checked with Emacs 28 and Org 9.5 in batch mode).

``#+TODO:``, ``#+SEQ_TODO:`` and ``#+TYP_TODO:`` lines (any letter case, wherever they
stand but inside blocks, as for every keyword: :func:`~.privacy.keyword_values`), in the
file or in a setup file it names (:func:`~.setup_files.setup_file_lines`), declare
their words as keywords: ``#+TODO: Plans Doing(d!) | Done`` makes ``* Plans for May``
a task in state ``Plans``. A word is matched in its letter case (``plans`` is no
keyword there); ``|`` separates states, and what follows a word's ``(`` is its fast
key and logging, not part of it.

What cannot be known from the files: keywords set only in the user's Emacs (its
``org-todo-keywords``, a file's ``-*-`` line or Local Variables setting it), and those of
a setup file named by URL (not fetched).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .disk import read_regular_file
from .org_syntax import decode_org_bytes, split_lines
from .privacy import keyword_values
from .setup_files import setup_file_lines

_TODO_RE = re.compile(r"^[ \t]*#\+(?:seq_|typ_)?todo:(.*)$", re.IGNORECASE)


def declared_todo_keywords(lines: Sequence[str], directory: Path) -> frozenset[str]:
    """The TODO keywords the note ``lines`` (in ``directory``) declares, its setup files'
    included (see the module docstring); empty when it declares none."""
    if not any("#+" in line for line in lines):
        return frozenset()
    words: set[str] = set()
    for text in (lines, *setup_file_lines(lines, directory)):
        for value in keyword_values(text, _TODO_RE):
            words.update(word.split("(", 1)[0] for word in value.split())
    return frozenset(words - {"|", ""})


def file_todo_keywords(path: Path) -> frozenset[str]:
    """:func:`declared_todo_keywords` of the note at ``path`` as it is now; empty when it
    is not a regular file that can be read (not there yet: the daemon creates it)."""
    data = read_regular_file(path)
    return frozenset() if data is None else declared_todo_keywords(split_lines(decode_org_bytes(data)), path.parent)
