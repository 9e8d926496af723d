"""An index database that is there but cannot be read, with no notes directory given or
configured: the CLI fell back on ~/org-roam without a word, and `index` re-indexed that
guess in place of the index's notes. It must say what is wrong and what to do, and do
nothing."""

from __future__ import annotations

import asyncio
import sys

from arcology_oracle.store import Store
from arcology_oracle.store.db import connect
from tests.runners import REPO, run_cli


def a_home_with_notes(tmp_path) -> dict[str, str]:
    """An environment whose ~/org-roam (the default guess) holds a note, no config file."""
    home = tmp_path / "home"
    (home / "org-roam").mkdir(parents=True)
    (home / "org-roam" / "guess.org").write_text("* A note of the guessed directory\n", encoding="utf-8")
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


async def test_a_file_that_is_not_a_database_is_reported_and_kept(tmp_path, roam_dir):
    env = a_home_with_notes(tmp_path)
    db = tmp_path / "index.sqlite3"
    db.write_bytes(b"my own file, not an index\n")
    for command in (("index", "--no-embed"), ("status",)):
        code, out, err = await run_cli(*command, "--db", str(db), env=env)
        assert code == 1 and not out, (command, out, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"the index database {db} is not a usable database" in err and "arcology-oracle index DIR" in err
    assert db.read_bytes() == b"my own file, not an index\n"
    code, out, err = await run_cli("index", str(roam_dir), "--db", str(db), "--no-embed", env=env)  # as it says
    assert code == 0 and "16 indexed" in out and "rebuilding from the notes" in err, (out, err)


async def test_a_database_locked_by_another_program_is_reported_and_not_indexed(tmp_path, roam_dir):
    env = a_home_with_notes(tmp_path)
    db = tmp_path / "index.sqlite3"
    assert (await run_cli("index", str(roam_dir), "--db", str(db), "--no-embed", env=env))[0] == 0
    store = Store.open(db)
    files = store.counts()["files"]
    store.close()
    holder = connect(db)  # another program's long write: an exclusive lock no reader passes
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('other program', 'writing')")
    try:
        code, out, err = await run_cli("index", "--db", str(db), "--no-embed", env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 1 and not out, (out, err)
    assert f"the index database {db} is locked by another program's write" in err and "Traceback" not in err, err
    code, out, err = await run_cli("status", "--db", str(db), "--json", env=env)
    assert code == 0 and f'"files": {files},' in out and "guess" not in out, (out, err)


async def test_a_data_folder_that_cannot_be_made_is_reported_by_every_command(tmp_path, roam_dir):
    # An unwritable HOME (here a data folder under a file: refused to root too): the
    # default database's folder could not be made, and each command ended in a traceback
    # (those that only read say there is no index: test_cli.py)
    # (the daemon's with a logged one of its start's recovery before it).
    # So for a --db whose folder is that file: the locks' files could not be made either,
    # which each said in a warning, and then "unable to open database file".
    (tmp_path / "a file").write_text("")
    env = {"XDG_DATA_HOME": str(tmp_path / "a file" / "data")}
    for command in (("index", str(roam_dir)), ("serve", "--roam-dir", str(roam_dir), "--port", "0")):
        for db in ((), ("--db", str(tmp_path / "a file" / "index.sqlite3"))):
            code, out, err = await run_cli(*command, *db, env=env)
            assert code == 1 and "Traceback" not in err and "WARNING" not in err, (command, err)
            assert "cannot create the folder of the index database" in err and "give another with --db" in err, err


async def test_mcp_never_reads_the_database_here(tmp_path):
    # It asks the daemon (maybe another machine's): a local database that cannot be read
    # is none of its business, and stopped it once no directory was guessed any more.
    db = tmp_path / "index.sqlite3"
    db.write_bytes(b"not an index\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", "mcp", "--url", "http://127.0.0.1:9", "--db", str(db),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0 and b"index database" not in err, err
