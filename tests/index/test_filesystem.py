"""What the filesystem can do to the indexer: symlink loops, symlinks out of the roam
dir, files nobody may read, FIFOs and directories named ``*.org``, files that vanish
(or turn into something else) between the listing and the read, and many files.

Everything is real: files, links and FIFOs in ``tmp_path``, the real indexer, the real
watcher. Permission bits do not stop root, so the unreadable-file test runs the CLI as
root without the capabilities that override them.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store.db import connect
from tests.corpus_tools import db_bytes, write_corpus
from tests.runners import REPO, wait_until

pytestmark = pytest.mark.timeout(120)


def note(word: str) -> str:
    return f"#+title: {word}\n* Heading about {word}\nBody text with {word}.\n"


async def indexed_files(index: OracleIndex) -> set[str]:
    return set(await index.read(lambda s: s.file_states()))


@pytest.fixture
def linked_vault(tmp_path) -> tuple[Path, Path]:
    """A roam dir full of symlink traps, and the directory outside it they point to."""
    roam, outside = tmp_path / "vault", tmp_path / "outside"
    (roam / "sub").mkdir(parents=True)
    outside.mkdir()
    (roam / "a.org").write_text(note("inroamalpha"))
    (roam / "sub" / "b.org").write_text(note("inroambeta"))
    (outside / "secret.org").write_text(note("outsidesecretz"))
    (outside / "nested").mkdir()
    (outside / "nested" / "deep.org").write_text(note("outsidedeepz"))
    links = {
        "loop": roam,  # the root itself
        "sub/back": roam / "sub" / "..",  # its parent
        "sub/self": roam / "sub",  # its own directory
        "x.org": roam / "y.org",  # a dangling pair pointing at each other
        "y.org": roam / "x.org",
        "self.org": roam / "self.org",
        "outside.org": outside / "secret.org",  # out of the roam dir: never followed
        "outdir": outside,
        "relative-out.org": Path("..") / "outside" / "secret.org",
        "dangling.org": roam / "nowhere.org",
        "alias.org": roam / "a.org",  # inside: the real file is indexed once, as a.org
        "linkdir": roam / "sub",
    }
    for rel, target in links.items():
        os.symlink(target, roam / rel)
    return roam, outside


OUTSIDE_WORDS = ("outsidesecretz", "outsidedeepz")


async def test_symlink_loops_and_links_out_of_the_roam_dir(linked_vault, make_settings):
    roam, _ = linked_vault
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    try:
        report = await asyncio.wait_for(index.reconcile(), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"a.org", "sub/b.org"}
        # The watcher's path: every link is named, none is followed out or doubled.
        paths = ["outside.org", "outdir/secret.org", "outdir/nested/deep.org", "relative-out.org", "x.org",
                 "self.org", "dangling.org", "alias.org", "loop/a.org", "linkdir/b.org", "sub/back/a.org"]  # fmt: skip
        report = await asyncio.wait_for(index.index_paths(paths), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"a.org", "sub/b.org"}
        for word in OUTSIDE_WORDS:
            assert (await search(index, word, 5))[1] == []
        _, results = await search(index, "inroamalpha", 5)
        assert {r.file for r in results} == {"a.org"}
    finally:
        await index.close()
    raw = db_bytes(settings.db_path)
    for word in OUTSIDE_WORDS:
        assert word.encode() not in raw


async def test_watcher_with_symlinks_created_live(linked_vault, make_settings, make_client, fake_ollama):
    roam, outside = linked_vault
    client = await make_client(make_settings(roam_dir=roam, ollama_host=fake_ollama.url), watch=True)
    # New links appear while the daemon watches; the outside file changes too.
    os.symlink(roam / "a.org", roam / "alias2.org")
    os.symlink(outside / "secret.org", roam / "outside2.org")
    os.symlink(roam, roam / "sub" / "loop2")
    (outside / "secret.org").write_text(note("outsidesecretz outsidechangedz"))
    (roam / "sentinel.org").write_text(note("sentinelgammaz"))

    async def found():
        resp = await client.get("/search", params={"q": "sentinelgammaz"})
        return any(r["file"] == "sentinel.org" for r in (await resp.json())["results"])

    await wait_until(found, timeout=20)
    assert await indexed_files(client.index) == {"a.org", "sub/b.org", "sentinel.org"}
    for word in (*OUTSIDE_WORDS, "outsidechangedz"):
        resp = await client.get("/search", params={"q": word})
        assert (await resp.json())["results"] == []
    resp = await client.get("/search", params={"q": "inroamalpha"})
    assert {r["file"] for r in (await resp.json())["results"]} == {"a.org"}


async def test_fifo_and_directory_named_org(tmp_path, make_settings):
    roam = tmp_path / "vault"
    (roam / "folder.org").mkdir(parents=True)
    (roam / "folder.org" / "inner.org").write_text(note("innerdeltaz"))
    (roam / "plain.org").write_text(note("plainepsilonz"))
    os.mkfifo(roam / "pipe.org")  # reading it would block until someone writes
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    try:
        report = await asyncio.wait_for(index.reconcile(), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"folder.org/inner.org", "plain.org"}
        report = await asyncio.wait_for(index.index_paths(["pipe.org", "folder.org", "plain.org"]), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"folder.org/inner.org", "plain.org"}
    finally:
        await index.close()


def without_dac_override() -> None:
    """In the child before exec: drop the capabilities that let root ignore permission
    bits (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) from the bounding set, so the exec'd
    process runs as root but cannot read a mode-000 file or list a mode-000 directory."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def test_unreadable_file_is_reported_once_and_the_rest_indexed(tmp_path):
    roam = tmp_path / "vault"
    (roam / "closed").mkdir(parents=True)
    (roam / "open.org").write_text(note("openzetaz"))
    (roam / "secret.org").write_text(note("unreadablez"))
    (roam / "closed" / "hidden.org").write_text(note("closeddirz"))
    os.chmod(roam / "secret.org", 0o000)
    os.chmod(roam / "closed", 0o000)
    db = tmp_path / "index.sqlite3"
    cmd = [sys.executable, "-m", "arcology_oracle", "index", str(roam), "--db", str(db), "--no-embed",
           "--ollama-host", "http://127.0.0.1:9"]  # fmt: skip
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=120, cwd=REPO,
            preexec_fn=without_dac_override if os.geteuid() == 0 else None,
        )  # fmt: skip
    finally:
        os.chmod(roam / "secret.org", 0o600)
        os.chmod(roam / "closed", 0o700)
    assert done.returncode == 0, done.stderr
    assert "2 files: 1 indexed" in done.stdout and "1 failed" in done.stdout
    # Named by the summary, which the user asked for; not by the log line: never read, it may be private.
    assert done.stderr.count("secret.org") == 1 and "failed: secret.org" in done.stderr, done.stderr
    assert "cannot read a note not read before (Permission denied)" in done.stderr, done.stderr
    assert "Permission denied" in done.stderr and "unreadablez" not in done.stderr
    assert done.stderr.count(f"cannot list {roam / 'closed'}: Permission denied") == 1, done.stderr
    conn = connect(db, readonly=True)
    try:
        assert {r[0] for r in conn.execute("SELECT path FROM files")} == {"open.org"}
    finally:
        conn.close()
    raw = db_bytes(db)
    assert b"unreadablez" not in raw and b"closeddirz" not in raw


async def test_files_vanish_or_change_kind_between_listing_and_reading(tmp_path, make_settings, caplog):
    roam = tmp_path / "vault"
    corpus = write_corpus(roam, 40, seed=4)
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    fifo_path: list[Path] = []
    try:
        await index.reconcile()
        for rel in corpus.files:  # every file changed: the next reconcile reads them all
            corpus.rewrite(rel)
        listing = sorted(corpus.files)
        vanish = set(listing[1::4])  # deleted right before the indexer reads them
        to_dir = listing[2]  # becomes a directory
        to_fifo = listing[3]  # becomes a FIFO: reading it would block forever
        to_link_out = listing[6]  # becomes a symlink to a file outside the roam dir
        (tmp_path / "outside.org").write_text(note("outsideswapz"))

        def on_progress(progress):
            # Called after each file; the listing was made before the first one.
            nxt = listing[progress.done] if progress.done < len(listing) else None
            if nxt in vanish:
                (roam / nxt).unlink()
            elif nxt == to_dir:
                (roam / nxt).unlink()
                (roam / nxt).mkdir()
            elif nxt == to_fifo:
                (roam / nxt).unlink()
                os.mkfifo(roam / nxt)
                fifo_path.append(roam / nxt)
            elif nxt == to_link_out:
                (roam / nxt).unlink()
                os.symlink(tmp_path / "outside.org", roam / nxt)

        report = await asyncio.wait_for(index.reconcile(on_progress), 30)
        gone = vanish | {to_dir, to_fifo, to_link_out}
        assert report.failed == {}
        assert report.deleted == len(gone)
        assert await indexed_files(index) == set(listing) - gone
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        for rel in set(listing) - gone:
            _, results = await search(index, corpus.files[rel], 3)
            assert results and results[0].file == rel
        assert (await search(index, "outsideswapz", 3))[1] == []
        # Nothing is left for the next reconcile to repair.
        report = await asyncio.wait_for(index.reconcile(), 30)
        assert report.indexed == report.deleted == 0 and report.failed == {}
    finally:
        for fifo in fifo_path:  # never leave the writer thread blocked on the FIFO
            fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.close(fd)
        await index.close()


async def test_two_thousand_files(tmp_path, make_settings):
    roam = tmp_path / "vault"
    corpus = write_corpus(roam, 2000, seed=5)
    index = OracleIndex(make_settings(roam_dir=roam))  # keyword only; the 10k run is in bench/load.py
    await index.start()
    try:
        started = time.monotonic()
        report = await index.reconcile()
        elapsed = time.monotonic() - started
        assert report.seen == report.indexed == 2000 and report.failed == {}
        status = await index.status()
        assert status["files"] == 2000
        for rel in sorted(corpus.files)[::250]:
            _, results = await search(index, corpus.files[rel], 3)
            assert results[0].file == rel
        # A second reconcile only stats: no file is read again.
        report = await index.reconcile()
        assert report.unchanged == 2000 and report.indexed == 0
        print(f"2,000 files indexed in {elapsed:.1f} s")
    finally:
        await index.close()
