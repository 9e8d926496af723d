"""Dialogue in a heading's body read per turn: what ``arcology-oracle import`` writes
(few turns, long answers with escaped lines) and what a person keeps by hand."""

from arcology_oracle.index.parsing import ParseOptions, parse_note
from arcology_oracle.notes import dialogue

IMPORTED = """:PROPERTIES:
:ID:       32ed2cdc-b37b-5223-be7e-a73c8d3ca16e
:IMPORTED_FROM: chatgpt
:END:
#+title: Rye starter

* [2024-03-05 Tue 09:00] Rye starter
:PROPERTIES:
:ID:       e8e0d94b-b770-542f-b5f5-754dc04593b6
:END:
Me: My rye starter smells of nail polish.

ChatGPT: Feed it at a ratio of 1:1:1.

,* not a heading
,Note: this line looks like a turn
Keep it near 26 degrees.
"""


def test_an_imported_session_is_a_dialogue_however_few_its_turns():
    parsed, chunks = parse_note(IMPORTED.encode(), "rye.org", ParseOptions(frozenset({"private"}), 2000, 200))
    turns = chunks[1][0].dialogue
    assert [t.speaker for t in turns] == ["Me", "ChatGPT"]
    # The importer's escapes are gone: the lone comma is a blank line again.
    assert turns[1].text.endswith(":1:1.\n\n* not a heading\nNote: this line looks like a turn\nKeep it near 26 degrees.")
    assert turns[0].when == "2024-03-05" and IMPORTED.split("\n")[turns[1].start_line - 1].startswith("ChatGPT:")
    # The same two turns in a note of one's own are not enough to call it a dialogue.
    body = IMPORTED.split(":END:\n")[-1]
    assert dialogue.read_turns(body) == [] and len(dialogue.read_turns(body, known=True)) == 2



def test_speakers_named_in_any_script_are_turns():
    # The importer writes a speaker's name in any script (--me 太郎, VTT <v 田中>); each
    # must read back as that speaker's turn, not as the previous speaker's text.
    body = "太郎: ゼブラフィッシュのクィントゥスは元気?\nChatGPT: はい、元気です。\nАна: А ты?\nChatGPT: Хорошо.\n"
    turns = dialogue.read_turns(body)
    assert [t.speaker for t in turns] == ["太郎", "ChatGPT", "Ана", "ChatGPT"]
