"""An imported chat's ``id:`` links to IDs no note has are quieted: a model's mangled copy
of a note's ID stayed a live link, and every export of the imported file failed on it
(Org 9.5: "Unable to resolve link"). A link to a note of the roam directory stays one.
The real command, the file read back by batch Emacs's Org; imported again, unchanged."""

from __future__ import annotations

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
