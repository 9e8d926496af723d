"""A note of the user's holding an answer of the oracle's (one /converse wrote into it) is
searched by the user's words alone (its vector, its words): ``/similar?node=`` and
``/suggest-links?node=`` give what they give for the same note without the answer. Against
the app and the fake Ollama."""

from __future__ import annotations

KILN = "7777aaaa-0000-4000-8000-000000000007"
GLAZE = "7777aaaa-0000-4000-8000-000000000008"
USER = "My tenmoku glaze test tiles fired to cone ten in the gas kiln came out rust brown where the glaze pooled thick."
ANSWER = (
    "Feed the sourdough starter with rye flour and water twice a day, keep the levain warm, "
    "and watch the bulk fermentation of the bread dough rise by half before shaping the loaf."
)
GLAZE_NOTE = (
    f":PROPERTIES:\n:ID: {GLAZE}\n:END:\n#+title: Glaze chemistry\n\n* Iron glazes\n"
    "Tenmoku is an iron glaze: thick glaze pools rust brown at cone ten in a reduction kiln firing.\n"
)


def kiln(answer: bool) -> str:
    text = f":PROPERTIES:\n:ID: {KILN}\n:END:\n#+title: Kiln log\n\n* Tenmoku firing\n{USER}\n"
    if answer:
        text += "** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n:ORACLE_MODEL: m\n:END:\n" + ANSWER + "\n"
    return text


async def test_a_note_is_searched_by_the_users_words_not_the_oracles_answer_in_it(make_client, settings, roam_dir):
    (roam_dir / "glaze.org").write_text(GLAZE_NOTE, encoding="utf-8")
    shown = {}
    for answer in (True, False):
        (roam_dir / "kiln.org").write_text(kiln(answer), encoding="utf-8")
        client = await make_client(settings)
        resp = await client.get("/similar", params={"node": KILN, "k": "10", "all": "true"})
        similar = [(r["title"], r["score"]) for r in (await resp.json())["results"]]
        resp = await client.get("/suggest-links", params={"node": KILN, "k": "10", "all": "true"})
        links = [(s["title"], s["score"]) for s in (await resp.json())["suggestions"]]
        shown[answer] = similar, links
    # The answer's sourdough put "Starter maintenance" and "Sourdough Baking" second and
    # third of both lists, above 0.08: suggested as links. (The note's text is a
    # dialogue's scene with the answer, "Me: ..." then, so the scores differ a little.)
    baking = {"Starter maintenance", "Sourdough Baking", "Bread Hydration", "Baker's percentages"}
    for with_answer, without in zip(shown[True], shown[False]):
        assert [t for t, _ in with_answer][:5] == [t for t, _ in without][:5], shown
        assert with_answer[0][0] == "Glaze chemistry" and not baking & {t for t, _ in with_answer}, with_answer


def kiln_section(*, reply: bool) -> str:
    """The kiln log as one heading of the user's: their paragraph, and with ``reply`` an
    org-ai block whose grounded model answered about sourdough."""
    text = f":PROPERTIES:\n:ID: {KILN}\n:END:\n#+title: Kiln log\n\n* Tenmoku firing\n{USER}\n"
    if reply:
        text += f"\n#+begin_ai :model llama3.2+notes\n[ME]: What should I do next?\n\n[AI]: {ANSWER}\n#+end_ai\n"
    return text


async def test_a_section_is_searched_by_the_users_lines_not_the_reply_beside_them(make_client, settings, roam_dir):
    (roam_dir / "glaze.org").write_text(GLAZE_NOTE, encoding="utf-8")
    (roam_dir / "kiln.org").write_text(kiln_section(reply=True), encoding="utf-8")
    client = await make_client(settings)
    params = {"file": "kiln.org", "line": "6", "k": "10", "all": "true"}
    resp = await client.get("/similar", params=params)
    similar = [(r["title"], r["score"]) for r in (await resp.json())["results"]]
    resp = await client.get("/suggest-links", params=params)
    links = [(s["title"], s["score"]) for s in (await resp.json())["suggestions"]]
    # The reply's sourdough brought three baking notes into the first six of both lists;
    # the user's lines (the prompt is theirs too, so the lists are not quite those without
    # the block, where one baking note is tenth) do not.
    baking = {"Starter maintenance", "Sourdough Baking", "Bread Hydration", "Baker's percentages"}
    for shown in (similar, links):
        assert shown[0][0] == "Glaze chemistry" and not baking & {t for t, _ in shown[:6]}, shown
