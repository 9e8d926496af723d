"""A note the query's text names by its title or an alias (org-roam's unlinked
references) moves up in /similar's order and scores for it (answers/mentions.py): the
name as a phrase, not its words in another order, nor inside a longer word."""

from __future__ import annotations

import pytest

from arcology_oracle.answers import mentions, moves
from arcology_oracle.answers.retrieval import Result
from tests.answers.similar_routes import scores_by_route

QUERY = "4444aaaa-0000-4000-8000-000000000000"
# The more of the query's words a note holds, the higher the text ranks it: 4, 3, 2, 1.
NOTES = {f"4444aaaa-0000-4000-8000-00000000000{n}": n for n in (4, 3, 2, 1)}
WORDS = "quince medlar sorrel fennel lovage".split()
LAST = "4444aaaa-0000-4000-8000-000000000001"  # the text's last
NAME = "Old Mill Road"


def write_notes(roam, closing: str):
    """The query (its words, then ``closing``) and the four notes, the last titled
    ``NAME``; returns the query's file. Undated, so that no day moves anything."""
    roam.mkdir(exist_ok=True)
    for node, shared in [(QUERY, len(WORDS)), *NOTES.items()]:
        title = NAME if node == LAST else f"Plot {shared}"  # the others' names: not in the query
        # Every note holds the name's words, so that they tell none of them apart.
        body = f"{' '.join(WORDS[:shared])} in the garden, by a road near an old mill, a lane." + (
            f" {closing}" if node == QUERY else "")
        aliases = ":ROAM_ALIASES: \"The Lane\"\n" if node == LAST else ""
        (roam / f"note{node[-1]}.org").write_text(f":PROPERTIES:\n:ID: {node}\n{aliases}:END:\n#+title: {title}\n\n{body}\n")
    return roam / "note0.org"


async def scored(make_settings, fake_ollama, query_file) -> list[dict[str, float]]:
    """Node ID -> score by /similar?node=, POST /similar and /similar?file=&line= of the
    query's title line (the file's own heading: a section query)."""
    return await scores_by_route(make_settings, fake_ollama, query_file, QUERY, 4, line=1)


@pytest.mark.parametrize("closing", [f"Then up the {NAME.lower()}.", "Then up the lane, the last one."])
async def test_a_note_the_query_names_moves_up_and_scores_for_it(make_settings, fake_ollama, tmp_path, closing):
    """By its title (any case) or by an alias, the named note comes first on every route
    (from below, where the text ranks it when the query holds the same words in another
    order), and scores higher for it."""
    named = await scored(make_settings, fake_ollama, write_notes(tmp_path / "a", closing))
    # The same words, no name: "road mill old" and "lane the" hold every word of either.
    plain_closing = "Then up the road mill old." if NAME.lower() in closing else "Then up lane the, the last one."
    plain = await scored(make_settings, fake_ollama, write_notes(tmp_path / "b", plain_closing))
    for route, (found, unnamed) in enumerate(zip(named, plain)):
        assert list(found)[0] == LAST, (route, found)
        assert list(unnamed)[0] != LAST, (route, unnamed)
        assert found[LAST] > 2 * unnamed[LAST], (route, found, unnamed)  # B_NAMED: 3.3 times the odds


async def test_a_link_is_not_a_mention(make_settings, fake_ollama, tmp_path):
    """The query links to the note, its name the link's description: that is no mention
    (the name is in the searched text either way), so the note neither moves up nor
    scores for it as the named note of the test above does."""
    named = await scored(make_settings, fake_ollama, write_notes(tmp_path / "a", f"Then up the {NAME.lower()}."))
    linked = await scored(make_settings, fake_ollama, write_notes(tmp_path / "b", f"Then up the [[id:{LAST}][{NAME}]]."))
    for route, (by_name, by_link) in enumerate(zip(named, linked)):
        assert list(by_link)[0] != LAST, (route, by_link)
        assert by_name[LAST] > 2 * by_link[LAST], (route, by_name, by_link)
    words = mentions.own_words([("Plot", f"by [[id:{LAST}][{NAME}]] and [[https://x.org][the lane]], near a mill", {})])
    # A link to a note goes, description and all; another link's description stays.
    assert mentions.fold(words) == "plot | by and the lane , near a mill"
    # A file's keyword lines (its title, its tags) and org-roam's links by title go too.
    body = "#+title: Orchard\n#+filetags: :levain:\nSee [[roam:Old Mill Road]] and [[roam:Lane][the lane]]."
    assert mentions.fold(mentions.own_words([("Orchard", body, {})])) == "orchard | see and ."
    # A note the query links to is not named, wherever its name is (a heading's title
    # holds its link as the description).
    assert mentions.named(_Names(), "Up the Old Mill n1", results(4), linked=["n1"]) == set()


@pytest.mark.parametrize("role", ["user", "oracle"])
async def test_the_oracles_answers_name_no_note(make_settings, fake_ollama, tmp_path, monkeypatch, role):
    """The oracle's answers in a conversation note are not its author's words (as their
    links are not the author's links): the name written in one moves nothing on any
    route, that answer asked about as a section and the link suggestions included,
    where the same heading written by the user does."""
    from arcology_oracle.answers import links
    from arcology_oracle.index.service import OracleIndex

    turn = f"\n\n* About the walk\n:PROPERTIES:\n:ROLE: {role}\n:END:\nThen up the {NAME.lower()}."
    query_file = write_notes(tmp_path, turn)
    line = query_file.read_text().splitlines().index("* About the walk") + 1
    found: list[set[str]] = []
    named = mentions.named
    monkeypatch.setattr(mentions, "named", lambda *a, **kw: found.append(named(*a, **kw)) or found[-1])
    by_route = await scores_by_route(make_settings, fake_ollama, query_file, QUERY, 4, line=line)
    for route, scores in enumerate(by_route[:2]):
        assert (list(scores)[0] == LAST) == (role == "user"), (route, scores)
    # Asked about as a section (route 2), the answer's words are the query itself, the
    # name's among them, so the words may rank the named note first: only the mention
    # (below) must move nothing. The user's own section is first by both.
    assert role == "oracle" or list(by_route[2])[0] == LAST, by_route[2]
    index = OracleIndex(make_settings(roam_dir=tmp_path, ollama_host=fake_ollama.url))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        await index.read(lambda s: links.link_candidates(s, index.settings, QUERY, 4))
        await index.read(lambda s: links.link_candidates(
            s, index.settings, QUERY, 4, heading_query=links._heading_query(s, query_file.name, line, index.settings)))  # fmt: skip
    finally:
        await index.close()
    assert len(found) == 5 and all((LAST in each) == (role == "user") for each in found), found


def test_a_sections_words_are_its_own_and_the_titles_above_it_not_its_tags():
    """A section names notes by its title, its text and the titles above it (its note's,
    its outline path): the author's words. Not by its tags or aliases, which the index
    searches it with too."""
    store = _Names()
    row = {"node_title": "Walks by the Old Mill n1", "olp": ["Old Mill n2 walks"], "tags": ["oldmilln3"]}
    words = mentions.own_words([("Feeding", "every day", {})], above=mentions.titles_above(row))
    assert mentions.named(store, words, results(4)) == {"n1", "n2"}
    assert mentions.named(store, mentions.own_words([("Feeding", "every day", {})]), results(4)) == set()
    # The parts are kept apart: no name runs from a title into its body.
    assert mentions.named(store, mentions.own_words([("Up the old", "mill n3 road", {})]), results(4)) == set()


def results(n: int) -> list[Result]:
    return [Result(f"n{i}", None, f"t{i}", f"t{i}", [], f"f{i}.org", 1, 1.0, "") for i in range(n)]


def test_a_section_names_moves_further_than_a_whole_notes():
    """Twenty places for a section's text, eight for a whole note's: rank 25 to 5 and to 17."""
    for note_query, to in [(False, 5), (True, 17)]:
        order = [r.node_id for r in moves.moved_up(results(30), mentions.places({"n25"}, note_query), 30)]
        assert order.index("n25") == to
    assert moves.moved_up(results(30), {}, 10) == results(30)[:10]


@pytest.mark.parametrize(
    ("text", "name", "holds"),
    [
        ("we walked the old mill road.", "old mill road", True),
        ("old mill road", "old mill road", True),
        ("the old mill roads", "old mill road", False),  # inside a longer word
        ("bold mill road", "old mill road", False),
        ("emacsの設定を書いた", "emacs", True),  # Japanese writes no space after a name
        ("今日は設定を書いた", "設定", False),  # two characters: shorter than MIN_NAME_CHARS
        ("今日はパッケージ管理の話", "パッケージ管理", True),  # inside a run of CJK
        ("c++ and rust", "c++", True),  # a name ending in punctuation needs no boundary there
        ("the orgmode manual", "org", False),
        ("see emacs_lisp", "emacs", False),  # "_" joins words
        ("cafe\u0301 au lait", "caf\u00e9", True),  # an accent typed apart is the composed one
    ],
)
def test_a_name_is_held_as_a_phrase_not_inside_a_word(text, name, holds):
    assert mentions.holds(mentions.fold(text), mentions.fold(name)) is holds


def test_names_fold_case_and_white_space():
    assert mentions.holds(mentions.fold("Up the OLD\n  Mill\tRoad!"), mentions.fold("Old Mill  Road"))


class _Names:
    """A store that knows the names of the nodes ``n0``... only."""

    def node_names(self, node_ids):
        return {n: [f"Old Mill {n}"] for n in node_ids if n.startswith("n")}


def test_names_are_looked_for_in_the_first_part_of_a_long_text_and_not_the_querys_own():
    far = "x " * mentions.MAX_TEXT_CHARS
    text = f"Up the old mill n1 and the old mill n2. {far} Old mill n3."
    assert mentions.named(_Names(), text, results(4)) == {"n1", "n2"}
    assert mentions.named(_Names(), text, results(4), own=["n1"]) == {"n2"}
    assert mentions.named(_Names(), text, results(4), own=["n1", "n2"]) == set()  # the enclosing notes too
    assert mentions.named(_Names(), "", results(4)) == set()


async def test_the_notes_enclosing_a_section_are_not_named_by_its_outline(make_settings, fake_ollama, tmp_path, monkeypatch):
    """A section's outline path holds the titles of the notes enclosing it: with
    ``same_file`` those notes are candidates, and must not be moved up and scored for
    being above it. (A heading's link suggestions never offer them: a link to the note
    one is in.)"""
    from arcology_oracle.answers import links
    from arcology_oracle.answers.search import similar_line, similar_to_text
    from arcology_oracle.index.service import OracleIndex

    parent, section = "5555aaaa-0000-4000-8000-000000000001", "5555aaaa-0000-4000-8000-000000000002"
    roam = tmp_path / "orchard"
    roam.mkdir()
    (roam / "orchard.org").write_text(
        "#+title: Quince Orchard\n\n"
        f"* Orchard Walks\n:PROPERTIES:\n:ID: {parent}\n:END:\nquince medlar walks.\n"
        f"** Pruning\n:PROPERTIES:\n:ID: {section}\n:END:\nquince medlar pruning in winter.\n"
    )
    (roam / "other.org").write_text(":PROPERTIES:\n:ID: 5555aaaa-0000-4000-8000-000000000003\n:END:\n#+title: Medlar\n\nquince.\n")
    found: list[set[str]] = []
    named = mentions.named
    monkeypatch.setattr(mentions, "named", lambda *a, **kw: found.append(named(*a, **kw)) or found[-1])
    index = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        _, results = await index.read(lambda s: similar_line(s, index.settings, "orchard.org", 8, 5, same_file=True))
        _, suggested = await index.read(
            lambda s: links.link_candidates(s, index.settings, section, 5, heading_query=links._heading_query(s, "orchard.org", 8, index.settings))
        )
        # Posted as the unsaved state of the section, with no node: its saved note's.
        await similar_to_text(index, "** Pruning\nquince medlar pruning in winter.\n", 5, path="orchard.org", line=8)
    finally:
        await index.close()
    assert parent in {r.node_id for r in results} and parent not in {r.node_id for r in suggested}
    assert len(found) == 3 and all(parent not in f for f in found), found


async def test_a_note_linked_from_a_heading_title_is_not_named(make_settings, fake_ollama, tmp_path, monkeypatch):
    """A link in a heading's title is stored as its description, which is the note's
    name: the note the query links to is never named, on any route."""
    query_file = write_notes(tmp_path / "roam", "Then home.")
    query_file.write_text(query_file.read_text() + f"* Up the [[id:{LAST}][{NAME}]]\nquince medlar.\n")
    found: list[set[str]] = []
    named = mentions.named
    monkeypatch.setattr(mentions, "named", lambda *a, **kw: found.append(named(*a, **kw)) or found[-1])
    await scores_by_route(make_settings, fake_ollama, query_file, QUERY, 4, line=1)
    assert len(found) == 3 and all(LAST not in f for f in found), found


async def test_a_grounded_chats_reply_names_no_note(make_settings, fake_ollama, tmp_path, monkeypatch):
    """A grounded gptel reply is the oracle's words as an answer is, though no ``:ROLE:``
    says so (its bounds and the ``+notes`` model do: notes/oracle_words.py): the name it
    writes moves nothing, on any route. It did on ``?node=`` and ``POST /similar``,
    which read the query's words with only ``:ROLE: oracle`` left out."""
    from tests.http.test_oracle_words_gptel import with_bounds

    query_file = write_notes(tmp_path, "")
    reply = f"Then up the {NAME.lower()}, your notes say."
    drawer, rest = query_file.read_text().split(":END:\n", 1)
    head = drawer.replace("{", "{{").replace("}", "}}")
    head += ":GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n"
    query_file.write_text(with_bounds(head, rest + "\n* Where did the walk go?\n" + reply + "\n", [reply]))
    line = query_file.read_text().splitlines().index("* Where did the walk go?") + 1
    found: list[set[str]] = []
    named = mentions.named
    monkeypatch.setattr(mentions, "named", lambda *a, **kw: found.append(named(*a, **kw)) or found[-1])
    await scores_by_route(make_settings, fake_ollama, query_file, QUERY, 4, line=line)
    assert len(found) == 3 and not any(LAST in each for each in found), found
