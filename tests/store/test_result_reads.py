"""The batched reads /similar and /search score and show their results by
(store/search.py ``heading_vectors_at``, store/reads.py ``result_rows`` and
``node_heading_ids``): one statement each, and the very values of the lookups they
replaced, which the results' order and scores depend on."""

from __future__ import annotations

import dataclasses

import numpy as np

from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from arcology_oracle.store import Store
from tests.store_rows import heading


def _write(store: Store, path: str, numbers: list[int], chunks_each: int = 2) -> list[str]:
    """File ``path`` with a heading per number (start line number + 1), each with
    ``chunks_each`` chunks; returns every chunk's hash."""
    headings = [
        dataclasses.replace(heading(i), olp=("Top", f"Part {i}"), date="2025-01-02" if i % 2 else None) for i in numbers
    ]
    chunks = [[Chunk(o, f"{path} {i} {o}", sha256_hex(f"{path} {i} {o}")) for o in range(chunks_each)] for i in numbers]
    parsed = ParsedFile(path=path, title="T", file_id=None, headings=headings)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path + str(numbers)), chunks=chunks)
    return [c.hash for cs in chunks for c in cs]


def _old_heading_vectors(store: Store, path: str, line: int) -> list[list[float]]:
    """What relevance read before, one lookup at a time."""
    row = store.heading_at(path, line)
    if row is None:
        return []
    hashes = [h for h, _ in store.heading_chunks([row["id"]])[row["id"]]]
    found = store.vectors_for_hashes(hashes)
    return [found[h] for h in hashes if h in found]


def test_heading_vectors_at_reads_what_the_lookups_did(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        hashes = _write(store, "a.org", [0, 2, 4, 6]) + _write(store, "b.org", [1])
        rng = np.random.default_rng(3)
        # Every chunk embedded but the second of each a.org heading, and none of heading 4.
        embedded = [h for i, h in enumerate(hashes) if i % 2 == 0 and i not in (4, 5)] + [hashes[-1]]
        store.store_vectors([(h, rng.standard_normal(8).astype(np.float32).tolist()) for h in embedded])
        # Start lines 1, 3, 5, 7 in a.org: exact lines, lines inside a heading (the deepest
        # above), before the first, a heading with nothing embedded, another file, none.
        places = [("a.org", 1), ("a.org", 2), ("a.org", 3), ("a.org", 4), ("a.org", 5), ("a.org", 99),
                  ("a.org", 0), ("b.org", 2), ("missing.org", 1), ("a.org", 3)]  # fmt: skip
        got = store.heading_vectors_at(places)
        assert len(got) == len(places)
        for place, vectors in zip(places, got):
            want = _old_heading_vectors(store, *place)
            assert sorted(v.tolist() for v in vectors) == sorted(want), place
            assert all(v.dtype == np.float64 for v in vectors)
        assert [len(v) for v in got] == [1, 1, 1, 1, 0, 1, 0, 2, 0, 1]
        assert store.heading_vectors_at([]) == []
    finally:
        store.close()


def test_result_rows_and_node_heading_ids_are_the_rows_lookups_gave(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        _write(store, "a.org", [0, 2, 4])
        _write(store, "b.org", [1])
        ids = [r[0] for r in store.conn.execute("SELECT id FROM headings")]
        full = store.headings(ids)
        lean = store.result_rows(ids + [10_000])
        assert sorted(lean) == sorted(full)
        for heading_id, row in lean.items():
            assert row == {key: full[heading_id][key] for key in row}, heading_id
            assert row["olp"] == ["Top", row["title"].replace("Heading", "Part")]
        nodes = ["node-0", "node-1", "node-4", "node-9"]
        assert store.node_heading_ids(nodes) == {n: store.node(n)["id"] for n in nodes if store.node(n)}
        assert store.node_heading_ids([]) == {}
    finally:
        store.close()


def test_owners_and_answers_is_heading_owners_and_oracle_headings(tmp_path):
    """On a conversation (its root holds the oracle's turn among its scenes, the turn
    heading says ``:ROLE: oracle``) and a plain note: the same owners and the same
    answers as the two reads it replaces in /similar; exact_word_hits leaves them out."""
    from arcology_oracle.index.parsing import parse_note
    from tests.answers.test_chat_dialogue import OPTIONS, TALK

    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        parsed, chunks = parse_note(TALK.encode(), "talk.org", OPTIONS)
        store.replace_file(parsed, size=1, mtime_ns=1, file_hash="t", chunks=chunks)
        _write(store, "a.org", [0, 2])
        ids = [r[0] for r in store.conn.execute("SELECT id FROM headings")] + [10_000]
        owners, answers = store.owners_and_answers(iter(ids))
        assert owners == store.heading_owners(ids)
        assert answers == store.oracle_headings(ids)
        titles = {r[0]: r[1] for r in store.conn.execute("SELECT id, title FROM headings")}
        assert sorted(titles[h] for h in answers) == ["Oracle", "Tomato questions"]
        assert store.owners_and_answers([]) == ({}, set())
        # The keyword candidates' read leaves the same answers out, in the same statement.
        found = store.exact_word_hits('"leaf" OR "tomato" OR "greenhouse"', 100)
        assert found and not {h for h, *_ in found} & answers
        everything = store.conn.execute(
            "SELECT rowid FROM headings_exact WHERE headings_exact MATCH ?", ('"leaf" OR "tomato" OR "greenhouse"',)
        ).fetchall()
        assert {h for h, *_ in found} == {r[0] for r in everything} - answers
    finally:
        store.close()


def test_copies_of_are_the_same_title_and_text_elsewhere_never_an_empty_heading(tmp_path):
    """``copies_of``: among the ids given, the headings holding the very title and text
    (white space around the text aside); a heading with no text has no copies."""
    from arcology_oracle.notes.records import ParsedFile

    def h(i: int, title: str, text: str):
        return dataclasses.replace(heading(i), title=title, text=text, body=text)

    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        files = {
            "a.org": [h(0, "Pruning", "Cut back in winter."), h(1, "Notes", "")],
            "b.org": [h(2, "Pruning", "Cut back in winter.\n"), h(3, "Notes", ""), h(4, "Pruning", "Cut in spring.")],
            "c.org": [h(5, "Winter", "Cut back in winter.")],
        }
        for path, headings in files.items():
            chunks = [[Chunk(0, f"{path} {x.start_line}", sha256_hex(f"{path} {x.start_line}"))] for x in headings]
            parsed = ParsedFile(path=path, title="T", file_id=None, headings=headings)
            store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path), chunks=chunks)
        ids = {(r[1], r[2]): r[0] for r in store.conn.execute(
            "SELECT h.id, f.path, h.start_line FROM headings h JOIN files f ON f.id = h.file")}  # fmt: skip
        every = list(ids.values())
        pruning, notes = ids[("a.org", 1)], ids[("a.org", 2)]
        assert store.copies_of(pruning, every) == {ids[("b.org", 3)]}
        assert store.copies_of(pruning, [pruning, ids[("c.org", 6)]]) == set()  # only among those given
        assert store.copies_of(notes, every) == set()
    finally:
        store.close()


def test_role_outlines_find_the_files_with_a_role_by_their_index(tmp_path):
    """Every result's role is read by its file's outline, only for the files holding a
    ``:ROLE:``; which files those are is one probe of ``headings_role`` each (m014), not a
    parse of every heading's properties (a scan of the files' headings without the index)."""
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        turns = [dataclasses.replace(heading(i), properties={"ROLE": role}) for i, role in [(0, "User"), (1, " oracle ")]]
        chat = ParsedFile(path="chat.org", title="T", file_id=None, headings=[heading(5), *turns])
        store.replace_file(chat, size=1, mtime_ns=1, file_hash=sha256_hex("chat"), chunks=[[], [], []])
        _write(store, "plain.org", [0, 1, 2])
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        outlines = store.role_outlines(["plain.org", "chat.org", "missing.org"])
        store.conn.set_trace_callback(None)
        assert outlines == {"chat.org": [(1, 1, "user", False), (2, 1, "oracle", False), (6, 1, "", False)]}
        which = next(s for s in statements if "DISTINCT" in s)
        plan = " ".join(str(tuple(r)) for r in store.conn.execute(f"EXPLAIN QUERY PLAN {which}"))
        assert "headings_role" in plan, plan
    finally:
        store.close()


def test_node_names_decode_only_the_alias_lists_that_hold_some(tmp_path, monkeypatch):
    """/similar reads the names of its ~30 candidate notes (``node_names``), most of them
    with no alias: their stored ``[]`` is not decoded (~2 µs each), and the names are
    the same."""
    import json

    from arcology_oracle.store import reads

    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    try:
        headings = [heading(0), dataclasses.replace(heading(1), aliases=("Second name", "Third"))]
        parsed = ParsedFile(path="a.org", title="T", file_id=None, headings=headings)
        chunks = [[Chunk(0, f"text {i}", sha256_hex(f"text {i}"))] for i in range(2)]
        store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex("a"), chunks=chunks)
        decoded = []
        loads = json.loads
        monkeypatch.setattr(reads.json, "loads", lambda s, *a, **kw: decoded.append(s) or loads(s, *a, **kw))
        names = store.node_names(["node-0", "node-1", "node-9"])
    finally:
        store.close()
    assert names == {"node-0": ["T"], "node-1": ["T", "Second name", "Third"]}
    assert decoded == ['["Second name", "Third"]']
