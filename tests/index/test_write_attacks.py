"""Issue 25's attacks on the write path, one test per item, against the real daemon and
real files: what a capture (``/memorize``) and a forget (``/forget``) may change in the
user's notes, and what they must refuse.

Every test writes a small roam dir of its own, starts ``arcology-oracle serve`` on it
(with the fake Ollama), attacks, then diffs the user's bytes completely and asks the
daemon (``/search``, ``/nodes/ID``) what it holds. For the items about how a file is read
(1 and 3), batch Emacs's Org reads the result too (:mod:`tests.org_reading`) and must
agree with the daemon on the ID, the tags and the privacy of every heading. Permission
bits do not stop root, so the tests about read-only files and directories run the daemon
without the capabilities that override them (as ``tests/index/test_filesystem.py`` does).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
import signal
import stat
import threading
import uuid
from pathlib import Path

import aiohttp
import pytest

from tests.emacs_batch import emacs_env
from tests.index.test_filesystem import without_dac_override
from arcology_oracle.notes.reader import read_org_bytes
from tests.org_reading import OrgFile, OrgProcess, is_one_id_link, org_view
from tests.runners import Daemon, start_daemon, wait_until

pytestmark = pytest.mark.timeout(180)

FILE_ID = "a0000000-0000-4000-8000-000000000001"
U1, U2, U3 = (f"a0000000-0000-4000-8000-00000000001{i}" for i in (1, 2, 3))
SECRET = "a0000000-0000-4000-8000-000000000099"
NO_DAC = without_dac_override if os.geteuid() == 0 else None


def today_rel() -> str:
    return f"daily/{datetime.date.today():%Y-%m-%d}.org"


def user_daily(eol: str = "\n") -> str:
    """A daily of the user's: a file node, a tagged heading, a plain one, a private one."""
    lines = [
        ":PROPERTIES:", f":ID:       {FILE_ID}", ":END:", "#+title: Day one", "",
        "* Morning walk :walk:", ":PROPERTIES:", f":ID:       {U1}", ":END:", "Saw a marmotine on the ridge.",
        "* Plans", ":PROPERTIES:", f":ID:       {U2}", ":END:", "Buy quinceberry jam.",
        "* Diary :private:", ":PROPERTIES:", f":ID:       {SECRET}", ":END:", "The zanzibarite secret.",
    ]  # fmt: skip
    return eol.join(lines) + eol


@pytest.fixture
def roam(tmp_path) -> Path:
    root = tmp_path / "roam"
    (root / "daily").mkdir(parents=True)
    (root / "projects.org").write_text(
        f":PROPERTIES:\n:ID:       {U3}\n:END:\n#+title: Projects\n* Kitchen\nThe larder shelves.\n"
    )
    return root


@pytest.fixture(scope="module")
def org(tmp_path_factory):
    with OrgProcess(emacs_env(tmp_path_factory.mktemp("org"))) as process:
        yield process


async def serve(tmp_path, roam: Path, fake_ollama, **kw) -> Daemon:
    return await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url, embedded=True, **kw)


async def post(daemon: Daemon, path: str, body: dict, timeout: float = 60) -> tuple[int, dict]:
    async with aiohttp.ClientSession(headers=daemon.headers, timeout=aiohttp.ClientTimeout(total=timeout)) as s:
        async with s.post(daemon.url + path, json=body) as resp:
            return resp.status, await resp.json()


async def node(daemon: Daemon, node_id: str) -> tuple[int, dict]:
    return await daemon.get_json(f"/nodes/{node_id}")


async def found_ids(daemon: Daemon, words: str) -> list[str]:
    status, body = await daemon.get_json("/search", q=words, k="50")
    assert status == 200, body
    return [r["heading_id"] for r in body["results"]]


async def assert_daemon_agrees_with_org(daemon: Daemon, reading: OrgFile) -> None:
    """The daemon serves exactly the headings Org reads as not private, with Org's tags;
    a private one is a 404 at ``/nodes``."""
    private = reading.private_lines()
    for h in reading.headings:
        if h.id is None:
            continue
        status, body = await node(daemon, h.id)
        if h.line in private:
            assert status == 404, (h, body)
        else:
            assert status == 200, (h, body)
            assert set(body["tags"]) == set(h.tags), (h, body)


def user_view(reading: OrgFile, ids=(U1, U2, SECRET)) -> dict:
    """Org's reading of the user's headings: ID -> (title, tags, private)."""
    private = reading.private_lines()
    return {h.id: (h.title, h.tags, h.line in private) for h in reading.headings if h.id in ids}


# -- 1. captured text is inert -------------------------------------------------------------

HOSTILE_TEXT = "\n".join([
    "Notes from the call",
    "#+filetags: :private:crypt:",
    "#+FILETAGS: :injected:",
    "  #+filetags: :private:",
    "#+title: Hijacked",
    "#+todo: Morning Plans | DONE",
    "#+property: ROAM_EXCLUDE t",
    "#+startup: overview",
    ":PROPERTIES:",
    ":ID: forged-0000",
    ":ROAM_EXCLUDE: t",
    ":END:",
    "* Fake heading :private:",
    "#+begin_src org",
    "* inside a block",
    "#+end_src",
    "End of the call about lemurs.",
])  # fmt: skip


# The same without what makes a text private by the one rule (its own #+filetags, a
# heading tagged private, ROAM_EXCLUDE in a drawer): HOSTILE_TEXT itself is refused, as
# the capture escapes those lines, which would make them public (test_memory_private_places.py).
INERT_TEXT = (
    HOSTILE_TEXT.replace(":private:crypt:", ":injectedtoo:").replace("#+filetags: :private:", "#+filetags: :injectedtre:")
    .replace(":ROAM_EXCLUDE: t", ":CATEGORY: forged").replace("* Fake heading :private:", "* Fake heading :fake:")
)  # fmt: skip


async def test_1_file_keywords_drawers_and_headings_in_a_capture_change_nothing_else(tmp_path, roam, fake_ollama, org):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    before = daily.read_bytes()
    seen_before = org.read(daily)
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, body = await post(daemon, "/memorize", {"text": HOSTILE_TEXT})
        assert status == 400 and "nothing was written" in body["error"], body
        assert daily.read_bytes() == before
        status, body = await post(daemon, "/memorize", {"text": INERT_TEXT})
        assert status == 200, body
        after = daily.read_bytes()
        assert after.startswith(before)
        for words in ("Notes from the call", "Hijacked", "Fake heading", "inside a block", "about lemurs"):
            assert words.encode() in after, words  # the text is kept, whatever the escape
        reading = org.read(daily)
        assert user_view(reading) == user_view(seen_before)
        assert reading.top.tags == seen_before.top.tags and reading.top.id == FILE_ID
        # Org sees the user's headings and the capture, nothing the text held.
        assert [h.id for h in reading.headings] == [U1, U2, SECRET, body["id"]]
        capture = reading.headings[-1]
        assert capture.tags == frozenset() and capture.line not in reading.private_lines()
        assert body["indexed"] is True
        await assert_daemon_agrees_with_org(daemon, reading)
        status, top = await node(daemon, FILE_ID)
        assert status == 200 and top["title"] == "Day one" and top["tags"] == []
        status, walk = await node(daemon, U1)
        assert status == 200 and walk["title"] == "Morning walk" and walk["tags"] == ["walk"]
        assert await found_ids(daemon, "marmotine") == [U1]
        assert await found_ids(daemon, "zanzibarite") == []
    finally:
        daemon.stop()


# -- 2. tags hold Org's tag characters, and "indexed" is the truth -------------------------


async def test_2_a_tag_outside_orgs_characters_is_a_400_and_indexed_is_the_truth(tmp_path, roam, fake_ollama, org):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        before = daily.read_bytes()
        for tags in (["x\n:"], ["private\n:"], ["ok", "a\nb"], ["a:b"], ["two words"], [":"], ["tab\tx"]):
            status, body = await post(daemon, "/memorize", {"text": "The gnu migrates north", "tags": tags})
            assert status == 400, (tags, body)
            assert daily.read_bytes() == before, tags
        assert await found_ids(daemon, "gnu migrates") == []
        for tags in (["Private"], ["work", "crypt"], ["home_2", "@phone", "#x", "%p"], ["ünïcode"]):
            status, body = await post(daemon, "/memorize", {"text": f"Ocelot sighting {len(tags)}", "tags": tags})
            assert status == 200, (tags, body)
            node_status, _ = await node(daemon, body["id"])
            assert (node_status == 200) is body["indexed"], (tags, body)
            capture = next(h for h in org.read(daily).headings if h.id == body["id"])
            assert set(capture.own_tags) == set(tags)
            assert body["indexed"] is (capture.line not in org.read(daily).private_lines())
    finally:
        daemon.stop()


# -- 3. line endings and encodings --------------------------------------------------------


@pytest.mark.parametrize("eol", ["\r", "\r\n"], ids=["CR", "CRLF"])
async def test_3_a_capture_keeps_the_files_line_endings_and_org_agrees(tmp_path, roam, fake_ollama, org, eol):
    daily = roam / today_rel()
    daily.write_bytes(user_daily(eol).encode())
    before = daily.read_bytes()
    seen_before = org.read(daily)
    assert seen_before.eol == {"\r": 2, "\r\n": 1}[eol] and len(seen_before.headings) == 3
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        await assert_daemon_agrees_with_org(daemon, seen_before)
        status, body = await post(daemon, "/memorize", {"text": "Line one of the capture\nline two", "tags": ["cap"]})
        assert status == 200, body
        after = daily.read_bytes()
        assert after.startswith(before)
        if eol == "\r":
            assert b"\n" not in after
        else:
            assert after.count(b"\n") == after.count(b"\r\n")
        reading = org.read(daily)
        assert reading.eol == seen_before.eol
        assert user_view(reading) == user_view(seen_before)
        assert [h.id for h in reading.headings] == [U1, U2, SECRET, body["id"]]
        await assert_daemon_agrees_with_org(daemon, reading)
        assert await found_ids(daemon, "zanzibarite") == []
        assert await found_ids(daemon, "marmotine") == [U1]
        status, capture = await node(daemon, body["id"])
        assert status == 200 and capture["line"] == body["line"] == reading.headings[-1].line
    finally:
        daemon.stop()


MIXED_ENDINGS = {
    "lf-with-a-crlf-line": user_daily().replace("* Diary :private:\n", "* Diary :private:\r\n"),
    "crlf-with-lf-lines": user_daily("\r\n").replace("Buy quinceberry jam.\r\n", "Buy quinceberry jam.\n"),
    "cr-with-an-lf": user_daily("\r").replace("Saw a marmotine on the ridge.\r", "Saw a marmotine on the ridge.\n"),
    "crlf-then-lf-capture": user_daily("\r\n") + "* Appended in LF :cap:\n:PROPERTIES:\n:ID: a1\n:END:\ntext\n",
    "cr-then-lf-capture": user_daily("\r") + "* Appended in LF :cap:\n:PROPERTIES:\n:ID: a1\n:END:\ntext\n",
}


@pytest.mark.parametrize("name", sorted(MIXED_ENDINGS))
def test_3_the_reader_splits_mixed_line_endings_as_emacs_does_and_never_shows_more(tmp_path, org, name):
    # Captures never mix line endings (above); a file the user mixed is read on Emacs's
    # lines, and where a stray CR makes Org see less structure (a tag or drawer line with
    # ^M), the reader may only hide more, never show a heading Org reads as private.
    path = tmp_path / f"{name}.org"
    path.write_bytes(MIXED_ENDINGS[name].encode())
    parsed = read_org_bytes(path.read_bytes(), path.name, log_problems=False)
    reading = org.read(path)
    lines, private = {h.line for h in reading.headings}, reading.private_lines()
    for h in parsed.headings:
        if h.level > 0:
            assert h.start_line in lines, (h.start_line, h.title, sorted(lines))
            assert h.start_line not in private, (h.start_line, h.title)


async def test_3_a_utf16_daily_is_refused_not_appended_to_in_utf8(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_bytes(user_daily().encode("utf-16"))
    before = daily.read_bytes()
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, body = await post(daemon, "/memorize", {"text": "The tapir naps at noon"})
        assert 400 <= status < 500, body
        assert re.search(r"utf-?16|encod", body["error"], re.I), body
        assert daily.read_bytes() == before
        assert await found_ids(daemon, "tapir naps") == []
    finally:
        daemon.stop()


# -- 4. forget removes only what the daemon wrote, unchanged ------------------------------


async def test_4_forget_refuses_a_capture_the_user_wrote_into_or_refiled(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        # Text typed after the captured heading (no new heading): it is the user's now.
        status, body = await post(daemon, "/memorize", {"text": "Pick up the barley"})
        assert status == 200, body
        with open(daily, "a") as fh:
            fh.write("And my own thought about the barley, typed by hand.\n")
        edited = daily.read_bytes()
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409, refused
        assert refused["error"]
        assert daily.read_bytes() == edited

        # A word of the captured text changed.
        status, body = await post(daemon, "/memorize", {"text": "Call the vet about the heifer"})
        assert status == 200, body
        daily.write_bytes(daily.read_bytes().replace(b"Call the vet about the heifer\n", b"Call the vet about the calf\n"))
        edited = daily.read_bytes()
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409, refused
        assert daily.read_bytes() == edited

        # Refiled into the user's own note, as a sub-heading with their text under it.
        status, body = await post(daemon, "/memorize", {"text": "Shelf brackets for the larder"})
        assert status == 200, body
        text = daily.read_text()
        start = text.index("* Shelf brackets for the larder")
        daily.write_text(text[:start])
        projects = roam / "projects.org"
        moved = "*" + text[start:] + "Measured: 40 cm deep, my own note.\n"
        projects.write_text(projects.read_text() + moved)
        refiled = projects.read_bytes()

        async def moved_there():
            status, n = await node(daemon, body["id"])
            return status == 200 and n["file"] == "projects.org"

        await wait_until(moved_there, timeout=30)
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409, refused
        assert projects.read_bytes() == refiled
        assert body["id"] in await found_ids(daemon, "shelf brackets")

        # Control: a heading of the user's after an untouched capture leaves it forgettable.
        before = daily.read_bytes()
        status, body = await post(daemon, "/memorize", {"text": "Oil the gate hinge"})
        assert status == 200, body
        with open(daily, "a") as fh:
            fh.write("* Evening\nA heading of my own.\n")
        status, gone = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 200, gone
        assert daily.read_bytes() == before + b"* Evening\nA heading of my own.\n"
    finally:
        daemon.stop()


async def test_4_a_star_and_a_tab_typed_under_a_capture_is_text_to_forget_too(tmp_path, roam, fake_ollama, org):
    # "*<TAB>..." is no heading for Org (nor for the reader): it is the user's text under
    # the private capture. Cut there, the forget took only the heading and left the line
    # to the heading above, a public one, where the index read it.
    daily = roam / today_rel()
    daily.write_text(user_daily().replace("* Diary :private:", "* Diary"))
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Therapy notes.", "title": "Therapy", "tags": ["private"]})
        assert status == 200, body
        with open(daily, "a") as fh:
            fh.write("*\tzorblax diagnosis details\n")
        typed = daily.read_bytes()
        reading = org.read(daily)
        therapy = next(h for h in reading.headings if h.id == body["id"])
        assert therapy.line in reading.private_lines() and reading.headings[-1] == therapy  # Org: the line is Therapy's
        status, refused = await post(daemon, "/forget", {"id": body["id"]})
        assert status == 409, refused
        assert daily.read_bytes() == typed
        assert await found_ids(daemon, "zorblax") == []
    finally:
        daemon.stop()


# -- 5. an editor appending without a lock loses nothing ----------------------------------

APPENDED_LINES = 2000


async def test_5_an_editor_appending_during_a_burst_of_captures_loses_no_line(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    before = daily.read_bytes()
    daemon = await serve(tmp_path, roam, fake_ollama)
    done = threading.Event()
    written: list[bytes] = []

    def editor():
        # Appends a line, opening the file each time as `echo >> file` does, until the
        # captures are answered (at most APPENDED_LINES lines).
        for i in range(APPENDED_LINES):
            line = f"- appended line {i:05d} by an editor\n".encode()
            with open(daily, "ab") as fh:
                fh.write(line)
            written.append(line)
            if done.wait(0.001):
                return

    try:
        appender = threading.Thread(target=editor)
        appender.start()
        try:
            answers = await asyncio.gather(*(post(daemon, "/memorize", {"text": f"Burst note {i}"}) for i in range(30)))
        finally:
            done.set()
            await asyncio.to_thread(appender.join)
        text = daily.read_bytes()
        assert text.startswith(before)
        lost = [line for line in written if text.count(line) != 1]
        assert not lost, f"{len(lost)} of {len(written)} appended lines lost"
        positions = [text.index(line) for line in written]
        assert positions == sorted(positions)
        assert [a for a in answers if a[0] >= 500] == []
        ok = [body for status, body in answers if status == 200]
        assert len(ok) == 30, [a for a in answers if a[0] != 200]
        for body in ok:
            assert body["id"].encode() in text
    finally:
        done.set()
        daemon.stop()


# -- 6. links and read-only files ---------------------------------------------------------


async def test_6_a_symlinked_daily_keeps_its_link_and_text_outside_stays_out(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    (roam / "journal").mkdir()
    real = roam / "journal" / "the-real-day.org"
    real.write_text(user_daily())
    daily.symlink_to(Path("..") / "journal" / real.name)
    before = real.read_bytes()
    outside = tmp_path / "synced"
    outside.mkdir()
    synced = outside / "day.org"
    synced.write_text("#+title: Synced elsewhere\n* Far away\nThe outsidewombat lives here.\n")
    synced_bytes = synced.read_bytes()
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Through the link to the capybara"})
        assert status == 200, body
        assert daily.is_symlink() and os.readlink(daily) == str(Path("..") / "journal" / real.name)
        assert real.read_bytes().startswith(before) and body["id"].encode() in real.read_bytes()
        assert await found_ids(daemon, "capybara") == [body["id"]]

        # A daily linking out of the roam dir: written neither through the link nor over it.
        daily.unlink()
        daily.symlink_to(synced)
        status, body = await post(daemon, "/memorize", {"text": "Never into the synced folder, okapi"})
        assert daily.is_symlink() and os.readlink(daily) == str(synced)
        assert synced.read_bytes() == synced_bytes
        if status == 200:
            assert body["inbox"] is True and body["note"] and body["file"] != today_rel(), body
            assert body["id"] in (roam / body["file"]).read_text()
        else:
            assert 400 <= status < 500, body
        assert await found_ids(daemon, "outsidewombat") == []
    finally:
        daemon.stop()


async def test_6_a_hard_linked_daily_keeps_its_link_and_a_read_only_one_is_not_written(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    twin = tmp_path / "backup-of-today.org"
    os.link(daily, twin)
    daemon = await serve(tmp_path, roam, fake_ollama, preexec_fn=NO_DAC)
    try:
        status, body = await post(daemon, "/memorize", {"text": "Both names see the dormouse"})
        assert status == 200, body
        assert os.stat(daily).st_ino == os.stat(twin).st_ino and os.stat(daily).st_nlink == 2
        assert body["id"] in twin.read_text()

        # Read-only: a capture is not written into it (refused, or sent to the inbox).
        os.chmod(daily, 0o444)
        before = daily.read_bytes()
        status, refused = await post(daemon, "/memorize", {"text": "Not into a read-only note, ibex"})
        assert daily.read_bytes() == before and stat.S_IMODE(os.stat(daily).st_mode) == 0o444
        if status == 200:
            assert refused["inbox"] is True and refused["note"] and refused["file"] != today_rel(), refused
        else:
            assert 400 <= status < 500, refused
        # ... and a forget in it is refused.
        status, gone = await post(daemon, "/forget", {"id": body["id"]})
        assert 400 <= status < 500, gone
        assert daily.read_bytes() == before and stat.S_IMODE(os.stat(daily).st_mode) == 0o444
    finally:
        os.chmod(daily, 0o644)
        daemon.stop()


# -- 7. memorize then forget restores the file -------------------------------------------


async def test_7_memorize_then_forget_restores_a_daily_without_final_newline(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_text(user_daily().rstrip("\n"))
    before = daily.read_bytes()
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        for eol_text in ("One capture", "Two lines\nof capture"):
            status, body = await post(daemon, "/memorize", {"text": eol_text})
            assert status == 200, body
            status, gone = await post(daemon, "/forget", {"id": body["id"]})
            assert status == 200, gone
            assert daily.read_bytes() == before
    finally:
        daemon.stop()


# -- 8. kill -9 leaves nothing behind ----------------------------------------------------

KILL_ATTEMPTS = 2


async def test_8_kill_9_during_a_capture_leaves_no_copy_of_the_daily(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    # A daily big enough that writing a copy of it takes a while; mostly private text.
    filler = "".join(f"** Entry {i}\nThe cassowary secret number {i} and more words.\n" for i in range(10000))
    daily.write_text(user_daily() + "* Archive :private:\n" + filler)
    before = daily.read_bytes()
    listing = {p for p in roam.rglob("*")}

    def strangers() -> set[Path]:
        return {p for p in roam.rglob("*") if p not in listing and p.name != "inbox.org"}

    for attempt in range(KILL_ATTEMPTS):
        daemon = await serve(tmp_path, roam, fake_ollama)
        saw_tmp = threading.Event()
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                if any(p.name != daily.name for p in daily.parent.iterdir()):
                    saw_tmp.set()
                    return

        watcher = threading.Thread(target=watch)
        watcher.start()
        requests = [asyncio.ensure_future(post(daemon, "/memorize", {"text": f"Kill me {attempt}.{i}"})) for i in range(3)]
        try:
            first = asyncio.ensure_future(asyncio.to_thread(saw_tmp.wait, 60))
            await asyncio.wait([first, *requests], return_when=asyncio.FIRST_COMPLETED)
            os.kill(daemon.pid, signal.SIGKILL)
            daemon.proc.wait()
        finally:
            stop.set()
            saw_tmp.set()
            await asyncio.to_thread(watcher.join)
            await asyncio.gather(*requests, return_exceptions=True)
        left_at_kill = strangers()
        restarted = await serve(tmp_path, roam, fake_ollama)
        try:
            assert strangers() == set(), f"left beside the notes after kill -9 and restart: {strangers()}"
        finally:
            restarted.stop()
        assert daily.read_bytes().startswith(before)
        if left_at_kill:
            return  # the kill hit a write that left a file: it is gone after the restart
    # No attempt caught a temporary file: the implementation writes none (appends in place).


# -- 9. odd paths are a 4xx naming the path ------------------------------------------------


async def test_9_odd_daily_paths_are_4xx_errors_naming_the_path(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daemon = await serve(tmp_path, roam, fake_ollama, preexec_fn=NO_DAC)
    try:
        # The daily is a directory.
        daily.mkdir()
        status, body = await post(daemon, "/memorize", {"text": "A directory is no note"})
        assert 400 <= status < 500, body
        assert daily.name in body["error"], body
        daily.rmdir()
        # The dailies dir is not writable (and has no daily yet).
        os.chmod(roam / "daily", 0o555)
        try:
            status, body = await post(daemon, "/memorize", {"text": "Dailies dir closed"})
            assert 400 <= status < 500, body
            assert "daily" in body["error"], body
        finally:
            os.chmod(roam / "daily", 0o755)
        # The dailies dir is a file.
        (roam / "daily").rmdir()
        (roam / "daily").write_text("not a directory\n")
        status, body = await post(daemon, "/memorize", {"text": "Dailies dir is a file"})
        assert 400 <= status < 500, body
        assert "daily" in body["error"], body
        assert (roam / "daily").read_text() == "not a directory\n"
        # The roam root is not writable and has no dailies dir.
        (roam / "daily").unlink()
        os.chmod(roam, 0o555)
        try:
            status, body = await post(daemon, "/memorize", {"text": "Root closed"})
            assert 400 <= status < 500, body
            assert "daily" in body["error"] or str(roam) in body["error"], body
        finally:
            os.chmod(roam, 0o755)
        assert not (roam / "daily").exists()
    finally:
        daemon.stop()


# -- 10. a FIFO never blocks the writer ----------------------------------------------------


async def test_10_a_daily_that_is_a_fifo_answers_and_blocks_nothing(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daemon = await serve(tmp_path, roam, fake_ollama)
    os.mkfifo(daily)
    try:
        try:
            status, body = await post(daemon, "/memorize", {"text": "Into a pipe?"}, timeout=20)
        except TimeoutError:
            pytest.fail("/memorize on a FIFO daily did not answer within 20 s")
        assert 400 <= status < 500, body
        assert daily.name in body["error"], body
        status, body = await post(daemon, "/forget", {"id": str(uuid.uuid4())}, timeout=20)
        assert status == 404, body
        os.unlink(daily)
        status, body = await post(daemon, "/memorize", {"text": "After the pipe is gone"}, timeout=20)
        assert status == 200, body
    finally:
        try:  # let a reader blocked on the FIFO see its end
            os.close(os.open(daily, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        daemon.stop()


# -- 11. forget does not tell a private ID exists -----------------------------------------


async def test_11_forget_answers_a_private_id_as_an_unknown_one(tmp_path, roam, fake_ollama):
    daily = roam / today_rel()
    daily.write_text(user_daily())
    (roam / "secret-note.org").write_text(
        "#+title: Secrets\n* Hidden :private:\n:PROPERTIES:\n:ID:       a0000000-0000-4000-8000-0000000000aa\n:END:\nsh.\n"
    )
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        unknown = "a0000000-0000-4000-8000-0000000000ff"
        u_status, u_body = await post(daemon, "/forget", {"id": unknown})
        assert u_status == 404, u_body
        for private_id in (SECRET, "a0000000-0000-4000-8000-0000000000aa"):
            status, body = await post(daemon, "/forget", {"id": private_id})
            assert status == u_status, (private_id, body)
            assert {k: str(v).replace(private_id, unknown) for k, v in body.items()} == {
                k: str(v) for k, v in u_body.items()
            }
        assert b"zanzibarite" in daily.read_bytes()
    finally:
        daemon.stop()


# -- 12. titles and links ------------------------------------------------------------------


async def test_12_a_capture_starting_with_a_link_gets_a_clean_title_and_a_valid_link(tmp_path, roam, fake_ollama, org):
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        text = f"[[id:{U3}][Bread hydration]] is what I meant, with the long ratios of dough and water and salt"
        status, body = await post(daemon, "/memorize", {"text": text})
        assert status == 200, body
        assert body["title"].startswith("Bread hydration is what I meant"), body
        assert "[" not in body["title"] and "]" not in body["title"], body
        assert is_one_id_link(org.link(body["link"]), body["id"]), (body["link"], org.link(body["link"]))
        status, n = await node(daemon, body["id"])
        assert status == 200 and n["title"] == body["title"], n
        for title in ("See [[id:x][foo]] and ]] odd [[", "[[https://example.org][a site]]", "brackets ] [ ]] [["):
            status, body = await post(daemon, "/memorize", {"text": "Body of it", "title": title})
            assert status == 200, body
            assert is_one_id_link(org.link(body["link"]), body["id"]), (title, body["link"], org.link(body["link"]))
            status, n = await node(daemon, body["id"])  # one title: the one the index holds
            assert status == 200 and n["title"] == body["title"], (title, n["title"], body["title"])
    finally:
        daemon.stop()
