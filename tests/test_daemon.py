"""The real `arcology-oracle serve` process: live updates, degraded mode, access rules."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp

from tests.corpus_tools import emacs_save
from tests.fakes.fake_ollama import FakeOllama
from tests.org_samples import IDS
from tests.runners import REPO, free_port, run_cli, spawn_daemon, start_daemon, wait_until


async def search(daemon, q: str):
    status, body = await daemon.get_json("/search", q=q, k="5")
    assert status == 200, body
    return body


async def test_live_updates_through_emacs_saves(daemon, roam_dir, fake_ollama):
    note = roam_dir / "kombucha.org"
    emacs_save(note, ":PROPERTIES:\n:ID: 9a9a9a9a-0000-4000-8000-000000000001\n:END:\n#+title: Kombucha\n* Second fermentation\nBottle kombucha with ginger for fizz.\n")

    async def found():
        body = await search(daemon, "kombucha ginger fizz")
        return any(r["heading"] == "Second fermentation" for r in body["results"])

    await wait_until(found, timeout=10)
    # A second save (precious rename) with new text replaces the old heading.
    emacs_save(note, "#+title: Kombucha\n* Flavouring\nHibiscus and rosehip syrup.\n", precious=True)

    async def replaced():
        body = await search(daemon, "hibiscus rosehip")
        return any(r["heading"] == "Flavouring" and r["file"] == "kombucha.org" for r in body["results"])

    await wait_until(replaced, timeout=10)
    assert not any(r["file"].endswith("~") for r in (await search(daemon, "kombucha ginger"))["results"])

    # Rename: the heading is found under its new path only.
    os.rename(note, roam_dir / "fermentation.org")

    async def renamed():
        files = {r["file"] for r in (await search(daemon, "hibiscus rosehip"))["results"]}
        return "fermentation.org" in files and "kombucha.org" not in files

    await wait_until(renamed, timeout=10)

    # Delete: nothing of the note is left.
    (roam_dir / "fermentation.org").unlink()

    async def gone():
        return (await search(daemon, "hibiscus rosehip"))["results"] == []

    await wait_until(gone, timeout=10)


async def test_new_directory_with_files_is_indexed(daemon, roam_dir):
    staging = roam_dir.parent / "staging"
    (staging / "deep").mkdir(parents=True)
    (staging / "deep" / "n.org").write_text("* Zymurgy notes\nLager yeast at low temperature.\n")
    os.rename(staging, roam_dir / "moved-in")

    async def found():
        return any(r["heading"] == "Zymurgy notes" for r in (await search(daemon, "zymurgy lager yeast"))["results"])

    await wait_until(found, timeout=10)


async def test_similar_node_returns_related_note_first(daemon, fake_ollama):
    async def embedded():
        _, status = await daemon.get_json("/status")
        return status["pending"] == 0 and status["chunks"] > 0 and not status["indexing"]["running"]

    await wait_until(embedded, timeout=20)
    status, body = await daemon.get_json("/similar", node=IDS["sourdough"])
    assert status == 200 and body["mode"] == "vector"
    assert body["results"][0]["node_id"] == IDS["hydration"]
    assert all(r["node_id"] != IDS["sourdough"] for r in body["results"])
    nodes = [r["node_id"] for r in body["results"]]
    assert len(nodes) == len(set(nodes))  # one result per node
    status, body = await daemon.get_json("/similar", node=IDS["sourdough"], exclude_linked="true")
    assert IDS["hydration"] not in [r["node_id"] for r in body["results"]]


async def test_without_ollama_keyword_mode_then_catches_up(tmp_path, roam_dir):
    port = free_port()
    fake = FakeOllama(port=port)  # not started: connections are refused
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake.url)
    try:

        async def indexed_but_pending():
            _, status = await daemon.get_json("/status")
            return status["chunks"] > 0 and not status["indexing"]["running"] and status["embedder"]["reachable"] is False

        await wait_until(indexed_but_pending, timeout=20)
        _, status = await daemon.get_json("/status")
        assert status["pending"] == status["chunks"]
        body = await search(daemon, "covering index")
        assert body["mode"] == "keyword" and body["results"]
        code, body = await daemon.get_json("/similar", node=IDS["sourdough"])
        assert code == 200 and body["mode"] == "keyword" and "note" in body
        assert body["results"][0]["node_id"] == IDS["hydration"]

        await fake.start()

        async def caught_up():
            _, status = await daemon.get_json("/status")
            return status["pending"] == 0 and status["embedder"]["reachable"] is True

        await wait_until(caught_up, timeout=30)
        assert (await search(daemon, "covering index"))["mode"] == "hybrid"
    finally:
        daemon.stop()
        await fake.stop()


async def test_public_bind_without_token_refuses_to_start(tmp_path, roam_dir):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", "serve", "--roam-dir", str(roam_dir),
        "--db", str(tmp_path / "x.db"), "--host", "0.0.0.0", "--port", str(free_port()),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert b"without a token" in err


async def test_token_required_everywhere_but_health(tmp_path, roam_dir, fake_ollama):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, extra_args=["--host", "0.0.0.0", "--token-file", str(token_file)]
    )
    try:
        daemon.token = "s3cret-token"
        async with aiohttp.ClientSession() as session:
            for path in ("/status", "/search?q=bread", f"/similar?node={IDS['sourdough']}", f"/nodes/{IDS['sourdough']}"):
                async with session.get(daemon.url + path) as resp:
                    assert resp.status == 401, path
                    assert (await resp.json())["ok"] is False
                async with session.get(daemon.url + path, headers={"Authorization": "Bearer wrong"}) as resp:
                    assert resp.status == 401, path
            async with session.get(daemon.url + "/health") as resp:
                assert resp.status == 200
        code, _ = await daemon.get_json("/status")
        assert code == 200
    finally:
        daemon.stop()


def untouched_state(*paths) -> dict[str, tuple[int, int, bytes] | None]:
    """Every file below (or at) ``paths``: its size, mtime and bytes (None when absent)."""
    state: dict[str, tuple[int, int, bytes] | None] = {}
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            st = file.stat() if file.exists() else None
            state[str(file)] = (st.st_size, st.st_mtime_ns, file.read_bytes()) if st else None
    return state


async def refused(tmp_path, name: str, **kw) -> tuple[int, str]:
    """Spawn ``serve`` and wait for it to exit; its status and log."""
    d = spawn_daemon(log_path=tmp_path / f"{name}.log", **kw)
    try:
        code = await asyncio.to_thread(d.proc.wait, 30)
    finally:
        d.stop()
    return code, d.log()


async def test_a_second_daemon_on_the_same_database_or_notes_is_refused_and_touches_nothing(tmp_path, roam_dir, fake_ollama):
    first = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    db = tmp_path / "daemon.sqlite3"
    stale = roam_dir / ".arcology-oracle-abcd1234.tmp"  # what a daemon's start-up clean-up deletes
    stale.write_text("left by a killed write")
    try:
        before = untouched_state(roam_dir, db, Path(f"{db}-wal"))
        port = int(first.url.rsplit(":", 1)[1])
        common = {"roam_dir": roam_dir, "ollama_url": fake_ollama.url}
        # The same port: refused before the database or the notes are opened.
        code, log = await refused(tmp_path, "same-port", db_path=db, port=port, **common)
        assert code == 2 and f"arcology-oracle: port {port} is already in use: another daemon? pass --port" in log, log
        # Another port, the same database (and notes): refused, naming the database.
        code, log = await refused(tmp_path, "same-db", db_path=db, **common)
        assert code == 1 and f"arcology-oracle: another arcology-oracle daemon (or `doctor --repair`) is using the database {db}" in log, log
        # Another port and database, the same notes: refused; its database is never created.
        other_db = tmp_path / "other" / "index.sqlite3"
        code, log = await refused(tmp_path, "same-notes", db_path=other_db, **common)
        assert code == 1 and f"another arcology-oracle daemon is serving the notes in {roam_dir}" in log, log
        assert not other_db.exists()
        for name in ("same-port", "same-db", "same-notes"):
            text = (tmp_path / f"{name}.log").read_text()
            assert "Traceback" not in text and "listening" not in text and "initial index" not in text, text
            assert len([line for line in text.splitlines() if line.startswith("arcology-oracle:")]) == 1, text
        assert untouched_state(roam_dir, db, Path(f"{db}-wal")) == before and stale.exists()
        # The other commands still work beside it; a repair (the only writer) waits for the daemon to stop.
        code, out, err = await run_cli("status", "--db", str(db), "--ollama-host", fake_ollama.url)
        assert code == 0 and "headings" in out, err
        code, out, err = await run_cli("index", str(roam_dir), "--db", str(db), "--ollama-host", fake_ollama.url)
        assert code == 0 and "0 indexed" in out, err
        code, _, err = await run_cli("doctor", str(roam_dir), "--db", str(db), "--repair")
        assert code == 1 and f"a daemon is using the database {db}: stop it before `doctor --repair`" in err, err
        assert (await first.get_json("/health"))[0] == 200
    finally:
        first.stop()
    # Stopped, it releases its locks: the next daemon starts on the same database and notes.
    again = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    again.stop()
    assert "listening on" in again.log()


async def test_a_busy_port_fails_at_once_and_touches_nothing(tmp_path, roam_dir):
    db = tmp_path / "fresh" / "index.sqlite3"
    stale = roam_dir / ".arcology-oracle-abcd1234.tmp"
    stale.write_text("left by a killed write")
    before = untouched_state(roam_dir)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, log = await refused(tmp_path, "busy", roam_dir=roam_dir, db_path=db, ollama_url="http://127.0.0.1:9", port=port)
    assert code == 2, log
    assert log.strip().splitlines()[-1] == f"arcology-oracle: port {port} is already in use: another daemon? pass --port"
    assert "Traceback" not in log and "listening" not in log, log
    assert not db.parent.exists()  # no database, no lock file
    assert untouched_state(roam_dir) == before and stale.exists()


async def test_a_stop_ends_the_answers_under_way_and_the_models_generations(daemon, fake_ollama):
    """SIGTERM while answers stream (the model stalled): each ends at once with a line
    saying why, Ollama is told to stop, and the process exits. Before, the runner's grace
    time held the stop for two minutes (systemd kills at 90 s), the client told nothing."""
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()  # every answer waits after its first piece
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        ndjson = await session.post(daemon.url + "/ask", json={"question": "sourdough starter", "stream": True},
                                    headers={"Accept": "application/x-ndjson"})  # fmt: skip
        assert [json.loads(await ndjson.content.readline())["type"] for _ in range(2)] == ["sources", "token"]
        text = await session.get(daemon.url + "/ask", params={"q": "sourdough starter"})
        assert (await text.content.readany())
        await wait_until(lambda: state.count("/api/chat") == 2)

        daemon.proc.send_signal(signal.SIGTERM)
        rest = [json.loads(line) for line in (await ndjson.content.read()).splitlines()]
        assert rest == [{"type": "error", "message": "the daemon is stopping"}]
        assert (await text.content.read()).endswith(b"[error: the daemon is stopping]\n")
    assert await asyncio.to_thread(daemon.proc.wait, 30) == 0
    await wait_until(lambda: state.client_disconnects >= 2)
