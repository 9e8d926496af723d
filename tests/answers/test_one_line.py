"""``retrieval.one_line`` (every result's snippet) collapses a long text from its start
only: the line must be the one collapsing the whole text gives, whatever the runs of
spaces and where the cut falls."""

from __future__ import annotations

import random
import re

from arcology_oracle.answers.retrieval import one_line


def whole(text: str, limit: int = 160) -> str:
    line = re.sub(r"\s+", " ", text).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def test_one_line_is_the_whole_texts_line():
    rng = random.Random(7)
    pieces = ["word", "a", " ", "\n", "\t", "\u3000", "é", "x" * 70, " " * 400, "\n" * 150, "長い"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120)))
        limit = rng.choice([-3, 0, 1, 2, 5, 20, 160, 2000])
        assert one_line(text, limit) == whole(text, limit), (text, limit)
    assert one_line(" " * 700 + "end") == "end"
    assert one_line("a " * 400) == whole("a " * 400)
