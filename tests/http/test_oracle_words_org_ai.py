"""An org-ai chat (a ``#+begin_ai`` block, ``[ME]:`` / ``[AI]:`` turns) is dialogue: /recall
gives windows of it with its speakers; with one of the daemon's grounded models as its
``:model`` (``llama3.2+notes``) the replies are the oracle's words, as a gptel chat's are:
no evidence of /ask, no /similar result, and a heading holding nothing but the chat is no
note of the user's (one holding their own lines too: test_oracle_words_own_lines.py).
Against the real daemon and the fake Ollama."""

from __future__ import annotations

import json

MINE = "7777cccc-0000-4000-8000-000000000007"


def org_ai_note(model: str, marker: str, own: str = "My first notes on the celadon test tiles.\n\n") -> str:
    """A note whose heading holds ``own`` (the user's lines) and an org-ai chat with ``model``."""
    header = f" :model {model}" if model else ""
    return (
        f"#+title: Celadon\n\n* Celadon glaze crazing\n{own}#+begin_ai{header}\n"
        "[ME]: Why does my celadon glaze craze on the stoneware tiles?\n\n"
        f"[AI]: {marker} celadon glaze crazes when its expansion is higher than the stoneware body's.\n\n"
        "[ME]: And how do I stop the celadon crazing?\n\n"
        f"[AI_REASON]: {marker}THINKING the user wants a fix for the glaze.\n\n"
        f"[AI]: {marker} add silica to the celadon glaze, ten percent at a time.\n\n[ME]:\n#+end_ai\n"
    )


async def test_an_org_ai_chat_is_dialogue_and_a_grounded_ones_replies_are_the_oracles(make_client, settings, roam_dir, fake_ollama):
    (roam_dir / "celadon-grounded.org").write_text(org_ai_note("llama3.2+notes", "GROUNDEDAI", own=""))
    (roam_dir / "celadon-other.org").write_text(org_ai_note("", "OTHERAI"))
    (roam_dir / "celadon-mine.org").write_text(
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Celadon tiles\n\n* Celadon glaze test tiles\nMy celadon glaze crazes on stoneware.\n"
    )
    client = await make_client(settings)
    resp = await client.post("/recall", json={"question": "why does my celadon glaze craze on stoneware?", "k": 10})
    notes = {n["file"]: n for n in (await resp.json())["notes"]}
    assert notes["celadon-other.org"]["speakers"] == ["Me", "AI"], notes["celadon-other.org"]
    assert "Me: Why does my celadon glaze craze" in notes["celadon-other.org"]["text"]
    # /ask: the user's turns are evidence, the grounded model's replies and thinking are not.
    resp = await client.post("/ask", json={"question": "why does my celadon glaze craze on stoneware?"})
    assert resp.status == 200
    await resp.read()
    prompt = fake_ollama.state.chats[-1][0]["content"]
    assert "GROUNDEDAI" not in prompt and "OTHERAI" in prompt
    # /similar: the heading holding the grounded replies is never a result; /search marks it.
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    found = {(r["file"], r["heading"]) for r in (await resp.json())["results"]}
    assert ("celadon-grounded.org", "Celadon glaze crazing") not in found
    assert ("celadon-other.org", "Celadon glaze crazing") in found
    resp = await client.get("/search", params={"q": "GROUNDEDAI", "k": "10"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    assert roles[("celadon-grounded.org", "Celadon glaze crazing")] == "oracle", roles
    assert "GROUNDEDAITHINKING" not in json.dumps(fake_ollama.state.chats)
