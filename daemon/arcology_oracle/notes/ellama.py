"""ellama sessions saved as org, read as dialogue: which of their lines are the model's.

How ellama saves a session (ellama.el, checked at s-kostyaev/ellama 09857e5, 2026-06):

* the chat is an org file (``ellama-major-mode`` ``org-mode``, the default), named by the
  session (``ellama-naming-scheme``: the first words of the prompt and ``(llama3.2+notes)``,
  the provider's ``llm-name``) in ``ellama-sessions-directory``. Each turn is a heading
  ``ellama-nick-prefix-depth`` stars deep (2) titled with a nick and a colon:
  ``** User:`` (``ellama-user-nick``) above the user's prompt (and the context they added),
  ``** Ellama:`` (``ellama-assistant-nick``) above the model's reply, the reply converted
  from markdown to org (its own headings included). The file starts with the user's
  heading, and ellama ends it with an empty one when a reply is done (``ellama-chat``,
  ``ellama-chat-done``);
* after every save of that file, ``ellama--save-session`` writes beside it the file
  ``.NAME.session.el`` (NAME: the org file's name, ``foo.org`` -> ``.foo.org.session.el``,
  ``ellama--get-session-file-name``): ``prin1`` of the ``ellama-session`` record,
  ``#s(ellama-session ID PROVIDER FILE PROMPT CONTEXT EXTRA)``, whose PROVIDER is the
  ``llm`` package's record (``#s(llm-ollama ... "http" "127.0.0.1" 7348 "llama3.2+notes"
  "nomic-embed-text")``, ``#s(llm-openai-compatible ...)``), its key taken out.

The rule (conservative: a note with a heading titled ``User:`` means what it did):

* a file is an ellama session only when both say so: its first heading (after the file's
  own text) is titled ``NICK:``, a later heading at its level ``OTHER:`` (another nick),
  **and** the ``.NAME.session.el`` beside it holds an ``ellama-session`` record. The first
  nick is the user's (ellama starts every session with the user's heading), the other the
  assistant's. Only a file shaped so has its companion looked at; the note records it as
  a file it depends on (:func:`.setup_files.look`), so the note is read again when the
  companion comes, changes or goes (ellama writes it just after the org file). A
  symlink in the companion's place is not followed (ellama writes a file there; a link
  could lead out of the notes folder): the file is then a note;
* its turns (:func:`session_turns`) run from one nick heading at that level to the next,
  sub-headings included; the nick headings' own lines are no one's words, text above the
  first is no turn. The speakers are ``user`` and the model: the grounded model the
  companion's provider record names as its chat model (:func:`session_model`: its
  chat-model field for the llm providers that can reach the daemon, not a grounded
  embedding model, URL or key beside a plain model;
  :func:`~.conversations.is_grounded_speaker`), else the assistant's nick (a plain
  model's reply is the model's turn, not the oracle's words);
* so the replies of a session with a grounded model are the oracle's words by the one
  rule of :mod:`.oracle_words`, as a gptel chat's are: an assistant heading holding
  nothing but the reply is the oracle's, a user heading stays the user's note.

Limits: the model is the session's provider as last saved (ellama keeps one per session);
an org file copied without its companion, a session saved as markdown or with
``ellama-session-auto-save`` off (no file at all) is read as a note; the reply's text
(its ``Sources:`` block) is not evidence on its own, for the user may paste one into a
note; customised nicks are read from the file, never from Emacs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from .chats import GPTEL_USER, line_turns
from .conversations import is_grounded_speaker
from .records import EllamaSession, Heading, ParsedFile, Turn
from .setup_files import Seen, look

_NICK_TITLE = re.compile(r"^([^\s:](?:[^:]*[^\s:])?):$")
_RECORD = re.compile(r"\s*#s\(ellama-session[\s)]")
_OPEN, _CLOSE = frozenset({"(", "[", "#s(", "#["}), frozenset({")", "]"})
_PROVIDER = 3  # #s(ellama-session ID PROVIDER ...): the provider is the record's third field
_TOKEN = re.compile(r'#s\(|#\[|[(\[]|[)\]]|"(?:[^"\\]|\\.)*"|[^\s()\[\]"]+')
# Where the chat model is in the records of the llm package's providers that can talk to
# the daemon (its Ollama and OpenAI APIs), counted from the record's end: llm's base
# structs put more fields first in newer versions, never after (llm-ollama: ... scheme
# host port chat-model embedding-model; -authed: ... key; llm-openai: ... key chat-model
# embedding-model; -compatible: ... url; checked at ahyatt/llm, 2026).
_CHAT_MODEL_FROM_END = {"llm-ollama": 2, "llm-ollama-authed": 3, "llm-openai": 2, "llm-openai-compatible": 3}


def nick(title: str) -> str | None:
    """The nick of a turn heading's ``title`` (``User`` of ``User:``), else None."""
    found = _NICK_TITLE.match(title.strip())
    return found[1] if found else None


def session_shape(headings: Sequence[Heading]) -> tuple[str, str, int] | None:
    """``(user nick, assistant nick, level)`` when ``headings`` (a file's, in order) are
    shaped as an ellama session's (module docstring: the first heading ``NICK:``, a later
    one at its level ``OTHER:``), else None. The shape alone is no session."""
    titled = [h for h in headings if h.level > 0]
    user = nick(titled[0].title) if titled else None
    if user is None:
        return None
    level = titled[0].level
    for h in titled[1:]:
        other = nick(h.title) if h.level == level else None
        if other is not None and other != user:
            return user, other, level
    return None


def companion_path(directory: Path, path: str) -> str:
    """Where ellama keeps the session of the org file ``path`` (in ``directory``):
    ``.NAME.session.el`` beside it."""
    return os.path.join(directory, f".{PurePosixPath(path).name}.session.el")


def read_session(headings: Sequence[Heading], directory: Path, path: str) -> tuple[EllamaSession | None, tuple[Seen, ...]]:
    """The ellama session the file ``path`` (in ``directory``, its ``headings``) is, or
    None; and the companion file looked at for it (``()`` when the file is not shaped as
    a session: nothing is looked at)."""
    shape = session_shape(headings)
    if shape is None:
        return None, ()
    data, seen = look(companion_path(directory, path), follow=False)  # ellama writes no link
    if data is None or not _RECORD.match(data.decode("utf-8", "replace")):
        return None, (seen,)
    return EllamaSession(*shape, model=session_model(data.decode("utf-8", "replace"))), (seen,)


def session_model(record: str) -> str | None:
    """The grounded model an ``ellama-session`` record (the text of a ``.session.el``)
    names as its provider's chat model, else None. A provider of the ``llm`` package
    that can talk to the daemon (:data:`_CHAT_MODEL_FROM_END`) names it in one field:
    that one, only when the record is whole (a grounded embedding model, URL or key is
    not the chat model). Any other provider: the first of its strings that is one."""
    provider = _provider(record)
    if provider is None:
        return None
    fields, strings, whole = provider
    back = _CHAT_MODEL_FROM_END.get(fields[0]) if fields else None
    if back is None:
        return next((s for s in strings if is_grounded_speaker(s)), None)
    model = fields[-back] if whole and len(fields) > back else ""
    return model[1:-1] if model.startswith('"') and is_grounded_speaker(model[1:-1]) else None


def _provider(record: str) -> tuple[list[str], list[str], bool] | None:
    """The provider record of an ``ellama-session`` record (its field after the id):
    its own tokens (its type, then one a field: ``(`` for a nested value), every string
    in it (quotes off), and whether it is closed; None when it is no record."""
    depth, field_ = 0, 0  # field_: of the session record, counted from its type (1)
    fields: list[str] = []
    strings: list[str] = []
    for token in (t[0] for t in _TOKEN.finditer(record)):
        if token in _OPEN:
            depth += 1
            field_ += depth == 2
            if depth == 3 and field_ == _PROVIDER:
                fields.append("(")
        elif token in _CLOSE:
            depth -= 1
            if depth <= 1 and field_ >= _PROVIDER:
                return fields, strings, True  # the provider's record ends
        elif depth == 1:
            field_ += 1
            if field_ >= _PROVIDER:
                return None  # the provider is no record
        elif field_ == _PROVIDER:
            fields += [token] if depth == 2 else []
            strings += [token[1:-1]] if token.startswith('"') else []
    return (fields, strings, False) if field_ == _PROVIDER else None


def session_turns(parsed: ParsedFile) -> list[Turn]:
    """The turns of the ellama session ``parsed`` (``parsed.ellama`` set; module
    docstring), in file order, lines counted in the file."""
    session = parsed.ellama
    if session is None:
        return []
    model = session.model or session.assistant
    said: list[tuple[str, int, str, Heading]] = []
    speaker: str | None = None
    for h in parsed.headings:
        body = h.body.split("\n")
        offset = h.end_line - len(body)
        lines = [(offset + 1 + i, line) for i, line in enumerate(body)]
        named = nick(h.title) if h.level == session.level else None
        if named in (session.user, session.assistant):
            speaker = GPTEL_USER if named == session.user else model
        elif speaker is not None and h.level:
            lines.insert(0, (h.start_line, h.title))
        if speaker is not None:  # the file's own text, before the first turn, is no one's
            said += [(speaker, number, text, h) for number, text in lines]
    return line_turns(said)
