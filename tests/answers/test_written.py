"""Notes written about the same time as the query's note move up in /similar's order
(answers/written.py): by the days the notes state (org-roam's file names, :CREATED:),
never by a file's modification time, and less on a day when many notes were made."""

from __future__ import annotations

import datetime
import os

import pytest

from arcology_oracle.answers import moves, written
from arcology_oracle.answers.retrieval import Result
from tests.answers.similar_routes import scores_by_route

QUERY = "3333aaaa-0000-4000-8000-000000000000"
# The more of the query's words a note holds, the higher the text ranks it: 4, 3, 2, 1.
NOTES = {f"3333aaaa-0000-4000-8000-00000000000{n}": n for n in (4, 3, 2, 1)}
# Every file was last modified the day the dated notes were written: were that a day of
# writing, every undated note would have been written with them.
MODIFIED = datetime.datetime(2024, 3, 10, 12).timestamp()
WORDS = "quince medlar sorrel fennel lovage".split()
LAST = "3333aaaa-0000-4000-8000-000000000001"  # the text's last


def write_notes(roam, names: dict[str, str]):
    """The query and the four notes, each file named by ``names`` (node -> file stem);
    returns the query's file."""
    roam.mkdir(exist_ok=True)
    for node, shared in [(QUERY, len(WORDS)), *NOTES.items()]:
        path = roam / f"{names[node]}.org"
        path.write_text(f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: {' '.join(WORDS[:shared])}\n\n"
                        f"{' '.join(WORDS[:shared])} in the garden.\n")  # fmt: skip
        os.utime(path, (MODIFIED, MODIFIED))
    return roam / f"{names[QUERY]}.org"


async def scored(make_settings, fake_ollama, query_file) -> tuple[dict[str, float], dict[str, float]]:
    """Node ID -> score, in the order /similar?node= and POST /similar (the query's text,
    with its node) rank them for the query, in process."""
    by_node, by_text = await scores_by_route(make_settings, fake_ollama, query_file, QUERY, 4)
    return by_node, by_text


async def ranked(make_settings, fake_ollama, query_file) -> tuple[list[str], list[str]]:
    """The node IDs of :func:`scored`, in order."""
    by_node, by_text = await scored(make_settings, fake_ollama, query_file)
    return list(by_node), list(by_text)


def named(query_day: str | None, last_day: str | None) -> dict[str, str]:
    """File stems: org-roam's ``%Y%m%d%H%M%S-slug`` for a day, a bare slug for None; the
    other notes a year before."""
    def stem(day, i):
        return f"{day}{10 + i:02d}0000-note{i}" if day else f"note{i}"

    names = {QUERY: stem(query_day, 0)}
    for i, node in enumerate(NOTES, start=1):
        names[node] = stem(last_day if node == LAST else "20230310", i)
    return names


async def test_a_note_written_the_same_day_moves_up(make_settings, fake_ollama, tmp_path):
    query_file = write_notes(tmp_path / "roam", named("20240310", "20240310"))
    by_node, by_text = await ranked(make_settings, fake_ollama, query_file)
    assert by_node == [LAST, *list(NOTES)[:3]]
    assert by_text == by_node


async def test_a_note_written_the_same_day_scores_for_it(make_settings, fake_ollama, tmp_path):
    """The note that moved up for its day scores higher than the same note undated (the
    score's ``written`` feature): its score agrees with its new place a little more."""
    same_day = await scored(make_settings, fake_ollama, write_notes(tmp_path / "a", named("20240310", "20240310")))
    undated = await scored(make_settings, fake_ollama, write_notes(tmp_path / "b", named("20240310", None)))
    for dated, plain in zip(same_day, undated):
        assert dated[LAST] > plain[LAST] + 0.05, (dated, plain)
        others = [node for node in NOTES if node != LAST]
        assert {n: dated[n] for n in others} == {n: plain[n] for n in others}  # a year before: no change


@pytest.mark.parametrize(("query_day", "last_day"), [("20240310", None), (None, "20240310")])
async def test_without_a_stated_day_of_writing_the_text_order_stands(make_settings, fake_ollama, tmp_path, query_day, last_day):
    """Every file was modified the day the dated ones were written: no day of writing."""
    query_file = write_notes(tmp_path / "roam", named(query_day, last_day))
    by_node, by_text = await ranked(make_settings, fake_ollama, query_file)
    assert by_node == list(NOTES)
    assert by_text == by_node


def results(n: int) -> list[Result]:
    return [Result(f"n{i}", None, f"t{i}", f"t{i}", [], f"f{i}.org", 1, 1.0, "") for i in range(n)]


@pytest.mark.parametrize(("written_that_day", "to"), [(2, 5), (400, 22)])
def test_a_day_of_many_notes_moves_them_less(monkeypatch, written_that_day, to):
    """The same day, rank 25 moves up the full twenty places when two notes were written
    that day; with 400 (an import) by the graph's rarity weight, 20 x log 3 / log 401 =
    3.7 places (to 21.3: behind rank 21)."""
    day = datetime.date(2024, 3, 10)
    monkeypatch.setattr(written.dated, "written_days", lambda store, ids: {"n25": "2024-03-10", "n3": "2023-03-10"})
    monkeypatch.setattr(written.dated, "written_on", lambda store, iso: written_that_day)
    near = written.nearness(None, day, results(30))
    order = [r.node_id for r in moves.moved_up(results(30), written.places(near), 30)]
    assert order.index("n25") == to
    assert order.index("n3") == 3  # a year apart: e^-121 of a place
    assert written.nearness(None, None, results(30)) == {}
    assert written.places({}) == {}


# A sourdough note and its neighbours, and notes about other things. The tax return shares
# no word with the starter but was written the same day.
STARTER = "3333bbbb-0000-4000-8000-000000000000"
TAX = "3333bbbb-0000-4000-8000-000000000001"
KITCHEN = {
    "3333bbbb-0000-4000-8000-000000000002": "Bread hydration: water and flour for a sourdough dough.",
    "3333bbbb-0000-4000-8000-000000000003": "Pasta dough: flour, eggs, kneading the dough smooth.",
}
ELSEWHERE = [
    "Rust ownership: a value has one owner; borrowing lends it.",
    "Growing tomatoes: seedlings, pruning suckers, blight.",
    "SQLite indexing: a covering index answers from the B-tree.",
    "Marathon training: long runs, intervals, a taper.",
    "Guitar practice: scales with a metronome, chord changes.",
    "Birdwatching: binoculars, herons and warblers at the marsh.",
]


def write_vault(roam, dated: bool):
    """Ten notes; with ``dated`` the starter and the tax return state the same day of
    writing (the others other days). Returns the starter's file."""
    roam.mkdir()
    notes = {STARTER: ("2024-05-01", "Sourdough starter: feed the levain flour and water daily; a sour starter."),
             TAX: ("2024-05-01", "Tax return 2023: receipts, deductions, the employer's income statement.")}  # fmt: skip
    notes |= {node: ("2024-02-01", text) for node, text in KITCHEN.items()}
    notes |= {f"3333bbbb-0000-4000-8000-0000000001{i:02d}": (f"2023-0{i + 1}-15", text) for i, text in enumerate(ELSEWHERE)}
    for i, (node, (day, text)) in enumerate(notes.items()):
        title, body = text.split(": ", 1)
        created = f":CREATED: [{day}]\n" if dated else ""
        (roam / f"note{i}.org").write_text(f":PROPERTIES:\n:ID: {node}\n{created}:END:\n#+title: {title}\n\n{body}\n")
    return roam / "note0.org"


async def test_a_day_alone_moves_and_scores_nothing(make_settings, fake_ollama, tmp_path):
    """The same day is support for what the text says, never evidence alone: a note
    sharing nothing with the query's but its day of writing (closer to it than the
    average note is not) keeps the place and the score it has undated, by node and by
    text. It went from last to first, scoring nearly nine times what it did, when the day
    counted alone."""
    dated = await scores_by_route(make_settings, fake_ollama, write_vault(tmp_path / "a", True), STARTER, 10)
    undated = await scores_by_route(make_settings, fake_ollama, write_vault(tmp_path / "b", False), STARTER, 10)
    for with_days, without in zip(dated, undated):
        assert list(with_days) == list(without), (with_days, without)
        assert with_days[TAX] == without[TAX]
        assert list(with_days).index(TAX) > max(list(with_days).index(n) for n in KITCHEN)


async def test_a_day_still_supports_a_note_close_by_text(make_settings, fake_ollama, tmp_path):
    """A note the text finds close to the query's (sharing its words) still moves up and
    scores for being written the same day."""
    roam = tmp_path / "a"
    query = write_vault(roam, True)
    pasta = next(p for p in roam.iterdir() if "Pasta dough" in p.read_text())
    pasta.write_text(pasta.read_text().replace("2024-02-01", "2024-05-01"))
    undated = await scores_by_route(make_settings, fake_ollama, write_vault(tmp_path / "b", False), STARTER, 10)
    dated = await scores_by_route(make_settings, fake_ollama, query, STARTER, 10)
    pasta_node = "3333bbbb-0000-4000-8000-000000000003"
    for with_days, without in zip(dated, undated):
        assert with_days[pasta_node] > without[pasta_node] + 0.05, (with_days, without)
        assert list(with_days)[0] == pasta_node
