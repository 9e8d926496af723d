"""Retrieval quality of the daemon on org-roam directories, against five baselines.

    python bench/quality.py ROAM_DIR|info [ROAM_DIR ...] [--ollama URL --model NAME]
        [--questions-dir bench/questions] [--max-queries 400] [--out NAME] [--keep]
        [--tasks note,section,known] [--index-only]

Runs every directory in turn and prints one table per directory. ``info`` stands for the
GNU Info manuals as an org-roam directory (bench/info2org.py, made under bench/results/
with its own questions). Without ``--ollama`` the harness starts bench/st_ollama.py with
all-MiniLM-L6-v2 (the bench venv; see BENCHMARKS.md) and its vector cache
(bench/results/embed-cache.sqlite3), so a rerun embeds nothing twice.

The unit is the *note*, i.e. the file (a file node and the headings in it). For each
directory the harness copies it with every id link -- target and description -- removed,
starts the real daemon (``arcology-oracle serve``) on the copy, waits until everything is
embedded, then runs:

* ``note`` link prediction: for each note with links (either way) and a file node, rank
  the other notes; relevant are its linked notes. Daemon by node (``GET /similar?node=``)
  and by text (``POST /similar`` with the note's link-free text, its ID and its file,
  as Emacs posts an unsaved buffer).
* ``section`` link prediction: the query is one heading section holding a link; relevant
  are the notes it links to. Daemon by node (``GET /similar?file=&line=``) and by text
  (``POST /similar`` with what Emacs posts for the heading in an unsaved buffer: its
  lines up to the next heading, the ID of the node holding it, its file and line).
* ``known_heading`` / ``known_file``: questions written by people
  (``QUESTIONS_DIR/<directory name>.toml``, see bench/questions/README.md) through
  ``GET /search``: is the right heading (file and heading title), or the right file,
  ranked first? (A heading held twice, word for word, counts wherever it is.)

The baselines (bench/quality_lib.py) run in the same process on the same link-free text
with the same model (``--tasks note,section``: link prediction only). Metrics: recall@10,
MRR (0 beyond rank 50), hit@5; a note never counts as its own neighbour. Writes
bench/results/quality-OUT.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import numpy as np

from _common import REPO, RESULTS, daemon, embed_server, machine, save, wait_ready
from quality_lib import (
    BM25,
    DEPTH,
    Corpus,
    Embeddings,
    dense_rank,
    load_questions,
    pages,
    rrf,
    scores,
    summarise,
    unit,
)

BASELINES = ("bm25_files", "bm25_headings", "pages", "heading_vectors", "rrf")
DAEMON = ("daemon_node", "daemon_text")
METRICS = {"note": ("recall@10", "mrr"), "section": ("recall@10", "mrr"), "known_heading": ("mrr", "hit@5"),
           "known_file": ("mrr", "hit@5")}  # fmt: skip


class Baselines:
    """Every baseline's ranking of notes (files) or headings for one corpus."""

    def __init__(self, corpus: Corpus, heading_vectors: np.ndarray, page_vectors: np.ndarray, page_owner: list[str]):
        self.corpus = corpus
        self.keys, lexical, _ = corpus.heading_docs()
        self.files = list(corpus.clean)
        self.bm25_files = BM25([corpus.clean[f] for f in self.files])
        self.bm25_headings = BM25(lexical)
        self.hv = heading_vectors
        self.pv, self.page_owner = page_vectors, page_owner
        self.by_file: dict[str, list[int]] = {}
        self.pages_of: dict[str, list[int]] = {}
        self.at: dict[tuple[str, int], int] = {}
        i = 0
        for rel, headings in corpus.headings.items():
            for h in headings:
                self.by_file.setdefault(rel, []).append(i)
                self.at[(rel, h.start_line)] = i
                i += 1
        for j, rel in enumerate(page_owner):
            self.pages_of.setdefault(rel, []).append(j)

    def note_vector(self, rel: str) -> np.ndarray:
        return unit(self.hv[self.by_file[rel]].mean(axis=0))

    def page_vector(self, rel: str) -> np.ndarray:
        return unit(self.pv[self.pages_of[rel]].mean(axis=0))

    def heading_rankings(self, text: str, vector: np.ndarray) -> dict[str, list[int]]:
        lexical = self.bm25_headings.rank(text)
        dense = dense_rank(self.hv, vector)
        return {"bm25_headings": lexical, "heading_vectors": dense, "rrf": rrf(lexical, dense)}

    def note_rankings(self, text: str, vector: np.ndarray, page_vector: np.ndarray) -> dict[str, list[str]]:
        out = {name: [self.keys[i][0] for i in r] for name, r in self.heading_rankings(text, vector).items()}
        out["bm25_files"] = [self.files[i] for i in self.bm25_files.rank(text)]
        out["pages"] = [self.page_owner[j] for j in dense_rank(self.pv, page_vector)]
        return out


async def get(session: aiohttp.ClientSession, url: str, **params) -> list[dict]:
    async with session.get(url, params=params) as resp:
        body = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"{url} {params}: {body}")
        return body["results"]


async def post(session: aiohttp.ClientSession, url: str, text: str, node: str | None, file: str, line: int | None = None) -> list[dict]:
    """``POST /similar`` as Emacs asks about an unsaved buffer: its text, the node it is
    in and its file and line (a daemon from before those fields ignores them)."""
    async with session.post(url, json={"text": text, "k": DEPTH, "node": node, "file": file, "line": line}) as resp:
        body = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"{url}: {body}")
        return body["results"]


def files_of(results: list[dict]) -> list[str]:
    return [r["file"] for r in results]


async def run_corpus(name: str, roam: Path, questions_path: Path | None, args, emb: Embeddings, session) -> dict:
    corpus = Corpus(roam)
    questions = load_questions(questions_path, corpus)[: args.max_queries] if "known" in args.tasks else []
    rng = random.Random(1)
    notes = [rel for rel in sorted(corpus.clean) if corpus.links[rel] and rel in corpus.file_id] if "note" in args.tasks else []
    sections = corpus.sections if "section" in args.tasks else []
    if len(notes) > args.max_queries:
        notes = sorted(rng.sample(notes, args.max_queries))
    if len(sections) > args.max_queries:
        sections = sorted(rng.sample(sections, args.max_queries))

    work = RESULTS / ("quality-work-" + re.sub(r"[^\w.-]+", "_", f"{name}-{args.out}"))
    shutil.rmtree(work, ignore_errors=True)
    for rel, text in corpus.clean.items():
        path = work / "roam" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    rows: dict[str, dict[str, list]] = {t: {s: [] for s in (*DAEMON, *BASELINES)} for t in METRICS}
    latency: dict[str, list[float]] = {"similar_node": [], "similar_text_note": [], "similar_line": [],
                                       "similar_text_section": [], "search": []}  # fmt: skip

    async def timed(kind: str, coro):
        started = time.perf_counter()
        out = await coro
        latency[kind].append((time.perf_counter() - started) * 1000)
        return out

    proc = daemon(work / "roam", work / "index.sqlite3", args.ollama, args.model, RESULTS / "logs" / f"quality-{name}.log")
    out: dict = {"corpus": {"notes": len(corpus.clean), "links": sum(len(v) for v in corpus.links.values()) // 2,
                            "note_queries": len(notes), "section_queries": len(sections), "questions": len(questions)}}  # fmt: skip
    try:
        started = time.perf_counter()
        status = await wait_ready(session, proc.url)
        out["daemon_index_s"] = round(time.perf_counter() - started, 1)
        out["corpus"].update(headings=status["headings"], chunks=status["chunks"])
        if args.index_only:  # only the kept copy and its index (bench/cutoff.py, similar_lab.py)
            return out
        url = proc.url
        for rel in notes:
            r = await timed("similar_node", get(session, url + "/similar", node=corpus.file_id[rel], k=DEPTH))
            rows["note"]["daemon_node"].append(scores(files_of(r), corpus.links[rel], rel))
            r = await timed("similar_text_note", post(session, url + "/similar", corpus.clean[rel], corpus.file_id[rel], rel))
            rows["note"]["daemon_text"].append(scores(files_of(r), corpus.links[rel], rel))
        for rel, line, targets in sections:
            r = await timed("similar_line", get(session, url + "/similar", file=rel, line=line, k=DEPTH))
            rows["section"]["daemon_node"].append(scores(files_of(r), targets, rel))
            r = await timed("similar_text_section", post(session, url + "/similar", corpus.emacs_section(rel, line), corpus.node_at(rel, line), rel, line))
            rows["section"]["daemon_text"].append(scores(files_of(r), targets, rel))
        for q in questions:
            r = await timed("search", get(session, url + "/search", q=q["q"], k=DEPTH))
            rows["known_heading"]["daemon_text"].append(scores([(x["file"], x["heading"]) for x in r], q["headings"]))
            rows["known_file"]["daemon_text"].append(scores(files_of(r), q["files"]))
    finally:
        proc.stop()

    started = time.perf_counter()
    _, _, dense = corpus.heading_docs()
    page_texts, page_owner = [], []
    for rel, text in corpus.clean.items():
        for p in pages(text):
            page_texts.append(p)
            page_owner.append(rel)
    base = Baselines(corpus, await emb.embed(session, dense), await emb.embed(session, page_texts), page_owner)
    for rel in notes:
        ranked = base.note_rankings(corpus.clean[rel], base.note_vector(rel), base.page_vector(rel))
        for system, ranking in ranked.items():
            rows["note"][system].append(scores(ranking, corpus.links[rel], rel))
    for rel, line, targets in sections:
        vector = base.hv[base.at[(rel, corpus.heading(rel, line).start_line)]]
        ranked = base.note_rankings(corpus.section_text(rel, line), vector, vector)
        for system, ranking in ranked.items():
            rows["section"][system].append(scores(ranking, targets, rel))
    qvecs = await emb.embed(session, [q["q"] for q in questions], query=True) if questions else []
    for q, vec in zip(questions, qvecs):
        for system, ranking in base.note_rankings(q["q"], vec, vec).items():
            rows["known_file"][system].append(scores(ranking, q["files"]))
        for system, ranking in base.heading_rankings(q["q"], vec).items():
            rows["known_heading"][system].append(scores([base.keys[i] for i in ranking], q["headings"]))
    out["baselines_s"] = round(time.perf_counter() - started, 1)
    out["corpus"]["pages"] = len(page_texts)
    out["tasks"] = {task: {s: summarise(r) for s, r in by.items() if r} for task, by in rows.items()}
    out["latency_ms_p50"] = {k: round(float(np.median(v)), 1) for k, v in latency.items() if v}
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return out


def table(result: dict) -> str:
    head = "| task | metric | daemon: node | daemon: text | BM25 files | BM25 headings | pages 6000/400 | heading vectors | RRF | best of daemon ÷ best baseline |"
    lines = [head, "|---" * 10 + "|"]
    fmt = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    for task, metrics in METRICS.items():
        by = result["tasks"][task]
        n = max((v.get("n", 0) for v in by.values()), default=0)
        if not n:
            continue
        for metric in metrics:
            vals = {s: by.get(s, {}).get(metric) for s in (*DAEMON, *BASELINES)}
            best = max((vals[s] for s in BASELINES if vals[s] is not None), default=None)
            ours = max((vals[s] for s in DAEMON if vals[s] is not None), default=None)
            ratio = f"{ours / best:.2f}x" if best else "–"
            cells = " | ".join(fmt(vals[s]) for s in (*DAEMON, *BASELINES))
            lines.append(f"| {task} (n={n}) | {metric} | {cells} | {ratio} |")
    return "\n".join(lines)


def info_corpus() -> tuple[Path, Path]:
    roam, questions = RESULTS / "info-roam", RESULTS / "info-questions.jsonl"
    if not questions.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "info2org.py"), str(roam), "--questions", str(questions)], check=True)
    return roam, questions


async def run(args) -> dict:
    server = None
    if args.ollama is None:
        server = embed_server(RESULTS / "logs" / "quality-embed.log", "--backend", "st", "--model", args.model,
                              "--cache", str(RESULTS / "embed-cache.sqlite3"))  # fmt: skip
        args.ollama = server.url
    emb = Embeddings(args.ollama, args.model)
    out = {}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1800)) as session:
            for spec in args.roam_dirs:
                if spec == "info":
                    name, (roam, questions) = "info", info_corpus()
                else:
                    roam = Path(spec)
                    name = roam.resolve().name
                    questions = args.questions_dir / f"{name}.toml"
                    questions = questions if questions.exists() else None
                started = time.perf_counter()
                out[name] = await run_corpus(name, roam, questions, args, emb, session)
                out[name]["total_s"] = round(time.perf_counter() - started, 1)
                out[name]["table"] = "" if args.index_only else table(out[name])
                print(f"\n## {name}\n\n{out[name]['table']}\n", flush=True)
    finally:
        if server is not None:
            server.stop()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("roam_dirs", nargs="+", help="org-roam directories, or 'info' for the GNU Info manuals")
    p.add_argument("--ollama", help="Ollama URL (default: start bench/st_ollama.py --backend st)")
    p.add_argument("--model", default="all-minilm", help="embedding model name")
    p.add_argument("--questions-dir", type=Path, default=REPO / "bench" / "questions")
    p.add_argument("--max-queries", type=int, default=400)
    p.add_argument("--out", default="run", help="results name: bench/results/quality-OUT.json")
    p.add_argument("--tasks", type=lambda s: set(s.split(",")), default={"note", "section", "known"},
                   help="comma-separated subset of note,section,known (default: all)")
    p.add_argument("--keep", action="store_true", help="keep each link-free copy and its index in bench/results/")
    p.add_argument("--index-only", action="store_true", help="only make the link-free copies and index them (with --keep)")
    args = p.parse_args()
    result = asyncio.run(run(args))
    save(f"quality-{args.out}", {"machine": machine(), "model": args.model, "corpora": result})


if __name__ == "__main__":
    sys.exit(main())
