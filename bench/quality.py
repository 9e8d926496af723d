"""Retrieval quality of the daemon on any org-roam directory, against two baselines.

    python bench/quality.py ROAM_DIR --ollama URL --model NAME [--questions FILE.jsonl]
        [--max-queries 400] [--out NAME] [--keep]

The unit is the *note*, i.e. the file (a file node and the headings in it). The harness
copies ROAM_DIR with every id link -- target and description -- removed from every file,
starts the real daemon (``arcology-oracle serve``) on the copy with Ollama at URL and
embedding model NAME, waits until everything is embedded, then runs three tasks:

* link prediction, note level: for each note that links to, or is linked from, another
  note, rank the other notes by similarity to it; the relevant notes are its links,
  counted both ways. Daemon: ``GET /similar?node=FILE-ID``.
* link prediction, section level: the query is one heading section that holds a link to
  another note; the relevant notes are the ones it links to. Daemon:
  ``GET /similar?file=REL&line=N``.
* known item: ``--questions`` (JSONL ``{"q", "file", "heading"}``): is the right note,
  and the right heading, ranked first? Daemon: ``GET /search?q=...``.

For each task the daemon's ranking (its results mapped to notes, first occurrence, the
query's own note dropped) is compared with two baselines the harness computes itself on
the same link-free text and the same embedding model (through URL's ``/api/embed``, with
the daemon's task prefixes for NAME):

* ``bm25_files``: Okapi BM25 (k1=1.2, b=0.75) over whole files, the query being the
  note's or section's text, or the question (what lexical similar-notes packages do);
* ``pages``: each file cut into 6000-character pages overlapping by 400, one embedding per
  page; a note scores its best page (for a whole-note query, the mean of its pages'
  vectors is the query). For known-item headings a page counts as the heading's when it
  holds the heading's line (a generous credit: a page holds several headings).

Metrics: recall@10 (share of the relevant notes in the top 10, averaged over queries),
MRR (1/rank of the first relevant note, 0 beyond the top 50), hit@5. Writes
bench/results/quality-NAME.json and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp
import numpy as np

from _common import RESULTS, daemon, machine, save, wait_ready

from arcology_oracle.config import load_settings
from arcology_oracle.notes.files import iter_org_files
from arcology_oracle.notes.reader import read_org_bytes

ID_LINK = re.compile(r"\[\[id:([^\[\]]+)\](?:\[([^\[\]]*)\])?\]")
WORD = re.compile(r"\w{2,}")
DEPTH = 50
PAGE, OVERLAP = 6000, 400


class Corpus:
    """The notes, their link graph, and their link-free text."""

    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, str] = {}  # rel -> raw text
        self.file_id: dict[str, str] = {}
        self.node_file: dict[str, str] = {}  # any node id -> rel of its file
        self.headings: dict[str, list] = {}  # rel -> parsed headings
        for rel, path in iter_org_files(root):
            data = path.read_bytes()
            parsed = read_org_bytes(data, rel)
            self.files[rel] = data.decode("utf-8", errors="replace")
            self.headings[rel] = parsed.headings
            if parsed.file_id:
                self.file_id[rel] = parsed.file_id
            for h in parsed.headings:
                if h.own_id:
                    self.node_file[h.own_id] = rel
        self.links: dict[str, set[str]] = {rel: set() for rel in self.files}  # both ways
        self.sections: list[tuple[str, int, set[str]]] = []  # (rel, line, linked notes)
        for rel, headings in self.headings.items():
            for h in headings:
                targets = {self.node_file[t] for t in ID_LINK_targets(h.body) if t in self.node_file} - {rel}
                for t in targets:
                    self.links[rel].add(t)
                    self.links[t].add(rel)
                if targets and h.level > 0:
                    self.sections.append((rel, h.start_line, targets))
        self.clean = {rel: strip_links(text) for rel, text in self.files.items()}

    def section_text(self, rel: str, line: int) -> str:
        for h in self.headings[rel]:
            if h.start_line == line:
                return strip_links(h.title + "\n" + h.body)
        raise KeyError((rel, line))


def ID_LINK_targets(text: str) -> list[str]:  # noqa: N802
    return [m.group(1) for m in ID_LINK.finditer(text)]


def strip_links(text: str) -> str:
    return ID_LINK.sub("", text)


# -- baselines -------------------------------------------------------------------------


class BM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75):
        self.names = list(docs)
        self.tfs = [Counter(WORD.findall(docs[n].lower())) for n in self.names]
        self.lengths = np.array([sum(tf.values()) for tf in self.tfs], dtype=np.float64)
        self.avg = self.lengths.mean()
        df = Counter(w for tf in self.tfs for w in tf)
        n = len(self.names)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.k1, self.b = k1, b
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, tf in enumerate(self.tfs):
            for w, c in tf.items():
                self.postings.setdefault(w, []).append((i, c))

    def rank(self, query: str) -> list[str]:
        scores = np.zeros(len(self.names))
        for w in set(WORD.findall(query.lower())):
            for i, c in self.postings.get(w, ()):
                norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
                scores[i] += self.idf[w] * c * (self.k1 + 1) / (c + norm)
        order = np.argsort(-scores, kind="stable")
        return [self.names[i] for i in order if scores[i] > 0]


def pages(text: str) -> list[str]:
    out, start = [], 0
    while True:
        out.append(text[start : start + PAGE])
        if start + PAGE >= len(text):
            return out
        start += PAGE - OVERLAP


class Embeddings:
    """Ollama's /api/embed at URL, with the daemon's prefixes for the model."""

    def __init__(self, url: str, model: str):
        self.url, self.model = url, model
        self.prefixes = load_settings(overrides={}, environ={}).prefixes_for(model)

    async def embed(self, session: aiohttp.ClientSession, texts: list[str], query: bool = False) -> np.ndarray:
        prefix = self.prefixes.query if query else self.prefixes.document
        out = []
        for start in range(0, len(texts), 32):
            batch = [prefix + t for t in texts[start : start + 32]]
            async with session.post(self.url + "/api/embed", json={"model": self.model, "input": batch}) as resp:
                body = await resp.json()
            out.extend(body["embeddings"])
        m = np.asarray(out, dtype=np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


class Pages:
    def __init__(self, corpus: Corpus, vectors: np.ndarray, owners: list[str], texts: list[str]):
        self.vectors, self.owners, self.texts = vectors, owners, texts
        self.by_file: dict[str, list[int]] = {}
        for i, rel in enumerate(owners):
            self.by_file.setdefault(rel, []).append(i)

    def rank_pages(self, q: np.ndarray) -> list[int]:
        return list(np.argsort(-(self.vectors @ q), kind="stable"))

    def rank(self, q: np.ndarray) -> list[str]:
        return dedupe(self.owners[i] for i in self.rank_pages(q))

    def note_vector(self, rel: str) -> np.ndarray:
        v = self.vectors[self.by_file[rel]].mean(axis=0)
        return v / np.linalg.norm(v)


# -- metrics ---------------------------------------------------------------------------


def dedupe(items) -> list:
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def scores(ranking: list[str], relevant: set[str], exclude: str | None = None) -> tuple[float, float, float]:
    """(recall@10, reciprocal rank, hit@5) of a ranking of notes."""
    ranking = [r for r in ranking if r != exclude][:DEPTH]
    recall = len(set(ranking[:10]) & relevant) / len(relevant)
    rr = next((1.0 / (i + 1) for i, r in enumerate(ranking) if r in relevant), 0.0)
    hit5 = float(any(r in relevant for r in ranking[:5]))
    return recall, rr, hit5


def summarise(rows: list[tuple[float, float, float]]) -> dict:
    a = np.asarray(rows) if rows else np.zeros((0, 3))
    return {"n": len(rows), "recall@10": round(float(a[:, 0].mean()), 4), "mrr": round(float(a[:, 1].mean()), 4),
            "hit@5": round(float(a[:, 2].mean()), 4)} if rows else {"n": 0}  # fmt: skip


# -- the run ---------------------------------------------------------------------------


async def get(session: aiohttp.ClientSession, url: str, **params) -> dict:
    async with session.get(url, params=params) as resp:
        body = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"{url} {params}: {body}")
        return body


async def run(args) -> dict:
    corpus = Corpus(args.roam_dir)
    rng = random.Random(1)
    work = RESULTS / ("quality-work-" + re.sub(r"[^\w.-]+", "_", f"{args.roam_dir.resolve().name}-{args.model}"))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    copy = work / "roam"
    for rel, text in corpus.clean.items():
        path = copy / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    note_queries = [rel for rel in sorted(corpus.files) if corpus.links[rel] and rel in corpus.file_id]
    sections = corpus.sections
    if len(note_queries) > args.max_queries:
        note_queries = rng.sample(note_queries, args.max_queries)
    if len(sections) > args.max_queries:
        sections = rng.sample(sections, args.max_queries)
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()] if args.questions else []
    questions = [q for q in questions if q["file"] in corpus.files][: args.max_queries]

    emb = Embeddings(args.ollama, args.model)
    out: dict = {"corpus": {"notes": len(corpus.files), "links": sum(len(v) for v in corpus.links.values()) // 2,
                            "note_queries": len(note_queries), "section_queries": len(sections), "questions": len(questions)}}  # fmt: skip
    proc = daemon(copy, work / "index.sqlite3", args.ollama, args.model, RESULTS / "logs" / f"daemon-quality-{args.out}.log")
    timeout = aiohttp.ClientTimeout(total=600)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            started = time.perf_counter()
            status = await wait_ready(session, proc.url)
            out["daemon_index_s"] = round(time.perf_counter() - started, 1)
            out["corpus"].update(headings=status["headings"], chunks=status["chunks"])
            daemon_rows: dict[str, list] = {"note": [], "section": [], "known_note": [], "known_heading": []}
            for rel in note_queries:
                body = await get(session, proc.url + "/similar", node=corpus.file_id[rel], k=DEPTH)
                daemon_rows["note"].append(scores(dedupe(r["file"] for r in body["results"]), corpus.links[rel], rel))
            for rel, line, targets in sections:
                body = await get(session, proc.url + "/similar", file=rel, line=line, k=DEPTH)
                daemon_rows["section"].append(scores(dedupe(r["file"] for r in body["results"]), targets, rel))
            for q in questions:
                body = await get(session, proc.url + "/search", q=q["q"], k=DEPTH)
                results = body["results"]
                daemon_rows["known_note"].append(scores(dedupe(r["file"] for r in results), {q["file"]}))
                keys = [f"{r['file']}\x00{r['heading']}" for r in results]
                daemon_rows["known_heading"].append(scores(dedupe(keys), {f"{q['file']}\x00{q['heading']}"}))

            # Baselines on the same link-free text and the same model.
            bm25 = BM25(corpus.clean)
            page_texts, owners = [], []
            for rel, text in corpus.clean.items():
                for p in pages(text):
                    page_texts.append(p)
                    owners.append(rel)
            started = time.perf_counter()
            cached = work / f"pages-{len(page_texts)}.npy"
            if args.keep and cached.exists():
                page_vectors = np.load(cached)
            else:
                page_vectors = await emb.embed(session, page_texts)
                np.save(cached, page_vectors)
            page_index = Pages(corpus, page_vectors, owners, page_texts)
            out["pages_embed_s"] = round(time.perf_counter() - started, 1)
            out["corpus"]["pages"] = len(page_texts)
            bm_rows: dict[str, list] = {k: [] for k in daemon_rows}
            pg_rows: dict[str, list] = {k: [] for k in daemon_rows}
            for rel in note_queries:
                bm_rows["note"].append(scores(bm25.rank(corpus.clean[rel]), corpus.links[rel], rel))
                pg_rows["note"].append(scores(page_index.rank(page_index.note_vector(rel)), corpus.links[rel], rel))
            section_texts = [corpus.section_text(rel, line) for rel, line, _ in sections]
            section_vectors = await emb.embed(session, section_texts) if sections else []
            for (rel, line, targets), text, vec in zip(sections, section_texts, section_vectors):
                bm_rows["section"].append(scores(bm25.rank(text), targets, rel))
                pg_rows["section"].append(scores(page_index.rank(vec), targets, rel))
            question_vectors = await emb.embed(session, [q["q"] for q in questions], query=True) if questions else []
            for q, vec in zip(questions, question_vectors):
                bm_rows["known_note"].append(scores(bm25.rank(q["q"]), {q["file"]}))
                pg_rows["known_note"].append(scores(page_index.rank(vec), {q["file"]}))
                wanted = {f"{q['file']}\x00{q['heading']}"}
                line_re = re.compile(r"^\*+ " + re.escape(q["heading"]) + r"\s*$", re.M)
                keys = [f"{page_index.owners[i]}\x00{q['heading']}" if line_re.search(page_index.texts[i]) else f"page{i}"
                        for i in page_index.rank_pages(vec)]  # fmt: skip
                pg_rows["known_heading"].append(scores(dedupe(keys), wanted))
    finally:
        proc.stop()
    tasks = {}
    for task in daemon_rows:
        tasks[task] = {"daemon": summarise(daemon_rows[task]), "bm25_files": summarise(bm_rows[task]), "pages": summarise(pg_rows[task])}
    tasks["known_heading"]["bm25_files"] = {"n": 0, "note": "whole files: no heading to rank"}
    out["tasks"] = tasks
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return out


def table(result: dict) -> str:
    lines = ["| task | metric | daemon | BM25 files | pages 6000/400 | daemon / best baseline |", "|---|---|---|---|---|---|"]
    for task, by in result["tasks"].items():
        for metric in ("recall@10", "mrr", "hit@5"):
            if metric not in by["daemon"]:
                continue
            d = by["daemon"][metric]
            bm = by["bm25_files"].get(metric)
            pg = by["pages"].get(metric)
            best = max(x for x in (bm, pg) if x is not None)
            fmt = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
            ratio = f"{d / best:.2f}x" if best else "inf"
            lines.append(f"| {task} (n={by['daemon']['n']}) | {metric} | {fmt(d)} | {fmt(bm)} | {fmt(pg)} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("roam_dir", type=Path)
    p.add_argument("--ollama", required=True, help="Ollama URL (or bench/st_ollama.py)")
    p.add_argument("--model", required=True, help="embedding model name")
    p.add_argument("--questions", type=Path)
    p.add_argument("--max-queries", type=int, default=400)
    p.add_argument("--out", default="run", help="results name: bench/results/quality-OUT.json")
    p.add_argument("--keep", action="store_true",
                   help="keep (and reuse) the link-free copy, its index and the page vectors in bench/results/")
    args = p.parse_args()
    result = asyncio.run(run(args))
    result["table"] = table(result)
    print(result["table"])
    save(f"quality-{args.out}", {"machine": machine(), "roam_dir": str(args.roam_dir), "model": args.model, **result})


if __name__ == "__main__":
    sys.exit(main())
