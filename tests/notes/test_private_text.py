"""The privacy holes of issue 14 (items 1-3), each tried as a note in the vault and as
text a client sends: tags with Org's ``#`` and ``%``, ``#+filetags`` after the first
heading, a file-level ``ROAM_EXCLUDE``, ``ROAM_EXCLUDE: nil`` (org-roam 2.2: a node like
any other), and a heading holding a PGP block.

Real org files, the real indexer and SQLite (the database file and its WAL are searched
for the private words), the real app over HTTP with the fake Ollama recording every
prompt. Each hole has private words that must be nowhere, and a visible word that must be
there (so the test sees text when it is there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from arcology_oracle.notes.cleaning import strip_private
from arcology_oracle.errors import BadRequest, NotFound
from arcology_oracle.notes.capture import clean_tags
from arcology_oracle.notes.org_syntax import split_heading_tags
from arcology_oracle.notes.orgparse_safe import entry_values
from arcology_oracle.notes.reader import read_org_bytes
from arcology_oracle.notes.privacy import Privacy, file_tags, roam_excluded
from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes


@dataclass(frozen=True)
class Hole:
    name: str
    org: str
    private: tuple[str, ...]
    visible: str | None  # None: the whole text is private
    nodes: dict[str, str | None] = field(default_factory=dict)  # ID -> title, None: not a node


HOLES = (
    Hole(
        "hash tag",
        ":PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000001\n:END:\n#+title: Health\n"
        "* Therapy :private:#health:\n:PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000011\n:END:\n"
        "therapywombat sessions on tuesday\n** Notes\ntherapyquokka details\n"
        "* Gym :#health:\ngymvisiblenumbat squats\n",
        ("therapywombat", "therapyquokka"),
        "gymvisiblenumbat",
        {"14000000-0000-4000-8000-000000000011": None},
    ),
    Hole(
        "percent tag",
        "#+title: Money\n* Money :private:%fin:\nmoneyquokka balance\n* Budget :%fin:\nbudgetvisiblebilby plan\n",
        ("moneyquokka",),
        "budgetvisiblebilby",
    ),
    Hole(
        "filetags after the first heading",
        ":PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000003\n:END:\n#+title: Late filetags\n"
        "* First\nlatefiletagsdingo first words\n#+filetags: :journal:private:\n* Second\nlatefiletagsemu more\n",
        ("latefiletagsdingo", "latefiletagsemu"),
        None,
    ),
    Hole(
        "file-level ROAM_EXCLUDE",
        ":PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000004\n:ROAM_EXCLUDE: t\n:END:\n#+title: Excluded file\n"
        "fileexcludedkoala preamble\n* A heading\nfileexcludedwallaby body\n",
        ("fileexcludedkoala", "fileexcludedwallaby"),
        None,
    ),
    Hole(
        "PGP block in a heading",
        "#+title: Vault\n* Bank login\nbankheadingplatypus account notes\n-----BEGIN PGP MESSAGE-----\n\n"
        "hQEMA5pgparmored\n-----END PGP MESSAGE-----\nafterblockcassowary\n* Open\nopenvisiblelyrebird\n",
        ("bankheadingplatypus", "afterblockcassowary", "hqema5pgparmored"),
        "openvisiblelyrebird",
    ),
    Hole(
        "ROAM_EXCLUDE other than nil",
        "#+title: Excludes\n* Yes\n:PROPERTIES:\n:ROAM_EXCLUDE: yes\n:END:\nexcludeyesgalah\n"
        "* Empty\n:PROPERTIES:\n:ROAM_EXCLUDE:\n:END:\nexcludeemptyquoll\n"
        "* Upper NIL\n:PROPERTIES:\n:ROAM_EXCLUDE: NIL\n:END:\nexcludeupperbandicoot\n"
        "* Nil\n:PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000016\n:ROAM_EXCLUDE: nil\n:END:\n"
        "excludenilvisiblepossum is a node in org-roam 2.2\n",
        ("excludeyesgalah", "excludeemptyquoll", "excludeupperbandicoot"),
        "excludenilvisiblepossum",
        {"14000000-0000-4000-8000-000000000016": "Nil"},  # a node in org-roam 2.2
    ),
    # Org and org-roam read property drawers in any letter case (Org 9.5.5, org-roam 2.2.1).
    Hole(
        "lower-case file drawer with ROAM_EXCLUDE",
        ":properties:\n:ID: 14000000-0000-4000-8000-000000000007\n:ROAM_EXCLUDE: t\n:end:\n#+title: Secret\n\n"
        "lowerdrawerzebra words\n* Under it\nlowerdrawergnu more\n",
        ("lowerdrawerzebra", "lowerdrawergnu"),
        None,
        {"14000000-0000-4000-8000-000000000007": None},
    ),
    Hole(
        "mixed-case heading drawer with roam_exclude",
        ":Properties:\n:id: 14000000-0000-4000-8000-000000000008\n:End:\n#+title: Mixed drawers\n"
        "* Hidden\n:properties:\n:id: 14000000-0000-4000-8000-000000000018\n:roam_exclude: yes\n:end:\n"
        "mixeddrawertapir words\n** Below\nmixeddrawerokapi words\n* Shown\nmixeddrawervisibleemu words\n",
        ("mixeddrawertapir", "mixeddrawerokapi"),
        "mixeddrawervisibleemu",
        {"14000000-0000-4000-8000-000000000018": None, "14000000-0000-4000-8000-000000000008": "Mixed drawers"},
    ),
    # A tag run with a mark (Devanagari vowel signs): Org reads private there (Emacs 28.2).
    Hole(
        "tags in another script",
        "#+title: Script\n* Therapy :private:हिन्दी:\nscripttagcaracal words\n* Open :हिन्दी:\nscriptvisiblegecko words\n",
        ("scripttagcaracal",),
        "scriptvisiblegecko",
    ),
    # A drawer ends at a line that is only :END: (Org 9.5.5); a value holding ":END:"
    # ended it early, and the ROAM_EXCLUDE after it was read as body text.
    Hole(
        "a property value holding END",
        "#+title: Drawer end\n* Hidden\n:PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000019\n"
        ":NOTE: see the :END: marker\n:ROAM_EXCLUDE: t\n:END:\nendinvaluejerboa words\n"
        "* Shown\nendinvaluevisiblecapybara words\n",
        ("endinvaluejerboa",),
        "endinvaluevisiblecapybara",
        {"14000000-0000-4000-8000-000000000019": None},
    ),
    Hole(
        "a file drawer value holding END",
        ":PROPERTIES:\n:ID: 14000000-0000-4000-8000-000000000020\n:NOTE: a:end:b\n:ROAM_EXCLUDE: t\n:END:\n"
        "#+title: Whole file\nfileendinvaluemarten words\n* A heading\nfileendinvaluesable more\n",
        ("fileendinvaluemarten", "fileendinvaluesable"),
        None,
        {"14000000-0000-4000-8000-000000000020": None},
    ),
    # Org's org-entry-get: KEY+ adds to a property, and the first of a repeated key counts.
    Hole(
        "ROAM_EXCLUDE added to and repeated",
        "#+title: Appended\n* Added\n:PROPERTIES:\n:ROAM_EXCLUDE+: t\n:END:\nappendexcludewalrus\n"
        "* Nil then added\n:PROPERTIES:\n:ROAM_EXCLUDE: nil\n:ROAM_EXCLUDE+: t\n:END:\nnilappendedmarmot\n"
        "* Repeated\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:roam_exclude: nil\n:END:\nrepeatedexcludeferret\n"
        "* Nil first\n:PROPERTIES:\n:ROAM_EXCLUDE: nil\n:ROAM_EXCLUDE: t\n:END:\nnilfirstvisiblelynx\n",
        ("appendexcludewalrus", "nilappendedmarmot", "repeatedexcludeferret"),
        "nilfirstvisiblelynx",
    ),
)


def file_name(hole: Hole) -> str:
    return "holes/" + hole.name.replace(" ", "-").replace("#+", "").lower() + ".org"


@pytest.fixture
def vault(roam_dir):
    for hole in HOLES:
        path = roam_dir / file_name(hole)
        path.parent.mkdir(exist_ok=True)
        path.write_text(hole.org)
    return roam_dir


# --- the predicate, as Emacs reads the same text ------------------------------------


def test_tags_use_orgs_tag_characters():
    # Emacs 28.2 / Org 9.5.5: (org-get-tags) on these headings.
    assert split_heading_tags("Therapy :private:#health:") == ("Therapy", ["private", "#health"])
    assert split_heading_tags("Money :private:%fin:") == ("Money", ["private", "%fin"])
    assert split_heading_tags("Second :a@b:x#y:") == ("Second", ["a@b", "x#y"])
    assert split_heading_tags("B :x-y:") == ("B :x-y:", [])  # "-" is not a tag character
    # Marks of any script are tag characters ([:alnum:] in Emacs); the regex word class missed them.
    assert split_heading_tags("Therapy :private:हिन्दी:") == ("Therapy", ["private", "हिन्दी"])
    assert split_heading_tags("Count :Ⅷ:〇:") == ("Count", ["Ⅷ", "〇"])


def test_capture_tags_are_the_characters_org_reads_as_tags():
    # (string-match-p "\\`[[:alnum:]]\\'" C) in Emacs 28.2, for each character.
    assert clean_tags(["हिन्दी", "Ⅷ", "〇", "a_b", "#x", "%y", "z@w", "é"]) == ("हिन्दी", "Ⅷ", "〇", "a_b", "#x", "%y", "z@w", "é")
    for bad in ("x½", "²", "①", "a-b", "a b", "", "a:b"):
        with pytest.raises(BadRequest, match="invalid tag"):
            clean_tags([bad])


def test_filetags_are_collected_as_emacs_collects_them():
    # Each case checked with `emacs --batch` (Org 9.5.5): the value of org-file-tags.
    text = (
        "#+FILETAGS: work\n* A\n  #+filetags: :one:two: three:Private\n#+begin_example\n#+filetags: :ex:\n"
        "#+end_example\n:PROPERTIES:\n#+filetags: :indrawer:\n:END:\n# #+filetags: :comment:\n"
        "#+begin_quote\n#+filetags: :inquote:\n#+end_quote\n#+begin_src org\n#+filetags: :insrc:\n#+end_src\n"
        "#+begin_verse\n#+filetags: :inverse:\n#+end_verse\n#+filetags :nocolon:\n"
    )
    assert file_tags(text.split("\n")) == ("work", "one", "two", "three", "Private", "indrawer", "inquote")
    # A block without its end line is no block: the keyword inside counts.
    assert file_tags(["* A", "#+begin_src", "#+filetags: :unclosed:"]) == ("unclosed",)
    # ... and neither is one cut by a heading.
    assert file_tags(["#+begin_src", "* B", "#+filetags: :x:", "#+end_src"]) == ("x",)


def test_roam_exclude_follows_org_roam_2_2():
    # org-roam 2.2.1 (Debian): (not (org-entry-get (point) "ROAM_EXCLUDE")).
    assert not roam_excluded({}) and not roam_excluded({"ROAM_EXCLUDE": "nil"})
    assert not roam_excluded({"ROAM_EXCLUDE": "  nil "})
    for value in ("t", "yes", "NIL", "", "0"):
        assert roam_excluded({"ROAM_EXCLUDE": value}), value
    privacy = Privacy.from_tags(["Secret"])
    assert privacy.excludes(tags=["SECRET"], properties={}) and privacy.excludes(tags=["Crypt"], properties={})
    assert privacy.excludes(tags=[], properties={}, text="a\n-----BEGIN PGP MESSAGE-----\n")
    assert not privacy.excludes(tags=["secretary"], properties={"ROAM_EXCLUDE": "nil"}, text="x")


def test_a_drawer_is_read_as_org_entry_get_reads_it():
    # Each value checked with `emacs --batch` (Org 9.5.5): (org-entry-get (point) "ROAM_EXCLUDE").
    for lines, value in (
        ([("ROAM_EXCLUDE", "t"), ("roam_exclude", "nil")], "t"),
        ([("ROAM_EXCLUDE", "nil"), ("ROAM_EXCLUDE+", "t")], "t"),
        ([("ROAM_EXCLUDE+", "t")], "t"),
        ([("ROAM_EXCLUDE", "nil"), ("ROAM_EXCLUDE", "t")], "nil"),  # org-entry-get: nil
        ([("ROAM_EXCLUDE", "t"), ("ROAM_EXCLUDE+", "nil")], "t nil"),
        ([("ROAM_EXCLUDE", "nil"), ("ROAM_EXCLUDE+", "nil")], "nil"),  # nil
        ([("ROAM_EXCLUDE+", "a"), ("roam_exclude+", "b"), ("ROAM_EXCLUDE", "c")], "c a b"),
        ([("ROAM_EXCLUDE", ""), ("ROAM_EXCLUDE+", "x")], " x"),
    ):
        assert entry_values(lines) == {lines[0][0].rstrip("+"): value}, lines


# --- the index ------------------------------------------------------------------------


@pytest.mark.parametrize("hole", HOLES, ids=lambda h: h.name)
async def test_the_index_leaves_the_hole_out(hole, vault, make_settings):
    settings = make_settings(roam_dir=vault)
    index = OracleIndex(settings)
    await index.start()
    try:
        report = await index.reconcile()
        assert report.failed == {}
        for word in hole.private:
            assert (await search(index, word, 5))[1] == [], word
        if hole.visible:
            _, found = await search(index, hole.visible, 5)
            assert {r.file for r in found} == {file_name(hole)}
        for node_id, title in hole.nodes.items():
            if title is None:
                with pytest.raises(NotFound):
                    await index.node(node_id)
            else:
                assert (await index.node(node_id))[0]["title"] == title
    finally:
        await index.close()
    raw = db_bytes(settings.db_path).lower()
    for word in hole.private:
        assert word.encode() not in raw, word
    if hole.visible:
        assert hole.visible.encode() in raw


# --- text sent by clients ------------------------------------------------------------


def test_cleaning_keeps_exactly_the_lines_of_the_headings_the_index_keeps():
    for hole in HOLES:
        cleaned = strip_private(hole.org).lower()
        for word in hole.private:
            assert word not in cleaned, (hole.name, word)
        if hole.visible:
            assert hole.visible in cleaned, hole.name
        else:
            assert cleaned == "", hole.name
        indexed = "\n".join(h.body + h.title for h in read_org_bytes(hole.org.encode(), "x.org").headings).lower()
        for line in cleaned.split("\n"):
            if line.strip() and not line.startswith(("*", ":", "#+")):
                assert line in indexed, (hole.name, line)


def prompts(fake) -> str:
    return json.dumps(fake.state.chats).lower()


@pytest.mark.parametrize("hole", HOLES, ids=lambda h: h.name)
async def test_ask_puts_no_private_line_of_a_buffer_in_the_prompt(hole, vault, make_settings, make_client, fake_ollama):
    client = await make_client(make_settings(roam_dir=vault, ollama_host=fake_ollama.url))
    fake_ollama.state.clear_records()
    resp = await client.post("/ask", json={"question": "what about this note?", "buffer": hole.org})
    assert resp.status == 200, await resp.text()
    answer = (await resp.text()).lower()
    sent = prompts(fake_ollama)
    assert "what about this note" in sent  # the prompt was seen
    for word in hole.private:
        assert word not in sent and word not in answer, word
    if hole.visible:
        assert hole.visible in sent
    else:
        # Without a question, an all-private buffer is refused before any model call.
        fake_ollama.state.clear_records()
        resp = await client.post("/ask", json={"buffer": hole.org})
        assert resp.status == 400 and fake_ollama.state.chats == []


@pytest.mark.parametrize("hole", HOLES, ids=lambda h: h.name)
async def test_converse_puts_no_private_turn_in_the_prompt(hole, vault, make_settings, make_client, fake_ollama):
    client = await make_client(make_settings(roam_dir=vault, ollama_host=fake_ollama.url))
    question = "** Oracle\nNoted.\n** Me\nand what do you make of conversewombatq?\n"
    if hole.visible is None:
        org = hole.org + "* Talk\n" + question  # the file-level rule covers the whole text
    else:
        # The hole's text (its headings two levels deeper) as the first turn.
        demoted = "\n".join("**" + line if line.startswith("*") else line for line in hole.org.split("\n"))
        org = f"* Talk\n** Me\n{demoted}\n{question}"
    fake_ollama.state.clear_records()
    resp = await client.post("/converse", json={"org": org})
    sent = prompts(fake_ollama)
    for word in hole.private:
        assert word not in sent, word
    if hole.visible is None:
        # The whole text is private: nothing is left to answer.
        assert resp.status == 400 and fake_ollama.state.chats == []
    else:
        assert resp.status == 200, await resp.text()
        assert hole.visible in sent and "conversewombatq" in sent
