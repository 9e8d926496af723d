"""An imported chat's ``id:`` links to IDs no note has are quieted: a model's mangled copy
of a note's ID stayed a live link, and every export of the imported file failed on it
(Org 9.5: "Unable to resolve link"). A link to a note of the roam directory stays one.
A bracket link over a message's lines (Org reads one) is quieted as one on a line is: the
chat was quieted a line at a time.
The real command, the file read back by batch Emacs's Org; imported again, unchanged."""

from __future__ import annotations

import json

from tests.http.test_model_text_writes import NOTE_ID, org_reading
from tests.runners import run_cli

MANGLED = NOTE_ID[:-1]


async def test_an_imported_chat_links_only_to_ids_a_note_has(tmp_path):
    roam = tmp_path / "roam"
    (roam / "notes").mkdir(parents=True)
    note = f":PROPERTIES:\n:ID:       {NOTE_ID}\n:END:\n#+title: Bread hydration\n"
    (roam / "notes" / "bread.org").write_text(note)
    log = tmp_path / "2026-12-01-chat.txt"
    log.write_text(f"[10:00] Ana: see [[id:{NOTE_ID}][the note]]\n"
                   f"[10:01] Bot: and [[id:{MANGLED}][this one]], or id:{MANGLED}x\n")  # fmt: skip
    code, _, err = await run_cli("import", "transcript", str(log), "--roam-dir", str(roam))
    assert code == 0, err
    [path] = (roam / "imported").rglob("*.org")
    reading = org_reading(path)
    assert [link for link in reading["links"] if link[0] == "id"] == [["id", NOTE_ID]], reading
    assert "this one" in path.read_text() and (roam / "notes" / "bread.org").read_text() == note
    code, out, err = await run_cli("import", "transcript", str(log), "--roam-dir", str(roam))
    assert code == 0 and "0 added, 0 updated, 1 unchanged, 0 skipped" in out, (out, err)


async def test_an_imported_chats_bracket_link_over_lines_is_quieted(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    text = 'See [[Some\nnote]], [[wiki:Bread\nrolls][the wiki]] and [[file:a"\nonclick="alert(1)"][z]].'
    message = {"id": "a1", "author": {"role": "assistant"}, "create_time": 1733500000, "recipient": "all",
               "metadata": {}, "content": {"content_type": "text", "parts": [text]}}  # fmt: skip
    chat = {"id": "c-1", "title": "Links", "create_time": 1733500000, "current_node": "a1",
            "mapping": {"a1": {"id": "a1", "parent": None, "children": [], "message": message}}}  # fmt: skip
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chat]))
    code, _, err = await run_cli("import", "chatgpt", str(export), "--roam-dir", str(roam))
    assert code == 0, err
    [path] = roam.rglob("*.org")
    reading = org_reading(path)
    assert reading["links"] == [], reading
