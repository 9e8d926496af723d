"""Time questions over a generated year of dailies: hit@5 with date parsing on and off.

    python bench/time_questions.py [--embedder hash|st] [--seed 1] [--keep DIR]

A year of org-roam dailies (365 files, ``daily/2025-MM-DD.org``, three dated facts a day
from seven recurring themes: baking, running, reading, meetings, gardening, cooking,
repairs) and one event ("The move to Leipzig", 2025-08-15) is indexed through the
daemon's own :class:`OracleIndex`. Then at least 60 questions, each asked on a known day
("What did I bake last week?" asked on 2025-06-18, "Who did I meet in March?", "What did
I cook yesterday?", "What did I fix on May 3?", "... between May and June", "... since
the move", "... since we moved", "... this day last year"), each with the days that
answer it: the days of the question's range holding a fact of its theme.

A question counts as a hit when one of its first five results is a heading of its theme
dated on an answering day. Two retrieval paths are measured, each with the question's
time read by :func:`arcology_oracle.answers.when.parse_when` (on) and without (off):
``search`` (what ``/search`` does, with the range as ``since``/``until``) and ``ask``
(the five notes ``/ask`` would give the model; a hit when one of them holds such a heading).

Embedders: ``hash`` (default: bag of hashed word vectors, bench/st_ollama.HashVectors,
lexical and deterministic) or ``st`` (all-MiniLM-L6-v2 via sentence-transformers; needs
the bench venv, see bench/st_ollama.py).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _common import HashEmbedder, save  # noqa: F401  (puts the package on sys.path)

from arcology_oracle.answers.context import gather_context
from arcology_oracle.answers.search import resolve_event, search
from arcology_oracle.answers.when import parse_when
from arcology_oracle.config import load_settings
from arcology_oracle.index.service import OracleIndex

YEAR = 2025
MOVE_DAY = dt.date(YEAR, 8, 15)
MONTHS = "January February March April May June July August September October November December".split()

# theme -> (verb in questions, heading marker, chance per day, facts)
THEMES = {
    "bake": ("bake", "Baked", 0.35, ["a sourdough loaf", "rye bread", "focaccia", "bagels", "brioche", "baguettes", "cinnamon rolls", "pita"]),
    "run": ("run", "Ran", 0.45, ["along the river", "around the lake", "through the forest trail", "by the harbour", "up the hill", "in the park"]),
    "read": ("read", "Read", 0.3, ["The Glass Orchard", "Salt and Iron", "A Map of Tides", "The Quiet Engine", "Northern Letters", "Small Gods of Rain"]),
    "meet": ("meet", "Met", 0.35, ["Ana about the budget", "Tomas about the roof", "Lena about the conference", "Priya about hiring", "Jonas about the garden plot", "Mira about the book club"]),
    "garden": ("plant", "Planted", 0.25, ["tomatoes", "basil", "garlic", "tulip bulbs", "lettuce", "sweet peas"]),
    "cook": ("cook", "Cooked", 0.35, ["lentil soup", "a mushroom risotto", "chili", "dumplings", "paella", "a vegetable curry"]),
    "fix": ("fix", "Fixed", 0.2, ["the bike chain", "the kitchen tap", "the garden gate", "the laptop hinge", "a squeaky door", "the shed roof"]),
}
QUESTION = {
    "bake": "What did I bake {when}?",
    "run": "Where did I run {when}?",
    "read": "What did I read {when}?",
    "meet": "Who did I meet {when}?",
    "garden": "What did I plant {when}?",
    "cook": "What did I cook {when}?",
    "fix": "What did I fix {when}?",
}


def write_year(root: Path, rng: random.Random) -> dict[dt.date, set[str]]:
    """The dailies; returns the themes of each day."""
    (root / "daily").mkdir(parents=True)
    themes_of: dict[dt.date, set[str]] = {}
    day = dt.date(YEAR, 1, 1)
    while day.year == YEAR:
        chosen = [t for t, (_, _, p, _) in THEMES.items() if rng.random() < p][:3]
        while len(chosen) < 3:
            extra = rng.choice(list(THEMES))
            if extra not in chosen:
                chosen.append(extra)
        lines = [f":PROPERTIES:\n:ID: {YEAR}{day:%m%d}-0000-4000-8000-{rng.randrange(16**12):012x}\n:END:", f"#+title: {day}"]
        for theme in chosen:
            _, marker, _, facts = THEMES[theme]
            fact = rng.choice(facts)
            lines.append(f"* {marker} {fact}")
            lines.append(f"{marker} {fact} today; {rng.choice(['it went well', 'took longer than planned', 'worth doing again', 'a good day for it'])}.")
        if day == MOVE_DAY:
            lines.append("* The move to Leipzig\nMoved into the new flat in Leipzig; boxes everywhere.")
        (root / "daily" / f"{day}.org").write_text("\n".join(lines) + "\n")
        themes_of[day] = set(chosen)
        day += dt.timedelta(days=1)
    return themes_of


@dataclass
class Question:
    text: str
    theme: str
    asked_on: dt.date
    answers: set[dt.date]


def make_questions(themes_of: dict[dt.date, set[str]], rng: random.Random) -> list[Question]:
    days = sorted(themes_of)
    out: list[Question] = []

    def theme_days(theme: str, start: dt.date, end: dt.date) -> set[dt.date]:
        return {d for d in days if start <= d <= end and theme in themes_of[d]}

    def add(theme: str, when: str, asked_on: dt.date, start: dt.date, end: dt.date) -> None:
        answers = theme_days(theme, start, end)
        if answers:
            out.append(Question(QUESTION[theme].format(when=when), theme, asked_on, answers))

    for theme in THEMES:
        for month in rng.sample(range(1, 13), 2):  # "in March"
            start = dt.date(YEAR, month, 1)
            end = (start + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
            add(theme, f"in {MONTHS[month - 1]}", dt.date(YEAR, 12, 31), start, end)
        for weeks_back, words in ((1, "last week"), (2, "two weeks ago"), (3, "3 weeks ago")):
            asked_on = rng.choice(days[40:])
            start = asked_on - dt.timedelta(days=asked_on.weekday() + 7 * weeks_back)
            add(theme, words, asked_on, start, start + dt.timedelta(days=6))
        for _ in range(2):  # "yesterday", on a day after one with the theme
            day = rng.choice([d for d in days[1:] if theme in themes_of[d - dt.timedelta(days=1)]])
            add(theme, "yesterday", day, day - dt.timedelta(days=1), day - dt.timedelta(days=1))
        day = rng.choice([d for d in days if theme in themes_of[d]])  # "on May 3"
        add(theme, f"on {MONTHS[day.month - 1]} {day.day}", dt.date(YEAR, 12, 31), day, day)
    for theme in rng.sample(list(THEMES), 4):
        add(theme, "since the move", dt.date(YEAR, 12, 31), MOVE_DAY, dt.date(YEAR, 12, 31))
        first, second = sorted(rng.sample(range(1, 12), 2))
        end = (dt.date(YEAR, second, 1) + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
        add(theme, f"between {MONTHS[first - 1]} and {MONTHS[second - 1]}", dt.date(YEAR, 12, 31), dt.date(YEAR, first, 1), end)
        day = rng.choice([d for d in days if theme in themes_of[d]])  # "this day last year"
        add(theme, "this day last year", day.replace(year=YEAR + 1), day, day)
    for theme in ("bake", "run", "cook", "fix"):  # the move said as a clause (no draw: the rest stay as they were)
        add(theme, "since we moved", dt.date(YEAR, 12, 31), MOVE_DAY, dt.date(YEAR, 12, 31))
    return out


def hit(results, question: Question, first: int = 5) -> bool:
    """A result of the question's theme dated on an answering day, in the first five."""
    marker = THEMES[question.theme][1]
    for heading, date in results[:first]:
        if heading.startswith(marker) and date and dt.date.fromisoformat(date[:10]) in question.answers:
            return True
    return False


def note_headings(notes_block: str) -> list[tuple[str, str | None]]:
    """``(heading, note date)`` of every heading the model is given, note by note: a
    daily's headings share one note (the file node), so a hit is any of them."""
    out = []
    for block in notes_block.split('<note n="')[1:]:
        date = re.search(r"^Date: (\S+)$", block, re.M)
        for outline in re.findall(r"^## (.*)$", block, re.M):
            out.append((outline.split(" > ")[-1], date[1] if date else None))
    return out


async def run(embedder, seed: int, keep: Path | None) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp)
        themes_of = write_year(root / "roam", rng)
        questions = make_questions(themes_of, rng)
        settings = load_settings(
            overrides={"roam_dir": root / "roam", "db_path": root / "index.sqlite3", "embed_model": embedder.model, "ollama_host": "http://127.0.0.1:9"},
            environ={},
        )
        index = OracleIndex(settings, embedder=embedder)
        await index.start()
        try:
            await index.reconcile()
            await index.embed_pending()
            scores = {("search", "on"): 0, ("search", "off"): 0, ("ask", "on"): 0, ("ask", "off"): 0}
            misses = []
            for q in questions:
                found = parse_when(q.text, q.asked_on)
                rng_used = await resolve_event(index, found) if found else None
                for dates in ("on", "off"):
                    date_range = rng_used if dates == "on" else None
                    _, results = await search(index, q.text, 5, date_range=date_range)
                    ok = hit([(r.heading, r.date) for r in results], q)
                    scores[("search", dates)] += ok
                    context = await gather_context(index, q.text, k=5, date_range=date_range)
                    scores[("ask", dates)] += hit(note_headings(context.notes_block), q, first=10**6)  # k=5 notes
                    if dates == "on" and not ok:
                        misses.append({"question": q.text, "asked_on": str(q.asked_on), "range": rng_used.as_dict() if rng_used else None})
        finally:
            await index.close()
    n = len(questions)
    return {
        "questions": n,
        "embedder": embedder.model,
        "hit_at_5": {f"{path}_{dates}": round(count / n, 3) for (path, dates), count in scores.items()},
        "misses_with_dates": misses[:20],
    }


class STEmbedder(HashEmbedder):
    """:class:`HashEmbedder`'s memo over a sentence-transformers model."""

    def __init__(self):
        from st_ollama import STVectors

        super().__init__()
        self.model = "all-MiniLM-L6-v2"
        self.vectors = STVectors()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("hash", "st"), default="hash")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="write the generated dailies and index here")
    args = parser.parse_args(argv)
    embedder = STEmbedder() if args.embedder == "st" else HashEmbedder(dims=384)
    result = asyncio.run(run(embedder, args.seed, args.keep))
    path = save(f"time_questions_{args.embedder}", result)
    for key, value in result["hit_at_5"].items():
        print(f"{key:>12}: {value:.3f}")
    print(f"{result['questions']} questions; details in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
