"""A private file leaves nothing in the index: not its text, title or headings, and not
its path or file name either. Private files are those the one privacy rule keeps out
whole (``#+filetags`` holding a private tag or ``crypt``, a file-level ``ROAM_EXCLUDE``),
those an exclude glob matches and encrypted ones (``.org.gpg``). The database is read
here as anyone holding it could: every table (the keyword indexes' own tables and
``meta`` included) and every byte of the file."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3

from arcology_oracle.answers.search import search
from arcology_oracle.store.db import sqlite as driver
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes
from tests.index.test_filesystem import without_dac_override
from tests.runners import start_daemon, wait_until

PUBLIC = ":PROPERTIES:\n:ID: 9b1e0000-0000-4000-8000-000000000001\n:END:\n#+title: Turnip plans\n\nprivroutesturnip words\n"
# Each private file, and what of it must be nowhere: its file name (so its path) and
# stem, its title, its headings and its words.
PRIVATE = {
    "diary/hushquokka.org": (
        ":PROPERTIES:\n:ID: 9b1e0000-0000-4000-8000-000000000002\n:END:\n#+title: Quokkatitle\n"
        "#+filetags: :private:\n\nprivquokkaword\n* Quokkaheading\nmore privquokkaword\n"
    ),
    "cryptwalrus.org": (
        "#+title: Walrustitle\n#+filetags: :crypt:\n-----BEGIN PGP MESSAGE-----\nprivwalrusword\n"
        "-----END PGP MESSAGE-----\n* Walrusheading\n"
    ),
    "stealthibex.org": ":PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\n#+title: Ibextitle\n\nprivibexword\n",
    "attic/excludedyak.org": "#+title: Yaktitle\n\nprivyakword\n* Yakheading\n",  # an exclude glob
    "gpgnarwhal.org.gpg": "#+title: Narwhaltitle\nprivnarwhalword\n",  # as epa-file saves, were it not encrypted
}
SECRETS = (
    "hushquokka", "quokkatitle", "quokkaheading", "privquokkaword",
    "cryptwalrus", "walrustitle", "walrusheading", "privwalrusword",
    "stealthibex", "ibextitle", "privibexword",
    "excludedyak", "yaktitle", "yakheading", "privyakword",
    "gpgnarwhal", "narwhaltitle", "privnarwhalword",
)  # fmt: skip


def write_vault(root) -> None:
    (root / "turnip.org").write_text(PUBLIC)
    for rel, text in PRIVATE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def rows_holding(db_path, words) -> list[tuple[str, str]]:
    """``(table, word)`` for each table of the database a row of which holds one of
    ``words`` (in any letter case), read with plain SQLite: every table, the virtual
    ones through their own tables (the keyword indexes' data, the vectors').

    The daemon's SQLite build, not another: the file locks of a process are dropped
    whole when any of its descriptors of the file closes, and a second SQLite library
    does not know the daemon's connections hold some. With its locks gone, another
    process holding the database (``write_lock_held``) took itself for its last user
    when it closed, and deleted its log under the daemon's connections."""
    found = []
    conn = driver.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        assert {"files", "headings", "meta", "headings_fts_data", "headings_exact_data"} <= {t for t, _ in tables}
        for table, sql in tables:
            if (sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
                continue  # its rows are those of its shadow tables, read here too
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                cells = [(c.decode("utf-8", "replace") if isinstance(c, bytes) else str(c)).casefold() for c in row]
                found += [(table, w) for w in words if any(w in cell for cell in cells)]
    finally:
        conn.close()
    return sorted(set(found))


def bytes_holding(db_path, words) -> list[str]:
    raw = db_bytes(db_path).lower()
    return [w for w in words if w.encode() in raw]


async def test_no_table_holds_anything_of_a_private_file(tmp_path, make_settings):
    roam = tmp_path / "notes"
    roam.mkdir()
    write_vault(roam)
    settings = make_settings(roam_dir=roam, exclude_globs=["attic/**"])
    for _ in range(2):  # the second time, from an index that has seen them already
        index = OracleIndex(settings)
        await index.start()
        try:
            report = await index.reconcile()
            assert report.failed == {}
            assert [r.file for r in (await search(index, "privroutesturnip", 5))[1]] == ["turnip.org"]
            indexed = await index.read(lambda s: list(s.file_states()))
        finally:
            await index.close()
        assert rows_holding(settings.db_path, SECRETS) == []
        assert bytes_holding(settings.db_path, SECRETS) == []
        assert indexed == ["turnip.org"]


async def test_a_note_made_private_leaves_every_route_and_comes_back_when_it_is_not(tmp_path, make_settings, fake_ollama, make_client):
    roam = tmp_path / "notes"
    roam.mkdir()
    write_vault(roam)
    settings = make_settings(roam_dir=roam, exclude_globs=["attic/**"], ollama_host=fake_ollama.url)
    client = await make_client(settings)
    node = "/nodes/9b1e0000-0000-4000-8000-000000000001"
    heading = ("/heading", {"file": "turnip.org", "line": "1"})
    similar = ("/similar", {"file": "turnip.org", "line": "1"})

    async def found() -> list[str]:
        body = await (await client.get("/search", params={"q": "privroutesturnip turnip"})).json()
        return [r["file"] for r in body["results"]]

    assert await found() == ["turnip.org"]
    assert (await client.get(node)).status == 200 and (await client.get(heading[0], params=heading[1])).status == 200
    assert (await (await client.get("/status")).json())["files"] == 1

    path = roam / "turnip.org"
    path.write_text(PUBLIC.replace("#+title:", "#+filetags: :private:\n#+title:"))
    report = await client.index.index_paths(["turnip.org"])  # as the watcher does
    assert report.deleted == 1
    assert await found() == []
    assert (await client.get(node)).status == 404 and (await client.get(heading[0], params=heading[1])).status == 404
    assert (await (await client.get(similar[0], params=similar[1])).json()).get("results", []) == []
    assert (await (await client.get("/status")).json())["files"] == 0
    assert rows_holding(settings.db_path, ("turnip", "privroutesturnip")) == []
    assert (await client.index.reconcile()).indexed == 0  # it stays out
    assert rows_holding(settings.db_path, ("turnip",)) == []

    path.write_text(PUBLIC)  # not private any more: back at the next reconcile
    assert (await client.index.reconcile()).indexed == 1
    assert await found() == ["turnip.org"]
    assert (await client.get(node)).status == 200 and (await client.get(heading[0], params=heading[1])).status == 200
    assert (await (await client.get("/status")).json())["files"] == 1


async def test_an_index_that_kept_private_files_rows_loses_them_on_upgrade(tmp_path, make_settings):
    """Before m031 a file kept out whole by the privacy rule kept its row in ``files``:
    its path, its file name as title, its size, time and hash. Unchanged on disk, no
    reconcile would read it again: the migration deletes such rows, and the next
    reconcile reads those files again (a public note with nothing stored, an empty
    file, comes back; a private one stays out)."""
    roam = tmp_path / "notes"
    roam.mkdir()
    write_vault(roam)
    (roam / "empty.org").write_text("")
    settings = make_settings(roam_dir=roam, exclude_globs=["attic/**"])
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    with sqlite3.connect(settings.db_path) as conn:  # the rows the index kept before
        for rel in ("diary/hushquokka.org", "cryptwalrus.org", "stealthibex.org"):
            st, data = (roam / rel).stat(), (roam / rel).read_bytes()
            conn.execute(
                "INSERT OR IGNORE INTO files (path, size, mtime_ns, hash, title, file_node, problems, setup)"
                " VALUES (?, ?, ?, ?, ?, NULL, '[]', '[]')",
                (rel, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest(), rel.rsplit("/")[-1][: -len(".org")]),
            )
        conn.execute("DELETE FROM _migrations WHERE name = 'm031_forget_private_files'")
    conn.close()
    assert ("files", "hushquokka") in rows_holding(settings.db_path, SECRETS)

    index = OracleIndex(settings)
    await index.start()  # migrates
    try:
        assert await index.read(lambda s: sorted(s.file_states())) == ["turnip.org"]
        report = await index.reconcile()
        assert report.failed == {} and report.indexed == 1  # empty.org
        assert await index.read(lambda s: sorted(s.file_states())) == ["empty.org", "turnip.org"]
    finally:
        await index.close()
    assert rows_holding(settings.db_path, SECRETS) == []
    assert bytes_holding(settings.db_path, SECRETS) == []


async def test_an_upgraded_index_keeps_no_byte_of_private_files_rows_while_it_runs(tmp_path, make_settings):
    """m031 deletes the rows of private files, and the database file must not keep them
    until the daemon stops: its pages then held them, with nothing else to fold the log
    into it while the notes did not change (a reconcile checkpoints only when it stored
    or deleted something)."""
    roam = tmp_path / "notes"
    roam.mkdir()
    write_vault(roam)
    settings = make_settings(roam_dir=roam, exclude_globs=["attic/**"])
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    with sqlite3.connect(settings.db_path) as conn:  # the row the index kept before m031
        rel = "diary/hushquokka.org"
        st, data = (roam / rel).stat(), (roam / rel).read_bytes()
        conn.execute(
            "INSERT INTO files (path, size, mtime_ns, hash, title, file_node, problems, setup)"
            " VALUES (?, ?, ?, ?, 'hushquokka', NULL, '[]', '[]')",
            (rel, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest()),
        )
        conn.execute("DELETE FROM _migrations WHERE name = 'm031_forget_private_files'")
    conn.close()
    assert bytes_holding(settings.db_path, ("hushquokka",)) == ["hushquokka"]

    index = OracleIndex(settings)
    await index.start()  # migrates
    try:
        report = await index.reconcile()
        assert report.indexed == report.deleted == 0 and report.private == 3  # nothing else written
        assert rows_holding(settings.db_path, SECRETS) == []
        assert bytes_holding(settings.db_path, SECRETS) == []  # while the index is open
    finally:
        await index.close()


async def test_the_log_counts_a_private_note_read_again_and_never_names_it(tmp_path, roam_dir, fake_ollama):
    """The daemon's log (journald keeps it) says which changed notes it reads again: a
    private one, saved while it runs, is counted, its name not written."""
    secret = roam_dir / "hushquokka-divorce.org"
    secret.write_text("#+filetags: :private:\n#+title: Hush\n* Lawyer\nCall on Monday.\n", encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        with secret.open("a", encoding="utf-8") as f:
            f.write("Bring the papers.\n")
        (roam_dir / "inbox.org").write_text((roam_dir / "inbox.org").read_text() + "* Buy salt\n")

        def said() -> list[str]:
            return [line for line in daemon.log().splitlines() if "changed file(s)" in line]

        await wait_until(lambda: any("hush" in line or "1 private" in line for line in said()), timeout=20)
    finally:
        daemon.stop()
    assert "hushquokka" not in daemon.log(), said()
    assert any("1 private" in line for line in said()), said()


async def test_the_log_never_names_a_note_its_save_made_private_nor_one_deleted_private(tmp_path, roam_dir, fake_ollama):
    """The note was public until this read: what the log says of the files read again is
    said once they are read, so a note the save made private is counted, not named; nor
    is one deleted while private (private before the read)."""
    secret = roam_dir / "hushquokka-plans.org"
    secret.write_text("#+title: Plans\n* Lawyer\nCall on Monday.\n", encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)

    def said() -> list[str]:
        return [line for line in daemon.log().splitlines() if "changed file(s)" in line]

    try:
        draft = roam_dir / "plans.tmp"  # saved whole, as an editor renaming its new copy over the note
        draft.write_text("#+filetags: :private:\n#+title: Plans\n* Lawyer\nCall on Monday.\n", encoding="utf-8")
        os.replace(draft, secret)
        await wait_until(lambda: any("hush" in line or "1 private" in line for line in said()), timeout=20)
        before = len(said())
        secret.unlink()
        await wait_until(lambda: len(said()) > before, timeout=20)
    finally:
        daemon.stop()
    assert "hushquokka" not in daemon.log(), said()
    assert [line.rsplit(": ", 1)[1] for line in said()] == ["1 private", "1 private"], said()


async def test_the_log_names_no_unreadable_note_that_may_be_private(tmp_path, roam_dir, fake_ollama):
    """A note that cannot be read (the daemon cannot override permission bits, as any
    user's daemon) is named only when the index holds it, read public: one never read
    may be private, and one private when last read is. Read again or new, the log keeps
    their names."""
    was_private = roam_dir / "hushquokka-diary.org"
    was_private.write_text("#+filetags: :private:\n#+title: Diary\n* Day\nquiet\n", encoding="utf-8")
    public = roam_dir / "turnipnotes.org"
    public.write_text("#+title: Turnips\n* Sowing\nin March\n", encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
                                preexec_fn=without_dac_override if os.geteuid() == 0 else None)  # fmt: skip

    def cannot() -> list[str]:
        return [line for line in daemon.log().splitlines() if "cannot read" in line]

    def all_said() -> bool:
        """The three notes' reads logged, and the watcher's line after them (before them
        in versions that said it before reading)."""
        lines = daemon.log().splitlines()
        reads = [i for i, line in enumerate(lines) if "cannot read" in line]
        batches = [i for i, line in enumerate(lines) if "changed file(s)" in line]
        return len(reads) >= 3 and bool(batches) and (batches[-1] > reads[-1] or "re-indexing" in lines[batches[0]])

    try:
        never = roam_dir / "hushwalrus-new.org"
        never.write_text("#+filetags: :private:\n#+title: New\n", encoding="utf-8")
        for path in (was_private, public, never):
            os.chmod(path, 0)
        with was_private.open("a", encoding="utf-8") as f:  # this test's process may still write it
            f.write("more\n")
        with public.open("a", encoding="utf-8") as f:
            f.write("more\n")
        await wait_until(all_said, timeout=20)
    finally:
        daemon.stop()
        for path in (was_private, public, never):
            os.chmod(path, 0o600)
    log = daemon.log()
    assert "hushquokka" not in log and "hushwalrus" not in log, cannot()
    assert any("turnipnotes.org: Permission denied" in line for line in cannot()), cannot()


async def test_the_verbose_log_names_no_private_or_excluded_note(tmp_path, roam_dir, fake_ollama):
    """``-v`` (debug messages) says no more of private notes than the default log: the
    file watcher's library, logging at debug every change it sees with its path, named
    a private note and one in a folder ``exclude_globs`` leaves out as they were saved."""
    secret = roam_dir / "hushquokka-divorce.org"
    secret.write_text("#+filetags: :private:\n#+title: Hush\n* Lawyer\nCall on Monday.\n", encoding="utf-8")
    (roam_dir / "hushattic").mkdir()
    excluded = roam_dir / "hushattic" / "hushyak-letters.org"
    excluded.write_text("#+title: Letters\n* Draft\nDear Sir\n", encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
                                env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "hushattic/**"}, extra_args=["-v"])  # fmt: skip

    def said() -> list[str]:
        return [line for line in daemon.log().splitlines() if "changed file(s)" in line]

    try:
        with excluded.open("a", encoding="utf-8") as f:
            f.write("Yours\n")
        with secret.open("a", encoding="utf-8") as f:
            f.write("Bring the papers.\n")
        await wait_until(lambda: any("1 private" in line or "hush" in line for line in said()), timeout=20)
        # Not HTTP at all: the daemon says so at debug only, so -v is seen to be on.
        host, port = daemon.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"\x16\x03\x01 / HTTP/1.1\r\n\r\n")
        await reader.read()
        writer.close()
        await wait_until(lambda: "DEBUG arcology_oracle.http.server: bad HTTP request" in daemon.log(), timeout=20)
    finally:
        daemon.stop()
    log = daemon.log()
    assert "hushquokka" not in log and "hushyak" not in log and "hushattic" not in log, [
        line for line in log.splitlines() if "hush" in line
    ][:5]


async def test_a_private_tag_with_a_non_ascii_letter_in_a_latin1_note_keeps_it_out(tmp_path, make_settings):
    # A note saved in Latin-1 (Emacs reads it so) tagged :privé: (a configured private
    # tag): the reader reads its é as U+FFFD, so the tag matched no private tag, and the
    # note (whole, or the heading) was indexed, its words searchable.
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "whole.org").write_bytes("#+title: Carnet\n#+filetags: :privé:\n* Banque\nplacelatinwhole 4711\n".encode("latin-1"))
    (roam / "heading.org").write_bytes("#+title: Carnet\n* Banque :privé:\nplacelatinheading 4711\n* Café :café:\nplacelatinpublic\n"
                                       .encode("latin-1"))  # fmt: skip
    settings = make_settings(roam_dir=roam, private_tags=["private", "privé"])
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
    finally:
        await index.close()
    assert rows_holding(settings.db_path, ("placelatinwhole", "placelatinheading")) == []
    assert bytes_holding(settings.db_path, ("placelatinwhole", "placelatinheading")) == []
    assert rows_holding(settings.db_path, ("placelatinpublic",))  # the public heading is indexed


async def test_the_log_never_names_a_link_into_an_excluded_folder(tmp_path, roam_dir, fake_ollama):
    """A link made in the notes to a note in a folder ``exclude_globs`` leaves out is left
    out as its target is (its real path is excluded), and its name, the user's name for an
    excluded note, is not said either: the watcher's line named such a link as it was made
    and as it was removed (nothing of it ever indexed), as it names a public note; one
    there before the start, as it was removed."""
    (roam_dir / "hushattic").mkdir()
    (roam_dir / "hushattic" / "letters.org").write_text("#+title: Letters\n* Draft\nDear Sir\n", encoding="utf-8")
    older = roam_dir / "hushnumbat-custody.org"
    os.symlink("hushattic/letters.org", older)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
                                env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "hushattic/**"})  # fmt: skip

    def said() -> list[str]:
        return [line for line in daemon.log().splitlines() if "changed file(s)" in line]

    link = roam_dir / "hushyak-divorce.org"
    try:
        for change in (lambda: os.symlink("hushattic/letters.org", link), link.unlink, older.unlink):
            before = len(said())
            change()
            await wait_until(lambda: len(said()) > before, timeout=20)
    finally:
        daemon.stop()
    assert "hushyak" not in daemon.log() and "hushnumbat" not in daemon.log(), said()
    assert [line.rsplit(": ", 1)[1] for line in said()] == ["1 private"] * 3, said()
