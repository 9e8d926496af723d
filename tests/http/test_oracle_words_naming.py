"""A heading of the user's that holds a grounded model's reply besides their own lines is
their note, read without the reply (notes/oracle_words.py): the note the reply names
(another note's title written in it) is not named by the user, so it moves nothing up in
/similar and /suggest-links (answers/mentions.py), as a name in the user's own words does.
Against the real daemon and the fake Ollama."""

from __future__ import annotations

import pytest

from tests.http.test_oracle_words_gptel import with_bounds

QUERY = "7777dddd-0000-4000-8000-000000000000"
NAMED = "7777dddd-0000-4000-8000-000000000001"
NOTES = {NAMED: "Old Mill Road", **{f"7777dddd-0000-4000-8000-00000000000{n}": f"Plot {n}" for n in (2, 3, 4)}}
WORDS = "quince medlar sorrel fennel lovage"
HEADING = "* Where did the walk go?"
TYPED = "MYTYPED we walked past the quince and the medlar to the lane by the mill."
# A grounded reply in the user's heading (a gptel chat's, an org-ai block's) names the
# note; the same words in another order name nothing.
NAMING = "Then up the old mill road, as your notes say."
UNNAMING = "Then up the road mill old, as your notes say."


def gptel(reply: str | None) -> str:
    """A gptel chat: ``HEADING``, then ``reply`` (None: no reply), then the user's line."""
    head = (f":PROPERTIES:\n:ID: {QUERY}\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {{points}}))\n:END:\n"
            "#+title: Garden walks\n\n")  # fmt: skip
    body = f"{WORDS} in the garden.\n\n{HEADING}\n" + (f"{reply}\n\n" if reply else "") + f"{TYPED}\n"
    return with_bounds(head, body, [reply] if reply else [])


def org_ai(reply: str | None) -> str:
    """The user's line, then an org-ai chat with a grounded model under ``HEADING``."""
    answer = f"[AI]: {reply}\n" if reply else ""
    return (
        f":PROPERTIES:\n:ID: {QUERY}\n:END:\n#+title: Garden walks\n\n{WORDS} in the garden.\n\n{HEADING}\n{TYPED}\n\n"
        f"#+begin_ai :model llama3.2+notes\n[ME]: Where did the walk go?\n\n{answer}#+end_ai\n"
    )


def write_vault(roam, chat: str) -> int:
    """The notes (every one holding the name's words, so that no word tells them apart)
    and the query's note holding ``chat``; returns its heading's line."""
    roam.mkdir()
    for node, title in NOTES.items():
        (roam / f"{node[-1]}.org").write_text(
            f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: {title}\n\n{WORDS} in the garden, by a road near an old mill, a lane.\n"
        )
    (roam / "walks.org").write_text(chat)
    return chat.splitlines().index(HEADING) + 1


async def ranked(make_client, make_settings, fake_ollama, roam, chat: str) -> dict[str, list]:
    """``(node, score)`` of each result, in order, by route: the query's note and its
    heading, on /similar and /suggest-links, and the file's text posted to /similar."""
    line = write_vault(roam, chat)
    client = await make_client(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    out = {}
    for route, path, params in (
        ("similar node", "/similar", {"node": QUERY}),
        ("similar heading", "/similar", {"file": "walks.org", "line": line}),
        ("suggest node", "/suggest-links", {"node": QUERY}),
        ("suggest heading", "/suggest-links", {"file": "walks.org", "line": line}),
    ):
        resp = await client.get(path, params={**params, "k": "10", "all": "true"})
        body = await resp.json()
        assert resp.status == 200, body
        out[route] = [(r["node_id"], round(r["score"], 6)) for r in body.get("results") or body["suggestions"]]
    text = (roam / "walks.org").read_text()
    resp = await client.post("/similar", json={"text": text, "node": QUERY, "k": 10, "all": True})
    out["similar posted"] = [(r["node_id"], round(r["score"], 6)) for r in (await resp.json())["results"]]
    await client.close()
    return out


@pytest.mark.parametrize("chat", [gptel, org_ai])
async def test_a_grounded_reply_in_the_users_heading_names_no_note(make_client, make_settings, fake_ollama, tmp_path, chat):
    """Every route ranks and scores the notes as when the reply's words name nothing (the
    same words in another order); the named note scored three times as high on every
    route (from the stored body, which keeps the reply, and from the posted text). A gptel
    chat's heading is stored as if it held no reply, so its routes answer as they do for
    the heading without it (an org-ai block's keeps the chat's scenes for /recall, reply
    and all, and they differ)."""
    naming = await ranked(make_client, make_settings, fake_ollama, tmp_path / "naming", chat(NAMING))
    unnaming = await ranked(make_client, make_settings, fake_ollama, tmp_path / "unnaming", chat(UNNAMING))
    without = await ranked(make_client, make_settings, fake_ollama, tmp_path / "without", chat(None)) if chat is gptel else {}
    lifted = {}
    for route, found in naming.items():
        assert {node for node, _ in found} == set(NOTES), (route, found)
        if found != unnaming[route] or ("heading" in route and found != without.get(route, found)):
            lifted[route] = {"named": dict(found)[NAMED], "unnamed": dict(unnaming[route])[NAMED]}
    assert not lifted, sorted(lifted.items())
