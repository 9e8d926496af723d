"""A corpus of bad org files indexes completely: each bad part is logged once, with its
path, and everything else is searchable.

The org reader's own properties (never raises, lines kept, ...) are tested in
test_orgreader_properties.py; here the whole path runs: files on disk -> indexer ->
SQLite (FTS and vectors through the fake Ollama) -> search.
"""

from __future__ import annotations

import json
import logging
import random

import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex

pytestmark = pytest.mark.timeout(120)

FILE_ID = ":PROPERTIES:\n:ID:       {}\n:END:\n"


def org(text: str, n: int) -> bytes:
    return (FILE_ID.format(f"0badf11e-0000-4000-8000-{n:012d}") + text).encode("utf-8")


def bad_corpus() -> dict[str, tuple[bytes, tuple[str, ...]]]:
    """``rel -> (bytes, words that must be searchable in it)``."""
    rng = random.Random(7)
    corpus: dict[str, tuple[bytes, tuple[str, ...]]] = {}
    corpus["drawers.org"] = (org(
        "#+title: Drawers\n"
        "* Unclosed properties\n:PROPERTIES:\n:ID: 11111111-2222-4333-8444-555555555555\n:CREATED: x\ndraweronez\n"
        "* Unclosed logbook\n:LOGBOOK:\nCLOCK: [2024-01-01 Mon 10:00]\ndrawertwoz\n"
        "* Stray end\n:END:\ndrawerthreez\n"
        "* Nested drawers\n:PROPERTIES:\n:PROPERTIES:\n:END:\n:END:\ndrawerfourz\n"
        "* After the drawers\ndrawerfivez\n", 1), ("draweronez", "drawertwoz", "drawerthreez", "drawerfourz", "drawerfivez"))  # fmt: skip
    corpus["dates.org"] = (org(
        "#+title: Dates\n"
        "* Demo <2025-02-30 Sun> datesonez\n"
        "* Meeting\nSCHEDULED: <2024-02-31 Sat> DEADLINE: <2024-00-00>\ndatestwoz\n"
        "* Clocked\n:LOGBOOK:\nCLOCK: [2024-01-01 Mon 10:00]--[2024-01-01 Mon 09:99] => 25:99\n:END:\ndatesthreez\n"
        "* Effort\n:PROPERTIES:\n:Effort: abc\n:END:\ndatesfourz [2024-13-45 Mon 25:61]\n"
        "* Repeater <2024-01-01 Mon +1x> datesfivez\n"
        "* Fine <2024-01-02 Tue> datessixz\n", 2), ("datesonez", "datestwoz", "datesthreez", "datesfourz", "datesfivez", "datessixz"))  # fmt: skip
    corpus["random-bytes.org"] = (
        b"* Random bytes follow randomheadz\n" + rng.randbytes(20_000) + b"\n* After the noise randomtailz\n",
        ("randomheadz", "randomtailz"),
    )
    corpus["binary.org"] = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(3000), ())
    deep = "".join(f"{'*' * i} Level {i}\ntext {i}\n" for i in range(1, 301))
    corpus["deep.org"] = (org(f"#+title: Deep\n{deep}{'*' * 301} Deepest deepestz\n", 3), ("deepestz",))
    corpus["long-lines.org"] = (org(
        "#+title: Long lines\n* Words\n" + "lorem ipsum " * 50_000 + "longwordsz\n"
        "* No spaces\n" + "x" * 300_000 + "\n* Tail\nlongtailz\n", 4), ("longwordsz", "longtailz"))  # fmt: skip
    corpus["nul.org"] = (org("#+title: Nul\n* Nul heading nulheadz\nsome\x00text\x00here\n* Next\nnulnextz\n", 5), ("nulheadz", "nulnextz"))
    text16 = FILE_ID.format("0badf11e-0000-4000-8000-000000000016") + "#+title: Sixteen\n* Heading utfsixteenz\nbody\n"
    corpus["utf16-le.org"] = (text16.encode("utf-16"), ("utfsixteenz",))
    corpus["utf16-be.org"] = (b"\xfe\xff" + text16.replace("sixteenz", "bigendz").encode("utf-16-be"), ("utfbigendz",))
    corpus["utf16-no-bom.org"] = ("* Heading nobomz\nbody\n".encode("utf-16-le"), ())
    corpus["invalid-utf8.org"] = (b"* Surrogates \xed\xa0\x80 and \xff\xfe inside badutfz\n", ("badutfz",))
    corpus["crlf.org"] = (org("#+title: Crlf\n* One crlfonez\r\nbody\r\n* Two\r\ncrlftwoz\r\n", 6).replace(b"\n", b"\r\n").replace(b"\r\r", b"\r"), ("crlfonez", "crlftwoz"))  # fmt: skip
    corpus["cr-only.org"] = (b"* Old mac oldmacz\rline\r* Second\roldmactwoz\r", ("oldmacz", "oldmactwoz"))
    corpus["mixed-eol.org"] = (b"* Mixed mixedonez\r\nbody\rstray\n* Two\r\nmixedtwoz\n", ("mixedonez", "mixedtwoz"))
    stars = "".join(f"{'*' * (1 + i % 3)} fake heading {i}\n" for i in range(300))
    corpus["src-stars.org"] = (org(
        f"#+title: Src\n* Example\n#+begin_src org\n{stars}#+end_src\n* Real heading after srcafterz\nbody\n", 7), ("srcafterz",))  # fmt: skip
    corpus["only-bom.org"] = (b"\xef\xbb\xbf", ())
    corpus["whitespace.org"] = (b"  \n\t\n\n", ())
    corpus["many-stars.org"] = (b"*" * 50_000 + b" starrowz\n", ("starrowz",))
    return corpus


EXPECTED_PROBLEMS = {  # a part of each of these must be reported
    "drawers.org", "dates.org", "random-bytes.org", "binary.org", "nul.org", "utf16-no-bom.org", "invalid-utf8.org",
}  # fmt: skip


def problem_records(caplog, rel: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"{rel}: ")]


async def test_bad_files_index_completely_and_are_logged_once(tmp_path, make_settings, fake_ollama, caplog):
    caplog.set_level(logging.WARNING)
    roam = tmp_path / "bad"
    roam.mkdir()
    corpus = bad_corpus()
    for rel, (data, _) in corpus.items():
        (roam / rel).write_bytes(data)
    index = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await index.start()
    try:
        report = await index.reconcile()
        assert report.failed == {} and report.indexed == len(corpus)
        await index.embed_pending()  # every bad text can be embedded too
        status = await index.status()
        assert status["pending"] == 0 and status["embedded"] == status["chunks"] > 0
        stored = await index.read(lambda s: {r[0]: json.loads(r[1]) for r in s.conn.execute("SELECT path, problems FROM files")})
        assert set(stored) == set(corpus)

        for rel in corpus:
            logged = problem_records(caplog, rel)
            assert logged == [f"{rel}: {p}" for p in stored[rel]], rel  # each once, with its path
            assert not any("could not read the file" in p for p in stored[rel]), rel
            if rel in EXPECTED_PROBLEMS:
                assert stored[rel], rel
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

        for rel, (_, words) in corpus.items():
            for word in words:
                _, results = await search(index, word, 5)
                assert any(r.file == rel for r in results), (rel, word)

        # Nothing changed: a second reconcile reads nothing and logs nothing again.
        caplog.clear()
        report = await index.reconcile()
        assert report.unchanged == len(corpus) and report.indexed == 0
        assert not any(problem_records(caplog, rel) for rel in corpus)
    finally:
        await index.close()


async def test_ten_thousand_headings_in_one_file(tmp_path, make_settings, caplog):
    roam = tmp_path / "big"
    roam.mkdir()
    markers = {0: "tenkfirstz", 5000: "tenkmiddlez", 9999: "tenklastz"}
    lines = [FILE_ID.format("0badf11e-0000-4000-8000-0000000010ff"), "#+title: Ten thousand\n"]
    for i in range(10_000):  # heading i starts at line 5 + 2i
        lines.append(f"{'*' * (1 + i % 4)} Heading {i}\nbody {i} of the big file {markers.get(i, '')}.\n")
    (roam / "ten-k.org").write_text("".join(lines))
    index = OracleIndex(make_settings(roam_dir=roam))  # keyword only: no embedder
    await index.start()
    try:
        report = await index.reconcile()
        assert report.failed == {} and report.indexed == 1
        status = await index.status()
        assert status["headings"] == 10_001 and status["files"] == 1  # plus the file-level record
        for i, word in markers.items():
            mode, results = await search(index, word, 3)
            assert mode == "keyword" and results[0].file == "ten-k.org", word
            assert results[0].line == 5 + 2 * i and results[0].heading == f"Heading {i}", word
        assert problem_records(caplog, "ten-k.org") == []
    finally:
        await index.close()
