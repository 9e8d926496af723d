"""Where a suggested link goes: the paragraph ``/suggest-links`` picks, against the
paragraph where the author wrote the link, on real notes.

    python bench/link_places.py RUN [CORPUS ...] [--no-bigrams]

For every link ``[[id:T]]`` the author wrote in a file-level note of CORPUS (a directory
as for bench/similar_lab.py), the link-free copy that ``quality.py --out RUN --keep``
indexed (``bench/results/quality-work-CORPUS-RUN/``) is read as ``/suggest-links`` reads
a note (its paragraphs: :func:`arcology_oracle.answers.links._places`) and the
daemon's own choice of paragraph for a link to T is made
(:func:`arcology_oracle.answers.links._best_place`). A hit: the paragraph chosen holds a
line the link was on. Printed beside it: how often the note's first paragraph holds it
(what a suggestion without a place would point at). ``--no-bigrams`` reads the
paragraphs without their CJK bigrams (as before they were given them).
"""

from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

import similar_lab as lab
from arcology_oracle.answers import links
from arcology_oracle.config import load_settings
from arcology_oracle.notes import cjk
from arcology_oracle.store import Store
from _common import RESULTS
from quality_lib import ID_LINK, Corpus


def link_lines(raw: str) -> dict[str, set[int]]:
    """Node ID -> the lines (1-based) a link to it is on."""
    out: dict[str, set[int]] = {}
    for number, line in enumerate(raw.split("\n"), start=1):
        for m in ID_LINK.finditer(line):
            out.setdefault(m.group(1), set()).add(number)
    return out


def run_corpus(name: str, run: str) -> dict:
    corpus = Corpus(lab.source(name))
    work = RESULTS / f"quality-work-{name}-{run}"
    store = Store.open(work / "index.sqlite3")
    # What links._places reads of the index: where the notes are and what is private.
    reader = SimpleNamespace(settings=load_settings(overrides={"roam_dir": work / "roam"}, environ={}))
    hits = first = total = 0
    try:
        for rel, node_id in sorted(corpus.file_id.items()):
            raw = (corpus.root / rel).read_text(encoding="utf-8", errors="replace")
            wanted = {t: lines for t, lines in link_lines(raw).items() if store.node(t) and t != node_id}
            if not wanted:
                continue
            places = links._places(reader, store, rel, node_id, None)
            if not places:
                continue
            for target, lines in wanted.items():
                total += 1
                place = links._best_place(store, target, places, rel)
                inside = lambda p: any(p.paragraph.start_line <= n <= p.paragraph.end_line for n in lines)  # noqa: E731
                hits += place is not None and inside(place)
                first += inside(places[0])
    finally:
        store.close()
    return {"links": total, "chosen": hits / total if total else 0.0, "first_paragraph": first / total if total else 0.0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="the --out name of the quality.py run whose kept indexes to read")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam-sub", "info-sub"])
    p.add_argument("--no-bigrams", action="store_true", help="paragraphs read without their CJK bigrams")
    args = p.parse_args()
    if args.no_bigrams:
        cjk.with_bigrams = lambda text: text  # type: ignore[assignment]
    for name in args.corpora:
        r = run_corpus(name, args.run)
        print(f"{name:20s} links {r['links']:4d}  chosen paragraph holds the link {r['chosen']:.3f}"
              f"  first paragraph {r['first_paragraph']:.3f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
