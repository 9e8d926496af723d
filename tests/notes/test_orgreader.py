"""The org reader on real files: structure, exclusions, damaged input, the example vault."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from arcology_oracle.notes.records import Heading, ParsedFile
from arcology_oracle.notes.org_syntax import HEADING_LINE_RE, link_text, split_roam_list
from arcology_oracle.notes.reader import read_org_bytes, read_org_file
from tests.org_samples import (
    BIG_SECRET,
    IDS,
    NEVER_INDEXED_IDS,
    SECRET_WORDS,
    UNCLOSED_DRAWER_ID,
    VAULT,
    big_org_bytes,
)

FILE_ID = "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
NODE_ID = "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"
LINKED = "cccccccc-3333-4333-8333-cccccccccccc"

SAMPLE = f"""\
:PROPERTIES:
:ID:       {FILE_ID}
:END:
#+title: Sample [[https://example.com][Note]]
#+filetags: :alpha:beta:

Preamble with [[id:{LINKED}][a linked note]] and [[https://example.org]].

* TODO Top one :top:
:PROPERTIES:
:ID:       {NODE_ID}
:ROAM_ALIASES: "First alias" second "with \\"quote\\""
:ROAM_REFS: [[https://example.com/page][the page]] @citekey
:CREATED:  [2024-05-06 Mon 10:00]
:custom_key: Some Value
:END:
Top body with [[id:{LINKED}]] and a [[file:other.org][file link]].
** Child without id :kid:
Child body.
*** Grandchild
Deep body.
* DONE Second top [[id:{LINKED}][linked title]] <2024-07-08 Mon>
Second body.
"""


def write(tmp_path: Path, name: str, content: str | bytes) -> tuple[Path, str]:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path, name


def read(tmp_path: Path, name: str, content: str | bytes, **kw) -> ParsedFile:
    path, rel = write(tmp_path, name, content)
    return read_org_file(path, rel, **kw)


def by_title(parsed: ParsedFile) -> dict[str, Heading]:
    return {h.title: h for h in parsed.headings}


def all_text(parsed: ParsedFile) -> str:
    """Every string field of every heading, for leak checks."""
    parts: list[str] = []
    for h in parsed.headings:
        for f in dataclasses.fields(h):
            value = getattr(h, f.name)
            if isinstance(value, dict):
                parts.extend(f"{k}={v}" for k, v in value.items())
            elif isinstance(value, tuple):
                parts.extend(map(str, value))
            else:
                parts.append(str(value))
    return "\n".join(parts)


def assert_lines_match(parsed: ParsedFile, raw: bytes | str) -> None:
    """Every heading's start_line is its heading line in the file as an editor shows it."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    lines = text.replace("\r\n", "\n").split("\n")
    for h in parsed.headings:
        assert 1 <= h.start_line <= h.end_line <= len(lines)
        if h.level > 0:
            line = lines[h.start_line - 1]
            assert HEADING_LINE_RE.match(line) and line.startswith("*" * h.level + " "), (h, line)


# --- structure -----------------------------------------------------------------------


def test_file_record_and_titles(tmp_path):
    parsed = read(tmp_path, "notes/sample.org", SAMPLE)
    assert parsed.path == "notes/sample.org"
    assert parsed.title == "Sample Note"
    assert parsed.file_id == FILE_ID
    assert parsed.problems == []
    top = parsed.headings[0]
    assert (top.level, top.title, top.own_id, top.node_id) == (0, "Sample Note", FILE_ID, FILE_ID)
    assert (top.start_line, top.end_line) == (1, 8)
    assert top.tags == ("alpha", "beta")
    assert top.properties == {"ID": FILE_ID}
    assert top.olp == ()
    assert top.is_node


def test_node_ownership(tmp_path):
    h = by_title(read(tmp_path, "sample.org", SAMPLE))
    assert h["Top one"].own_id == NODE_ID and h["Top one"].node_id == NODE_ID
    assert h["Child without id"].own_id is None
    assert h["Child without id"].node_id == NODE_ID  # nearest ancestor with an ID
    assert h["Grandchild"].node_id == NODE_ID
    assert h["Grandchild"].node_title == "Top one"
    second = h["Second top linked title <2024-07-08 Mon>"]
    assert second.node_id == FILE_ID and second.node_title == "Sample Note"  # the file's ID


def test_headings_without_any_node(tmp_path):
    parsed = read(tmp_path, "plain.org", "* One\n** Two\ntext\n")
    assert parsed.file_id is None and parsed.title == "plain"
    assert [h.title for h in parsed.headings] == ["One", "Two"]  # no preamble: no level 0
    assert all(h.node_id is None and h.node_title == "plain" for h in parsed.headings)


def test_olp_tags_todo(tmp_path):
    h = by_title(read(tmp_path, "sample.org", SAMPLE))
    assert h["Top one"].olp == ()
    assert h["Child without id"].olp == ("Top one",)
    assert h["Grandchild"].olp == ("Top one", "Child without id")
    assert h["Top one"].tags == ("alpha", "beta", "top")
    assert h["Grandchild"].tags == ("alpha", "beta", "top", "kid")
    assert h["Top one"].todo == "TODO"
    assert h["Second top linked title <2024-07-08 Mon>"].todo == "DONE"
    assert h["Grandchild"].todo is None
    assert [x.level for x in read(tmp_path, "sample.org", SAMPLE).headings] == [0, 1, 2, 3, 1]


def test_properties_aliases_refs_dates(tmp_path):
    h = by_title(read(tmp_path, "sample.org", SAMPLE))
    top = h["Top one"]
    assert top.properties["CUSTOM_KEY"] == "Some Value"
    assert top.properties["ID"] == NODE_ID
    assert top.aliases == ("First alias", "second", 'with "quote"')
    assert top.refs == ("https://example.com/page", "@citekey")
    assert top.date == "2024-05-06"  # CREATED
    assert h["Grandchild"].date == "2024-05-06"  # inherited
    assert h["Second top linked title <2024-07-08 Mon>"].date == "2024-07-08"  # heading stamp
    assert h["Sample Note"].date is None


def test_dates_from_file_names(tmp_path):
    journal = read(tmp_path, "journal/2024-03-01.org", "#+title: Day\n* Entry\n")
    assert [x.date for x in journal.headings] == ["2024-03-01", "2024-03-01"]
    roam = read(tmp_path, "20231231235959-some_note.org", "text\n* Entry <2024-01-02 Tue>\n")
    assert [x.date for x in roam.headings] == ["2023-12-31", "2024-01-02"]
    bogus = read(tmp_path, "2024-13-45.org", "text\n")
    assert bogus.headings[0].date is None


def test_body_keeps_links_text_uses_descriptions(tmp_path):
    h = by_title(read(tmp_path, "sample.org", SAMPLE))
    top = h["Top one"]
    assert top.body == f"Top body with [[id:{LINKED}]] and a [[file:other.org][file link]]."
    assert top.text == "Top body with  and a file link."
    assert ":PROPERTIES:" not in top.body and "ROAM_ALIASES" not in top.body
    pre = h["Sample Note"]
    assert f"[[id:{LINKED}][a linked note]]" in pre.body
    assert pre.text == "Preamble with a linked note and https://example.org."
    assert pre.links == (LINKED,)
    assert top.links == (LINKED,)
    assert h["Second top linked title <2024-07-08 Mon>"].links == (LINKED,)  # from the heading line
    assert h["Child without id"].links == ()


def test_link_text_and_roam_lists():
    assert link_text("a [[id:x][desc]] b") == "a desc b"
    assert link_text("[[https://u.example/x]]") == "https://u.example/x"
    assert link_text("[[id:x]]") == ""
    assert link_text("[[https://u][multi\nline]]") == "multi\nline"
    assert split_roam_list('"a b" c  "d"') == ("a b", "c", "d")
    assert split_roam_list("") == ()
    assert split_roam_list('"unterminated') == ('"unterminated',)


def test_start_lines_point_at_heading_lines(tmp_path):
    parsed = read(tmp_path, "sample.org", SAMPLE)
    assert_lines_match(parsed, SAMPLE)
    lines = SAMPLE.split("\n")
    h = by_title(parsed)
    assert (h["Top one"].start_line, h["Top one"].end_line) == (9, 17)
    assert lines[h["Grandchild"].start_line - 1] == "*** Grandchild"
    assert parsed.headings[-1].end_line == len(SAMPLE.rstrip("\n").split("\n"))


def test_src_block_star_lines_are_headings(tmp_path):
    text = "* Real\n#+begin_src org\n* Inside\n#+end_src\nafter\n"
    parsed = read(tmp_path, "src.org", text)
    assert [(x.title, x.start_line, x.end_line) for x in parsed.headings] == [
        ("Real", 1, 2),
        ("Inside", 3, 5),
    ]


def test_empty_file_has_no_headings(tmp_path):
    parsed = read(tmp_path, "empty.org", b"")
    assert parsed == ParsedFile(path="empty.org", title="empty", file_id=None)
    blank = read(tmp_path, "blank.org", b"\n")
    assert [(x.level, x.body, x.start_line, x.end_line) for x in blank.headings] == [(0, "", 1, 1)]


def test_read_org_file_raises_oserror_for_unreadable(tmp_path):
    with pytest.raises(OSError):
        read_org_file(tmp_path / "missing.org", "missing.org")


# --- exclusions ----------------------------------------------------------------------


def test_roam_exclude_heading_and_subtree(tmp_path):
    text = (
        "* Kept\nkept body\n* Excluded\n:PROPERTIES:\n:ID: x-1\n:ROAM_EXCLUDE: t\n:END:\n"
        "excludedwombat\n** Child\nexcludedwombat child\n*** Grandchild excludedwombat\n"
        "* Kept again\n"
    )
    parsed = read(tmp_path, "ex.org", text)
    assert [h.title for h in parsed.headings] == ["Kept", "Kept again"]
    assert "excludedwombat" not in all_text(parsed) and "x-1" not in all_text(parsed)


def test_roam_exclude_file(tmp_path):
    text = ":PROPERTIES:\n:ID: f-1\n:ROAM_EXCLUDE: t\n:END:\n#+title: excludedwombat\nexcludedwombat\n* H\nx\n"
    parsed = read(tmp_path, "exf.org", text)
    assert parsed.headings == [] and parsed.file_id is None
    assert "excludedwombat" not in parsed.title


def test_crypt_heading_and_subtree(tmp_path):
    text = (
        "Preamble.\n* Open\nopen\n* Secrets :crypt:\n-----BEGIN PGP MESSAGE-----\n"
        "zanzibarsecret\n-----END PGP MESSAGE-----\n** Child\nzanzibarsecret\n* Open again\n"
    )
    parsed = read(tmp_path, "crypt.org", text)
    assert [h.title for h in parsed.headings] == ["crypt", "Open", "Open again"]
    assert "zanzibarsecret" not in all_text(parsed)


def test_pgp_block_without_crypt_tag(tmp_path):
    text = (
        "-----BEGIN PGP MESSAGE-----\nzanzibarsecret\n-----END PGP MESSAGE-----\n"
        "* Open\nopen\n* Pasted\n-----BEGIN PGP MESSAGE-----\nzanzibarsecret\n"
        "-----END PGP MESSAGE-----\n** Under it\nzanzibarsecret\n"
    )
    parsed = read(tmp_path, "pgp.org", text)
    assert [(h.level, h.title) for h in parsed.headings] == [(1, "Open")]
    assert "zanzibarsecret" not in all_text(parsed)


def test_private_tags_own_inherited_and_custom(tmp_path):
    text = (
        "* Public\npublic\n* Mine :Private:\nprivatepelican\n** Nested\nprivatepelican\n"
        "* Diary :diary:\ndiaryword\n* Public 2\n"
    )
    parsed = read(tmp_path, "p.org", text)
    assert [h.title for h in parsed.headings] == ["Public", "Diary", "Public 2"]
    assert "privatepelican" not in all_text(parsed)
    custom = read(tmp_path, "p.org", text, private_tags=frozenset({"diary"}))
    assert [h.title for h in custom.headings] == ["Public", "Mine", "Nested", "Public 2"]


def test_the_ids_kept_out_are_those_of_private_nodes_only(tmp_path):
    # ParsedFile.kept_out_ids: what the index forgets the link rejections of
    # (index/kept_out.py). Own and inherited private tags, ROAM_EXCLUDE, a PGP block before
    # the first heading (the file node), and a misplaced drawer's ID under a private tag;
    # never a heading that is no node (a misplaced drawer), nor a public one.
    drawer = ":PROPERTIES:\n:ID: {}\n:END:\n"
    text = (
        drawer.format("file-1") + "-----BEGIN PGP MESSAGE-----\nx\n-----END PGP MESSAGE-----\n"
        "* Mine :private:\n" + drawer.format("mine-1") + "** Nested\n" + drawer.format("nested-1")
        + "** Nested, misplaced\ntyped\n" + drawer.format("nested-2")
        + "* Excluded\n:PROPERTIES:\n:ID: excl-1\n:ROAM_EXCLUDE: t\n:END:\n"
        + "* Public\n" + drawer.format("pub-1") + "* No node\ntyped\n" + drawer.format("typed-1")
    )
    parsed = read(tmp_path, "k.org", text)
    assert [h.title for h in parsed.headings] == ["Public", "No node"]
    assert parsed.kept_out_ids == ("file-1", "mine-1", "nested-1", "nested-2", "excl-1")


def test_private_filetags_exclude_the_whole_file(tmp_path):
    text = ":PROPERTIES:\n:ID: d-1\n:END:\n#+title: Diary\n#+filetags: :x:private:\nprivatefiletag\n* H\nprivatefiletag\n"
    parsed = read(tmp_path, "diary.org", text)
    assert parsed.headings == [] and parsed.file_id is None


def test_a_file_kept_out_whole_says_so_and_tells_nothing_of_itself(tmp_path):
    # The index stores nothing of such a file (ParsedFile.private), and nothing of it is
    # logged: not its invalid timestamps nor its unreadable bytes.
    (tmp_path / "private.setup").write_text("#+filetags: :crypt:\n")
    for data in (
        b"#+title: Diary\n* H <2025-02-30 Sun>\n\xff\n#+filetags: :private:\n",  # file tags after the first heading
        b":PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\n#+title: Diary\n* H <2025-02-30 Sun>\n",
        b"#+SETUPFILE: private.setup\n#+title: Diary\n* H <2025-02-30 Sun>\n",
    ):
        parsed = read_org_bytes(data, "diary.org", root=tmp_path)
        assert parsed.private and parsed.headings == [] and parsed.problems == [], data
    # Only the file as a whole: private headings, or a PGP block before the first, leave the rest.
    for text in ("* H :private:\nx\n", "#+title: T\n-----BEGIN PGP MESSAGE-----\nx\n-----END PGP MESSAGE-----\n* H\ny\n"):
        assert not read_org_bytes(text.encode(), "t.org").private, text


def test_vault_never_leaks(tmp_path):
    for path in VAULT.rglob("*.org"):
        parsed = read_org_file(path, path.relative_to(VAULT).as_posix())
        blob = all_text(parsed) + parsed.title
        for word in SECRET_WORDS:
            assert word not in blob, (path, word)
        for node in NEVER_INDEXED_IDS:
            assert node not in blob, (path, node)
        node_ids = {parsed.file_id, *(h.own_id for h in parsed.headings), *(h.node_id for h in parsed.headings)}
        assert UNCLOSED_DRAWER_ID not in node_ids  # text, as in Org, but never a node


# --- damaged input -------------------------------------------------------------------


def test_invalid_dates_are_kept_as_text_and_logged_once(tmp_path, caplog):
    # orgparse alone raises ValueError on each of these and returns nothing for the file.
    text = (
        "* Before\nok\n* Meeting <2025-02-30 Sun>\nbody\n"
        "* Clock\nCLOCK: [2024-01-01 Mon 25:00]--[2024-01-01 Mon 26:00] =>  1:00\nafter clock\n"
        "* Effort\n:PROPERTIES:\n:Effort: soon\n:END:\nx\n"
        "* Planned\nSCHEDULED: <2024-02-31 Sat>\nplanned body\n"
        '* Repeated\n- State "DONE" from "TODO" [2024-13-01 Mon]\n* After <2024-07-08 Mon>\nfine\n'
    )
    with caplog.at_level(logging.WARNING, logger="arcology_oracle.notes.reader"):
        parsed = read(tmp_path, "dates.org", text)
    h = by_title(parsed)
    assert list(h) == ["Before", "Meeting <2025-02-30 Sun>", "Clock", "Effort", "Planned", "Repeated",
                       "After <2024-07-08 Mon>"]  # fmt: skip
    assert h["Meeting <2025-02-30 Sun>"].body == "body"
    assert h["Meeting <2025-02-30 Sun>"].date is None
    assert h["Clock"].body == "after clock"  # CLOCK lines are not body
    assert h["Planned"].body == "planned body"  # nor is the planning line
    assert h["Effort"].properties == {"EFFORT": "soon"}
    assert h["Repeated"].body == '- State "DONE" from "TODO" [2024-13-01 Mon]'
    assert h["After <2024-07-08 Mon>"].date == "2024-07-08"
    assert parsed.problems == ["invalid timestamps (kept as text) on line(s) 3, 6, 14, 17"]
    records = [r for r in caplog.records if r.name == "arcology_oracle.notes.reader"]
    assert len(records) == 1
    assert "dates.org" in records[0].getMessage() and parsed.problems[0] in records[0].getMessage()
    assert_lines_match(parsed, text)


def test_effort_values_stay_strings(tmp_path):
    text = "* E\n:PROPERTIES:\n:Effort: 1:30\n:END:\n"
    assert read(tmp_path, "e.org", text).headings[0].properties == {"EFFORT": "1:30"}


def test_many_timestamps_on_one_line(tmp_path):
    # orgparse parses timestamps recursively: a long enough line overflows the stack.
    text = "* Log\n" + " ".join(["<2024-01-01 Mon>"] * 3000) + "\n* Next\n"
    parsed = read(tmp_path, "stamps.org", text)
    assert [h.title for h in parsed.headings] == ["Log", "Next"]
    assert parsed.problems == []


def test_pathological_lines_stay_linear(tmp_path):
    # Each of these takes orgparse's own regexes hours (cubic); pytest-timeout guards.
    text = (
        "* " + ":a" * 20_000 + "\n"  # heading tag regex
        + "* " + "word " * 20_000 + ":t:\n"
        + "<2024-01-01 " + "12:34 +1d -2d " * 5000 + "\n"  # unclosed timestamp with times
        + "[[" * 20_000 + "\n"
        + ":PROPERTIES:\n:K: " + " " * 50_000 + "x\n:END:\n"
    )
    parsed = read(tmp_path, "slow.org", text)
    assert [h.level for h in parsed.headings] == [1, 1]
    assert parsed.headings[1].tags == ("t",)


def test_heading_that_still_fails_is_left_out_with_subtree(tmp_path, monkeypatch, caplog):
    from arcology_oracle.notes import orgparse_safe

    original = orgparse_safe._Node._parse_heading

    def parse_heading(self):
        if "boom" in self._lines[0]:
            raise ValueError("simulated orgparse failure")
        original(self)

    monkeypatch.setattr(orgparse_safe._Node, "_parse_heading", parse_heading)
    text = "pre\n* Fine\n* boom :public:\nsecret\n** Child\nchild secret\n* Fine again\n"
    parsed = read(tmp_path, "boom.org", text)
    assert [h.title for h in parsed.headings] == ["boom", "Fine", "Fine again"]
    assert "secret" not in all_text(parsed)
    assert parsed.problems == ["unreadable text; the heading at line 3 and its subtree left out"]


def test_invalid_utf8(tmp_path):
    # Bytes that are not UTF-8, no coding named: read as Latin-1, as Emacs shows them.
    data = "* Café\ncrème brûlée\n".encode("latin-1") + b"\xff\xfe\n* Next\n"
    parsed = read(tmp_path, "latin.org", data)
    assert [h.title for h in parsed.headings] == ["Café", "Next"]
    assert parsed.headings[0].text == "crème brûlée\n\xff\xfe"
    assert parsed.problems == ["not UTF-8: read in latin-1, as Emacs shows it"]
    for h in parsed.headings:
        h.content_hash()  # encodable


def test_crlf_and_cr(tmp_path):
    text = SAMPLE.replace("\n", "\r\n")
    parsed = read(tmp_path, "crlf.org", text)
    plain = read(tmp_path, "plain.org", SAMPLE)
    assert [(h.title, h.start_line, h.end_line, h.body) for h in parsed.headings] == [
        (h.title, h.start_line, h.end_line, h.body) for h in plain.headings
    ]
    assert all("\r" not in h.body for h in parsed.headings)
    mac = read(tmp_path, "mac.org", "* A\rbody\r* B\r")
    assert [(h.title, h.start_line, h.body) for h in mac.headings] == [("A", 1, "body"), ("B", 3, "")]


def test_utf16_with_bom(tmp_path):
    for codec in ("utf-16", "utf-16-be", "utf-32"):
        data = SAMPLE.encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        parsed = read(tmp_path, f"{codec}.org", data)
        assert [h.title for h in parsed.headings] == [h.title for h in read_org_bytes(SAMPLE.encode(), "x").headings]
        assert parsed.file_id == FILE_ID


def test_utf8_bom_stripped(tmp_path):
    parsed = read(tmp_path, "bom.org", b"\xef\xbb\xbf* First\n")
    assert parsed.headings[0].title == "First" and parsed.headings[0].start_line == 1


def test_nul_bytes(tmp_path):
    parsed = read(tmp_path, "nul.org", b"* A\x00B\nbody\x00\n* C\n")
    assert [h.title for h in parsed.headings] == ["A\ufffdB", "C"]
    assert parsed.problems == ["NUL characters were replaced"]


def test_form_feed_and_line_separator_do_not_split_lines(tmp_path):
    text = "* A\nx\x0cy\u2028z\n* B\n"
    parsed = read(tmp_path, "ff.org", text)
    assert [(h.title, h.start_line) for h in parsed.headings] == [("A", 1), ("B", 3)]


def test_unclosed_drawer_keeps_body_and_records_problem(tmp_path, caplog):
    text = "* H\n:PROPERTIES:\n:ID: not-a-node\nbody text\n* Next\n"
    parsed = read(tmp_path, "drawer.org", text)
    h = by_title(parsed)["H"]
    assert h.own_id is None and h.properties == {}
    assert "body text" in h.text
    assert parsed.problems == ["unclosed property drawer at line 2 read as text"]


def test_drawer_after_body_text_is_text(tmp_path):
    text = "* H\nfirst text\n:PROPERTIES:\n:ID: late-id\n:END:\nmore\n"
    parsed = read(tmp_path, "late.org", text)
    h = parsed.headings[0]
    assert h.own_id is None and h.properties == {}
    assert h.body == "first text\n:PROPERTIES:\n:ID: late-id\n:END:\nmore"
    assert len(parsed.problems) == 1  # an ID that org-roam would not see


def test_drawer_after_planning_line(tmp_path):
    text = "* TODO H\nSCHEDULED: <2024-01-01 Mon>\n:PROPERTIES:\n:ID: planned\n:END:\nbody\n"
    parsed = read(tmp_path, "plan.org", text)
    assert parsed.headings[0].own_id == "planned" and parsed.problems == []


def test_huge_lines_and_deep_nesting(tmp_path):
    text = "* A\n" + "x" * 1_000_000 + "\n" + "".join("*" * n + f" L{n}\n" for n in range(1, 300))
    parsed = read(tmp_path, "deep.org", text)
    assert len(parsed.headings) == 300
    assert parsed.headings[-1].olp == tuple(f"L{n}" for n in range(1, 299))
    assert len(parsed.headings[0].body) == 1_000_000


def test_cjk_file_name(tmp_path):
    parsed = read(tmp_path, "日本語/ノート.org", "* 見出し\n本文\n")
    assert parsed.title == "ノート" and parsed.headings[0].title == "見出し"


def test_big_generated_file(tmp_path):
    data = big_org_bytes()
    assert len(data) >= 2_000_000
    path, rel = write(tmp_path, "big.org", data)
    parsed = read_org_file(path, rel)
    text = data.decode()
    heading_lines = [ln for ln in text.split("\n") if HEADING_LINE_RE.match(ln)]
    assert len(parsed.headings) > 1000
    assert len(parsed.headings) < len(heading_lines) + 1  # private subtrees left out
    assert BIG_SECRET not in all_text(parsed)
    assert parsed.problems and "invalid timestamps" in parsed.problems[0]
    assert_lines_match(parsed, text)


def test_ten_thousand_headings(tmp_path):
    text = "#+title: Many\n" + "".join(f"{'*' * (1 + i % 3)} H{i} :t{i % 5}:\nbody {i}\n" for i in range(10_000))
    parsed = read(tmp_path, "many.org", text)
    assert len(parsed.headings) == 10_001
    last = parsed.headings[-1]
    assert (last.title, last.start_line, last.end_line) == ("H9999", 20_000, 20_001)
    assert last.olp == ()
    assert parsed.headings[-2].olp == ("H9996", "H9997")


# --- the example vault ---------------------------------------------------------------


def vault_file(rel: str) -> ParsedFile:
    return read_org_file(VAULT / rel, rel)


def test_vault_every_file_reads_with_correct_lines():
    files = sorted(VAULT.rglob("*.org"))
    assert 12 <= len(files) <= 20
    for path in files:
        parsed = read_org_file(path, path.relative_to(VAULT).as_posix())
        assert_lines_match(parsed, path.read_bytes())


def test_vault_nodes():
    sourdough = by_title(vault_file("sourdough-baking.org"))
    assert sourdough["Starter maintenance"].own_id == IDS["starter"]
    assert sourdough["Feeding schedule"].node_id == IDS["starter"]
    assert sourdough["Bulk fermentation"].node_id == IDS["sourdough"]
    assert sourdough["Bulk fermentation"].links == (IDS["bakers_percentages"],)
    assert sourdough["Starter maintenance"].aliases == ("Levain care", "Levain")
    crlf = vault_file("journal/2024-03-02.org")
    assert crlf.file_id == IDS["journal_0302"] and crlf.headings[1].date == "2024-03-02"
    assert vault_file("inbox.org").file_id is None
    assert vault_file("empty.org").headings == []
    assert vault_file("private-diary.org").headings == []
    assert "Demo day" in by_title(vault_file("projects/arcology.org"))
    assert vault_file("projects/arcology.org").problems
    assert vault_file("creme-brulee.org").problems == ["not UTF-8: read in latin-1, as Emacs shows it"]
    assert vault_file("日本語ノート.org").file_id == IDS["japanese"]
    for key, node in IDS.items():
        assert any(node in (pf.file_id, *(h.own_id for h in pf.headings)) for pf in map(
            lambda p: read_org_file(p, p.relative_to(VAULT).as_posix()), VAULT.rglob("*.org")
        )), key


def test_vault_retrieval_expectations_hold_with_the_fake_embedder():
    """Other suites rely on EXAMPLE_QUERIES and RELATED_PAIRS; keep the vault honest."""
    from arcology_oracle.notes.chunking import chunk_heading
    from tests.fakes.fake_ollama import cosine, fake_embedding
    from tests.org_samples import EXAMPLE_QUERIES, RELATED_PAIRS

    items = []
    for path in sorted(VAULT.rglob("*.org")):
        parsed = read_org_file(path, path.relative_to(VAULT).as_posix())
        for h in parsed.headings:
            for chunk in chunk_heading(h, parsed.title):
                items.append((parsed.path, h.title if h.level else None, fake_embedding(chunk.text), h.title))
    for query, expected in EXAMPLE_QUERIES.items():
        qv = fake_embedding(query)
        best = max(items, key=lambda it: cosine(qv, it[2]))
        assert (best[0], best[3]) == expected, query
    for (file_a, title_a), (file_b, _) in RELATED_PAIRS:
        av = next(v for f, t, v, _ in items if (f, t) == (file_a, title_a))
        by_file: dict[str, float] = {}
        for f, _, v, _ in items:
            if f != file_a:
                by_file[f] = max(by_file.get(f, -1.0), cosine(av, v))
        assert file_b in sorted(by_file, key=lambda f: -by_file[f])[:2], (file_a, file_b)
