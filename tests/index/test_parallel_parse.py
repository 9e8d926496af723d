"""A large reconcile parses notes in worker processes: the same index, the same problems."""

from __future__ import annotations

import logging
import pickle

from arcology_oracle.index.indexer import PARALLEL_PARSE_MIN_FILES, Indexer
from arcology_oracle.store import Store
from tests.corpus_tools import index_snapshot, write_corpus

BROKEN = "#+title: Broken\n* Heading\n:PROPERTIES:\n:ID: 0b0b0b0b-unclosed\nbody text\n"


def _reconcile(make_settings, root, db, workers: int):
    store = Store.open(db)
    try:
        report = Indexer(make_settings(roam_dir=root, db_path=db, parse_workers=workers), store).reconcile()
    finally:
        store.close()
    return report, index_snapshot(db)


def test_worker_processes_build_the_same_index_and_report_problems(tmp_path, make_settings, caplog):
    root = tmp_path / "vault"
    write_corpus(root, PARALLEL_PARSE_MIN_FILES + 20, seed=3)
    (root / "broken.org").write_text(BROKEN, encoding="utf-8")

    with caplog.at_level(logging.INFO, logger="arcology_oracle"):
        report, parallel = _reconcile(make_settings, root, tmp_path / "parallel.db", workers=2)
    messages = [r.getMessage() for r in caplog.records]
    # The first ones in this thread, until the pool is seen to be worth its start.
    in_workers = [int(m.split()[1]) for m in messages if m.startswith("parsed ") and "in 2 worker processes" in m]
    assert len(in_workers) == 1 and 0 < in_workers[0] < report.indexed, messages
    # A worker does not log; its problems are logged here, with the path, once.
    assert sum("broken.org: unclosed property drawer" in m for m in messages) == 1, messages

    serial_report, serial = _reconcile(make_settings, root, tmp_path / "serial.db", workers=0)
    assert report.indexed == serial_report.indexed == PARALLEL_PARSE_MIN_FILES + 21
    assert not report.failed and not parallel.problems
    assert parallel.content() == serial.content(), parallel.diff(serial)


def test_a_small_reconcile_parses_in_the_writer_thread(tmp_path, make_settings, caplog):
    root = tmp_path / "vault"
    write_corpus(root, 10, seed=4)
    with caplog.at_level(logging.INFO, logger="arcology_oracle"):
        report, _ = _reconcile(make_settings, root, tmp_path / "small.db", workers=2)
    assert report.indexed == 10
    assert not any("worker processes" in r.getMessage() for r in caplog.records)


def test_a_killed_worker_loses_no_file(caplog):
    from arcology_oracle.index.parsing import ParseOptions, ParsePipeline

    jobs = [(i, f"n{i}.org", f"#+title: N{i}\n* H{i}\nword{i}\n".encode()) for i in range(300)]
    with ParsePipeline(ParseOptions(frozenset(), 2000, 200), workers=1, per_task=4, window=16) as pipeline:
        results = pipeline.run(iter(jobs))
        got = [next(results) for _ in range(5)]
        for process in list(pipeline._pool._processes.values()):
            process.kill()
        got += list(results)
    assert [key for key, _ in got] == list(range(300))
    assert [result[0].headings[-1].title for _, result in got] == [f"H{i}" for i in range(300)]
    assert any("parser process died" in r.getMessage() for r in caplog.records)


def test_parsed_headings_and_chunks_survive_pickling_whole(roam_dir):
    """What a worker sends (pickled by constructor arguments, see notes/records.py) is what the
    writer would have parsed itself, field for field."""
    from arcology_oracle.index.parsing import ParseOptions, parse_note

    options = ParseOptions(frozenset({"private"}), 1500, 200)
    sent = 0
    for path in sorted(roam_dir.rglob("*.org")):
        parsed, chunks = parse_note(path.read_bytes(), path.name, options, log_problems=False)
        back_parsed, back_chunks = pickle.loads(pickle.dumps((parsed, chunks), pickle.HIGHEST_PROTOCOL))
        assert back_parsed.headings == parsed.headings and back_chunks == chunks
        assert [h.properties for h in back_parsed.headings] == [h.properties for h in parsed.headings]
        sent += len(parsed.headings)
    assert sent > 20


def test_the_private_notes_a_start_reads_again_start_no_worker_process(tmp_path, make_settings, caplog):
    """Nothing of a private note is stored, so each start reads them all again, which
    takes ~0.1 ms a note (the reader stops at the tags): hundreds of them alone are not
    worth a process. One that stopped being private meanwhile comes back."""
    root, db = tmp_path / "vault", tmp_path / "index.db"
    root.mkdir()
    count = PARALLEL_PARSE_MIN_FILES + 50
    for n in range(count):
        (root / f"private-{n:04}.org").write_text(f"#+title: P{n}\n#+filetags: :private:\n* Heading\nsecret {n}\n")
    (root / "public.org").write_text("#+title: Public\n* Heading\nwords\n")
    _reconcile(make_settings, root, db, workers=1)  # a first start
    (root / "private-0007.org").write_text("#+title: P7\n* Heading\nnowpublicword\n")
    with caplog.at_level(logging.INFO, logger="arcology_oracle"):
        report, snapshot = _reconcile(make_settings, root, db, workers=1)  # the next: a new indexer
    assert report.private == count - 1 and report.indexed == 1 and report.unchanged == 1, report
    assert not any("worker processes" in r.getMessage() for r in caplog.records)
    assert "private-0007.org" in str(snapshot.content()) and "private-0008.org" not in str(snapshot.content())
