"""`index` beside a running daemon: of the daemon's notes, fine (SQLite takes the writes
in turn); of another directory, refused while the daemon serves the database. It
replaced the daemon's notes under it: the daemon answered from the other notes, and its
watcher put back each of its own it saw change, a mix of both."""

from __future__ import annotations

import json

from tests.runners import run_cli, wait_indexed


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
    assert f"a daemon serves the notes of {before['roam_dir']} from {db}: indexing {other} there would replace them" in err
    code, out, err = await run_cli("index", str(roam_dir), "--no-embed", *at)  # its own notes: beside it, as before
    assert code == 0 and "0 indexed" in out, (out, err)
    code, out, _ = await run_cli("status", "--json", *at)
    assert {k: json.loads(out)[k] for k in ("roam_dir", "files", "headings")} == {k: before[k] for k in ("roam_dir", "files", "headings")}
    daemon.stop()
    code, out, err = await run_cli("index", str(other), "--no-embed", *at)  # (said so, it is done)
    assert code == 0 and "1 indexed" in out, (out, err)
