"""Chunking of heading text into embedding windows."""

from __future__ import annotations

import re

import pytest

from arcology_oracle.notes.chunking import chunk_heading, path_line
from arcology_oracle.notes.reader import read_org_bytes
from arcology_oracle.notes.records import Heading, sha256_hex


def heading(text: str, *, level: int = 2, title: str = "Child", olp: tuple[str, ...] = ("Parent",)) -> Heading:
    return Heading(
        node_id=None, own_id=None, level=level, title=title, olp=olp, tags=(), todo=None,
        properties={}, body=text, text=text, start_line=1, end_line=1, node_title="F",
    )  # fmt: skip


def paragraphs(n: int, size: int = 90) -> list[str]:
    return [f"p{i:03d} " + ("word " * size)[: size - 5].strip() for i in range(n)]


def bodies(chunks, head):
    out = []
    for c in chunks:
        assert c.text.startswith(head + "\n\n")
        out.append(c.text[len(head) + 2 :])
    return out


def test_path_line_and_short_body():
    h = heading("Some body.")
    assert path_line(h, "File") == "File > Parent > Child"
    [chunk] = chunk_heading(h, "File")
    assert chunk.ordinal == 0
    assert chunk.text == "File > Parent > Child\n\nSome body."
    assert chunk.hash == sha256_hex(chunk.text)


def test_level_zero_uses_file_title_alone():
    h = heading("Preamble.", level=0, title="File", olp=())
    assert [c.text for c in chunk_heading(h, "File")] == ["File\n\nPreamble."]


def test_empty_body_still_yields_the_path_line():
    assert [c.text for c in chunk_heading(heading("  \n\n "), "File")] == ["File > Parent > Child"]


def test_windows_split_on_paragraphs_with_overlap():
    paras = paragraphs(40)
    chunks = chunk_heading(heading("\n\n".join(paras)), "File", max_chars=500, overlap=200)
    assert len(chunks) > 5
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    windows = bodies(chunks, "File > Parent > Child")
    for w in windows:
        assert len(w) <= 500
        assert all(p in paras for p in w.split("\n\n"))  # never inside a paragraph
    for prev, cur in zip(windows, windows[1:]):
        prev_paras, cur_paras = prev.split("\n\n"), cur.split("\n\n")
        shared = [p for p in cur_paras if p in prev_paras]
        assert shared and shared == prev_paras[-len(shared) :]  # trailing paragraphs repeated
        assert len("\n\n".join(shared)) <= 200
    covered = {p for w in windows for p in w.split("\n\n")}
    assert covered == set(paras)


def test_no_overlap():
    paras = paragraphs(20)
    windows = bodies(chunk_heading(heading("\n\n".join(paras)), "F", max_chars=300, overlap=0), "F > Parent > Child")
    assert sum(len(w.split("\n\n")) for w in windows) == len(paras)


def test_src_block_with_blank_lines_is_not_split():
    src = "#+begin_src python\ndef f():\n\n    return 1\n\n\n# * not a heading\n#+end_src"
    body = "\n\n".join([*paragraphs(3), src, *paragraphs(3)])
    windows = bodies(chunk_heading(heading(body), "F", max_chars=300, overlap=100), "F > Parent > Child")
    assert sum(w.count("#+begin_src") for w in windows) >= 1
    for w in windows:
        assert w.count("#+begin_src") == w.count("#+end_src")
    assert any(src in w for w in windows)


def test_table_is_kept_whole():
    table = "\n".join(f"| row {i} | {i * 7} |" for i in range(10))
    body = "\n\n".join([*paragraphs(4), "Intro line\n" + table, *paragraphs(4)])
    windows = bodies(chunk_heading(heading(body), "F", max_chars=400, overlap=100), "F > Parent > Child")
    assert any(table in w for w in windows)
    for w in windows:
        rows = re.findall(r"^\| row (\d+)", w, re.M)
        assert rows in ([], [str(i) for i in range(10)])


def test_oversized_block_is_split_by_lines_then_characters():
    src = "#+begin_src text\n" + "\n".join(f"line {i:04d} " + "x" * 40 for i in range(100)) + "\n#+end_src"
    windows = bodies(chunk_heading(heading(src), "F", max_chars=500, overlap=0), "F > Parent > Child")
    assert all(len(w) <= 500 for w in windows)
    lines = [ln for w in windows for ln in w.split("\n")]
    assert lines == src.split("\n")  # cut between lines only
    long_line = "y" * 2500
    windows = bodies(chunk_heading(heading(long_line), "F", max_chars=1000, overlap=0), "F > Parent > Child")
    assert windows == ["y" * 1000, "y" * 1000, "y" * 500]


def test_mixed_oversized_paragraph_prefers_table_boundaries():
    table = "\n".join(f"| {i} | value {i} |" for i in range(20))
    unit = "\n".join([f"text line {i} " + "z" * 30 for i in range(10)] + [table])  # no blank line
    windows = bodies(chunk_heading(heading(unit), "F", max_chars=len(table) + 5, overlap=0), "F > Parent > Child")
    assert any(table in w for w in windows)


def test_deterministic_and_hash():
    h = heading("\n\n".join(paragraphs(30)))
    a = chunk_heading(h, "F", max_chars=400, overlap=150)
    b = chunk_heading(h, "F", max_chars=400, overlap=150)
    assert a == b
    assert all(c.hash == sha256_hex(c.text) for c in a)
    assert len({c.hash for c in a}) == len(a)


def test_overlap_never_blocks_progress():
    # The last paragraph fits in overlap, but overlap + next paragraph do not fit a window.
    body = "\n\n".join(["a" * 50, "b" * 90, "c" * 95, "d" * 99])
    windows = bodies(chunk_heading(heading(body), "F", max_chars=100, overlap=95), "F > Parent > Child")
    assert windows == ["a" * 50, "b" * 90, "c" * 95, "d" * 99]


def test_invalid_max_chars():
    with pytest.raises(ValueError):
        chunk_heading(heading("x"), "F", max_chars=0)


def test_chunks_use_link_descriptions_from_the_reader():
    parsed = read_org_bytes(b"#+title: T\n* H\nSee [[id:abc][the other note]] and [[https://e.x]].\n", "t.org")
    [chunk] = chunk_heading(parsed.headings[1], parsed.title)
    assert chunk.text == "T > H\n\nSee the other note and https://e.x."
