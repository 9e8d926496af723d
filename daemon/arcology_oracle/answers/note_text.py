"""A note's text for a summary prompt (:mod:`.oracle`): its headings, outline paths and
texts, without the oracle's own words; and that text cut into parts for a long note."""

from __future__ import annotations

import re

from ..store import Store
from .sources import Source


def note_text(
    store: Store, node: str | None, file: str | None, keep_oracle: bool = False
) -> tuple[list[dict], str, Source] | None:
    """:meth:`~.oracle.Oracle._note` on ``store``: the headings of a note, its text for a
    summary prompt and it as source [1]; None when the index holds no such note. The
    oracle's own words in it (:meth:`~arcology_oracle.store.Store.oracle_words`: its answers
    in a conversation, what was kept with ``role: oracle``) are left out unless
    ``keep_oracle``: a summary prompt calls the note the user's writing. The headings are
    ``[]`` when nothing of the user's is left (at most the file's record, without text)."""
    rows = store.subtree(node_id=node, path=file)
    if not rows:
        return None
    first = rows[0]
    if not keep_oracle:
        oracle = store.oracle_words(r["id"] for r in rows)
        if oracle:
            rows = [r for r in rows if r["id"] not in oracle]
            if all(not r["level"] and not (r["text"] or "").strip() for r in rows):
                rows = []  # an empty file record left: the note holds nothing of the user's
    file_title = store.file_info([first["file"]]).get(first["file"], {}).get("title") or first["node_title"]
    blocks = []
    for row in rows:
        outline = " > ".join([file_title, *row["olp"], row["title"]]) if row["level"] else file_title
        text = (row["text"] or "").strip()
        blocks.append(f"## {outline}" + (f"\n{text}" if text else ""))
    source = Source(
        n=1,
        node_id=node or first["node_id"],
        title=first["node_title"],
        heading=first["title"],
        file=first["file"],
        line=first["start_line"],
        score=1.0,
        olp=list(first["olp"]),
        date=first["date"],
    )
    return rows, "\n\n".join(blocks), source


def note_parts(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters (``context_chars``), at
    heading, then paragraph, then line boundaries: a long note is summarized in parts."""
    if len(text) <= limit:
        return [text]
    units: list[str] = []
    for block in re.split(r"\n(?=## )", text):
        if len(block) <= limit:
            units.append(block)
            continue
        for para in block.split("\n\n"):
            while len(para) > limit:
                cut = para.rfind("\n", 0, limit)
                cut = cut if cut > limit // 2 else limit
                units.append(para[:cut])
                para = para[cut:].lstrip("\n")
            units.append(para)
    parts: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + 2 + len(unit) > limit:
            parts.append(current)
            current = unit
        else:
            current = f"{current}\n\n{unit}" if current else unit
    if current:
        parts.append(current)
    return parts
