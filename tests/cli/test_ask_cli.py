"""``arcology-oracle ask`` and ``summarize`` as real subprocesses against the fake Ollama."""

from __future__ import annotations

import asyncio
import os
import sys

from tests.org_samples import IDS
from tests.runners import REPO


async def run_cli(tmp_path, fake, *args, stdin: bytes | None = None, env: dict[str, str] | None = None):
    env = {
        **os.environ,
        **(env or {}),
        "ARCOLOGY_ORACLE_ROAM_DIR": str(tmp_path / "roam"),
        "ARCOLOGY_ORACLE_DB": str(tmp_path / "cli.sqlite3"),
        "OLLAMA_HOST": fake.url,
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=REPO,
    )  # fmt: skip


async def finish(proc, stdin: bytes | None = None) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    return proc.returncode, out.decode(), err.decode()


async def indexed(tmp_path, roam_dir, fake):
    code, _, err = await finish(await run_cli(tmp_path, fake, "index"))
    assert code == 0, err


async def test_cli_ask_streams_and_lists_sources(tmp_path, roam_dir, fake_ollama):
    await indexed(tmp_path, roam_dir, fake_ollama)
    fake_ollama.state.stream_gate = asyncio.Event()
    proc = await run_cli(tmp_path, fake_ollama, "ask", "how do I feed my sourdough starter?")
    first = await asyncio.wait_for(proc.stdout.read(5), 60)
    assert first == b"Based"  # printed while the model is still held after its first piece
    assert not fake_ollama.state.stream_gate.is_set()
    fake_ollama.state.stream_gate.set()
    code, out, err = await finish(proc)
    assert code == 0, err
    assert "\n\nSources:\n[1] " in out
    assert f"<id:{IDS['starter']}>" in out


async def test_cli_ask_buffer_from_stdin(tmp_path, roam_dir, fake_ollama):
    await indexed(tmp_path, roam_dir, fake_ollama)
    buffer = b"Tomato leaves with brown patches after wet weather: late blight"
    code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "ask", "--buffer", "-", stdin=buffer), buffer)
    assert code == 0, err
    assert f"<id:{IDS['blight']}>" in out


async def test_cli_summarize_and_errors(tmp_path, roam_dir, fake_ollama):
    await indexed(tmp_path, roam_dir, fake_ollama)
    code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "summarize", IDS["rust_ownership"]))
    assert code == 0, err
    assert out.strip() and f"<id:{IDS['rust_ownership']}>" in out
    code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "summarize", "no-such-id"))
    assert code == 1 and "no node" in err
    code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "ask", "sourdough", "--model", "missing-model"))
    assert code == 1 and "missing-model" in err and "Traceback" not in err


async def test_cli_ask_says_when_the_notes_were_found_by_keywords_only(tmp_path, roam_dir, fake_ollama):
    # The embedder hung on the question: the answer is grounded on the keyword matches
    # (search_embed_wait), and the CLI's list says so, as GET /ask's does.
    await indexed(tmp_path, roam_dir, fake_ollama)
    state = fake_ollama.state
    state.chat_reply = "Remove the lower leaves [1]."
    state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})
    env = {"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": "600"}
    try:
        code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "ask", "tomato blight", env=env))
        assert code == 0, err
        assert state.hanging.is_set() and not state.hang_release.is_set()  # answered while the embedding hung
        assert "\n\nSources (keyword match only):\n[1] " in out, out
        assert f"<id:{IDS['blight']}>" in out, out
    finally:
        state.release()

    # With the embedding there, the plain list again.
    state.configure({"hang": False})
    code, out, err = await finish(await run_cli(tmp_path, fake_ollama, "ask", "tomato blight"))
    assert code == 0, err
    assert "\n\nSources:\n[1] " in out, out
