"""POST /memorize from Emacs: the ``source`` it sends (a link back to the heading the
region came from) becomes the capture's ``:SOURCE:`` property, and ``dailies_dir`` (its
``org-roam-dailies-directory``) says where today's daily note is."""

from __future__ import annotations

import datetime

import pytest

from arcology_oracle.notes.capture import make_capture
import aiohttp

from tests.index.test_memory import NOW, post, today_daily
from tests.org_samples import IDS


def test_source_is_one_property_line():
    entry = make_capture("kept", title=None, tags=(), now=NOW, node_id="s1", source="[[id:abc][Bread\n › Autolyse]]")
    assert list(entry.lines[1:7]) == [
        ":PROPERTIES:", ":ID:       s1", ":CREATED:  [2026-03-14 Sat 09:26]",
        ":CAPTURED_BY: arcology-oracle", ":SOURCE:   [[id:abc][Bread › Autolyse]]", ":END:",
    ]  # fmt: skip
    assert ":SOURCE:" not in make_capture("kept", title=None, tags=(), now=NOW, source="  ").lines


async def test_memorize_writes_source_into_the_dailies_dir_asked_for(daemon, roam_dir):
    link = "[[id:36fb47dd-e96a-4b44-80ce-b246a771f11d][Bread Hydration › Autolyse]]"
    status, body = await post(daemon, "/memorize", {"text": "Autolyse for an hour", "source": link, "dailies_dir": "journal/"})
    assert status == 200, body
    name = datetime.date.today().strftime("%Y-%m-%d") + ".org"
    assert body["file"] == f"journal/{name}"
    assert f":SOURCE:   {link}" in (roam_dir / "journal" / name).read_text().splitlines()
    assert not (roam_dir / "daily").exists()


@pytest.mark.parametrize("bad", ["/etc", "../outside", "~/notes"])
async def test_dailies_dir_stays_in_the_roam_directory(daemon, bad):
    status, body = await post(daemon, "/memorize", {"text": "x", "dailies_dir": bad})
    assert status == 400, body


async def test_a_private_capture_in_the_dailies_dir_asked_for_can_be_forgotten(daemon, roam_dir):
    """Not in the index, so found on disk: in the folder Emacs named too, not only in the
    configured dailies folder. The forget restores the file byte for byte (here: gone)."""
    name = datetime.date.today().strftime("%Y-%m-%d") + ".org"
    status, body = await post(daemon, "/memorize", {"text": "the locker code is 4711", "tags": ["private"],
                                                    "dailies_dir": "journal/"})  # fmt: skip
    assert status == 200 and body["file"] == f"journal/{name}" and body["indexed"] is False, body
    status, body = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, body
    assert not (roam_dir / "journal" / name).exists()


async def test_the_oracle_s_words_kept_are_marked_as_its_own(daemon, roam_dir):
    """An answer kept from Emacs's answers buffer (role oracle) is written with :ROLE:
    oracle: /search marks it as the oracle's, /similar and /ask never give it as the
    user's note. The same words kept without a role are the user's."""
    words = "Quenching the kiln slowly keeps celadon crackle fine"
    status, body = await post(daemon, "/memorize", {"text": words, "title": "Kiln answer", "role": "oracle"})
    assert status == 200, body
    assert ":ROLE:     oracle" in today_daily(roam_dir).read_text().splitlines()
    status, mine = await post(daemon, "/memorize", {"text": words, "title": "Kiln mine"})
    assert status == 200, mine
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.get(daemon.url + "/search", params={"q": "celadon crackle", "k": "10"}) as resp:
            found = {r["title"]: r.get("role") for r in (await resp.json())["results"]}
        async with session.get(daemon.url + "/similar", params={"node": mine["id"], "k": "50", "all": "true"}) as resp:
            similar = [r["node_id"] for r in (await resp.json())["results"]]
    # Only the kept answer is the oracle's: no heading beside it became a conversation turn.
    assert "Kiln mine" in found and {title: role for title, role in found.items() if role} == {"Kiln answer": "oracle"}, found
    assert body["id"] not in similar
    status, refused = await post(daemon, "/memorize", {"text": words, "role": "user"})
    assert status == 400, refused
    status, forgotten = await post(daemon, "/forget", {"id": body["id"]})
    assert status == 200, forgotten


async def test_a_capture_links_to_the_heading_it_came_from(daemon, roam_dir):
    """The :SOURCE: link counts as a link, as org-roam counts it: the heading the text came
    from is not offered a link to its own copy, and the capture's note links to it."""
    source = IDS["bakers_percentages"]
    text = "Every ingredient is weighed against the total flour of the dough"
    link = f"[[id:{source}][Bread Hydration › Baker's percentages]]"
    status, body = await post(daemon, "/memorize", {"text": text, "title": "Copied", "source": link})
    assert status == 200, body
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.get(f"{daemon.url}/nodes/{body['id']}") as resp:
            node = await resp.json()
        async with session.get(daemon.url + "/suggest-links", params={"node": source, "k": "50", "all": "true"}) as resp:
            suggested = [s["node_id"] for s in (await resp.json())["suggestions"]]
        async with session.get(daemon.url + "/similar", params={"node": source, "k": "50", "all": "true"}) as resp:
            similar = {r["node_id"]: r["links_here"] for r in (await resp.json())["results"]}
        async with session.get(f"{daemon.url}/nodes/{source}") as resp:
            backlinks = {n["node_id"] for n in (await resp.json())["backlinks"]}
    assert [n["node_id"] for n in node["links"]] == [source], node
    assert body["id"] not in suggested
    # Listed beside the heading it came from, it says it links there (Emacs: "links here"),
    # as every note that links there does, and no other.
    assert similar.get(body["id"]) is True, similar
    assert {n for n, here in similar.items() if here} == backlinks & similar.keys(), (similar, backlinks)
