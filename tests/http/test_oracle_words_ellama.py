"""An ellama session saved in the notes folder (``** User:`` / ``** Ellama:`` headings, its
``.NAME.session.el`` beside it naming ``llama3.2+notes``): its replies are the oracle's
words (notes/ellama.py, notes/oracle_words.py), so they never come back from /similar,
nor as the user's in /search, nor inside the notes a grounded model is given next; the
user's prompts stay theirs. A note with headings titled ``User:`` and ``Ellama:`` but no
session file is a note as before. Against the real daemon and the fake Ollama."""

from __future__ import annotations

import json

MINE = "7777dddd-0000-4000-8000-000000000007"
SESSION = "ellama-sessions/ellama Which moka pot grind (llama3.2+notes).org"
REPLY = "ELLAMAREPLY your moka pot notes say a grind a little coarser than espresso, setting twelve [1]."
CHAT = (
    "** User:\nWhich grind should my moka pot use?\n\n"
    f"** Ellama:\n{REPLY}\n\n*** Why coarser\nELLAMAREPLYSUB a moka pot at setting twelve chokes less.\n\n"
    f"Sources:\n- [1] [[id:{MINE}][Moka pot: grind settings]]\n\n"
    "** User:\nPROMPTTWO how long should the moka pot stay on the stove?\n\n"
    "** Ellama:\nELLAMAREPLYTWO take the moka pot off the stove when it gurgles, as your notes say.\n\n"
    "** User:\n"
)


def companion(model: str) -> str:
    """The ``.session.el`` ellama writes beside the session (``prin1`` of its record)."""
    return (
        f'#s(ellama-session "ellama Which moka pot grind ({model})" #s(llm-ollama nil nil nil "http" "127.0.0.1" 7348'
        f' "{model}" "nomic-embed-text") "/home/me/roam/{SESSION}" #s(llm-chat-prompt nil nil'
        ' (#s(llm-chat-prompt-interaction user "Which grind should my moka pot use?" nil nil)) nil nil nil nil nil nil)'
        ' nil (:dir "/home/me/" :uid "0123abcd"))'
    )


def companion_name(org: str) -> str:
    """Where ellama keeps the session of the org file ``org``."""
    folder, _, name = org.rpartition("/")
    return f"{folder}/.{name}.session.el"


FILES = {
    "moka-mine.org": (
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Moka pot\n\n"
        "* Moka pot grind settings\nMy moka pot grind is setting twelve, coarser than espresso; off the stove when it gurgles.\n"
    ),
    SESSION: CHAT,
    # Headings titled like ellama's, and no session beside them: the user's note.
    "moka-interview.org": (
        "#+title: Moka interview\n\n** User:\nUSERNOTE the barista said the moka pot grind should be setting twelve.\n\n"
        "** Ellama:\nELLAMANOTE Ellama, my cat, sleeps beside the moka pot on the stove.\n"
    ),
}
REPLIES = {(SESSION, "Ellama:"), (SESSION, "Why coarser")}


async def vault_client(make_client, settings, roam_dir, model: str = "llama3.2+notes"):
    for name, text in {**FILES, companion_name(SESSION): companion(model)}.items():
        (roam_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (roam_dir / name).write_text(text, encoding="utf-8")
    return await make_client(settings)


async def test_an_ellama_sessions_grounded_replies_are_no_notes(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    results = (await resp.json())["results"]
    found = {(r["file"], r["heading"]): r["role"] for r in results}
    assert "ELLAMAREPLY" not in json.dumps(results) and not set(found) & REPLIES
    assert found.get((SESSION, "User:"), "missing") is None, "a prompt is the user's words"
    assert [role for (file, _), role in found.items() if file == "moka-interview.org"] == [None], "no session: a note"
    resp = await client.get("/search", params={"q": "ELLAMAREPLY ELLAMAREPLYTWO moka pot setting twelve stove", "k": "40"})
    hits = (await resp.json())["results"]
    roles = {(r["file"], r["heading"]): r["role"] for r in hits}
    assert roles[(SESSION, "Ellama:")] == "oracle" and roles[(SESSION, "Why coarser")] == "oracle"
    assert roles[("moka-interview.org", "Ellama:")] is None and roles[("moka-interview.org", "User:")] is None
    for hit in hits:
        assert hit["role"] is not None or "ELLAMAREPLY" not in json.dumps(hit), hit
    resp = await client.get("/search", params={"q": "PROMPTTWO stove", "k": "30"})
    prompts = [r for r in (await resp.json())["results"] if "PROMPTTWO" in json.dumps(r)]
    assert prompts and prompts[0]["role"] is None, "the user's prompt is theirs"
    resp = await client.post("/recall", json={"question": "which grind did I ask about for the moka pot?", "k": 10})
    said = json.dumps(await resp.json())
    assert "user: Which grind should my moka pot use?" in said and "llama3.2+notes" in said


async def test_the_next_grounded_chat_is_not_given_the_sessions_replies(make_client, settings, roam_dir, fake_ollama):
    client = await vault_client(make_client, settings, roam_dir)
    question = "What grind setting and when off the stove for my moka pot?"
    resp = await client.post(
        "/api/chat", json={"model": "llama3.2+notes", "messages": [{"role": "user", "content": question}], "stream": False}
    )
    assert resp.status == 200, await resp.text()
    sent = json.dumps(fake_ollama.state.requests["/api/chat"][-1]["messages"])
    assert "My moka pot grind is setting twelve" in sent, "the user's note grounds the answer"
    assert "ELLAMAREPLY" not in sent
    assert "USERNOTE" in sent or "ELLAMANOTE" in sent, "a note titled like a session is a note"


async def test_a_session_with_a_plain_model_is_the_users(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir, model="llama3.2")
    resp = await client.get("/search", params={"q": "ELLAMAREPLYTWO gurgles", "k": "30"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    assert roles[(SESSION, "Ellama:")] is None, "a plain model's reply is no oracle's word"
    # Still a session: dialogue whose speakers are the user and the assistant's nick.
    resp = await client.post("/recall", json={"question": "how long should the moka pot stay on the stove?", "k": 10})
    notes = [n for n in (await resp.json())["notes"] if n["file"] == SESSION]
    assert notes and set(notes[0]["speakers"]) >= {"user", "Ellama"}, notes


async def test_a_grounded_embedding_model_is_not_the_sessions_model(make_client, settings, roam_dir):
    # The chat model is plain; the provider's embedding model carries "+notes": the
    # replies are the plain model's, the user's to search (notes/ellama.session_model).
    record = companion("llama3.2").replace('"nomic-embed-text"', '"nomic-embed-text+notes"')
    for name, text in {**FILES, companion_name(SESSION): record}.items():
        (roam_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (roam_dir / name).write_text(text, encoding="utf-8")
    client = await make_client(settings)
    resp = await client.get("/search", params={"q": "ELLAMAREPLYTWO gurgles", "k": "30"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    assert roles[(SESSION, "Ellama:")] is None, "a plain model's reply is no oracle's word"
