"""What ``/memorize`` and ``/converse`` put into the user's org files cannot change how
Emacs reads them, through the real daemon (with the fake Ollama) and real files read by
batch Emacs: no file-local variables, ``-*-`` cookie, page break, NUL, target or ``#+``
keyword in captured text or in a model's answer takes effect; text holding a control
character is a 400 that writes nothing."""

from __future__ import annotations

import pytest

from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of
from tests.notes.test_org_escape import HOSTILE_ANSWER, USER, USER_BLOCK, USER_READING, emacs_reading


async def test_memorize_refuses_control_characters_and_writes_nothing(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_text(USER_BLOCK)
    before = daily.read_bytes()
    for field, char in (("text", "\f"), ("text", "\x00"), ("title", "\x00"), ("source", "\f"), ("text", "\x1b"),
                        ("title", "\f"), ("source", "\x00"), ("text", "\x0b")):  # fmt: skip
        body = {"text": "before\nafter", field: f"page{char}break"}
        status, answer = await post(daemon, "/memorize", body)
        assert status == 400 and f"{field} holds a" in answer["error"], (field, char, answer)
        assert daily.read_bytes() == before, (field, char)
    # Tab and every line ending are text; the user's Local Variables block still holds.
    status, answer = await post(daemon, "/memorize", {"text": "a\tb\r\nc\rd", "title": "Tabs", "source": "x\ty"})
    assert status == 200, answer
    assert daily.read_bytes().startswith(before) and daily.read_bytes().endswith(b":END:\na\tb\nc\nd\n")
    assert emacs_reading(daily) == [{**USER_READING, "fill_column": 42}]


async def test_memorize_sets_no_local_variable_and_takes_no_link(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_text(USER)
    before = daily.read_bytes()
    for body in (
        {"text": "Local Variables:\nmode: text\ncoding: latin-1\nEnd:", "title": "Call notes"},
        {"text": "#   LOCAL variables: #\n# fill-column: 7 #\n# End: #", "title": "More notes"},
        {"text": "see <<Plans>> and the <<<quince>>>", "title": "About <<Plans>>"},
    ):
        status, answer = await post(daemon, "/memorize", body)
        assert status == 200, answer
    after = daily.read_bytes()
    assert after.startswith(before)
    assert emacs_reading(daily) == [USER_READING]
    for words in (b"Variables:\nmode: text\ncoding: latin-1\nEnd:", b"Plans>> and the <", b"quince>>>"):
        assert words in after, words  # the text is kept, only zero-width spaces added


async def test_memorize_title_on_the_first_line_of_an_empty_daily_is_no_cookie(daemon, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_bytes(b"")
    status, answer = await post(daemon, "/memorize", {"text": "café au lait", "title": "Plan -*- coding: latin-1 -*-"})
    assert status == 200, answer
    reading = emacs_reading(daily)[0]
    assert (reading["mode"], reading["utf8"]) == ("org-mode", True), reading
    assert daily.read_bytes().startswith("* Plan -\u200b*- coding: latin-1 -\u200b*-\n:PROPERTIES:\n".encode())


async def test_converse_answer_sets_no_keyword_local_variable_or_target(daemon, roam_dir, fake_ollama):
    fake_ollama.state.chat_reply = HOSTILE_ANSWER
    conversation = "* Talk\n** What next?\n"
    status, answer = await post(daemon, "/converse", {"org": conversation})
    assert status == 200, answer
    # As arcology-oracle-converse inserts it: the conversation's last child.
    path = roam_dir / "talk.org"
    path.write_text(USER + conversation + answer["org"])
    assert emacs_reading(path) == [USER_READING]
    assert "\n,#+filetags: :private:\n,#+TODO: WAIT | FIN\n" in answer["org"]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
async def test_a_capture_never_pushes_the_users_local_variables_out_of_emacss_reach(daemon, roam_dir, eol):
    # Emacs reads a Local Variables block only in the last 3000 characters of a file,
    # whatever its line endings (a CRLF or CR file's block was not seen, and was pushed out).
    daily = daily_of(roam_dir)
    daily.write_bytes(USER_BLOCK.replace("\n", eol).encode())
    status, answer = await post(daemon, "/memorize", {"text": "a short note"})
    assert status == 200, answer
    before = daily.read_bytes()
    status, answer = await post(daemon, "/memorize", {"text": "long words " * 300})
    assert status == 409 and "Local Variables" in answer["error"], answer
    # The first capture follows the block now: the refusal says what is true of the file.
    assert not before.endswith(b"End:" + eol.encode()) and "ends with" not in answer["error"], answer
    assert "near its end" in answer["error"] and "Nothing was written" in answer["error"], answer
    assert daily.read_bytes() == before
    assert emacs_reading(daily) == [{**USER_READING, "fill_column": 42}]


async def test_a_capture_in_a_file_with_cr_line_endings_sets_no_coding(daemon, roam_dir):
    # Emacs looks for a -*- cookie on the first line, and a file with CR line endings has
    # no line feed: all of it is that line. (Found by the hypothesis property.)
    daily = daily_of(roam_dir)
    daily.write_bytes("* Café\rau lait".encode())
    status, answer = await post(daemon, "/memorize", {"text": "-*- coding: latin-1 -*-"})
    assert status == 200, answer
    [reading] = emacs_reading(daily)
    assert reading["utf8"] and reading["mode"] == "org-mode", reading
