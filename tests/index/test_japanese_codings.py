"""Private tags in notes saved in Shift-JIS or EUC-JP, as Emacs reads them.

The reader decodes notes as UTF-8; in Shift-JIS the second byte of a character may be an
ASCII one (表 is 95 5C, a backslash), so ``:private:表:`` held no tag for the reader
and the heading was indexed, while Org (in the coding the note's cookie names) reads the
tags ``private`` and ``表``. A configured tag in Japanese (``:秘密:``) read as U+FFFD and
other letters. Real files, the real index and database, and batch Emacs's Org for what
is private."""

from __future__ import annotations

import pytest

from tests.emacs_batch import emacs_env
from tests.index.test_private_files import bytes_holding, rows_holding
from tests.org_reading import OrgProcess
from tests.runners import reconcile_once

PRIVATE_TAGS = ["private", "秘密", "非公開"]
# name -> the note (its coding's cookie, when it has one, first); each has a secret word
# and a public one.
NOTES = {
    "ascii-tag-then-kanji": "{cookie}#+title: 予定\n* 銀行 :private:表:\njpsecretone 4711\n* 公開\njppublicone\n",
    "kanji-tag": "{cookie}#+title: 予定\n* 銀行 :秘密:\njpsecrettwo 4711\n* 公開\njppublictwo\n",
    "kanji-tags": "{cookie}#+title: 予定\n* 日記 :日記:非公開:\njpsecretthree\n** 下\njpsecretfour\n* 公開\njppublicthree\n",
    "filetags": "{cookie}#+title: 予定\n#+filetags: :秘密:\n* 銀行\njpsecretfive\n",
}
SECRETS = ("jpsecretone", "jpsecrettwo", "jpsecretthree", "jpsecretfour", "jpsecretfive")
PUBLIC = ("jppublicone", "jppublictwo", "jppublicthree")


@pytest.mark.parametrize("coding", ["shift_jis", "euc-jp"])
@pytest.mark.parametrize("cookie", [True, False], ids=["cookie", "no-cookie"])
async def test_a_private_tag_in_a_shift_jis_or_euc_jp_note_keeps_its_heading_out(tmp_path, make_settings, coding, cookie):
    roam = tmp_path / "notes"
    roam.mkdir()
    first_line = f"# -*- coding: {coding} -*-\n" if cookie else ""
    for name, text in NOTES.items():
        (roam / f"{name}.org").write_bytes(text.format(cookie=first_line).encode(coding))
    if cookie:  # Org, in the coding the cookie names, finds the same headings private
        with OrgProcess(emacs_env(tmp_path)) as org:
            for name in NOTES:
                read = org.read(roam / f"{name}.org")
                assert read.coding.startswith(("japanese-shift-jis", "euc-jp", "japanese-iso-8bit")), read.coding
                assert read.private_lines(PRIVATE_TAGS) == {
                    "ascii-tag-then-kanji": {3}, "kanji-tag": {3}, "kanji-tags": {3, 5}, "filetags": {4},
                }[name]  # fmt: skip
    settings = make_settings(roam_dir=roam, private_tags=PRIVATE_TAGS)
    await reconcile_once(settings)
    assert rows_holding(settings.db_path, SECRETS) == []
    assert bytes_holding(settings.db_path, SECRETS) == []
    assert {word for _, word in rows_holding(settings.db_path, PUBLIC)} == set(PUBLIC)


@pytest.mark.parametrize("coding", ["shift_jis", "euc-jp"])
@pytest.mark.parametrize("cookie", [True, False], ids=["cookie", "no-cookie"])
async def test_a_private_tag_in_a_shift_jis_or_euc_jp_setup_file_keeps_its_notes_out(
    tmp_path, make_settings, coding, cookie
):
    # Setup files were read as UTF-8 only: their #+filetags: :秘密: read as U+FFFD and
    # other letters, and the notes naming them were indexed whole.
    roam = tmp_path / "notes"
    roam.mkdir()
    first_line = f"# -*- coding: {coding} -*-\n" if cookie else ""
    (roam / "secret.setup").write_bytes(f"{first_line}#+STARTUP: overview\n#+filetags: :秘密:\n".encode(coding))
    # (Read as UTF-8, a tag of Japanese letters only is all U+FFFD, which may be any
    # private tag: its notes are private, whatever the coding's texts say.)
    (roam / "plain.setup").write_bytes(f"{first_line}#+filetags: :日記memo:\n".encode(coding))
    (roam / "journal.org").write_text("#+SETUPFILE: secret.setup\n#+title: 日記\n* 銀行\njpsecretsetup 4711\n")
    (roam / "garden.org").write_text("#+SETUPFILE: plain.setup\n#+title: 庭\n* 花\njppublicsetup\n")
    if cookie:  # Org reads the setup file in the coding its cookie names: the note is private
        with OrgProcess(emacs_env(tmp_path)) as org:
            assert org.read(roam / "journal.org").private_lines(PRIVATE_TAGS) == {3}
            assert org.read(roam / "garden.org").private_lines(PRIVATE_TAGS) == set()
    settings = make_settings(roam_dir=roam, private_tags=PRIVATE_TAGS)
    await reconcile_once(settings)
    assert rows_holding(settings.db_path, ("jpsecretsetup",)) == []
    assert bytes_holding(settings.db_path, ("jpsecretsetup",)) == []
    assert {word for _, word in rows_holding(settings.db_path, ("jppublicsetup",))} == {"jppublicsetup"}


async def test_a_private_tag_in_an_iso_2022_jp_note_keeps_its_heading_out(tmp_path, make_settings):
    # ISO-2022-JP is 7-bit: its bytes are UTF-8, so no other coding's text was judged,
    # while Emacs reads the Japanese from its escape sequences (no cookie needed) and
    # Org finds :秘密: and :非公開: there. Read as UTF-8 they hold no tag: indexed.
    roam = tmp_path / "notes"
    roam.mkdir()
    for name, text in NOTES.items():
        (roam / f"{name}.org").write_bytes(text.format(cookie="").encode("iso-2022-jp"))
    (roam / "secret.setup").write_bytes("#+STARTUP: overview\n#+filetags: :非公開:\n".encode("iso-2022-jp"))
    (roam / "journal.org").write_text("#+SETUPFILE: secret.setup\n#+title: 日記\n* 銀行\njpsecretsetup 4711\n")
    with OrgProcess(emacs_env(tmp_path)) as org:
        for name in NOTES:
            read = org.read(roam / f"{name}.org")
            assert read.coding.startswith("iso-2022"), read.coding
            assert read.private_lines(PRIVATE_TAGS) == {
                "ascii-tag-then-kanji": {2}, "kanji-tag": {2}, "kanji-tags": {2, 4}, "filetags": {3},
            }[name]  # fmt: skip
        assert org.read(roam / "journal.org").private_lines(PRIVATE_TAGS) == {3}
    settings = make_settings(roam_dir=roam, private_tags=PRIVATE_TAGS)
    await reconcile_once(settings)
    secrets = (*SECRETS, "jpsecretsetup")
    assert rows_holding(settings.db_path, secrets) == []
    assert bytes_holding(settings.db_path, secrets) == []
    assert {word for _, word in rows_holding(settings.db_path, PUBLIC)} == set(PUBLIC)
