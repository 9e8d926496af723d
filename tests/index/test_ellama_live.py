"""The running daemon (its watcher and its look at the files notes depend on) reads an
ellama session again when its ``.session.el`` comes after the org file, as ellama writes
them (notes/ellama.py), and again when it goes."""

from __future__ import annotations

import os

from tests.http.test_oracle_words_ellama import CHAT, SESSION, companion, companion_name
from tests.runners import wait_until


async def test_the_running_daemon_reads_the_session_again_when_its_file_comes(roam_dir, make_settings, make_client, fake_ollama):
    settings = make_settings(roam_dir=roam_dir, ollama_host=fake_ollama.url)
    client = await make_client(settings, watch=True)
    (roam_dir / SESSION).parent.mkdir()
    (roam_dir / SESSION).write_text(CHAT)

    async def role() -> str | None:
        resp = await client.get("/search", params={"q": "ELLAMAREPLYTWO gurgles", "k": "30"})
        roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
        return roles.get((SESSION, "Ellama:"), "missing")

    await wait_until(lambda: _is(role(), None), timeout=20)
    (roam_dir / companion_name(SESSION)).write_text(companion("llama3.2+notes"))
    await wait_until(lambda: _is(role(), "oracle"), timeout=20)
    os.remove(roam_dir / companion_name(SESSION))
    await wait_until(lambda: _is(role(), None), timeout=20)


async def _is(value, expected) -> bool:
    return await value == expected
