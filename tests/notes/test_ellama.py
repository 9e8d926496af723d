"""Which files are ellama sessions (notes/ellama.py): only one shaped as a session (its
first heading ``NICK:``, another ``OTHER:`` at its level) with an ``ellama-session``
record beside it; the nicks are read from the file, the model from the record. Real files
read by the real reader."""

from __future__ import annotations

from pathlib import Path

from arcology_oracle.notes.ellama import session_turns
from arcology_oracle.notes.oracle_words import oracle_words_of
from arcology_oracle.notes.reader import read_org_bytes

OPENAI = '#s(ellama-session "s" #s(llm-openai-compatible nil nil nil nil "qwen2.5+notes:7b" "nomic" "http://127.0.0.1:7348/v1/") nil nil nil nil)'
OLLAMA_PLAIN = '#s(ellama-session "q+notes" #s(llm-ollama nil nil nil "http" "localhost" 11434 "llama3.2" "nomic") nil)'


def read(folder: Path, name: str, text: str, session: str | None):
    (folder / name).write_text(text, encoding="utf-8")
    if session is not None:
        (folder / f".{name}.session.el").write_text(session, encoding="utf-8")
    return read_org_bytes((folder / name).read_bytes(), name, root=folder)


def test_customised_nicks_and_an_openai_compatible_provider(tmp_path):
    parsed = read(tmp_path, "s.org", ":PROPERTIES:\n:ID: 1\n:END:\n*** Me:\nWhy?\n\n*** Bot:\nBecause.\n\n*** Me:\n", OPENAI)
    assert (parsed.ellama.user, parsed.ellama.assistant, parsed.ellama.level) == ("Me", "Bot", 3)
    assert [(t.speaker, t.text) for t in session_turns(parsed)] == [("user", "user: Why?"), ("qwen2.5+notes:7b", "qwen2.5+notes:7b: Because.")]
    assert oracle_words_of(parsed, 1000, 100)[0] == {2}, "the record holds no turn; the reply's heading is the oracle's"


def test_a_plain_models_session_names_its_replies_by_the_nick(tmp_path):
    # A grounded name elsewhere in the record (the session's id) is not its provider's model.
    parsed = read(tmp_path, "s.org", "** User:\nWhy?\n\n** Ellama:\nBecause.\n", OLLAMA_PLAIN)
    assert parsed.ellama.model is None
    assert [t.speaker for t in session_turns(parsed)] == ["user", "Ellama"]
    assert oracle_words_of(parsed, 1000, 100)[0] == set()


def test_notes_titled_like_turns_are_notes(tmp_path):
    plain = "** User:\nMy notes on users.\n\n** Ellama:\nMy cat.\n"
    # No session file; one that is no ellama session's; a file not starting with a turn;
    # a single nick: nothing is a session, and only the first two look for the file.
    cases = [
        ("a.org", plain, None, True),
        ("b.org", plain, "(setq ellama-user-nick \"User\") ; llama3.2+notes", True),
        ("c.org", "* Groceries\nOat milk.\n** User:\nx\n** Ellama:\ny\n", OPENAI, False),
        ("d.org", "* User:\nx\n* User:\ny\n", OPENAI, False),
    ]
    for name, text, session, looked in cases:
        parsed = read(tmp_path, name, text, session)
        assert parsed.ellama is None and session_turns(parsed) == [], name
        assert bool(parsed.setup_files) == looked, name
        assert oracle_words_of(parsed, 1000, 100) == (set(), {}), name


def test_a_grounded_name_in_another_field_of_the_provider_is_not_its_model(tmp_path):
    # The chat model is plain; the embedding model, a URL, a host or an authed Ollama's
    # key carry "+notes": the replies are the plain model's, no oracle's words.
    chat = "** User:\nWhy?\n\n** Ellama:\nBecause.\n"
    plain = {
        "emb.org": '#s(ellama-session "s" #s(llm-ollama nil nil nil "http" "localhost" 11434 "llama3.2" "nomic-embed-text+notes") nil)',
        "url.org": '#s(ellama-session "s" #s(llm-openai-compatible nil nil nil nil "gpt-4o" "e" "http://h/qwen+notes:7b/v1/") nil)',
        "key.org": '#s(ellama-session "s" #s(llm-ollama-authed nil nil nil "http" "h" 1 "llama3.2" "e" "k+notes") nil)',
        "cut.org": '#s(ellama-session "s" #s(llm-ollama nil nil nil "http" "h" 1 "llama3.2" "e+notes"',
    }
    for name, session in plain.items():
        parsed = read(tmp_path, name, chat, session)
        assert parsed.ellama is not None and parsed.ellama.model is None, name
        assert oracle_words_of(parsed, 1000, 100)[0] == set(), name
    grounded = {
        "authed.org": '#s(ellama-session "s" #s(llm-ollama-authed nil nil nil "http" "h" 1 "llama3.2+notes" "e" nil) nil)',
        "openai.org": '#s(ellama-session "s" #s(llm-openai nil nil nil nil "qwen2.5+notes:7b" "e") nil)',
        "old.org": '#s(ellama-session "s" #s(llm-ollama "http" "localhost" 11434 "llama3.2+notes" "nomic") nil)',
    }
    for name, session in grounded.items():
        assert read(tmp_path, name, chat, session).ellama.model in ("llama3.2+notes", "qwen2.5+notes:7b"), name


def test_a_session_file_that_is_a_symlink_is_not_read(tmp_path):
    # ellama writes the file itself; a link put in its place (to a file outside the
    # notes folder, perhaps) is not followed: the note stays a note.
    outside, notes = tmp_path / "elsewhere", tmp_path / "roam"
    outside.mkdir(), notes.mkdir()
    (outside / "secret.el").write_text(OPENAI, encoding="utf-8")
    (notes / ".s.org.session.el").symlink_to(outside / "secret.el")
    parsed = read(notes, "s.org", "** User:\nWhy?\n\n** Ellama:\nBecause.\n", None)
    assert parsed.ellama is None and oracle_words_of(parsed, 1000, 100) == (set(), {})
    assert parsed.setup_files, "still looked at: a file put there instead is read"
