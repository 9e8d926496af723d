"""An ellama session's ``.session.el`` is written just after its org file (ellama's
after-save hook): the note depends on it, so the index reads the session again when it
comes, changes or goes (notes/ellama.py), as it does a note's setup files."""

from __future__ import annotations

import os

from tests.http.test_oracle_words_ellama import CHAT, SESSION, companion, companion_name
from tests.index.test_turns_reread_upgrade import oracle_titles, turns
from tests.runners import reconcile_once

REPLIES = [("Ellama:",), ("Why coarser",), ("Ellama:",)]


async def test_the_session_file_coming_later_reads_the_session_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / SESSION).parent.mkdir()
    (roam_dir / SESSION).write_text(CHAT)
    await reconcile_once(settings)
    assert oracle_titles(settings.db_path) == [] and turns(settings.db_path) == [], "no session file: a note"

    (roam_dir / companion_name(SESSION)).write_text(companion("llama3.2+notes"))
    report = await reconcile_once(settings)
    assert report.indexed == 1 and oracle_titles(settings.db_path) == REPLIES

    # The session switched to a plain model: its replies are the model's, no oracle's words.
    (roam_dir / companion_name(SESSION)).write_text(companion("llama3.2"))
    await reconcile_once(settings)
    assert oracle_titles(settings.db_path) == []
    assert {speaker for speaker, _, _ in turns(settings.db_path)} == {"user", "Ellama"}

    os.remove(roam_dir / companion_name(SESSION))
    await reconcile_once(settings)
    assert turns(settings.db_path) == [], "without it, a note again"
