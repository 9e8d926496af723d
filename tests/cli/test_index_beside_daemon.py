"""`index` beside a running daemon: of the daemon's notes, fine (SQLite takes the writes
in turn); of another directory, refused while the daemon serves the database. It
replaced the daemon's notes under it: the daemon answered from the other notes, and its
watcher put back each of its own it saw change, a mix of both. So for two `index` runs of
different directories at once, and a daemon started while an `index` of another
directory runs (index/notes_claim.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from arcology_oracle.store.db import connect
from tests.cli.test_interrupt import index_process, stored_files
from tests.index.test_give_way import write_notes
from tests.runners import free_port, run_cli, wait_indexed, wait_until


async def test_indexing_other_notes_into_a_served_database_is_refused(tmp_path, daemon, roam_dir, fake_ollama):
    await wait_indexed(daemon)
    db = str(tmp_path / "daemon.sqlite3")
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.org").write_text("* Only note of the other directory\n", encoding="utf-8")
    at = ("--db", db, "--ollama-host", fake_ollama.url)
    code, out, err = await run_cli("status", "--json", *at)
    before = json.loads(out)
    code, out, err = await run_cli("index", str(other), "--no-embed", *at)
    assert code == 1 and not out and "Traceback" not in err, (out, err)
    said = f"a daemon (or `doctor --repair`) serves the notes of {before['roam_dir']} from {db}: indexing {other} there"
    assert said in err, err
    code, out, err = await run_cli("index", str(roam_dir), "--no-embed", *at)  # its own notes: beside it, as before
    assert code == 0 and "0 indexed" in out, (out, err)
    code, out, _ = await run_cli("status", "--json", *at)
    assert {k: json.loads(out)[k] for k in ("roam_dir", "files", "headings")} == {k: before[k] for k in ("roam_dir", "files", "headings")}
    daemon.stop()
    code, out, err = await run_cli("index", str(other), "--no-embed", *at)  # (said so, it is done)
    assert code == 0 and "1 indexed" in out, (out, err)


async def test_an_index_of_another_directory_meanwhile_is_refused_whichever_starts_first(tmp_path, fake_ollama):
    db, first, other = tmp_path / "i.db", tmp_path / "first", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    write_notes(first, 1500)
    (other / "b.org").write_text("* Only note of the other directory\n", encoding="utf-8")
    at = ("--db", str(db), "--ollama-host", fake_ollama.url, "--no-embed")
    async with index_process(first, db, *at[2:4]) as proc:
        await wait_until(lambda: stored_files(db) > 0 or proc.returncode is not None, timeout=60)
        proc.send_signal(signal.SIGSTOP)  # (held in the middle of its reconcile)
        try:
            code, out, err = await run_cli("index", str(other), *at)
            assert code == 1 and not out and "Traceback" not in err, (out, err)
            assert f"another `arcology-oracle index` is writing the notes of {first} into {db}: indexing {other}" in err
            code, out, err = await run_cli("serve", "--roam-dir", str(other), "--port", str(free_port()), *at[:4])
            assert code == 1 and "Traceback" not in err, (out, err)
            assert f"`arcology-oracle index` is writing the notes of {first} into {db}: serving {other} from it" in err
        finally:
            proc.send_signal(signal.SIGCONT)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0 and b"1500 files" in out, (out, err)
    conn = connect(db, readonly=True)
    try:
        assert not conn.execute("SELECT 1 FROM files WHERE path = 'b.org'").fetchall()
    finally:
        conn.close()
    code, out, err = await run_cli("doctor", str(first), "--db", str(db))
    assert code == 0 and "agrees" in out, (out, err)
    code, out, err = await run_cli("index", str(other), *at)  # (said so, it is done)
    assert code == 0 and "1 indexed" in out, (out, err)


async def test_doctor_repair_and_an_index_of_another_directory_keep_each_other_out(tmp_path, roam_dir, fake_ollama):
    """`doctor --repair`, the database's only writer, held its lock only: `index` of
    another directory, which now holds the notes claim instead, went on beside it."""
    from arcology_oracle.http.server import lock_database
    from arcology_oracle.index.notes_claim import claim_notes

    db, other = tmp_path / "i.db", tmp_path / "other"
    other.mkdir()
    (other / "b.org").write_text("* Only note of the other directory\n", encoding="utf-8")
    at = ("--db", str(db), "--ollama-host", fake_ollama.url)
    code, out, err = await run_cli("index", str(roam_dir), "--no-embed", *at)
    assert code == 0, err
    claim = claim_notes(db, other)  # (an index of the other directory under way)
    try:
        code, out, err = await run_cli("doctor", str(roam_dir), "--repair", *at)
    finally:
        os.close(claim)
    assert code == 1 and "Traceback" not in err, (out, err)
    assert f"`arcology-oracle index` is writing the notes of {other} into {db}: wait for it to end" in err
    held = [lock_database(db, "busy"), claim_notes(db, roam_dir)]  # (a doctor --repair under way)
    try:
        code, out, err = await run_cli("index", str(other), "--no-embed", *at)
    finally:
        for fd in held:
            os.close(fd)
    assert code == 1 and f"a daemon (or `doctor --repair`) serves the notes of {roam_dir}" in err, (out, err)
