"""A capture into a note the daemon's file size limit (``ulimit -f``, systemd's
``LimitFSIZE=``) cannot hold whole, against the real daemon started under that limit:
refused before a byte is written, also while another program holds the note open (no
write lease, so a part written could not be taken back). ``fallocate``, which reserves
the room for an unleased capture, does not look at that limit."""

from __future__ import annotations

import datetime
import resource

import pytest

from tests.index.test_write_attacks import post
from tests.runners import start_daemon

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("held_open", [True, False], ids=["unleased", "leased"])
async def test_a_capture_past_the_daemons_file_size_limit_writes_nothing(tmp_path, fake_ollama, held_open):
    root = tmp_path / "roam"
    (root / "daily").mkdir(parents=True)
    daily = root / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    # Private, so the index (under the same limit) stays far smaller than the note.
    data = b"#+filetags: :private:\n* Mine\n" + b"A line of my own.\n" * 100000
    daily.write_bytes(data)
    limit = len(data) + 100

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    daemon = await start_daemon(tmp_path, roam_dir=root, ollama_url=fake_ollama.url, preexec_fn=limited)
    holder = open(daily, "rb") if held_open else None  # (a tail -f, a sync tool): no write lease
    try:
        status, body = await post(daemon, "/memorize", {"text": "A capture longer than the room left " * 5})
        assert status == 409, body
        assert "nothing was written" in body["error"], body
        assert daily.read_bytes() == data
        status, body = await post(daemon, "/memorize", {"text": "Short"})  # 100 bytes hold no heading either
        assert status == 409, body
        assert daily.read_bytes() == data
    finally:
        if holder:
            holder.close()
        daemon.stop()
