"""A capture whose write fails (an I/O error part way, the note held open by another
program, so no write lease and no taking back) is logged without naming its note when
that note is private: a daily tagged private, or one ``exclude_globs`` leave out. The
real daemon process; the failing write is injected into it (a ``sitecustomize`` on its
``PYTHONPATH`` makes the one write holding the marker fail with EIO after 10 bytes):
no file system of a test can be made to fail a write on demand."""

from __future__ import annotations

import datetime
import textwrap

import aiohttp
import pytest

from tests.runners import start_daemon

MARKER = "FAIL-THIS-WRITE"
INJECT = textwrap.dedent(f'''
    import errno, os
    from arcology_oracle.index import note_io
    _real = note_io.write_all

    def write_all(fd, data, offset=None):
        if {MARKER!r}.encode() in data:
            _real(fd, data[:10], offset)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return _real(fd, data, offset)

    note_io.write_all = write_all
''')

CASES = {  # (the daily's first lines, exclude_globs, whether the log may name it)
    "tagged private": ("#+title: Today\n#+filetags: :private:\n", None, False),
    "excluded": ("#+title: Today\n", "daily/*", False),
    "public": ("#+title: Today\n", None, True),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_failed_capture_into_a_private_daily_does_not_name_it_in_the_log(tmp_path, roam_dir, fake_ollama, case):
    head, exclude, named = CASES[case]
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(INJECT)
    rel = f"daily/{datetime.date.today():%Y-%m-%d}.org"
    daily = roam_dir / rel
    daily.parent.mkdir(exist_ok=True)
    before = (head + "\n* Morning\nslept well\n").encode()
    daily.write_bytes(before)
    env = {"PYTHONPATH": str(inject)}
    if exclude:
        env["ARCOLOGY_ORACLE_EXCLUDE_GLOBS"] = exclude
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, env=env, embedded=True)
    try:
        with open(daily, "rb"):  # held open (tail -f): no write lease, so the part written stays
            async with aiohttp.ClientSession() as session:
                async with session.post(daemon.url + "/memorize", json={"text": f"{MARKER} a capture"}) as resp:
                    body = await resp.json()
        assert resp.status == 409, body
        assert "could not be taken back" in body["error"], body
        log = daemon.log()
        assert "a failed capture into" in log, log
        assert (rel in log) == named, log
        assert (daily.name in log) == named, log
        assert daily.read_bytes().startswith(before)
    finally:
        daemon.stop()
