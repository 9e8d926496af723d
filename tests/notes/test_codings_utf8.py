"""A note in UTF-8 is read once, whatever characters it holds: only a note whose bytes are
not UTF-8 is read again in each coding Emacs may guess (notes/codings.py)."""

from __future__ import annotations

import pytest

from arcology_oracle.notes import reader


@pytest.mark.parametrize("odd", ["\ufffd", "\x00"], ids=["replacement-character", "nul"])
def test_a_utf8_note_holding_a_replacement_character_or_a_nul_is_read_once(monkeypatch, odd):
    # U+FFFD in the reader's text meant "not UTF-8" to the reader, and such a note was
    # parsed 8 times (each guess of GUESSES), ~9x the time, though Emacs reads it as UTF-8.
    reads = []
    real = reader._read_lines
    monkeypatch.setattr(reader, "_read_lines", lambda *a, **kw: reads.append(1) or real(*a, **kw))
    data = f"#+title: Odd\n* Pasted {odd} here\nsome words\n".encode()
    parsed = reader.read_org_bytes(data, "odd.org", frozenset({"private"}))
    assert [h.title for h in parsed.headings if h.level] == [f"Pasted \ufffd here"]
    assert len(reads) == 1


def test_a_note_not_utf8_is_still_read_in_every_guess(monkeypatch):
    reads = []
    real = reader._read_lines
    monkeypatch.setattr(reader, "_read_lines", lambda *a, **kw: reads.append(1) or real(*a, **kw))
    reader.read_org_bytes("#+title: 予定\n* 銀行 :秘密:\nsecret\n".encode("shift_jis"), "jp.org", frozenset({"秘密"}))
    assert len(reads) > 1
