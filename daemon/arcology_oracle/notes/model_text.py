"""Text the user did not type, quieted before the daemon writes it into an org file: a
model's answer (:func:`~.conversations.org_safe`, a capture of the oracle's own words),
an imported chat log (:mod:`arcology_oracle.importers.render`). On top of
:func:`~.org_escape.inert`, which every written text gets, the user's typing too.

Contracts (each checked with Emacs 28 and Org 9.5 in batch mode):

* **Links that run code** (:func:`quiet`): clicking an ``elisp:`` or ``shell:`` link
  runs it (Org asks first only while ``org-link-elisp-confirm-function`` and
  ``org-link-shell-confirm-function`` are set), an ``eshell:`` link (``ol-eshell``)
  runs its command without asking, and a ``man:`` link (``ol-man``) hands its topic to
  a shell in an Emacs before the fix of bug#66390. A zero-width space goes before the
  colon of each such type (any letter case, as Org matches them) where Org would read
  a link: followed by anything but a blank, or after ``<`` or ``[[``. And a bracket
  link of such a type gets one between its two ``[``, so its description
  (``[[elisp:(delete-file ...)][see note]]``) no longer hides what it would run: Org
  shows the whole text, no link. So does a bracket link within the file (no type:
  ``[[Some note]]``, ``[[*Heading]]``, ``[[#custom-id]]``, ``[[Note: x]]``), which leads
  to the user's heading of that name or, with none, makes every export of the file
  fail (Org 9.5: "Unable to resolve link"), as does an ``id:`` link to an ID no note
  has (a model's mangled one: :func:`unknown_ids_quieted`, where the writer knows the
  notes' IDs: a ``/converse`` answer, the oracle's words a capture keeps). So does a
  bracket link of a type Org has not registered (``[[wiki:Bread]]``, ``[[note:salt]]``):
  Org reads it as one within the file, to a heading of that name, and with none every
  export fails (Org 9.5: "Unable to resolve link: \"wiki:Bread\""). The types taken for
  registered are :data:`REGISTERED_TYPES` (those of Org 9.5's ``ol.el``, its default
  ``org-modules``, ``org-id``, ``org-attach`` and org-roam's ``roam:``), in any letter
  case, as Org matches them; one the user registered in their Emacs only is quieted too
  (its link shows as text; a plain one, ``orgit:repo``, shows all it leads to and stays:
  a zero-width space in each ``localhost:8080`` would break copying it). And so does a
  link whose path holds a ``"`` (a bracket one between its ``[[``, an angle or plain one
  before its colon): Org 9.5's HTML export writes the path of a ``file:``, ``doi:``,
  ``help:`` or ``info:`` link into the ``href`` (an image's ``src``) as it is, so
  ``[[file:a" onmouseover="alert(1)][x]]`` gave the link an attribute of the model's
  choosing, a script in the published page.
  And so does a link that leads outside (:mod:`.outside_links`, bracket, angle or plain):
  a file link but to a local ``.org`` file (Org hands a ``file+sys:`` link's file to the
  system's program, a ``file:`` one's too when Emacs has no mode for it: ``open`` on macOS
  runs an executable; a remote name has TRAMP connect to the model's host), and one whose
  HTML export is a script (``[[help:javascript:alert(1)//][see]]``: Org 9.5 writes most
  types' paths into the ``href`` as they are). The other registered types open nothing
  outside Emacs but a web browser (``https:``, ``doi:``...) or a chat client (``irc:``),
  as a link clicked in a web page would. ``id:``,
  a ``file:`` to a note, ``https:`` and every other link of those types stay, and so do the targets of the links
  every Org reads (``https://man:pass@host`` is one https link,
  ``[[https://eshell:pw@host]]`` one too) and words (``powershell:``). A word starts,
  to Emacs, after a letter of another script too (``эshell:ls`` and ``中man:ls`` are
  links): only a Latin letter or a digit before the type keeps it a word's inside.
  Where Org may read otherwise (after ``_``, inside a subscript's letters, in a URL
  after an emphasis marker that may close in it) the type is quieted.
* **Active timestamps** (:func:`quiet`): Org's agenda lists every active timestamp
  (``<2026-12-07 Mon>``, a range, a repeater) anywhere in an agenda file, in blocks and
  property drawers too, so a model's words would fill the user's day. In text where Org
  reads objects each becomes inactive (``[2026-12-07 Mon]``: still a date to Org, on no
  agenda); in ``verbatim`` text (a block's line, a property value), where a bracket
  would change what the model wrote, a zero-width space goes after its ``<``. So does
  one next to a bracket, which would make a link of ``[<2026-12-07 Mon>]``.
* **A heading's words** (:func:`quiet_heading`, a title starting a heading line: an
  imported chat's without a date before it, the oracle's words kept): Org reads a first
  word that is a TODO keyword (``TODO``, ``DONE``, or any the user set: ``NEXT``...), a
  priority cookie (``[#A]``) or ``COMMENT`` as the heading's state, not its words: a
  model's ``TODO [#A] Wire the money`` would be on the agenda's TODO list, at the top,
  a ``COMMENT`` heading left out of exports and the agenda. A zero-width space goes
  before a first word written in capitals only (as keywords are written: ``AI`` too,
  which Org cannot tell from one) or a cookie, so Org reads the title as written. A
  first word the target file declares a keyword (``#+TODO: Plans Doing | Done``, also
  through a setup file, lower-case ones too: :mod:`.todo_keywords`) gets one too, where
  the writer knows that file (a capture of the oracle's words, or of an agent's through
  the MCP ``remember`` tool, not an import's chat). A first word of a script without
  letter case (Japanese, Chinese) or in lower case is otherwise left as it is: a
  keyword set so only in the user's Emacs (``org-todo-keywords``) is still read as one.
* **LaTeX that reads, writes or runs** (:func:`quiet`, not in ``verbatim`` text, which a
  LaTeX export writes in a verbatim environment): a LaTeX fragment (``\\cmd{...}``,
  ``$...$``, ``\\(...\\)``) goes into a LaTeX export as it is. A zero-width space goes
  after the backslash of the commands in :data:`LATEX_COMMANDS` (``\\write18`` runs a
  shell command in a run with ``-shell-escape``, ``\\input`` puts any file into the
  document, ``\\directlua`` runs Lua; ``\\csname`` and ``\\catcode`` would spell them
  anew) and between the two ``^`` of ``^^5c`` (TeX's spelling of a backslash): Org then
  reads words, which its LaTeX export escapes, and a math fragment holding one fails to
  compile rather than run it. Commands that call another by a name spelled out
  (``\\UseName{write}``, ``\\ifcsname``/``\\lastnamedcs``, ``\\ExplSyntaxOn``'s
  ``\\use:c``) are on the list too, and so is every ``\\begin``/``\\end`` but of the
  environments in :data:`LATEX_ENVIRONMENTS` (math, lists, tables): ``\\begin{NAME}`` runs
  ``\\NAME`` (``\\begin{write}18``), and Org writes a LaTeX environment starting a
  line into the export as it is (``\\begin{filecontents*}[overwrite]{note.org}`` would
  overwrite a note in a PDF export's run, no shell escape needed). So are the MathJax
  commands that give the page's elements attributes: Org 9.5's HTML export hands its
  math to MathJax 2.7, where ``\\mmlToken{mi}[href="javascript:..."]{x}`` is a link that
  runs a script, ``\\href`` one too, and ``\\style``, ``\\cssId`` and ``\\class`` set the
  styles of the published page (an overlay over it). Ordinary math
  (``\\frac``, ``\\alpha``, ``x^2``, ``\\begin{align*}``) is as written. Babel's code
  is not here: a source block of the model's gets ``:eval no :tangle no :noweb no``
  (:func:`~.conversations.org_safe`) and its keywords a comma (:mod:`.org_escape`).
* **Bidirectional text controls** (:func:`quiet`, ``verbatim`` text too): an embedding,
  override or isolate (U+202A-U+202E, U+2066-U+2069) makes Emacs show the rest of its
  line in an order other than the one Org reads it in ("Trojan Source": ``Pay``, U+202E,
  ``RUE 0005`` shows as ``Pay 5000 EUR``; a heading can look like another). Each becomes
  U+FFFD, shown, as a model's control characters are. The marks (U+200E, U+200F, U+061C)
  stay: Org shows every paragraph left to right (``bidi-paragraph-direction``), where a
  mark only places the punctuation next to it, and right-to-left prose needs them. The
  user's own typing keeps them all.
* **Markdown** (:func:`quiet`, not in ``verbatim`` text): a Markdown export writes a
  model's ``<script>`` and ``[x](javascript:...)`` as they are (:mod:`.markdown_export`).
* **Footnote references** (:func:`quiet`, not in ``verbatim`` text): a model's
  ``[fn:1]`` (``[fn:note]``; ``[FN:1]`` too, a definition at a line's start, which
  the comma :mod:`.org_escape` gives would make a reference; any position) points at
  the user's definition of that label, which Org then shows and exports at the model's
  words, or at none, and then no export of the file works at all (Org 9.5: "Definition
  not found for footnote 1"). A zero-width space goes after its ``[``: Org shows the
  words, no footnote. Inline ones (``[fn::text]``, ``[fn:LABEL:text]``) define their own
  text (:mod:`.org_escape`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from .active_dates import dates_quieted
from .markdown_export import markdown_quieted
from .org_escape import FOOTNOTE_LABEL, ZWSP
from .outside_links import OUTSIDE_TYPES, AngleEnds, leads_outside

# Link types whose following runs code (see the module docstring).
CODE_LINK_TYPES = ("elisp", "shell", "eshell", "man")
_TYPES = "|".join(CODE_LINK_TYPES)
# Types every Org registers (ol.el): their links' paths are read as the link, not as text.
_ORDINARY_TYPES = "https?|ftp|mailto|news|file(?:\\+sys|\\+emacs)?|help"
# The types that may lead outside (:mod:`.outside_links`) but ordinary ones: a link of
# one is read where Org reads it with the module registering it loaded (ol-info, ol-eww...).
_OTHER_OUTSIDE_TYPES = "attachment|docview|info|eww|rmail|mhe|gnus|bibtex|w3m|roam|irc"
# Emacs's word start (Org's \<): none after a letter of the Latin script or a digit (nor
# after $, % and ', words in an org buffer); after any other letter of another script
# (Cyrillic, Greek, Han, IPA...) there is one, so only these are taken as a word's inside.
_INSIDE_WORD = r"A-Za-z0-9$%'\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
# Org's plain link path (org-link-plain-re): no blank or bracket, parentheses balanced,
# ending on a letter, a digit, a slash or a parenthesis.
_NSB = r"[^\][ \t\n\r()<>]"
_PAREN = rf"\((?:{_NSB}|\({_NSB}*\))*\)"
_PLAIN_PATH = rf"(?:{_NSB}|{_PAREN})+(?:[^\W_]|/|{_PAREN})"
# Where Org reads a link, leftmost first: a bracket link's target (Org 9.5's
# org-link-bracket-re, whose alternatives split a run of backslashes in exponentially many
# ways: "[[" and 30 backslashes took 0.17 s, 50 would take an hour; here each run is taken
# whole, by the same strings in the same order of preference; its description is
# text; Org 9.5 reads a target and a description over lines, "[[Some\nnote]]" a link to
# "Some note"; one followed by "[" or "]" is taken for a link, closed or not), an angle
# link, a plain link (an ordinary one only after what surely starts a word: a blank or
# ASCII punctuation but _ and ^, which Org may read as a subscript's; and see _taken_before).
_LINK_RE = re.compile(
    rf"(?i)\[\[(?P<target>(?:[^\]\[\\]|\\(?:\\\\)*[\]\[]|\\+[^\]\[\\]|\\{{2,}}(?=[\]\[])|(?:\\\\){{2,}}[\]\[])+)\](?=[\]\[])"
    rf"|<(?:{_ORDINARY_TYPES}):[^>\n]*>"
    rf"|(?P<plain>(?<![^ \t\n\r\f!-#&(-/:-@\[\]`{{-~])(?:{_ORDINARY_TYPES}):{_PLAIN_PATH})"
    rf"|(?P<code>(?<![{_INSIDE_WORD}])(?:{_TYPES})(?=:(?!\s))|(?<=<)(?:{_TYPES})(?=:))"
    rf"|(?P<other>(?<![{_INSIDE_WORD}])(?:{_OTHER_OUTSIDE_TYPES})(?=:))"
)
# An emphasis marker that could close Org's emphasis (org-emphasis-regexp-components: a
# post character or the end after it): an emphasis begun before a plain link may end in
# its path ("/https:/" is italics in "/https://.elisp:x"), and Org reads on from there.
_CLOSER_RE = re.compile(r"([*/_=~+])(?=[-\s.,:!?;'\")}\\\[]|\Z)")
_CODE_TARGET_RE = re.compile(rf"(?i)[ \t]*(?:{_TYPES}){ZWSP}?:")
# The link types an Org 9.5 with org-roam registers (checked in batch: ol.el, the default
# org-modules, org-id, org-attach; org-roam's roam:), but those that run code (above).
REGISTERED_TYPES = frozenset({
    "id", "file", "file+sys", "file+emacs", "http", "https", "ftp", "mailto", "news", "help", "attachment",
    "doi", "eww", "rmail", "mhe", "irc", "info", "gnus", "docview", "bibtex", "bbdb", "w3m", "roam",
})  # fmt: skip
# Any type Org may read a link of, before its colon (for :func:`_outside_type_link`).
_ANY_TYPES = "|".join(map(re.escape, REGISTERED_TYPES | set(CODE_LINK_TYPES)))
_ANY_TYPE_RE = re.compile(rf"(?i)(?<![{_INSIDE_WORD}])(?:{_ANY_TYPES})(?=:)")
# The type and colon of an angle link Org reads, after its "<" (for :mod:`.markdown_export`);
# quieted already (no scheme, no tag name to a Markdown renderer) or not.
_ANGLE_TYPE_RE = re.compile(rf"(?i)(?:{_ANY_TYPES}){ZWSP}?:")
# Where Org may read a link of a registered type, and the paths of an angle and a plain one.
_TYPE_COLON_RE = re.compile(rf"(?i)(?<![{_INSIDE_WORD}])(?:{'|'.join(map(re.escape, REGISTERED_TYPES))}):")
# How much of a plain link's path is looked at for a quote (a longer one is quieted).
_LONGEST_PATH = 4096
_PLAIN_PATH_RE = re.compile(_PLAIN_PATH)
# A bracket link's target that names a type (group 1): Org reads a link of that type when
# it is registered, else one within the file (see the module docstring).
_TYPED_TARGET_RE = re.compile(r"([A-Za-z][-+.\w]*):\S")
# An id: link: a bracket one (``[[id:ID]]``, ``[[id:ID::search][words]]``, group 1 its
# ID) or a plain one (``id:ID``, group 2 its path: the ID, maybe ``::search`` after it).
_ID_LINK_RE = re.compile(
    rf"\[\[id:([^\]\[:]+)(?:::[^\]\[]*)?\](?=\[|\])|(?<![{_INSIDE_WORD}])id:({_PLAIN_PATH})"
)
# A footnote reference (Org: any letter case); its label's definition is the user's, or none.
_FOOTNOTE_REF_RE = re.compile(rf"(?<=\[)(?=(?i:fn):{FOOTNOTE_LABEL}\])")
# Bidirectional embeddings, overrides and isolates (see the module docstring).
_BIDI_CONTROL_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")
# A priority cookie as org-element reads one after a heading's stars (or its keyword).
_PRIORITY_RE = re.compile(r"\[#.\]")
LATEX_COMMANDS = (
    "write", "immediate", "input", "include", "InputIfFileExists", "openin", "openout", "read", "readline",
    "csname", "catcode", "scantokens", "directlua", "latelua", "luaexec", "ShellEscape", "special",
    "makeatletter", "lstinputlisting", "verbatiminput", "pdfobj", "pdffiledump", "href",
    "ifcsname", "lastnamedcs", "begincsname", "UseName", "ExpandArgs", "csuse", "ExplSyntaxOn",
    "ProvidesExplPackage", "ProvidesExplClass", "ProvidesExplFile", "filecontents",
    "pdfcatalog", "pdfnames", "pdfannot", "pdfstartlink", "pdfextension", "mmlToken", "style", "cssId", "class",
)  # fmt: skip
# The environments a \begin or \end may name (math, lists, tables): \begin{NAME} runs the
# command \NAME (\begin{write}18{...} is \write18, \begin{\x} whatever \x spells), and
# Org writes a LaTeX environment at a line's start into the export as it is, its lines
# read by no one (\begin{filecontents*}[overwrite]{note.org} writes a note).
LATEX_ENVIRONMENTS = (
    "equation", "align", "alignat", "flalign", "gather", "multline", "eqnarray", "split", "aligned",
    "alignedat", "gathered", "cases", "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix",
    "smallmatrix", "array", "subequations", "itemize", "enumerate", "description", "tabular", "center",
    "quote", "quotation",
)  # fmt: skip
_LATEX_RE = re.compile(
    rf"(?<=\\)(?=(?:{'|'.join(LATEX_COMMANDS)})(?![A-Za-z]))|(?<=\^)(?=\^)"
    rf"|(?<=\\)(?=(?:begin|end)(?![A-Za-z])(?![ \t]*\{{(?:{'|'.join(LATEX_ENVIRONMENTS)})\*?\}}))"
)


def quiet(text: str, *, verbatim: bool = False) -> str:
    """``text`` with no link that runs code, no active timestamp, no LaTeX command that
    reads, writes or runs, no footnote reference, no bidirectional text control (see
    the module docstring) and nothing a Markdown export writes as HTML or a link to a
    script (:mod:`.markdown_export`);
    ``verbatim``: a block's line or a property value (timestamps get a zero-width space,
    LaTeX and footnotes are left alone: Org reads neither there)."""
    text = dates_quieted(quiet_links(_BIDI_CONTROL_RE.sub("\ufffd", text)), verbatim=verbatim)
    return text if verbatim else markdown_quieted(_FOOTNOTE_REF_RE.sub(ZWSP, _LATEX_RE.sub(ZWSP, text)), _ANGLE_TYPE_RE)


def quiet_links(text: str) -> str:
    """``text`` with only the links of :func:`quiet` quieted: for text quieted a line at a
    time before, whose bracket links Org reads over lines too (quieting it again changes
    no link quieted already)."""
    return _quoted_links_quieted(_quiet_links(text))


def id_link_targets(text: str) -> set[str]:
    """The IDs the ``id:`` links of ``text`` (bracket and plain ones) lead to, for
    :func:`quiet_id_links`."""
    return {_id_of(found) for found in _ID_LINK_RE.finditer(text)}


def _id_of(found: re.Match[str]) -> str:
    return found[1] or found[2].split("::", 1)[0]


def quiet_id_links(text: str, unknown: Collection[str]) -> str:
    """``text`` with a zero-width space before the colon of each ``id:`` link to an ID
    of ``unknown`` (no note has it), and between the ``[[`` of a bracket one: Org shows
    the words, and the file's export does not fail on it (see the module docstring)."""

    def quieted(found: re.Match[str]) -> str:
        if _id_of(found) not in unknown:
            return found[0]
        return f"[{ZWSP}[id{ZWSP}{found[0][4:]}" if found[1] else f"id{ZWSP}{found[0][2:]}"

    return _ID_LINK_RE.sub(quieted, text)


async def unknown_ids_quieted(
    text: str,
    read: Callable[[Callable[[Any], set[str]]], Awaitable[set[str]]],
    held: Callable[[set[str]], Awaitable[set[str]]] | None = None,
) -> str:
    """``text`` with its ``id:`` links to IDs no note has quieted (:func:`quiet_id_links`);
    ``read``: the index's read (a store's ``node(ID)`` is None for an ID no note has);
    ``held``, when the index may not know every note yet: those of the IDs it does not
    know that a note has all the same (:func:`~.note_ids.ids_held`)."""
    if not (ids := id_link_targets(text)):
        return text
    unknown = ids - await read(lambda store: {i for i in ids if store.node(i) is not None})
    if unknown and held is not None:
        unknown -= await held(unknown)
    return quiet_id_links(text, unknown)


def quiet_heading(title: str, keywords: Collection[str] = ()) -> str:
    """``title``, to follow a heading's stars, with a zero-width space before its first
    word when Org could read that word as a TODO keyword (written in capitals, or one of
    ``keywords``: those the target file declares), a priority cookie or ``COMMENT`` (see
    the module docstring); else as it is, and as it is when it starts with a zero-width
    space already (quieted before: no second one)."""
    if title.startswith(ZWSP):
        return title
    first = title.split(" ", 1)[0].split("\t", 1)[0]
    keyword_like = any(c.isupper() for c in first) and not any(c.islower() for c in first)
    return ZWSP + title if keyword_like or first in keywords or _PRIORITY_RE.match(title) else title


def _quiet_links(text: str) -> str:
    """``text`` with a zero-width space before the colon of each link Org would read as
    one that runs code and between the ``[[`` of such a bracket link and of one within
    the file (no type); the targets of the other links Org reads
    (``https://man:pass@host``) and every other word as written.
    A quieted link's own path is read on, as Org reads the text once it is quieted."""
    out, at = [], 0
    first = {marker: text.find(marker) for marker in "*/_=~+"}
    angles = AngleEnds(text)
    while found := _LINK_RE.search(text, at):
        out.append(text[at : found.start()])
        target = found["target"]
        if found["code"]:
            out.append(found[0] + ZWSP)
            at = found.end()
        elif target is not None and (
            _CODE_TARGET_RE.match(target) or not _registered(target) or '"' in target or _target_leads_outside(target)
        ):
            out.append("[" + ZWSP + "[")
            at = found.start() + 2
        elif target is None and (span := _outside_type_link(text, found, angles)):
            colon, end, outside = span  # (Org reads its path on once it is quieted: no type in it is a link)
            path = _ANY_TYPE_RE.sub(lambda inner: inner[0] + ZWSP, text[colon:end])
            out.append(text[found.start() : colon] + ZWSP * outside + path)
            at = end
        elif found["plain"] and _taken_before(text, found.start(), found[0], first):
            out.append(text[found.start()])  # its path is read on, as text Org may read links in
            at = found.start() + 1
        else:
            out.append(found[0])
            at = found.end()
    return "".join(out) + text[at:]


def _quoted_links_quieted(text: str) -> str:
    """``text`` with a zero-width space before the colon of each angle or plain link of a
    registered type whose path holds a ``"`` (see the module docstring), and of each plain
    one whose path is longer than :data:`_LONGEST_PATH`: each path is looked at once, up
    to that length (the quotes' places bisected), so the time stays linear in ``text``."""
    if '"' not in text:
        return text
    angles, quotes = AngleEnds(text), [found.start() for found in re.finditer('"', text)]

    def quieted(found: re.Match[str]) -> str:
        at = found.end()
        end = angles.end(at) if found.start() and text[found.start() - 1] == "<" else None
        if end is None:
            plain = _PLAIN_PATH_RE.match(text, at, at + _LONGEST_PATH)
            end = plain.end() if plain else at
            if end == at + _LONGEST_PATH:
                return found[0][:-1] + ZWSP + ":"
        index = bisect_left(quotes, at)
        return found[0][:-1] + ZWSP + ":" if index < len(quotes) and quotes[index] < end else found[0]

    return _TYPE_COLON_RE.sub(quieted, text)


def _target_leads_outside(target: str) -> bool:
    """:func:`~.outside_links.leads_outside` for a bracket link's ``target`` (its lines
    joined by a space, as Org joins them)."""
    typed = _TYPED_TARGET_RE.match(target)
    return typed is not None and leads_outside(typed[1], target[len(typed[1]) + 1 :], joined=" ")


def _outside_type_link(text: str, found: re.Match[str], angles: AngleEnds) -> tuple[int, int, bool] | None:
    """For the angle or plain link ``found`` (or the type of one: :data:`_OTHER_OUTSIDE_TYPES`)
    of a type :func:`~.outside_links.leads_outside` may hold for: the place of its colon,
    where its path ends and whether it holds; None for another type, and for an angle or
    plain link it does not hold for (read on as any other). An angle link's path is read
    over lines, their breaks dropped, as Org reads it. Every type in the path of one of
    :data:`_OTHER_OUTSIDE_TYPES` is quieted, as it is a link where Org has not loaded the
    module registering that type (``org-modules``); so the text is read once, however
    many links it holds."""
    start = found.start() + (found[0][0] == "<")
    colon = text.index(":", start)
    if text[start:colon].lower() not in OUTSIDE_TYPES:
        return None
    if (end := angles.end(colon + 1) if start and text[start - 1] == "<" else None) is None:
        end = plain.end() if (plain := _PLAIN_PATH_RE.match(text, colon + 1)) else colon + 1
    outside = leads_outside(text[start:colon], text[colon + 1 : end])
    return (colon, end, outside) if outside or found["other"] else None


def _registered(target: str) -> bool:
    """Whether Org reads the bracket link to ``target`` as one of a registered type."""
    typed = _TYPED_TARGET_RE.match(target)
    return typed is not None and typed[1].lower() in REGISTERED_TYPES


def _taken_before(text: str, start: int, link: str, first: dict[str, int]) -> bool:
    """Whether Org may read the plain ``link`` at ``start`` otherwise, as part of what
    begun before it: a subscript or superscript (``a_b,https`` is one: ``[_^]``, then
    letters, digits, ``,``, ``.`` and ``\\``; any non-ASCII character is taken for a
    letter here), an inline footnote's label (``[fn:https:``), or an emphasis whose
    marker comes before (``first``: each marker's first place in ``text``) and may end
    in the link (:data:`_CLOSER_RE`)."""
    closers = {found[1] for found in _CLOSER_RE.finditer(link)}
    if any(0 <= first[marker] < start for marker in closers):
        return True
    at = start
    while at and ((char := text[at - 1]) in "_,.\\" or char.isalnum() or (ord(char) > 127 and not char.isspace())):
        at -= 1
        if char == "_":
            return True
    return (at > 0 and text[at - 1] == "^") or text[max(0, start - 4) : start].lower() == "[fn:"


def read_as_quieted(text: str) -> str:
    """``text`` with each active timestamp inactive and each bidirectional text control
    U+FFFD, as :func:`quiet` writes them: for comparing a file written before with what is
    written now."""
    return dates_quieted(_BIDI_CONTROL_RE.sub("\ufffd", text), verbatim=False, near_brackets=False)
