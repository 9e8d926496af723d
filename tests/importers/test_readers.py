"""The importers read each format's fixture (invented content) into the right turns, and
the renderer writes the dialogue format of importers/render.py."""

from __future__ import annotations

import datetime
import io
import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arcology_oracle.importers import MalformedExport, read_export
from arcology_oracle.importers.chat_exports import read_chatgpt, read_claude
from arcology_oracle.importers.model import Conversation, Message
from arcology_oracle.importers.render import SPEAKER_LINE, escape_line, render, speaker_name, stable_id, turn_lines

FIXTURES = Path(__file__).parent / "fixtures"
UTC = datetime.UTC


def turns(conversation):
    return [(m.speaker, m.text) for m in conversation.messages]


def test_chatgpt_follows_the_shown_branch_and_keeps_only_what_was_said():
    rye, bikes, empty = read_export("chatgpt", FIXTURES / "chatgpt.json")
    assert rye.key == "c0ffee00-0000-4000-8000-000000000001" and rye.title == "Rye starter"
    # The edited prompt's abandoned branch, the hidden system message and the tool call
    # and its result are left out.
    assert [s for s, _ in turns(rye)] == ["Me", "ChatGPT", "Me", "ChatGPT"]
    assert turns(rye)[2] == ("Me", "How often should I feed it?")
    assert [m.key for m in rye.messages] == ["u1", "a1", "u2b", "a2b"]
    assert rye.messages[0].time == datetime.datetime(2024, 3, 5, 9, 0, tzinfo=UTC)
    assert turns(bikes) == [("Me", "Which cassette for hills?"), ("ChatGPT", "An 11-34 gives you \nlow gears.")]
    assert empty.messages == []


def test_chatgpt_without_current_node_follows_the_last_children():
    data = json.loads((FIXTURES / "chatgpt.json").read_text())
    del data[0]["current_node"]
    rye = next(read_chatgpt(io.BytesIO(json.dumps(data).encode()), "x.json", me="Ana"))
    assert [m.key for m in rye.messages] == ["u1", "a1", "u2b", "a2b"]
    assert rye.messages[0].speaker == "Ana"


def test_claude_reads_text_blocks_else_text():
    blight, old = read_export("claude", FIXTURES / "claude.json")
    assert turns(blight) == [
        ("Me", "Brown spots on the lower leaves, what now?"),
        ("Claude", "Remove the lower leaves.\n\nWater at the base.\n## Not a speaker"),
    ]
    assert blight.messages[1].time == datetime.datetime(2024, 6, 1, 7, 31, tzinfo=UTC)
    assert turns(old) == [("Me", "Old export, text only."), ("Claude", "Then the text field is read.")]


def test_claude_follows_the_branch_the_user_last_saw():
    root = "00000000-0000-4000-8000-000000000000"

    def msg(uuid, sender, text, parent, minute):
        return {"uuid": uuid, "sender": sender, "text": text, "parent_message_uuid": parent,
                "created_at": f"2024-06-03T08:{minute:02d}:00Z"}  # fmt: skip

    messages = [
        msg("m1", "human", "Which tomato for a balcony?", root, 0),
        msg("m2", "assistant", "A cherry tomato such as Tumbling Tom.", "m1", 1),
        msg("m3", "human", "How deep do I plant it?", "m2", 2),
        msg("m4", "assistant", "Five centimetres.", "m3", 3),
        msg("m3b", "human", "How deep do I plant the seedlings?", "m2", 5),  # the prompt, edited
        msg("m4b", "assistant", "Up to their first leaves.", "m3b", 6),
        msg("m4c", "assistant", "Bury the stem up to the first true leaves.", "m3b", 8),  # regenerated
    ]
    export = [{"uuid": "c1", "name": "Balcony", "created_at": "2024-06-03T08:00:00Z", "chat_messages": messages}]
    [talk] = read_claude(io.BytesIO(json.dumps(export).encode()), "x.json")
    assert [m.key for m in talk.messages] == ["m1", "m2", "m3b", "m4c"]  # the newest branch
    export[0]["current_leaf_message_uuid"] = "m4b"  # the user went back to the first answer
    [talk] = read_claude(io.BytesIO(json.dumps(export).encode()), "x.json")
    assert [m.key for m in talk.messages] == ["m1", "m2", "m3b", "m4b"]
    assert turns(talk)[2] == ("Me", "How deep do I plant the seedlings?")
    export[0]["current_leaf_message_uuid"] = "m4"
    [talk] = read_claude(io.BytesIO(json.dumps(export).encode()), "x.json")
    assert [m.key for m in talk.messages] == ["m1", "m2", "m3", "m4"]
    messages[0]["parent_message_uuid"] = "m2"  # parents that loop: a clear error
    with pytest.raises(MalformedExport, match="loop"):
        list(read_claude(io.BytesIO(json.dumps(export).encode()), "x.json"))


def test_transcript_continuations_and_midnight():
    (standup,) = read_export("transcript", FIXTURES / "standup-2024-03-05.txt")
    assert turns(standup)[1] == ("Bo Lindqvist", "Great. Did the temperature curve hold?\nIt dipped at 600 degrees,\n* then recovered.")
    times = [m.time for m in standup.messages]
    assert times[0] == datetime.datetime(2024, 3, 5, 9, 58)  # the day from the file name
    assert times[-1] == datetime.datetime(2024, 3, 6, 0, 4)  # after midnight: the next day


def test_a_transcript_time_a_few_minutes_back_is_on_the_same_day(tmp_path):
    # Clocks a few minutes apart (or a line edited in) are no midnight: the next day is
    # only a time more than three hours back.
    path = tmp_path / "chat-2024-03-05.txt"
    path.write_text("[14:05] Ana: lunch?\n[14:03] Me: yes\n[14:10] Ana: see you\n[01:00] Me: home now\n")
    (talk,) = read_export("transcript", path)
    assert [m.time for m in talk.messages] == [
        datetime.datetime(2024, 3, 5, 14, 5), datetime.datetime(2024, 3, 5, 14, 3),
        datetime.datetime(2024, 3, 5, 14, 10), datetime.datetime(2024, 3, 6, 1, 0),
    ]  # fmt: skip


def test_a_transcript_reply_the_next_morning_is_on_the_next_day(tmp_path):
    path = tmp_path / "chat-2024-03-05.txt"
    path.write_text("[19:30] Ana: kiln tonight?\n[19:40] Me: too tired\n[08:00] Ana: morning!\n")
    (talk,) = read_export("transcript", path)
    assert talk.messages[-1].time == datetime.datetime(2024, 3, 6, 8, 0)


def test_vtt_voices_and_srt_names_merge_consecutive_cues():
    start = datetime.datetime(2024, 3, 7, 14, 0)
    (vtt,) = read_export("vtt", FIXTURES / "kiln-review.vtt", date=start)
    (srt,) = read_export("srt", FIXTURES / "kiln-review.srt", date=start)
    assert turns(vtt) == [
        ("Ada Quill", "We lost two pots in the last firing. Both cracked at the foot."),
        ("Bo Lindqvist", "Then we slow the cooling below 500. Agreed, starting Monday."),  # no voice: same speaker
    ]
    assert turns(srt) == [
        ("Ada Quill", "We lost two pots in the last firing. Both cracked at the foot."),
        ("Bo Lindqvist", "Then we slow the cooling below 500."),
    ]
    assert vtt.messages[1].time == start + datetime.timedelta(seconds=7)


def test_markdown_shapes_and_fences():
    (trip,) = read_export("markdown", FIXTURES / "trip-planning.md")
    assert trip.title == "Trip planning"
    assert [s for s, _ in turns(trip)] == ["User", "Assistant", "User", "Assistant"]
    assert turns(trip)[0] == ("User", "Which ferry to the islands leaves earliest?")  # the --- separator left out
    assert "## Summary" in turns(trip)[1][1] and "## User\nthis is inside a fence" in turns(trip)[1][1]
    assert turns(trip)[3] == ("Assistant", "At 21:15.")
    assert trip.time == datetime.datetime(2024, 8, 12, 18, 20)


@pytest.mark.parametrize(
    ("fmt", "content", "where"),
    [
        ("chatgpt", b'[{"id": "a", "mapping": {}}, {"id": "b", "mapp', "after conversation 1"),
        ("chatgpt", b'[{"title": "no id", "mapping": {}}]', "conversation 1"),
        ("chatgpt", b'{"not": "a list"}', "byte 0"),
        ("claude", b'[{"uuid": "u", "chat_messages": [{"sender": "human", "text": "x", "created_at": "Tuesday"}]}]', "message 1"),
        ("transcript", b"Meeting notes\n[10:00] Ada: hi\n", "line 1"),
        ("transcript", b"[10:00] Ada: hi\n[25:00] Bo: late\n", "line 2"),
        ("srt", b"1\n00:00:01,000 --> 00:00:02,000\nAda: hi\n\n2\n00:00:0x,000 --> 00:00:02,000\nBo: x\n", "line 5"),
        ("vtt", b"not a webvtt file\n", ""),
        ("markdown", b"# Notes\n\nJust prose, nobody speaks.\n", ""),
        # Wrong JSON types where ids go: a clear error, not a TypeError.
        ("chatgpt", b'[{"id": "x", "mapping": {"a": {"message": null, "parent": ["p"], "children": []}}}]', "node a"),
        ("chatgpt", b'[{"id": "x", "mapping": {"a": {"message": null, "parent": null, "children": 5}}}]', "node a"),
        ("chatgpt", b'[{"id": "x", "mapping": {"a": {"parent": null, "children": [["b"]]}}}]', "node a"),
        ("claude", b'[{"uuid": "u", "chat_messages": [{"uuid": ["m1"], "sender": "human", "text": "hi", '
                   b'"parent_message_uuid": "root"}]}]', "message 1"),  # fmt: skip
        # A \u escape of a lone surrogate: yajl makes bytes of it that are not UTF-8.
        ("chatgpt", b'[{"id": "x", "title": "t", "mapping": {"a": {"message": {"content": {"parts": ["\\udcff"]}}}}}]',
         "after conversation 0"),  # fmt: skip
    ],
)
def test_malformed_files_name_where(tmp_path, fmt, content, where):
    path = tmp_path / "bad-input"
    path.write_bytes(content)
    with pytest.raises(MalformedExport) as caught:
        list(read_export(fmt, path))
    assert caught.value.path == str(path) and where in caught.value.where


def test_messages_sharing_an_id_still_give_one_heading_id_each():
    """An export that repeats a message id: every heading gets its own :ID:, and the
    first message of the id keeps the one it had."""
    day = datetime.datetime(2024, 3, 5, 9, tzinfo=UTC)
    hours = [Message("same", "Me", f"message {n}", day + datetime.timedelta(hours=n)) for n in range(3)]
    org = render(Conversation("chatgpt", "c", "Repeats", hours)).text
    ids = re.findall(r"^:ID: +(\S+)$", org, re.M)
    assert len(ids) == 4 and len(set(ids)) == 4  # the file's and three sessions'
    assert ids[1] == stable_id("chatgpt", "c", "same")


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC, as the golden files were rendered (a chat's times are written in
    local time: in Los Angeles the golden file's 09:00 is 01:00)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_rendered_file_is_the_documented_format(utc):
    (conversation, *_) = read_export("chatgpt", FIXTURES / "chatgpt.json")
    rendered = render(conversation, tags=["private"])
    expected = (FIXTURES / "chatgpt-rye-starter.org").read_text().replace("#+title: Rye starter\n", "#+title: Rye starter\n#+filetags: :private:\n")
    # The golden file was rendered without tags: only the filetags line and the hash differ.
    strip = lambda t: "\n".join(l for l in t.splitlines() if not l.startswith(":IMPORT_HASH:"))  # noqa: E731
    assert strip(rendered.text) == strip(expected)
    assert rendered.filename == "2024-03-05-rye-starter-32ed2cdc.org" and rendered.sessions == 2 and rendered.turns == 4


def test_escaped_lines_never_read_as_structure_or_turns():
    text = (
        "first\n* h\n** h2\n*bold*\n#+title: x\n  #+begin_quote\n:LOGBOOK:\n  :END:\n-----\n\\begin{equation}\n"
        "Bo: hi\nDr. Ada Quill:\tyes\n[13:56] Bo: hi\n[2024-03-05 Tue]\n,x\n\n\n\n[fn:1] a footnote\n[fn:it's] another\nlast  "
    )
    lines = turn_lines("Ana", text)
    assert lines == [
        "Ana: first", ",* h", ",** h2", "*bold*", ",#+title: x", ",  #+begin_quote", ",:LOGBOOK:", ",  :END:", ",-----",
        ",\\begin{equation}", ",Bo: hi", ",Dr. Ada Quill:\tyes", ",[13:56] Bo: hi", ",[2024-03-05 Tue]", ",,x", ",", "[\u200bfn:1] a footnote", "[\u200bfn:it's] another",
        "last",
    ]  # fmt: skip
    assert [SPEAKER_LINE.match(line) is not None for line in lines] == [True] + [False] * (len(lines) - 1)
    assert escape_line("plain text, with a colon: later") == "plain text, with a colon: later"
    assert escape_line("- a list item: fine") == "- a list item: fine"
    assert speaker_name("**Dr. Ada: Quill** (guest)") == "Dr. Ada Quill guest" and speaker_name("") == "Unknown"
    assert speaker_name("2 Ana Maria de la Cruz") == "Ana Maria de la"  # a letter first, four words


def read_turns(org: str) -> list[tuple[str, str]]:
    """The dialogue reader that the format's docstring describes, for one session's body."""
    out: list[tuple[str, list[str]]] = []
    for line in org.split("\n"):
        m = SPEAKER_LINE.match(line)
        if m:
            out.append((m[1], [line[m.end() :]]))
        elif out:
            out[-1][1].append(line[1:] if line.startswith(",") else line)
    # The zero-width spaces that make Local Variables, -*-, << and [fn:x: inert are not the text's.
    return [(name, "\n".join(lines).strip("\n").replace("\u200b", "")) for name, lines in out]


def normalized(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    return "\n".join(kept).strip("\n").lstrip(" \t")  # the first line follows "Name: "


@given(st.lists(st.text(alphabet="ab1 :*#+,-\\{}\n\tBEGINendPROPERTIES<[]f", max_size=80), min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_any_text_round_trips_and_never_makes_org_structure(texts):
    texts = [t for t in texts if t.strip()]
    assume(texts)
    per_turn = [turn_lines(f"S{i}", t) for i, t in enumerate(texts)]
    assert all(line.strip() for lines in per_turn for line in lines), "a blank line would split a turn's paragraph"
    body = "\n\n".join("\n".join(lines) for lines in per_turn)
    assert read_turns(body) == [(f"S{i}", normalized(t)) for i, t in enumerate(texts)]
    for line in body.split("\n"):
        assert not re.match(r"^\*+(?:[ \t]|$)|^[ \t]*#\+|^[ \t]*:[\w-]+:[ \t]*$|^[ \t]*-{5,}[ \t]*$|^\[fn:[^]\[:\s]+\]", line), line
        assert "<<" not in line and not re.search(r"\[fn:[^]\[:\s]+:", line), line


def test_the_daemons_reader_sees_the_sessions_with_their_ids_and_dates():
    from arcology_oracle.notes.reader import read_org_bytes

    golden = (FIXTURES / "chatgpt-rye-starter.org").read_bytes()
    parsed = read_org_bytes(golden, "imported/chatgpt/rye.org")
    assert parsed.problems == [] and parsed.title == "Rye starter" and parsed.file_id == "32ed2cdc-b37b-5223-be7e-a73c8d3ca16e"
    sessions = [h for h in parsed.headings if h.level == 1]
    assert [(h.own_id, h.date, h.date_source) for h in sessions] == [
        ("e8e0d94b-b770-542f-b5f5-754dc04593b6", "2024-03-05", "timestamp"),
        ("673feff0-3a86-54e2-b01f-07d0a83294a0", "2024-03-05", "timestamp"),
    ]  # fmt: skip
    assert ",* not a heading\n,#+filetags: :secret:" in sessions[0].text
    private = render(next(read_export("chatgpt", FIXTURES / "chatgpt.json")), tags=["private"]).text.encode()
    assert [h for h in read_org_bytes(private, "x.org").headings if h.level > 0] == []
