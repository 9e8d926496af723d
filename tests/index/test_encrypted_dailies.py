"""Captures and encrypted notes, against the real daemon: org-roam's dailies may be
encrypted (``daily_file_format = "%Y-%m-%d.org.gpg"``, saved by epa-file). A capture
appended in clear to an encrypted daily sat after its ciphertext, where Emacs (which
decrypts the armored block only) never showed it and its next save dropped it, and in
clear on disk in a note the user keeps encrypted. It goes to the capture inbox instead;
with the inbox encrypted too, nothing is written."""

from __future__ import annotations

import datetime

from tests.index.test_memory import post
from tests.runners import start_daemon

ARMORED = b"-----BEGIN PGP MESSAGE-----\n\njA0ECQMCxyz\n=abcd\n-----END PGP MESSAGE-----\n"


async def test_a_capture_never_goes_in_clear_into_an_encrypted_daily(tmp_path, roam_dir, fake_ollama):
    daily = roam_dir / "daily" / datetime.date.today().strftime("%Y-%m-%d.org.gpg")
    daily.parent.mkdir(exist_ok=True)
    daily.write_bytes(ARMORED)
    env = {"ARCOLOGY_ORACLE_DAILY_FILE_FORMAT": "%Y-%m-%d.org.gpg"}
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, env=env)
    try:
        status, body = await post(daemon, "/memorize", {"text": "the placecleartext plan"})
        assert status == 200, body
        assert body["file"] == "inbox.org" and body["inbox"] and "encrypted" in body["note"]
        assert daily.read_bytes() == ARMORED
        assert "placecleartext" in (roam_dir / "inbox.org").read_text()
    finally:
        daemon.stop()

    env["ARCOLOGY_ORACLE_CAPTURE_INBOX"] = "inbox.org.gpg"
    inbox = roam_dir / "inbox.org.gpg"
    inbox.write_bytes(ARMORED)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, env=env)
    try:
        status, body = await post(daemon, "/memorize", {"text": "the placecleartext plan"})
        assert status == 409, body
        assert daily.read_bytes() == ARMORED and inbox.read_bytes() == ARMORED
    finally:
        daemon.stop()
