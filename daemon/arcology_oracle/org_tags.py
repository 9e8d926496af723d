"""Org's tag characters: what a tag may hold, for the settings (``private_tags``) and
for every reader of tags (:mod:`arcology_oracle.notes.privacy`)."""

from __future__ import annotations

import unicodedata


def is_tag_char(char: str) -> bool:
    """Whether ``char`` is one of Org's tag characters, ``[[:alnum:]_@#%]`` (``org-tag-re``)
    as Emacs reads ``[:alnum:]`` (checked with Emacs 28.2): a letter or a mark of any
    script (the vowel signs of ``हिन्दी``), a decimal digit or a letter-like number
    (``Ⅷ``, ``〇``), or one of ``_@#%``; not other numbers (``½``, ``²``). Python's word class
    differs both ways: it misses marks, so a Hindi tag beside ``private`` hid the whole
    run of tags."""
    if char in "_@#%":
        return True
    category = unicodedata.category(char)
    return category[0] in "LM" or category in ("Nd", "Nl")
