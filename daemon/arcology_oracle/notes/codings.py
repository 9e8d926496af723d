"""The texts Emacs may read from a note's bytes when they are not the reader's UTF-8.

The reader decodes every note as UTF-8 (:func:`~.org_syntax.decode_org_bytes`), each byte
it cannot read becoming U+FFFD. Emacs reads a note in the coding its ``-*- coding: -*-``
cookie names, or in one it guesses from the bytes (its language environment decides:
Latin-1 and Windows-1252 in Western Europe, Shift-JIS or EUC-JP in Japan, GB18030, Big5
or EUC-KR elsewhere in East Asia). Org, and the user, see the tags of that text: in
Shift-JIS the second byte of a character may be an ASCII one (表 is ``95 5C``, the
``5C`` a backslash), so ``:private:表:`` read as UTF-8 holds no tags at all, and a tag in
Japanese (``:非公開:``) reads as U+FFFD and letters. ISO-2022-JP is 7-bit, so its bytes
are UTF-8, but Emacs, whatever its language environment, reads it from its escape
sequences, no cookie needed: ``:非公開:`` there reads as ``:ESC$BHs8x3+ESC(B:`` to the
reader, no tag. What is private in any of those texts is private (:func:`emacs_may_read`
gives them; the reader judges each).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .org_syntax import decode_org_bytes, split_lines
from .records import ParsedFile

_CODING_RE = re.compile(r"-\*-.*?\bcoding:\s*([\w.-]+)")
# Emacs's names of codings Python names otherwise.
_EMACS_CODINGS = {
    "iso-latin-1": "latin-1",
    "iso-latin-9": "iso-8859-15",
    "japanese-shift-jis": "shift_jis",
    "sjis": "shift_jis",
    "japanese-cp932": "cp932",
    "japanese-iso-8bit": "euc-jp",
    "euc-japan": "euc-jp",
    "chinese-iso-8bit": "gb2312",
    "cn-gb": "gb2312",
    "chinese-gbk": "gbk",
    "cn-big5": "big5",
    "chinese-big5": "big5",
    "korean-iso-8bit": "euc-kr",
}
# What Emacs may guess for bytes that are not UTF-8 (cp932 is Shift-JIS with Windows's
# characters; cp949 is EUC-KR's superset).
GUESSES = ("cp1252", "latin-1", "cp932", "euc-jp", "gb18030", "big5", "cp949")
# An ISO 2022 escape sequence (a designation: ESC, intermediate bytes, a final byte), from
# which Emacs detects a 7-bit ISO 2022 coding; the codings that read them: ISO-2022-JP with
# JIS X 0212, GB 2312, KS C 5601 (-2), JIS X 0213 (-2004), half-width kana (-ext), ISO-2022-KR.
_ISO_2022_RE = re.compile(rb"\x1b[\x20-\x2f]+[\x30-\x7e]")
ISO_2022 = ("iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_ext", "iso2022_kr")
# Names under which Emacs reads UTF-8 bytes as UTF-8 (undecided: it detects them so).
_UTF8_NAMES = frozenset({"utf-8", "utf8", "utf-8-with-signature", "prefer-utf-8", "utf-8-auto", "utf-8-emacs",
                         "utf-8-hfs", "mule-utf-8", "undecided"})  # fmt: skip
# A file's Local Variables block, where Emacs also finds a coding (find-auto-coding): in
# the last 3000 characters, between a "Local Variables:" line and an "End:" one.
_LOCAL_VARIABLES_RE = re.compile(rb"local variables:[ \t]*\r?$(.*?)(?:^[^\r\n]*\bend[ \t]*:|\Z)",
                                 re.IGNORECASE | re.MULTILINE | re.DOTALL)  # fmt: skip
_LOCAL_CODING_RE = re.compile(rb"\bcoding[ \t]*:[ \t]*([^ \t\r\n]+)", re.IGNORECASE)


def cookie_codings(data: bytes) -> list[str]:
    """The codings (as Python names them) the ``-*- coding: ... -*-`` cookie of ``data``
    names: on its first line, or its second after a ``#!`` line."""
    names = []
    first = data.find(b"\n")
    second = -1 if first < 0 else data.find(b"\n", first + 1)
    head = data if second < 0 else data[:second]  # (not a copy of the whole file)
    for line in head.split(b"\n"):
        if found := _CODING_RE.search(line.decode("latin-1")):
            names.append(_name(found.group(1)))
    return names


def emacs_coding(data: bytes) -> str | None:
    """The coding other than UTF-8 in which Emacs reads the UTF-8 bytes ``data``, when it
    does: the one named by its ``-*- coding: -*-`` cookie or its ``Local Variables``
    block, or ISO 2022 for 7-bit bytes holding its escape sequences (which Emacs detects
    with no name); None when Emacs reads them as UTF-8. UTF-8 bytes appended to such a
    file are not read as written, and after ISO 2022 make Emacs read the whole file
    otherwise (the user's text then shows as escape sequences)."""
    for name in _declared(data):
        if name.replace("_", "-") not in _UTF8_NAMES:
            return name
    if b"\x1b" in data and data.isascii() and _ISO_2022_RE.search(data):
        return "ISO 2022 (from its escape sequences)"
    return None


def _declared(data: bytes) -> list[str]:
    """The codings ``data`` names for Emacs: in its cookie, then its Local Variables."""
    names = cookie_codings(data)
    for block in _LOCAL_VARIABLES_RE.finditer(data[-3 * 3000 :]):
        names += [_name(m[1].decode("latin-1")) for m in _LOCAL_CODING_RE.finditer(block[1])]
    return names


def shown_text(data: bytes) -> tuple[str, str] | None:
    """The text of ``data``, bytes that are not UTF-8, as Emacs shows it, and its coding:
    the one its cookie or Local Variables name, else Latin-1, which Emacs (in its default
    language environment, UTF-8 or Latin) detects for such bytes. None for UTF-8 bytes,
    UTF-16/32 with a BOM, a coding Python does not know, and bytes declared UTF-8 (Emacs
    shows those as raw bytes): the reader's U+FFFD stand there. A NUL is U+FFFD, as the
    reader has it."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"\xef\xbb\xbf")):
        return None
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    coding = next((name for name in _declared(data)), "latin-1")
    if coding.replace("_", "-") in _UTF8_NAMES:
        return None
    try:
        return data.decode(coding, errors="replace").replace("\x00", "\ufffd"), coding
    except LookupError:
        return None


def shown_lines(data: bytes) -> list[str]:
    """The lines of the note ``data`` as Emacs shows them: the reader's (UTF-8), or for
    bytes that are not UTF-8 those of :func:`shown_text`, when they are as many."""
    lines = split_lines(decode_org_bytes(data))
    if "\ufffd" in "".join(lines) and (shown := shown_text(data)):
        other = split_lines(shown[0])
        if len(other) == len(lines):
            return other
    return lines


def _name(coding: str) -> str:
    """An Emacs coding name as Python names it, without its line ending part."""
    name = re.sub(r"-(unix|dos|mac)$", "", coding.lower())
    return _EMACS_CODINGS.get(name, name)


def emacs_may_read(data: bytes, *, utf8: bool | None = None) -> list[str]:
    """The texts of ``data`` as Emacs may show it when that is not the reader's: in the
    coding its cookie names; for bytes that are not UTF-8, in each of :data:`GUESSES`
    too; for 7-bit bytes holding an ISO 2022 escape sequence, in each of :data:`ISO_2022`.
    Empty for other UTF-8 bytes without such a cookie, and for UTF-16 and UTF-32 (read
    alike). Bytes the coding cannot read become U+FFFD. ``utf8``: whether ``data`` is
    UTF-8, when the caller knows (else it is decoded to tell)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return []
    names = cookie_codings(data)
    if utf8 is None:
        try:
            data.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
    if not utf8:
        names += GUESSES
    elif b"\x1b" in data and data.isascii() and _ISO_2022_RE.search(data):
        names += ISO_2022
    texts = []
    for name in dict.fromkeys(names):
        if name.replace("_", "-") in ("utf-8", "utf8", "utf-8-with-signature", "prefer-utf-8"):
            continue
        try:
            texts.append(data.decode(name, errors="replace"))
        except LookupError:
            continue
    return texts


def private_elsewhere(
    data: bytes, count: int, read: Callable[[list[str], list[int]], ParsedFile], *, utf8: bool | None = None
) -> ParsedFile | frozenset[int]:
    """What is private in the texts Emacs may read from ``data`` that are not the
    reader's (:func:`emacs_may_read`), each of ``count`` lines as the reader's: the file
    as ``read`` reads it when it is private whole in one of them; else the lines of the
    headings private in one of them. ``read(lines, found)`` reads one text's lines,
    appending the line of each heading it finds private to ``found``. ``utf8`` as for
    :func:`emacs_may_read`."""
    private: set[int] = set()
    for text in emacs_may_read(data, utf8=utf8):
        lines = split_lines(text)
        if len(lines) != count:  # (a coding that read a line ending into a character)
            continue
        found: list[int] = []
        parsed = read(lines, found)
        if parsed.private:
            return parsed
        private.update(found)
    return frozenset(private)
