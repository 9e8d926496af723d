"""A capture's tags: each exactly an Org tag word (``org-tag-re``), or a 400."""

from __future__ import annotations

from ..errors import BadRequest
from .privacy import is_tag_char


def clean_tags(tags: object) -> tuple[str, ...]:
    """Validated tags, each exactly an Org tag word; BadRequest for anything else."""
    if tags is None:
        return ()
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadRequest("tags must be a list of strings")
    out: list[str] = []
    for tag in tags:
        if not tag or not all(is_tag_char(c) for c in tag):
            raise BadRequest(f"invalid tag {tag!r}: Org tags hold letters, digits, _, @, # and % only")
        if tag not in out:
            out.append(tag)
    return tuple(out)
