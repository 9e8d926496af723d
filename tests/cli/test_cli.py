"""The command line, run as a real subprocess against the example vault."""

from __future__ import annotations

import json
import os

from arcology_oracle import __version__
from tests.org_samples import EXAMPLE_QUERIES
from tests.runners import run_cli


async def test_version():
    code, out, _ = await run_cli("--version")
    assert code == 0 and __version__ in out


async def test_index_then_search_json(tmp_path, roam_dir, fake_ollama):
    db = str(tmp_path / "cli.db")
    code, out, err = await run_cli("index", str(roam_dir), "--db", db, "--ollama-host", fake_ollama.url)
    assert code == 0, err
    assert "0 pending" in out and "failed" in out
    query, (file, heading) = next(iter(EXAMPLE_QUERIES.items()))
    code, out, err = await run_cli("search", query, "--json", "-k", "3", "--db", db, "--ollama-host", fake_ollama.url)
    assert code == 0, err
    body = json.loads(out)
    assert body["mode"] == "hybrid"
    assert (file, heading) in [(r["file"], r["heading"]) for r in body["results"]]
    assert set(body["results"][0]) >= {"node_id", "heading_id", "title", "heading", "olp", "file", "line", "score", "snippet"}


async def test_without_ollama_pending_then_embedded_on_next_index(tmp_path, roam_dir, fake_ollama):
    db = str(tmp_path / "cli.db")
    env = {"ARCOLOGY_ORACLE_DB": db}  # the environment variable works as --db
    code, out, err = await run_cli("index", str(roam_dir), "--ollama-host", "http://127.0.0.1:9", env=env)
    assert code == 0 and "embedder unavailable" in err
    code, out, _ = await run_cli("status", "--json", env=env)
    status = json.loads(out)
    assert status["pending"] == status["chunks"] > 0
    code, out, _ = await run_cli("search", "covering index", "--ollama-host", "http://127.0.0.1:9", env=env)
    assert code == 0 and "keyword mode" in out and "Covering indexes" in out
    code, out, err = await run_cli("index", str(roam_dir), "--ollama-host", fake_ollama.url, env=env)
    assert code == 0, err
    assert "0 indexed" in out and "0 pending" in out
    assert fake_ollama.state.embed_texts_total == status["chunks"] - _duplicates(db)


def _duplicates(db: str) -> int:
    """Chunks whose text another chunk already has (embedded once)."""
    from arcology_oracle.store import Store

    store = Store.open(db)
    total, distinct = store.conn.execute("SELECT count(*), count(DISTINCT hash) FROM chunks").fetchone()
    store.close()
    return total - distinct


async def test_bad_configuration_is_reported_clearly(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('port = "not a port"\nmystery = 1\n')
    code, _, err = await run_cli("status", "--config", str(config))
    assert code == 2
    assert "port" in err and "mystery: unknown setting" in err and "Traceback" not in err
    config.write_text("port = [")
    code, _, err = await run_cli("status", "--config", str(config))
    assert code == 2 and "invalid TOML" in err
    config.write_bytes(b'roam_dir = "caf\xe9"\n')  # Latin-1 (a traceback)
    code, _, err = await run_cli("status", "--config", str(config))
    assert code == 2 and "invalid TOML: not UTF-8 (byte 15)" in err and "Traceback" not in err, err
    (tmp_path / "token").write_bytes(b"\xff\xfetoken")  # (a traceback too)
    code, _, err = await run_cli("mcp", "--token-file", str(tmp_path / "token"))
    assert code == 2 and f"token file {tmp_path / 'token'} is not UTF-8 text" in err and "Traceback" not in err, err


async def test_unknown_node_is_an_error_not_a_traceback(tmp_path, roam_dir):
    assert (await run_cli("index", str(roam_dir), "--db", str(tmp_path / "e.db"), "--no-embed"))[0] == 0
    code, _, err = await run_cli("similar", "--node", "nope", "--db", str(tmp_path / "e.db"))
    assert code == 1 and "no node" in err and "Traceback" not in err


async def test_a_database_that_is_not_there_is_said_not_made(tmp_path):
    # A mistyped --db (or a search before any index): an empty index was created there
    # and the search said "no results", status "0 files".
    typo = tmp_path / "idnex.db"
    for command in (("search", "bread"), ("status",), ("similar", "--text", "bread"), ("summarize", "n1")):
        code, out, err = await run_cli(*command, "--db", str(typo), "--ollama-host", "http://127.0.0.1:9")
        assert code == 1 and not out and f"no index at {typo}: `arcology-oracle index DIR` makes it" in err, (command, out, err)
    assert not typo.exists()


async def test_keyword_mode_scores_never_rise_down_the_list(tmp_path, roam_dir):
    """The README's first search, without Ollama: headings holding every word come
    first, and a later heading that matches some words harder must not show a higher
    score than the ones above it."""
    db = str(tmp_path / "cli.db")
    offline = ("--db", db, "--ollama-host", "http://127.0.0.1:9")
    code, _, err = await run_cli("index", str(roam_dir), *offline)
    assert code == 0, err
    code, out, err = await run_cli("search", "feeding the sourdough starter", "--json", *offline)
    assert code == 0, err
    body = json.loads(out)
    scores = [r["score"] for r in body["results"]]
    assert body["mode"] == "keyword" and len(scores) >= 5
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


async def test_the_roam_directory_as_an_option_as_serve_takes_it(tmp_path, roam_dir):
    db = str(tmp_path / "o.db")
    code, out, err = await run_cli("index", "--roam-dir", str(roam_dir), "--db", db, "--no-embed")
    assert code == 0 and "indexed" in out, err
    code, out, err = await run_cli("doctor", "--roam-dir", str(roam_dir), "--db", db)
    assert code == 0 and "agrees" in out, err
    code, _, err = await run_cli("index", str(roam_dir), "--roam-dir", str(tmp_path), "--db", db, "--no-embed")
    assert code == 2 and "two roam directories given" in err and "Traceback" not in err


async def test_counts_outside_what_the_api_takes_are_refused(tmp_path, roam_dir):
    db = str(tmp_path / "k.db")
    assert (await run_cli("index", str(roam_dir), "--db", db, "--no-embed"))[0] == 0
    for args, bound in (
        (("search", "covering", "-k", "0"), "1 to 100, not 0"),
        (("search", "covering", "-k", "101"), "1 to 100, not 101"),
        (("similar", "--text", "covering", "-k", "-3"), "1 to 100, not -3"),
        (("ask", "what is a covering index?", "-k", "51"), "1 to 50, not 51"),
        (("search", "covering", "-k", "many"), "not a number: 'many'"),
        (("similar", "--file", "inbox.org", "--line", "0"), "1 to 10000000, not 0"),
        (("similar", "--file", "inbox.org", "--line", "99999999999999999999"), "not 99999999999999999999"),
    ):
        code, out, err = await run_cli(*args, "--db", db, "--ollama-host", "http://127.0.0.1:9")
        assert code == 2 and bound in err and not out, (args, out, err)
    code, out, err = await run_cli("search", "covering index", "-k", "1", "--db", db, "--ollama-host", "http://127.0.0.1:9")
    assert code == 0 and out.startswith("1 result (keyword mode)"), err
    # Values refused past the parser are bad usage too (exit 2, as README says), not a failed operation (1).
    for args, said in ((("search", "  "), "the query is empty"), (("ask",), "give a question or a buffer")):
        code, out, err = await run_cli(*args, "--db", db, "--ollama-host", "http://127.0.0.1:9")
        assert code == 2 and said in err and not out, (args, out, err)


async def test_the_doctor_without_the_notes_directory_says_so_and_repairs_nothing(tmp_path, roam_dir):
    # With no notes directory given, the configured one (~/org-roam) is checked: when it
    # does not exist the doctor said "the index agrees with the notes" having compared
    # nothing, with --repair too.
    db = str(tmp_path / "n.db")
    assert (await run_cli("index", str(roam_dir), "--db", db, "--no-embed"))[0] == 0
    _, status_before, _ = await run_cli("status", "--db", db, "--json")
    missing = tmp_path / "unmounted"
    for repair in ((), ("--repair",)):
        code, out, err = await run_cli("doctor", str(missing), "--db", db, *repair)
        assert code == 1, (out, err)
        assert f"the notes directory {missing} does not exist" in out and "agrees" not in out
        assert "--repair` to fix" not in out
    _, status_after, _ = await run_cli("status", "--db", db, "--json")
    kept = ("files", "headings", "chunks")
    assert {k: json.loads(status_after)[k] for k in kept} == {k: json.loads(status_before)[k] for k in kept}


async def test_the_index_remembers_its_notes_directory(tmp_path, roam_dir):
    # An index built with `index DIR --db F` was then checked by `doctor --db F` against
    # the configured default (~/org-roam), and `doctor OTHER --repair` (a mistyped or
    # another existing directory) replaced every note of the index by OTHER's.
    db, other = str(tmp_path / "r.db"), tmp_path / "other"
    other.mkdir()
    (other / "a.org").write_text("* Another directory's note\n", encoding="utf-8")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}  # no config file
    assert (await run_cli("index", str(roam_dir), "--db", db, "--no-embed", env=env))[0] == 0
    code, out, err = await run_cli("status", "--db", db, "--json", env=env)
    before = json.loads(out)
    assert os.path.realpath(before["roam_dir"]) == os.path.realpath(roam_dir), err
    code, out, err = await run_cli("doctor", "--db", db, env=env)
    assert code == 0 and "agrees" in out, (out, err)
    for repair in ((), ("--repair",)):
        code, out, err = await run_cli("doctor", str(other), "--db", db, *repair, env=env)
        assert code == 1 and f"holds the notes of {os.path.realpath(roam_dir)}, not of {other}" in out, (out, err)
        assert "--repair` to fix" not in out and f"arcology-oracle index {other}" in out
    code, out, _ = await run_cli("status", "--db", db, "--json", env=env)
    assert {k: json.loads(out)[k] for k in ("files", "headings")} == {k: before[k] for k in ("files", "headings")}
    code, out, err = await run_cli("index", str(other), "--db", db, "--no-embed", env=env)  # said, so done
    assert code == 0 and f"held the notes of {os.path.realpath(roam_dir)}" in err, err
    code, out, _ = await run_cli("status", "--db", db, "--json", env=env)
    assert json.loads(out)["files"] == 1 and json.loads(out)["roam_dir"] == os.path.realpath(other)


def test_output_into_a_closed_pipe_ends_quietly(tmp_path, roam_dir):
    # `arcology-oracle search x | head -1`: the reader leaves; the CLI printed a traceback.
    import subprocess
    import sys

    db = str(tmp_path / "p.db")
    subprocess.run([sys.executable, "-m", "arcology_oracle", "index", str(roam_dir), "--db", db, "--no-embed"],
                   check=True, capture_output=True)  # fmt: skip
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "arcology_oracle", "search", "covering index", "--db", db, "--ollama-host", "http://127.0.0.1:9"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


async def test_indexing_what_is_not_a_notes_directory_is_an_error(tmp_path, roam_dir):
    # A mistyped path, or a file, said "0 files: 0 indexed ..." and exit 0, as if done.
    db = str(tmp_path / "d.db")
    assert (await run_cli("index", str(roam_dir), "--db", db, "--no-embed"))[0] == 0
    (tmp_path / "note.org").write_text("* A file, not a directory\n", encoding="utf-8")
    for given, what in ((tmp_path / "typo", "does not exist"), (tmp_path / "note.org", "is not a directory")):
        code, out, err = await run_cli("index", str(given), "--db", db, "--no-embed")
        assert code == 1 and not out and f"the notes directory {given} {what}: nothing was indexed" in err, (out, err)
        code, out, err = await run_cli("doctor", str(given), "--db", db)  # (a file "did not exist")
        assert code == 1 and f"the notes directory {given} {what}: nothing was compared" in out, (out, err)
    code, out, _ = await run_cli("status", "--db", db, "--json")
    assert json.loads(out)["files"] > 0 and os.path.realpath(json.loads(out)["roam_dir"]) == os.path.realpath(roam_dir)


async def test_names_and_arguments_that_are_not_utf8_are_said_not_tracebacks(tmp_path):
    # A note named in Latin-1 failed at every index with a logged traceback (and doctor
    # said --repair would fix it); such a name, or any text, given as an argument ended
    # in a traceback.
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "plain.org").write_text("* Plain\nA plain note.\n", encoding="utf-8")
    latin = os.fsdecode(b"caf\xe9.org")
    (roam / latin).write_text("* Caf\nA note named in Latin-1.\n", encoding="utf-8")
    db = str(tmp_path / "u.db")
    code, out, err = await run_cli("index", str(roam), "--db", db, "--no-embed")
    assert code == 0 and "1 indexed" in out and "0 failed" in out, (out, err)
    assert "caf\\xe9.org: not indexed: its name is not UTF-8" in err and "Traceback" not in err, err
    code, out, err = await run_cli("doctor", "--db", db)
    assert code == 0 and "agrees" in out and "Traceback" not in err, (out, err)
    for args in (("similar", "--file", latin), ("similar", "--node", latin), ("summarize", latin), ("ask", latin)):
        code, out, err = await run_cli(*args, "--db", db, "--ollama-host", "http://127.0.0.1:9")
        assert code == 2 and "not UTF-8: caf\\xe9.org" in err and "Traceback" not in err, (args, err)


async def test_every_command_that_takes_the_notes_directory_says_where_it_takes_it_from(tmp_path):
    # README: without one, every command takes the configured roam_dir, else the one the
    # index was read from; serve's and import's --help said nothing of it, or less.
    for command in ("index", "doctor", "serve", "import"):
        code, out, _ = await run_cli(command, "--help")
        assert code == 0 and "else the one the index was read from" in " ".join(out.split()), (command, out)
    (tmp_path / "note.org").write_text("* A file\n", encoding="utf-8")
    (tmp_path / "chat.txt").write_text("[10:00] Me: hello\n", encoding="utf-8")
    code, _, err = await run_cli("import", "transcript", str(tmp_path / "chat.txt"), "--roam-dir", str(tmp_path / "note.org"))
    assert code == 2 and f"the notes directory {tmp_path / 'note.org'} is not a directory" in err, err


def test_a_write_the_database_refuses_is_one_line_not_a_traceback(tmp_path, roam_dir, monkeypatch, capsys):
    # A read-only database file or a full disk (refused to a user, not to root: the
    # store's write fails here as SQLite fails then) ended `index` in a traceback.
    from arcology_oracle.cli import main
    from arcology_oracle.index.indexer import Indexer
    from arcology_oracle.store.db import OperationalError

    def refused(self, on_progress=None):
        raise OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(Indexer, "reconcile", refused)
    assert main(["index", str(roam_dir), "--db", str(tmp_path / "r.db"), "--no-embed"]) == 1
    err = capsys.readouterr().err
    assert err == "arcology-oracle: the index database refused: attempt to write a readonly database (what was committed is kept)\n"


async def test_the_database_and_the_folders_it_makes_are_the_owners_alone(tmp_path, roam_dir, monkeypatch):
    """The index holds the notes' text: it and its folders were 0644 and 0755 (the
    umask's), so another account, which the daemon answers 403, read the database itself."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    for db in ((), ("--db", str(shared / "i.db"))):
        code, out, err = await run_cli("index", str(roam_dir), "--no-embed", *db)
        assert code == 0, err
    made = [tmp_path / "data", tmp_path / "data" / "arcology-oracle"]
    assert [oct(p.stat().st_mode & 0o777) for p in made] == ["0o700", "0o700"]
    files = [made[-1] / "index.sqlite3", shared / "i.db", *shared.glob("i.db-*")]
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o600" for f in files}
