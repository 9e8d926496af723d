"""``arcology-oracle import`` as a real subprocess writing real org files: idempotent,
updates what changed, never touches what the user edited, all or nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from arcology_oracle.importers.render import content_hash
from tests.runners import run_cli, start_daemon, wait_indexed

FIXTURES = Path(__file__).parent / "fixtures"
ENV = {"TZ": "UTC"}


async def run_import(roam: Path, *args: str) -> tuple[int, str, str]:
    return await run_cli("import", *args, "--roam-dir", str(roam), env=ENV)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() or p.is_symlink()}


async def test_importing_twice_changes_nothing_then_an_update_rewrites_one_file(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    export = tmp_path / "conversations.json"
    shutil.copy(FIXTURES / "chatgpt.json", export)
    code, out, err = await run_import(roam, "chatgpt", str(export))
    assert code == 0, err
    assert "3 conversations (1 empty, left out)" in out and "2 added, 0 updated, 0 unchanged, 0 skipped" in out
    first = snapshot(roam)
    assert sorted(first) == ["imported/chatgpt/2024-03-05-rye-starter-32ed2cdc.org", "imported/chatgpt/2024-03-06-bike-gears-5b6579f8.org"]
    assert first["imported/chatgpt/2024-03-05-rye-starter-32ed2cdc.org"] == (FIXTURES / "chatgpt-rye-starter.org").read_bytes()

    code, out, err = await run_import(roam, "chatgpt", str(export))
    assert code == 0, err
    assert "0 added, 0 updated, 2 unchanged, 0 skipped" in out
    assert snapshot(roam) == first

    # A later export: the bike conversation goes on and was renamed.
    data = json.loads(export.read_text())
    bikes = data[1]
    bikes["title"] = "Bike gearing"
    bikes["mapping"]["a"]["children"] = ["q2"]
    bikes["mapping"]["q2"] = {"id": "q2", "parent": "a", "children": [], "message": {
        "id": "q2", "author": {"role": "user"}, "create_time": bikes["create_time"] + 120,
        "content": {"content_type": "text", "parts": ["And for the front?"]}}}  # fmt: skip
    bikes["current_node"] = "q2"
    export.write_text(json.dumps(data))
    code, out, err = await run_import(roam, "chatgpt", str(export))
    assert code == 0, err
    assert "0 added, 1 updated, 1 unchanged, 0 skipped" in out
    after = snapshot(roam)
    assert sorted(after) == sorted(first)  # the same file, found by its ID, not a new one by the new title
    bike_text = after["imported/chatgpt/2024-03-06-bike-gears-5b6579f8.org"].decode()
    assert "#+title: Bike gearing" in bike_text and bike_text.endswith("Me: And for the front?\n")
    old_ids = [l for l in first["imported/chatgpt/2024-03-06-bike-gears-5b6579f8.org"].decode().splitlines() if l.startswith(":ID:")]
    assert [l for l in bike_text.splitlines() if l.startswith(":ID:")] == old_ids


async def test_a_file_edited_since_its_import_is_skipped_with_a_warning(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    code, _, err = await run_import(roam, "claude", str(FIXTURES / "claude.json"), "--into", "chats")
    assert code == 0, err
    edited = roam / "chats" / "2024-06-01-tomato-blight-c5a0e331.org"
    mine = edited.read_text() + "\nMy own note: the blight was early this year.\n"
    edited.write_text(mine)
    code, out, err = await run_import(roam, "claude", str(FIXTURES / "claude.json"), "--into", "chats", "--tag", "garden")
    assert code == 0, err
    assert "0 added, 1 updated, 0 unchanged, 1 skipped" in out
    assert "skipped: chats/2024-06-01-tomato-blight-c5a0e331.org: edited since it was imported" in err
    assert edited.read_text() == mine
    assert "#+filetags: :garden:" in (roam / "chats" / "2024-06-02-untitled-conversation-c74f763a.org").read_text()


async def test_a_malformed_export_exits_2_naming_the_place_and_writes_nothing(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    good = (FIXTURES / "chatgpt.json").read_text()
    export = tmp_path / "conversations.json"
    # Two good conversations, then the file breaks off inside the third.
    export.write_text(good[: good.rindex('"title": "Empty"') + 12])
    code, out, err = await run_import(roam, "chatgpt", str(export))
    assert code == 2
    assert f"{export}: after conversation 2, near byte" in err and "invalid JSON" in err and "nothing was imported" in err
    assert snapshot(roam) == {} and list(roam.iterdir()) == []  # no file, no staging directory left

    bad = tmp_path / "standup.txt"
    bad.write_text("[09:00] Ada: hi\n[9:61] Bo: a minute too many\n")
    code, _, err = await run_import(roam, "transcript", str(bad))
    assert code == 2 and f"{bad}: line 2: bad date or time" in err
    assert list(roam.iterdir()) == []


async def test_each_file_format_imports_with_its_date(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    for fmt, name, *extra in [
        ("transcript", "standup-2024-03-05.txt"),
        ("vtt", "kiln-review.vtt", "--date", "2024-03-07 14:00"),
        ("srt", "kiln-review.srt", "--date", "2024-03-07"),
        ("markdown", "trip-planning.md"),
    ]:
        code, out, err = await run_import(roam, fmt, str(FIXTURES / name), *extra)
        assert code == 0 and "1 added" in out, err
    files = snapshot(roam)
    heads = {name: [l for l in text.decode().splitlines() if l.startswith("* ")] for name, text in files.items()}
    by_format = {text.decode().split(":IMPORTED_FROM: ")[1].split("\n")[0]: heads[name] for name, text in files.items()}
    assert by_format == {
        "transcript": ["* [2024-03-05 Tue 09:58] standup-2024-03-05", "* [2024-03-05 Tue 10:45] standup-2024-03-05",
                       "* [2024-03-05 Tue 23:59] standup-2024-03-05"],
        "vtt": ["* [2024-03-07 Thu 14:00] kiln-review"],
        "srt": ["* [2024-03-07 Thu] kiln-review"],  # a day without a time of day
        "markdown": ["* [2024-08-12 Mon 18:20] Trip planning"],
    }  # fmt: skip


async def test_imported_private_chats_never_reach_the_daemons_index(tmp_path, roam_dir, fake_ollama):
    await run_import(roam_dir, "chatgpt", str(FIXTURES / "chatgpt.json"), "--tag", "private")
    code, _, err = await run_import(roam_dir, "claude", str(FIXTURES / "claude.json"))
    assert code == 0, err
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        _, tagged = await daemon.get_json("/search", q="nail polish starter")
        _, plain = await daemon.get_json("/search", q="brown spots lower leaves")
    finally:
        daemon.stop()
    assert not [r for r in tagged["results"] if r["file"].startswith("imported/")]
    assert [r["file"] for r in plain["results"]][0] == "imported/claude/2024-06-01-tomato-blight-c5a0e331.org"


async def test_two_files_of_one_name_are_two_conversations_and_each_updates_its_own(tmp_path):
    """d1/standup.txt, then another meeting's d2/standup.txt: the first is not replaced;
    each, grown, updates its own file again."""
    roam = tmp_path / "roam"
    roam.mkdir()
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    for d, text in ((d1, "[09:00] Ana: first meeting secret plan\n[09:05] Bo: ok\n"), (d2, "[10:00] Cy: another meeting\n")):
        d.mkdir()
        (d / "standup.txt").write_text(text)
    code, out, err = await run_import(roam, "transcript", str(d1 / "standup.txt"), "--date", "2024-03-05")
    assert code == 0 and "1 added" in out, err
    first = snapshot(roam)
    code, out, err = await run_import(roam, "transcript", str(d2 / "standup.txt"), "--date", "2024-04-09")
    assert code == 0 and "1 added, 0 updated" in out, err
    assert "kept apart from imported/transcripts/2024-03-05-standup-99946f46.org" in out
    both = snapshot(roam)
    assert {k: v for k, v in both.items() if k in first} == first and len(both) == 2
    [second] = set(both) - set(first)
    assert "\n* [2024-04-09 Tue 10:00] standup\n" in both[second].decode()
    assert both[second].decode().endswith(":END:\nCy: another meeting\n")
    for d, date in ((d1, "2024-03-05"), (d2, "2024-04-09")):  # again: nothing changes
        code, out, err = await run_import(roam, "transcript", str(d / "standup.txt"), "--date", date)
        assert code == 0 and "1 unchanged" in out, err
    assert snapshot(roam) == both
    # Each meeting's transcript grows: each updates its own file, in place.
    for d, date in ((d1, "2024-03-05"), (d2, "2024-04-09")):
        (d / "standup.txt").write_text((d / "standup.txt").read_text() + "[11:00] Di: one more thing\n")
        code, out, err = await run_import(roam, "transcript", str(d / "standup.txt"), "--date", date)
        assert code == 0 and "0 added, 1 updated" in out, err
    after = snapshot(roam)
    assert sorted(after) == sorted(both)
    unhashed = {k: re.sub(rb":IMPORT_HASH: .*\n", b"", v) for k, v in both.items()}
    assert all(re.sub(rb":IMPORT_HASH: .*\n", b"", after[k]).startswith(unhashed[k]) for k in after)
    assert all(after[k].endswith(b"Di: one more thing\n") for k in after)
    assert b"first meeting secret plan" in after["imported/transcripts/2024-03-05-standup-99946f46.org"]


async def test_a_markdown_chat_of_a_name_imported_before_is_kept_apart(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    chat = tmp_path / "chat.md"
    chat.write_text("**User:** how do I prune roses?\n\n**Assistant:** In late winter.\n")
    code, out, err = await run_import(roam, "markdown", str(chat), "--date", "2024-03-05")
    assert code == 0 and "1 added" in out, err
    first = snapshot(roam)
    chat.write_text("**User:** which bike for commuting?\n\n**Assistant:** A hybrid.\n")
    code, out, err = await run_import(roam, "markdown", str(chat), "--date", "2024-03-05")
    assert code == 0 and "1 added, 0 updated" in out, err
    both = snapshot(roam)
    assert {k: v for k, v in both.items() if k in first} == first and len(both) == 2


async def test_a_reimport_without_tag_private_keeps_the_file_private(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    export = tmp_path / "conversations.json"
    shutil.copy(FIXTURES / "claude.json", export)
    code, _, err = await run_import(roam, "claude", str(export), "--tag", "private")
    assert code == 0, err
    data = json.loads(export.read_text())
    data[0]["name"] = "Tomato blight, again"
    export.write_text(json.dumps(data))
    code, out, err = await run_import(roam, "claude", str(export))
    assert code == 0 and "1 updated, 1 unchanged" in out, err
    text = (roam / "imported/claude/2024-06-01-tomato-blight-c5a0e331.org").read_text()
    assert "#+title: Tomato blight, again\n#+filetags: :private:\n" in text


async def test_a_chat_moved_to_an_excluded_folder_is_not_imported_again(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    env = {**ENV, "ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "attic/**"}
    args = ("import", "claude", str(FIXTURES / "claude.json"), "--roam-dir", str(roam))
    code, _, err = await run_cli(*args, env=env)
    assert code == 0, err
    (roam / "attic").mkdir()
    name = "2024-06-01-tomato-blight-c5a0e331.org"
    shutil.move(roam / "imported/claude" / name, roam / "attic" / name)
    before = snapshot(roam)
    code, out, err = await run_cli(*args, "--tag", "garden", env=env)
    assert code == 0 and "0 added, 1 updated, 0 unchanged, 1 skipped" in out, err
    assert f"skipped: attic/{name}: it is in a place the index leaves out" in err
    after = snapshot(roam)
    assert sorted(after) == sorted(before) and after[f"attic/{name}"] == before[f"attic/{name}"]


async def test_a_session_gap_that_is_not_a_number_of_minutes_is_a_clear_error(tmp_path):
    roam = tmp_path / "roam"
    roam.mkdir()
    for gap in ("nan", "inf", "1e308", "0", "--session-gap=-inf"):
        flag = (gap,) if gap.startswith("--") else ("--session-gap", gap)
        code, _, err = await run_import(roam, "claude", str(FIXTURES / "claude.json"), *flag)
        assert code == 2 and "--session-gap" in err and "Traceback" not in err, err
    assert list(roam.iterdir()) == []


async def test_a_transcript_imported_before_its_speakers_were_renamed_is_not_imported_again(tmp_path):
    # Speakers named "Local Variables" and "Clock" are written "Local-Variables" and
    # "Clock." since round fourteen; a file imported before holds the old names, and the
    # same transcript imported again was taken for another conversation: a second copy.
    roam = tmp_path / "roam"
    roam.mkdir()
    log = tmp_path / "chat.txt"
    log.write_text("[10:00] Local Variables: z\nmode :fundamental z\n[10:01] clock: [2024-03-05 Tue 10:00]\n")
    code, out, err = await run_import(roam, "transcript", str(log), "--date", "2024-03-05")
    assert code == 0 and "1 added" in out, err
    [(rel, new)] = snapshot(roam).items()
    path = roam / rel
    old = new.decode().replace("\nLocal-Variables: z", "\nLocal Variables: z").replace("\nclock.: ", "\nclock: ")
    assert old != new.decode()

    path.write_text(content_hash_line(old))  # as the importer wrote it before: still as imported
    code, out, err = await run_import(roam, "transcript", str(log), "--date", "2024-03-05")
    assert code == 0 and "0 added, 1 updated" in out, (out, err)  # the importer's own file, made safe
    assert snapshot(roam) == {rel: new}

    edited = content_hash_line(old) + "my own words\n"  # the user's edit: the file is theirs now
    path.write_text(edited)
    code, out, err = await run_import(roam, "transcript", str(log), "--date", "2024-03-05")
    assert code == 0 and "0 added, 0 updated, 0 unchanged, 1 skipped" in out and "edited since" in err, (out, err)
    assert snapshot(roam) == {rel: edited.encode()}


def content_hash_line(text: str) -> str:
    """``text`` with its ``:IMPORT_HASH:`` made again (as an import writes it)."""
    return re.sub(r"(?m)^:IMPORT_HASH: .*$", f":IMPORT_HASH: {content_hash(text)}", text, count=1)


async def test_a_transcript_whose_name_is_not_utf8_is_imported_as_utf8(tmp_path):
    # A log named on an older system in Latin-1 ("café.txt" as b"caf\xe9.txt"): its name,
    # the conversation's key and title, made the import crash with a traceback.
    roam, logs = tmp_path / "roam", tmp_path / "logs"
    roam.mkdir()
    logs.mkdir()
    log = logs / os.fsdecode(b"caf\xe9 standup.txt")
    log.write_text("[10:00] Ana: hello\n")
    utf8_locale = {**ENV, "PYTHONIOENCODING": "utf-8:strict"}  # standard output as in a UTF-8 locale
    for path, done in ((logs, "1 added"), (log, "1 unchanged")):  # a folder of logs, then the file alone
        code, out, err = await run_cli("import", "transcript", str(path), "--date", "2024-03-05", "--roam-dir",
                                       str(roam), env=utf8_locale)  # fmt: skip
        assert code == 0 and done in out, (out, err)
    assert "caf\\xe9 standup.txt: 1 conversation" in out, out
    [(rel, data)] = snapshot(roam).items()
    assert "\n* [2024-03-05 Tue 10:00] caf\ufffd standup\n" in data.decode("utf-8"), data


async def test_a_log_dated_by_its_files_time_is_the_same_conversation_once_copied(tmp_path):
    # A log without a date in its name nor --date is dated by its file's modification
    # time: the same log copied (cp without -p) or grown another day was dated anew, taken
    # for another conversation of that name, and imported a second time.
    roam, logs = tmp_path / "roam", tmp_path / "logs"
    roam.mkdir()
    logs.mkdir()
    log = logs / "meeting.txt"
    log.write_text("[10:00] Ana: hello\n[10:05] Bo: hi\n")
    os.utime(log, (1709640000, 1709640000))  # 2024-03-05 12:00 UTC
    code, out, err = await run_import(roam, "transcript", str(logs))
    assert code == 0 and "1 added" in out, err
    first = snapshot(roam)
    [text] = [data.decode() for data in first.values()]
    assert "\n* [2024-03-05 Tue 10:00] meeting\n" in text
    os.utime(log, (1793534400, 1793534400))  # copied on 2026-11-01
    code, out, err = await run_import(roam, "transcript", str(logs))
    assert code == 0 and "0 added, 0 updated, 1 unchanged" in out, (out, err)
    assert snapshot(roam) == first
    with log.open("a") as fh:
        fh.write("[10:09] Ana: one more thing\n")
    os.utime(log, (1793620800, 1793620800))  # grown the next day
    code, out, err = await run_import(roam, "transcript", str(logs))
    assert code == 0 and "0 added, 1 updated" in out, (out, err)
    [(rel, data)] = snapshot(roam).items()
    assert rel in first and data.decode().endswith("Bo: hi\n\nAna: one more thing\n")
    assert "\n* [2024-03-05 Tue 10:00] meeting\n" in data.decode()
