"""A model's answer streamed to a chat client (gptel, ellama: the daemon's Ollama- and
OpenAI-compatible endpoints) with no diary sexp Org's agenda would evaluate
(:class:`SexpQuieter`).

gptel inserts an answer where the user asked, often into an org note of theirs, an
agenda file for many (a daily); Org's agenda evaluates every ``%%(`` starting a line and
every ``<%%(`` there, in blocks too, without asking (:mod:`.org_escape`), so the model's
``%%(shell-command "...")`` would run at the next agenda once the note is saved. A
grounded answer is the model's words after the notes it was handed (imported chats, web
pages clipped: text the user did not write), so a zero-width space goes before each such
``%%(``, as in the daemon's own writes. Nothing else of the answer changes: a link, a
code block or an active timestamp runs or shows only when the user acts on it, and the
user asked for that text.
"""

from __future__ import annotations

from .org_escape import diary_sexps_quieted

# What a line may start with and still become a diary sexp ("&%%(" or "%%(").
_LINE_STARTS = ("&", "%", "&%", "%%", "&%%")
# What starts a line: a line feed, and a lone carriage return, a line break once the
# answer is saved into a file with CR line endings (Emacs reads each CR as one then).
_BREAKS = "\n\r"
# What a text may end with and still become a "<%%(" with what follows.
_ANGLE_STARTS = ("<%%", "<%", "<")


class SexpQuieter:
    """Quiets the diary sexps of a text that arrives in pieces: :meth:`feed` each piece,
    then :meth:`flush`; the pieces returned, joined, are
    :func:`~.org_escape.diary_sexps_quieted` of the whole text (a lone CR starting a line
    too), however it was cut. A piece's end that may start a sexp with what comes next
    (at most 3 characters) waits for it."""

    def __init__(self) -> None:
        self._held = ""
        self._before = "\n"  # the last character handed on (a text starts a line)

    def feed(self, piece: str) -> str:
        """The quieted text of ``piece`` that is settled (what may start a sexp held)."""
        text = self._held + piece
        keep = _undecided(text, self._before)
        self._held = text[len(text) - keep :]
        return self._quieted(text[: len(text) - keep])

    def flush(self) -> str:
        """The text held back, quieted: the answer has ended."""
        held, self._held = self._held, ""
        return self._quieted(held)

    def _quieted(self, text: str) -> str:
        if not text:
            return ""
        # The character before as context: a line's end, or one after which no line starts.
        context = self._before if self._before in _BREAKS else "\0" + self._before
        out = diary_sexps_quieted(context + text, cr_breaks=True)[len(context) :]
        self._before = text[-1]
        return out


def _undecided(text: str, before: str) -> int:
    """How many characters at ``text``'s end may yet start a diary sexp (``before``: the
    character handed on before ``text``)."""
    line_start = max(text.rfind("\n"), text.rfind("\r")) + 1
    if (line_start or before in _BREAKS) and text[line_start:] in _LINE_STARTS:
        return len(text) - line_start
    return next((len(end) for end in _ANGLE_STARTS if text.endswith(end)), 0)
