"""/similar for a section: a note that holds other notes word for word (a manual's chapter
holding its sections) is a hub, near whatever its parts are near, and no longer comes
before the part the section is about (:mod:`arcology_oracle.answers.holders`).

Real org files, real SQLite, the fake Ollama (hashed bags of words).
"""

from __future__ import annotations

import uuid

from arcology_oracle.answers.search import similar_to_line, similar_to_node, similar_to_text
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store import Store


def node_id(title: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, title))


def note(title: str, body: str) -> str:
    return f":PROPERTIES:\n:ID:       {node_id(title)}\n:END:\n#+title: {title}\n\n{body}\n"


# A manual's chapter and its sections, each section also a note of its own (as Info's
# nodes are exported: the chapter's node holds its sections' text).
SECTIONS = {
    "context.org": ("Context format", "Context format shows several lines of context around the lines that differ."),
    "unified.org": ("Unified format", "Unified format shows context lines once, merged, with plus and minus marks."),
    "side.org": ("Side by side format", "Side by side format prints the two files in two columns, a gutter between."),
    "normal.org": ("Normal format", "Normal format shows only the lines that differ, without any context."),
}
CHAPTER = "\n".join(f"* {title}\n{text}" for title, text in SECTIONS.values())
# About the unified format, in words of the other sections too (all of them the chapter's).
QUERY = (
    "* Reading a patch\n"
    "Lines that differ marked plus and minus, the context lines merged, not two columns with a gutter between.\n"
)
FILES = {
    "formats.org": note("Output formats", CHAPTER),
    **{name: note(title, f"* {title}\n{text}") for name, (title, text) in SECTIONS.items()},
    "sdiff.org": note("Interactive merging", QUERY),
    "cycling.org": note("Cycling", "Chain oil, tyre pressure and a spare tube for the long rides."),
    "chess.org": note("Chess openings", "The Sicilian and the French defence, and when to castle."),
    "bread.org": note("Sourdough", "Hydration, a long cold proof and a hot oven for the crust."),
    # The same note twice (a sync conflict): each holds the other, and nothing more.
    "tea.org": note("Green tea", "* Brewing\nWater below boiling, two minutes."),
    "tea-copy.org": note("Green tea (copy)", "* Brewing\nWater below boiling, two minutes."),
}


async def test_a_section_finds_the_part_before_the_chapter_holding_it(make_settings, tmp_path, fake_ollama):
    """By file and line and by its text, the section on reading a patch finds the note on
    the unified format first, though the chapter holds that note's text and more of the
    section's words (without .holders the chapter came first); asked as a whole note the
    chapter keeps its place (whole notes link chapters: not discounted)."""
    roam = tmp_path / "manual-roam"
    roam.mkdir()
    for name, text in FILES.items():
        (roam / name).write_text(text, encoding="utf-8")
    settings = make_settings(roam_dir=roam, ollama_host=fake_ollama.url)
    idx = OracleIndex(settings)
    await idx.start()
    try:
        await idx.reconcile()
        await idx.embed_pending()
        line = FILES["sdiff.org"].splitlines().index("* Reading a patch") + 1
        _, by_line = await similar_to_line(idx, "sdiff.org", line, k=5, keep_all=True)
        _, by_text = await similar_to_text(idx, QUERY, k=5, path="sdiff.org", line=line, keep_all=True)
        _, by_node = await similar_to_node(idx, node_id("Interactive merging"), k=5, keep_all=True)
    finally:
        await idx.close()
    store = Store.open(settings.db_path)
    try:
        holders = store.holders_among(
            [node_id(t) for t in ["Output formats", "Side by side format", "Cycling", "Green tea", "Green tea (copy)"]]
        )
    finally:
        store.close()
    for found in (by_line, by_text):
        assert [r.file for r in found][:2] == ["unified.org", "formats.org"], found
    assert by_node[0].file == "formats.org", by_node
    assert holders == {node_id("Output formats")}
