"""The TODO keywords a file declares for itself, which Org reads as a heading's state
when one starts its title (checked with Emacs 28 and Org 9.5 in batch mode).

``#+TODO:``, ``#+SEQ_TODO:`` and ``#+TYP_TODO:`` lines (any letter case, wherever they
stand but inside blocks, as for every keyword: :func:`~.privacy.keyword_values`), in the
file or in a setup file it names (:func:`~.setup_files.setup_file_lines`), declare
their words as keywords: ``#+TODO: Plans Doing(d!) | Done`` makes ``* Plans for May``
a task in state ``Plans``. A word is matched in its letter case (``plans`` is no
keyword there); ``|`` separates states, and what follows a word's ``(`` is its fast
key and logging, not part of it. The words before ``|`` are states of a task not done;
with no ``|`` (or none after it) all but the last are (``#+TODO: NEXT WAIT DONE``).

What cannot be known from the files: keywords set only in the user's Emacs (its
``org-todo-keywords``, a file's ``-*-`` line or Local Variables setting it), and those of
a setup file named by URL (not fetched).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from .disk import read_regular_file
from .org_syntax import decode_org_bytes, split_lines
from .privacy import keyword_values
from .setup_files import setup_file_lines

_TODO_RE = re.compile(r"^[ \t]*#\+(?:seq_|typ_)?todo:(.*)$", re.IGNORECASE)


def declared_todo_keywords(lines: Sequence[str], directory: Path) -> frozenset[str]:
    """The TODO keywords the note ``lines`` (in ``directory``) declares, its setup files'
    included (see the module docstring); empty when it declares none."""
    return frozenset(word for words in _sequences(lines, directory) for word in words) - {"|", ""}


def file_todo_keywords(path: Path) -> frozenset[str]:
    """:func:`declared_todo_keywords` of the note at ``path`` as it is now; empty when it
    is not a regular file that can be read (not there yet: the daemon creates it)."""
    return declared_todo_keywords(*_note_lines(path))


def file_task_keyword(path: Path) -> str:
    """The state a task written into the note at ``path`` starts with, so that Org there
    reads it as a task not done: ``TODO`` when the note declares no keywords (nor when it
    cannot be read: Org's own default), else the first word it declares a state not done
    (``NEXT`` for ``#+TODO: NEXT | DONE``, whose Org reads no ``TODO``). ``TODO`` too
    when it declares only done states: no word makes a task there."""
    for words in _sequences(*_note_lines(path)):
        # As Org 9.5 reads a sequence (checked in batch): "NEXT |" and "NEXT" are done.
        states = [word for word in words if word != "|"]
        done = words[words.index("|") + 1 :] if "|" in words else []
        if undone := states[: len(states) - (len([w for w in done if w != "|"]) or 1)]:
            return undone[0]
    return "TODO"


def _note_lines(path: Path) -> tuple[list[str], Path]:
    data = read_regular_file(path)
    return ([] if data is None else split_lines(decode_org_bytes(data))), path.parent


def _sequences(lines: Sequence[str], directory: Path) -> Iterator[list[str]]:
    """The words of each TODO line of ``lines`` then of its setup files, in order, each
    without its fast key and logging (see the module docstring)."""
    if not any("#+" in line for line in lines):
        return
    for text in (lines, *setup_file_lines(lines, directory)):
        for value in keyword_values(text, _TODO_RE):
            if words := [word.split("(", 1)[0] for word in value.split()]:
                yield [word for word in words if word]
