"""A text posted to ``POST /similar`` is embedded as the index embeds a note: chunked
heading by heading with the saved outline around it, unchanged chunks read from the index
(no embedding), the rest embedded, private headings never sent."""

from __future__ import annotations

import numpy as np
import pytest

from arcology_oracle.answers import retrieval, text_vectors

HYDRATION = "bread-hydration.org"
BAKERS_LINE = 12  # "* Baker's percentages"
AUTOLYSE_LINE = 37  # "** Autolyse", under "* High hydration doughs"


async def vector_of(index, text: str, **where) -> list[float] | None:
    return (await text_vectors.posted_text(index, text, **where)).vector


def section_at(client, path: str, line: int) -> str:
    """The heading at ``line`` with its body, up to the next heading: what Emacs sends."""
    lines = (client.index.settings.roam_dir / path).read_text().splitlines()
    end = next((i for i in range(line, len(lines)) if lines[i].startswith("*")), len(lines))
    return "\n".join(lines[line - 1 : end]) + "\n"


async def stored(client, path: str, line: int) -> list[float]:
    def read(store):
        row = store.heading_at(path, line)
        return retrieval.stored_vector(store, [row["id"]])

    return await client.index.read(read)


async def test_an_unchanged_heading_gets_its_stored_vector_without_embedding(client, fake_ollama):
    section = section_at(client, HYDRATION, BAKERS_LINE)
    fake_ollama.state.clear_records()
    vector = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE)
    assert fake_ollama.state.embedded_texts == []
    assert np.allclose(vector, await stored(client, HYDRATION, BAKERS_LINE))
    # The line may have moved in the unsaved buffer: the heading is found by its title.
    moved = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE + 9)
    assert np.allclose(moved, vector) and fake_ollama.state.embedded_texts == []
    # What Emacs posts for it: answered without a call to the embedder.
    body = {"text": section, "file": HYDRATION, "line": BAKERS_LINE, "node": "8d1398ec-2d9c-407d-98e9-ceb8407aa740"}
    resp = await client.post("/similar", json=body)
    assert resp.status == 200 and (await resp.json())["mode"] == "vector"
    assert fake_ollama.state.embedded_texts == []


async def test_an_edited_heading_is_embedded_in_its_saved_outline(client, fake_ollama):
    section = section_at(client, HYDRATION, BAKERS_LINE) + "Rye flour drinks more water.\n"
    fake_ollama.state.clear_records()
    vector = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE)
    [sent] = fake_ollama.state.embedded_texts
    assert "Bread Hydration > Baker's percentages\n\nEvery ingredient" in sent and sent.endswith("more water.")
    assert vector is not None and not np.allclose(vector, await stored(client, HYDRATION, BAKERS_LINE))
    # Renamed: the heading at its line gives the outline (here a sub-heading's).
    fake_ollama.state.clear_records()
    autolyse = section_at(client, HYDRATION, AUTOLYSE_LINE).replace("** Autolyse", "** Autolysis")
    await vector_of(client.index, autolyse, path=HYDRATION, line=AUTOLYSE_LINE)
    [sent] = fake_ollama.state.embedded_texts
    assert "Bread Hydration > High hydration doughs > Autolysis\n\nMix only flour" in sent, sent
    # Without the file, the same text has no outline to be put in.
    fake_ollama.state.clear_records()
    await vector_of(client.index, section)
    [alone] = fake_ollama.state.embedded_texts
    assert "Baker's percentages\n\nEvery ingredient" in alone and "> Baker's" not in alone, alone


async def test_a_whole_unchanged_note_is_the_mean_of_its_chunks(client, fake_ollama):
    text = (client.index.settings.roam_dir / "sourdough-baking.org").read_text()
    fake_ollama.state.clear_records()
    vector = await vector_of(client.index, text, path="sourdough-baking.org")
    assert fake_ollama.state.embedded_texts == []

    def whole(store):
        ids = [r["id"] for r in store.file_headings("sourdough-baking.org")]
        return retrieval.stored_vector(store, ids)

    assert np.allclose(vector, await client.index.read(whole))


async def test_a_private_heading_in_the_text_is_never_embedded(client, fake_ollama):
    text = "* Open part\nkneading by hand\n* Hidden part :private:\nprivatepelican recipe\n"
    fake_ollama.state.clear_records()
    assert await vector_of(client.index, text) is not None
    sent = fake_ollama.state.embedded_texts
    assert sent and not any("privatepelican" in t for t in sent), sent
    resp = await client.post("/similar", json={"text": "* Only this :private:\nprivatepelican"})
    assert resp.status == 200 and (await resp.json())["mode"] == "keyword"
    assert not any("privatepelican" in t for t in fake_ollama.state.embedded_texts)


async def test_with_the_embedder_down_the_unchanged_parts_still_give_a_vector(client, fake_ollama):
    fake_ollama.state.configure({"fail_status": 503, "fail_count": 100})
    section = section_at(client, HYDRATION, BAKERS_LINE)
    vector = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE)
    assert np.allclose(vector, await stored(client, HYDRATION, BAKERS_LINE))
    # The edited heading alone has nothing stored: keyword mode, as before.
    edited = section.replace("Every ingredient", "Each ingredient")
    assert await vector_of(client.index, edited, path=HYDRATION, line=BAKERS_LINE) is None
    assert client.index.embedder_state.reachable is False


async def test_an_edited_heading_posted_again_is_not_embedded_again(client, fake_ollama):
    # Point leaves the edited heading and comes back: the same text is asked again.
    section = section_at(client, HYDRATION, BAKERS_LINE) + "Spelt drinks less water.\n"
    fake_ollama.state.clear_records()
    first = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE)
    again = await vector_of(client.index, section, path=HYDRATION, line=BAKERS_LINE)
    assert len(fake_ollama.state.embedded_texts) == 1 and first == again


async def test_a_private_headings_words_never_steer_the_search(make_client, settings, roam_dir):
    # A saved note shares one rare word with a private heading of the posted text only.
    (roam_dir / "pelicans.org").write_text("#+title: Pelicans\n\nThe zyxwpelican nests on cliffs.\n")
    client = await make_client(settings)
    text = "#+title: Bread log\n\n* Open part\nkneading by hand, hydration\n* Hidden part :private:\nzyxwpelican zyxwpelican\n"
    resp = await client.post("/similar", json={"text": text, "k": 10})
    body = await resp.json()
    assert resp.status == 200 and body["results"], body
    assert "pelicans.org" not in [r["file"] for r in body["results"]]
    # The same words in the open part find it (the word is found, not just missed).
    resp = await client.post("/similar", json={"text": text.replace(" :private:", ""), "k": 10})
    assert "pelicans.org" in [r["file"] for r in (await resp.json())["results"]]


@pytest.mark.parametrize("drawer", ["", ":PROPERTIES:\n:ID: 9999aaaa-0000-4000-8000-000000000009\n:END:\n"])
async def test_a_new_first_heading_is_read_under_its_notes_title_as_it_will_be_saved(
    make_settings, fake_ollama, tmp_path, monkeypatch, drawer
):
    """The first heading written in a saved note has no saved heading to take its outline
    from: its note's title is still above it (its own, when it has an ID), for the words
    it is searched by and those that name other notes, as they will be once it is saved;
    and that note, which its words hold the title of, is not named by them (no node
    sent). A file the index does not have gives it no title."""
    from arcology_oracle.answers import mentions
    from arcology_oracle.answers.search import similar_to_text
    from arcology_oracle.index.service import OracleIndex

    found: list[set[str]] = []
    named = mentions.named
    monkeypatch.setattr(mentions, "named", lambda *a, **kw: found.append(named(*a, **kw)) or found[-1])

    roam = tmp_path / "diary"
    roam.mkdir()
    diary = roam / "diary.org"
    diary.write_text(":PROPERTIES:\n:ID: 9999aaaa-0000-4000-8000-000000000001\n:END:\n"
                     "#+title: Sourdough Diary\n\nStarted a starter today, rye flour and water.\n")  # fmt: skip
    (roam / "rye.org").write_text("#+title: Rye flour\n\nRye flour and water for a starter.\n")
    section = f"* Feeding\n{drawer}fed it rye flour and water, as in the Sourdough Diary.\n"
    index = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        new = await text_vectors.posted_text(index, section, path="diary.org", line=6, embed=False)
        elsewhere = await text_vectors.posted_text(index, section, path="unsaved.org", line=6, embed=False)
        _, results = await similar_to_text(index, section, 5, path="diary.org", line=6, keep_all=True)
        diary.write_text(diary.read_text() + "\n" + section)
        await index.reconcile()
        saved = await text_vectors.posted_text(index, section, path="diary.org", line=6, embed=False)
    finally:
        await index.close()
    assert saved.heading is not None and new.heading is None
    assert "Sourdough Diary" in new.words and (new.own_words, new.words) == (saved.own_words, saved.words)
    assert new.note == "9999aaaa-0000-4000-8000-000000000001" and elsewhere.note is None
    assert "unsaved" not in elsewhere.own_words + elsewhere.words.lower()
    # Its own note is among the results, and not named by its own title.
    assert "diary.org" in [r.file for r in results]
    assert len(found) == 1 and "9999aaaa-0000-4000-8000-000000000001" not in found[0], found
