"""Synthetic org-roam directories for the benchmarks, deterministic from a seed.

    python bench/corpus.py OUT_DIR --headings 10000 [--seed 1] [--questions OUT.jsonl]

Writes about ``--headings`` org headings (plus one file-level record per file) spread
over files of 1 to 25 headings in a few sub-directories. Each file is a node (``:ID:``
drawer, ``#+title``, ``#+filetags``); about a fifth of its headings are nodes too. Bodies
are English-like prose from a shared vocabulary plus words of the note's *topic* (one of
``topics``), with lists, src blocks, tables, and ``[[id:...][...]]`` links, mostly to
notes of the same topic, so both lexical and vector similarity have something to find.
Headings nest up to three levels. ``--questions`` also writes known-item questions
(``{"q", "file", "heading"}``, see bench/quality.py) built from words of one heading.
``--long-share F``: a share F of the headings get a long section instead (2-6 KB of
prose), as people's notes have (in the two collections of ../shared/corpora, 0.4% and
5.9% of the sections are over 2 KB, 0.3% and 2.3% over 4 KB): a heading row that long
spills over a database page. With 0 (the default) the corpus is the same as before.

The same seed and size always give the same bytes (``random.Random(seed)`` only, no
hash randomisation, no clock), so runs on different days compare.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

COMMON = """the a of and to in is that for it as with was on be by this are or from at an
which but not have has had can will would should could may might also more most other
some such into than then them these they their there when where while what how because
about after before over under between through during without within around again always
often usually sometimes never every each both few many much new old good better best
first last next long short small large high low early late simple clear useful important
note idea thing way part point case time work step result problem reason example detail
use make take give find keep start try need know think see show change move turn build
read write test check compare measure explain remember learn follow improve""".split()

SYLLABLES = """ka ri to me su na lo vi pe ra do mi zu ne ta ko ba le si fu go ha ju ke
ma no pi ro sa te wu ya ze bo cu da fe gi hu ji lu mo nu pa qu ru so tu vo xe yo zi""".split()

LANGS = ["python", "emacs-lisp", "sql", "shell", "rust"]
DIRS = ["", "", "", "projects", "reading", "journal", "reference/deep"]


def make_word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


@dataclass
class Note:
    """One file node (and what the generator needs to link to it)."""

    file_id: str
    title: str
    topic: int
    path: str
    heading_ids: list[tuple[str, str]] = field(default_factory=list)  # (id, title)


class Generator:
    """Builds the corpus in memory, file by file; see the module docstring."""

    def __init__(self, seed: int, headings: int, topics: int | None = None, long_share: float = 0.0):
        self.rng = random.Random(seed)
        self.long_share = long_share
        self.target = headings
        self.topics = topics or max(8, min(400, headings // 250))
        # Each topic has its own 30 words; topics overlap through the common vocabulary.
        self.topic_words = [[make_word(self.rng, self.rng.randint(2, 4)) for _ in range(30)] for _ in range(self.topics)]
        self.notes: list[Note] = []

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def sentence(self, topic: int, n: int | None = None) -> str:
        rng = self.rng
        words = []
        for _ in range(n or rng.randint(6, 16)):
            words.append(rng.choice(self.topic_words[topic]) if rng.random() < 0.35 else rng.choice(COMMON))
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def title(self, topic: int) -> str:
        rng = self.rng
        words = [rng.choice(self.topic_words[topic]) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            words.insert(rng.randint(0, len(words)), rng.choice(COMMON[60:]))
        return " ".join(words).capitalize()

    def link(self, topic: int) -> str | None:
        """An id link to an earlier note: same topic 80% of the time."""
        rng = self.rng
        if not self.notes:
            return None
        same = [n for n in self.notes[-200:] if n.topic == topic]
        note = rng.choice(same) if same and rng.random() < 0.8 else rng.choice(self.notes)
        if note.heading_ids and rng.random() < 0.3:
            target, title = rng.choice(note.heading_ids)
        else:
            target, title = note.file_id, note.title
        return f"[[id:{target}][{title}]]"

    def body(self, topic: int) -> list[str]:
        rng = self.rng
        if self.long_share and rng.random() < self.long_share:  # no draw at 0: the same corpus as before
            return self.long_body(topic)
        lines: list[str] = []
        for _ in range(rng.randint(1, 3)):
            paragraph = [self.sentence(topic) for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.35:
                link = self.link(topic)
                if link:
                    paragraph.insert(rng.randint(0, len(paragraph)), f"See {link}.")
            lines.append(" ".join(paragraph))
            lines.append("")
        roll = rng.random()
        if roll < 0.25:
            lines += [f"- {self.sentence(topic, rng.randint(3, 8))}" for _ in range(rng.randint(2, 5))] + [""]
        elif roll < 0.35:
            lang = rng.choice(LANGS)
            names = [rng.choice(self.topic_words[topic]) for _ in range(3)]
            lines += [f"#+begin_src {lang}", f"{names[0]} = compute({names[1]}, {names[2]})", f"print({names[0]})", "#+end_src", ""]
        elif roll < 0.40:
            lines += ["| name | value |", "|------+-------|"]
            lines += [f"| {rng.choice(self.topic_words[topic])} | {rng.randint(1, 999)} |" for _ in range(3)] + [""]
        return lines

    def long_body(self, topic: int) -> list[str]:
        """Paragraphs of prose until the section holds 2-6 KB (``long_share``)."""
        rng = self.rng
        target, lines, size = rng.randint(2000, 6000), [], 0
        while size < target:
            paragraph = " ".join(self.sentence(topic) for _ in range(rng.randint(3, 8)))
            lines += [paragraph, ""]
            size += len(paragraph) + 2
        return lines

    def file(self, index: int, size: int) -> tuple[str, str, list[tuple[str, str]]]:
        """``(relative path, text, [(heading title, words for a question)])``."""
        rng = self.rng
        topic = rng.randrange(self.topics)
        note = Note(self.uuid(), self.title(topic), topic, "")
        slug = "-".join(note.title.lower().split())[:40]
        directory = rng.choice(DIRS)
        note.path = f"{directory + '/' if directory else ''}{index:06d}-{slug}.org"
        tags = sorted({rng.choice(self.topic_words[topic]) for _ in range(rng.randint(1, 3))})
        lines = [":PROPERTIES:", f":ID:       {note.file_id}", ":END:", f"#+title: {note.title}", f"#+filetags: :{':'.join(tags)}:", ""]
        lines += [self.sentence(topic), ""]
        level = 1
        facts: list[tuple[str, str]] = []
        for _ in range(size):
            level = max(1, min(3, level + rng.choice((-1, 0, 0, 1)))) if facts else 1
            title = self.title(topic)
            todo = "TODO " if rng.random() < 0.05 else ""
            tag = f" :{rng.choice(self.topic_words[topic])}:" if rng.random() < 0.1 else ""
            lines.append(f"{'*' * level} {todo}{title}{tag}")
            if rng.random() < 0.2:
                heading_id = self.uuid()
                lines += [":PROPERTIES:", f":ID:       {heading_id}", ":END:"]
                note.heading_ids.append((heading_id, title))
            body = self.body(topic)
            lines += body
            prose = " ".join(line for line in body if line and not line.startswith(("#", "|", "[")))
            facts.append((title, prose))
        self.notes.append(note)
        return note.path, "\n".join(lines) + "\n", facts

    def write(self, out: Path, questions: Path | None = None) -> dict:
        """Write the corpus under ``out`` (which must not hold org files yet)."""
        out.mkdir(parents=True, exist_ok=True)
        made = files = 0
        qs = []
        while made < self.target:
            size = min(self.target - made, max(1, int(self.rng.lognormvariate(1.9, 0.6))), 25)
            rel, text, facts = self.file(files, size)
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if questions is not None and self.rng.random() < 0.2:
                title, prose = self.rng.choice(facts)
                common = set(COMMON)
                words = [w for w in (w.strip(".,").lower() for w in prose.split()) if w not in common]
                if len(words) >= 4:
                    picked = self.rng.sample(words, 4)
                    qs.append({"q": f"What did I note about {' '.join(picked)}?", "file": rel, "heading": title})
            made += size
            files += 1
        if questions is not None:
            questions.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
        return {"files": files, "headings": made, "topics": self.topics, "questions": len(qs)}


def generate(out: Path, headings: int, seed: int = 1, questions: Path | None = None, long_share: float = 0.0) -> dict:
    """Write a corpus of ``headings`` headings to ``out``; returns its counts."""
    return Generator(seed, headings, long_share=long_share).write(out, questions)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--headings", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--questions", type=Path)
    p.add_argument("--long-share", type=float, default=0.0)
    args = p.parse_args()
    if any(args.out.rglob("*.org")):
        p.error(f"{args.out} already holds org files")
    print(json.dumps(generate(args.out, args.headings, args.seed, args.questions, args.long_share)))


if __name__ == "__main__":
    main()
