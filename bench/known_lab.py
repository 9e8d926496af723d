"""Known items (``/search``) in process, over the indexes bench/quality.py kept (issue 29).

    python bench/known_lab.py RUN [CORPUS ...] [--questions-dir bench/questions] [--set NAME=VALUE ...]

Runs quality.py's ``known_heading`` / ``known_file`` questions straight through
``answers.search_ranking.search`` (what ``GET /search`` ranks by; the relevance rescore
after it keeps the order) on ``bench/results/quality-work-CORPUS-RUN/index.sqlite3`` and
prints heading MRR and hit@5, file MRR and hit@5. The questions' vectors are embedded once
(bench/st_ollama.py's cache) and kept as similar_lab.py keeps its text vectors.
``--set NOTE_WEIGHT=0`` runs with one of ``answers.search_ranking``'s constants changed
(a number), e.g. to measure the note step's weight or reach.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import similar_lab as lab
from arcology_oracle.answers import search_ranking
from arcology_oracle.store import Store
from _common import REPO, RESULTS
from quality_lib import Corpus, load_questions, scores, summarise


async def run_corpus(name: str, run: str, args) -> dict:
    corpus = Corpus(lab.source(name))
    path = args.questions_dir / f"{name}.toml"
    if name == "info":
        path = RESULTS / "info-questions.jsonl"
    questions = load_questions(path, corpus)
    vecs = await lab.text_vectors(f"{name}-questions", [q["q"] for q in questions], args.ollama, args.model)
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    rows: dict[str, list] = {"heading": [], "file": []}
    try:
        for q in questions:
            _, results = search_ranking.search(store, q["q"], 50, vecs[q["q"]].tolist())
            rows["heading"].append(scores([(r.file, r.heading) for r in results], q["headings"]))
            rows["file"].append(scores([r.file for r in results], q["files"]))
    finally:
        store.close()
    return {k: summarise(v) for k, v in rows.items()}


async def main_async(args) -> None:
    for setting in args.set:
        name, _, value = setting.partition("=")
        if not hasattr(search_ranking, name):
            raise SystemExit(f"answers.search_ranking has no {name}")
        setattr(search_ranking, name, type(getattr(search_ranking, name))(float(value)))
    for name in args.corpora:
        out = await run_corpus(name, args.run, args)
        h, f = out["heading"], out["file"]
        print(f"{name:20s} n={h['n']}  heading mrr {h['mrr']:.3f} hit@5 {h['hit@5']:.3f}  "
              f"file mrr {f['mrr']:.3f} hit@5 {f['hit@5']:.3f}", flush=True)  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam-sub", "info-sub"])
    p.add_argument("--questions-dir", type=Path, default=REPO / "bench" / "questions")
    p.add_argument("--ollama")
    p.add_argument("--model", default="all-minilm")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
