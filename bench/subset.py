"""A smaller org-roam directory cut from a larger one, links kept dense, so that a
benchmark with a real embedding model stays short on a shared machine.

    python bench/subset.py SRC OUT --notes 200 [--max-bytes N] [--max-note-bytes N] [--seed 1]

Copies ``--notes`` notes (files) of ``SRC`` to ``OUT`` (fewer when ``--max-bytes`` of them
are copied first; a note that would pass it, or is larger than ``--max-note-bytes``, is
skipped), chosen by breadth-first walks over
the id-link graph (both ways) from random notes, so that most kept notes keep most of
their links; links to notes left out stay in the text (the benchmarks only count links
between copied notes). BENCHMARKS.md says which runs used a subset.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections import deque
from pathlib import Path

import _common  # noqa: F401  (the package on sys.path)
from quality_lib import Corpus


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--notes", type=int, default=200)
    p.add_argument("--max-bytes", type=int, default=None)
    p.add_argument("--max-note-bytes", type=int, default=None)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    corpus = Corpus(args.src)
    rng = random.Random(args.seed)
    linked = sorted(rel for rel, targets in corpus.links.items() if targets)
    kept: list[str] = []
    seen: set[str] = set()
    size = 0
    while len(kept) < args.notes and len(seen) < len(linked):
        start = rng.choice(linked)
        queue = deque([start])
        while queue and len(kept) < args.notes:
            rel = queue.popleft()
            if rel in seen:
                continue
            seen.add(rel)
            note_size = (args.src / rel).stat().st_size
            grown = size + note_size
            if (args.max_bytes is not None and grown > args.max_bytes) or (
                args.max_note_bytes is not None and note_size > args.max_note_bytes
            ):
                continue
            size = grown
            kept.append(rel)
            queue.extend(sorted(corpus.links[rel] - seen))
    shutil.rmtree(args.out, ignore_errors=True)
    for rel in kept:
        (args.out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(args.src / rel, args.out / rel)
    print(f"{len(kept)} notes of {len(corpus.clean)} copied to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
