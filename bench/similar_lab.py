"""Link prediction (``/similar``) in process, over the indexes bench/quality.py kept.

    python bench/similar_lab.py RUN [CORPUS ...] [--tasks node,text,line,section_text]
        [--max-queries 400] [--ollama URL] [--old-text] [--no-node] [--one-vector] [--no-section] [--text-as-section] [--raw-words]

Runs the same queries as bench/quality.py's ``note`` and ``section`` tasks (same sample,
same relevant notes, same metrics) straight through the daemon's own synchronous code
(:mod:`arcology_oracle.answers`) on ``bench/results/quality-work-CORPUS-RUN/index.sqlite3``
(made by ``quality.py --out RUN --keep``), so that a change to the ranking is measured in
seconds rather than minutes. CORPUS is a directory of ../shared/corpora or ``info``.
The text queries' vectors are embedded once (through bench/st_ollama.py with its cache,
started here unless ``--ollama``) and kept in ``bench/results/lab-vectors-CORPUS.npz``.
Prints recall@10, MRR and the median time per query; with ``--depths``, also where the
linked notes stand in each task's list of 50 (the share of them in the first 10, 20, 30
and 50: how much a better order of the same candidates could gain). ``ARCOLOGY_ORACLE_GRAPH_SIMILARITY=false``
(or ``_GRAPH_WEIGHT``) in the environment measures without the graph signal (or another
weight), as the daemon's own settings would. The HTTP harness remains the
reference: confirm a change there.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import sys
import time
from pathlib import Path

import aiohttp
import numpy as np
from _common import REPO, RESULTS, embed_server
from arcology_oracle.answers import mentions, relevance, search, similarity
from arcology_oracle.answers import text_vectors as posted_texts
from arcology_oracle.answers.retrieval import mean_vector
from arcology_oracle.notes.records import sha256_hex
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from quality_lib import Corpus, Embeddings, dedupe, scores, summarise

CORPORA = REPO.parent / "shared" / "corpora"  # ../shared beside the checkout
DEPTHS = (10, 20, 30, 50)


def source(name: str) -> Path:
    """``info``, a directory of ../shared/corpora, or one made under bench/results/
    (bench/subset.py, bench/info2org.py)."""
    if name == "info":
        return RESULTS / "info-roam"
    return RESULTS / name if (RESULTS / name).is_dir() else CORPORA / name


def queries(corpus: Corpus, max_queries: int) -> tuple[list[str], list]:
    """The note and section queries of bench/quality.py (the same sample)."""
    rng = random.Random(1)
    notes = [rel for rel in sorted(corpus.clean) if corpus.links[rel] and rel in corpus.file_id]
    sections = corpus.sections
    if len(notes) > max_queries:
        notes = sorted(rng.sample(notes, max_queries))
    if len(sections) > max_queries:
        sections = sorted(rng.sample(sections, max_queries))
    return notes, sections


async def text_vectors(name: str, texts: list[str], url: str | None, model: str) -> dict[str, np.ndarray]:
    """Document vectors of ``texts`` (as POST /similar embeds them), cached on disk."""
    path = RESULTS / f"lab-vectors-{name}.npz"
    key = lambda t: hashlib.sha256(t.encode()).hexdigest()  # noqa: E731
    have = dict(np.load(path)) if path.exists() else {}
    missing = [t for t in texts if key(t) not in have]
    if missing:
        server = None
        if url is None:
            server = embed_server(RESULTS / "logs" / "lab-embed.log", "--backend", "st", "--model", model,
                                  "--cache", str(RESULTS / "embed-cache.sqlite3"))  # fmt: skip
            url = server.url
        try:
            async with aiohttp.ClientSession() as session:
                vecs = await Embeddings(url, model).embed(session, missing)
        finally:
            if server is not None:
                server.stop()
        have.update({key(t): v for t, v in zip(missing, vecs)})
        np.savez(path, **have)
    return {t: have[key(t)] for t in texts}


def similar_to_node(store: Store, settings, node_id: str, k: int):
    """What ``GET /similar?node=`` runs (answers.search.similar_node: scored and cut)."""
    return search.similar_node(store, settings, node_id, k)[1]


def similar_to_line(store: Store, settings, rel: str, line: int, k: int):
    """What ``GET /similar?file=&line=`` runs (answers.search.similar_line)."""
    return search.similar_line(store, settings, rel, line, k)[1]


def similar_to_text(
    store: Store, settings, text: str, posted, k: int, whole_notes: bool = True, node: str | None = None,
    as_note: bool = True,
):
    """What ``POST /similar`` runs (answers.search.similar_text) with ``node`` (what
    Emacs sends with an unsaved buffer's text) and ``posted``, ``(vector, saved heading,
    words)`` (:func:`posted_vectors`); ``as_note=False`` asks a whole note's text as a
    section's (``--text-as-section``); ``whole_notes=False`` measures the text path as it
    was before issue 29 (no whole-note re-ranking, no node)."""
    vector, section, words, own_words, links = posted
    vector = None if vector is None else vector.tolist()
    if whole_notes:
        whole = as_note and posted_texts.is_whole_note(text)
        return search.similar_text(
            store, settings, words, vector, k, node=node, section=section, whole_note=whole,
            naming=mentions.Naming(own_words, linked=frozenset(links)),
        )[1]
    mode, results = similarity.similar(store, k=k, vector=vector, text=text)
    results = relevance.rescore(store, results, relevance.Signals(vector))
    return relevance.cut(results, relevance.min_score_for(mode, settings.min_score))


async def posted_vectors(name: str, store: Store, settings, posts: list[tuple], args) -> dict[tuple, tuple]:
    """``{(text, path, line): (vector, saved heading, words, own words, links)}`` as ``POST /similar`` makes them
    (:mod:`arcology_oracle.answers.text_vectors`: the text's chunks, stored vectors by
    hash, the rest embedded here), or with ``--one-vector`` one embedding of each whole
    text and no saved heading (before that). ``--no-section``: no saved heading."""
    if args.one_vector:
        vecs = await text_vectors(name, [text for text, _, _ in posts], args.ollama, args.model)
        return {post: (vecs[post[0]], None, post[0], "", ()) for post in posts}
    planned = {post: posted_texts.read_text(store, settings, *post) for post in posts}
    plans = {post: reading.chunks for post, reading in planned.items()}
    stored = store.vectors_for_hashes(list({sha256_hex(c) for chunks in plans.values() for c in chunks}))
    missing = sorted({c for chunks in plans.values() for c in chunks if sha256_hex(c) not in stored})
    embedded = await text_vectors(name, missing, args.ollama, args.model) if missing else {}
    out = {}
    for post, chunks in plans.items():
        mean = mean_vector([stored[sha256_hex(c)] if sha256_hex(c) in stored else embedded[c] for c in chunks])
        words = planned[post].words if args.words else post[0]
        out[post] = (None if mean is None else np.asarray(mean), planned[post].heading if args.section else None, words,
                     planned[post].own_words, planned[post].links)  # fmt: skip
    return out


async def run_corpus(name: str, run: str, tasks: set[str], args) -> dict:
    corpus = Corpus(source(name))
    notes, sections = queries(corpus, args.max_queries)
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    # ARCOLOGY_ORACLE_GRAPH_SIMILARITY / _GRAPH_WEIGHT from the environment: the graph
    # signal on or off, as in the daemon; nothing else is read from it.
    graph_env = {k: v for k, v in os.environ.items() if k.startswith("ARCOLOGY_ORACLE_GRAPH_")}
    settings = load_settings(overrides={}, environ=graph_env)
    posts = [(corpus.clean[rel], rel, None) for rel in notes] + [(corpus.emacs_section(rel, line), rel, line) for rel, line, _ in sections]
    vecs = await posted_vectors(name, store, settings, posts, args) if tasks & {"text", "section_text"} else {}
    k = 50
    as_note = not args.text_as_section
    rows: dict[str, list] = {t: [] for t in tasks}
    times: dict[str, list] = {t: [] for t in tasks}
    places: dict[str, list[int]] = {t: [] for t in tasks}  # each linked note's place (1-based), 0 if not in the 50

    def timed(task, fn, relevant, own):
        started = time.perf_counter()
        results = fn()
        times[task].append((time.perf_counter() - started) * 1000)
        rows[task].append(scores([r.file for r in results], relevant, own))
        ranking = [f for f in dedupe([r.file for r in results]) if f != own]
        places[task] += [ranking.index(f) + 1 if f in ranking else 0 for f in relevant]

    try:
        for rel in notes:
            if "node" in tasks:
                timed("node", lambda: similar_to_node(store, settings, corpus.file_id[rel], k), corpus.links[rel], rel)
            if "text" in tasks:
                text = corpus.clean[rel]
                node = corpus.file_id[rel] if args.node else None
                posted = vecs[text, rel, None]
                timed("text", lambda: similar_to_text(store, settings, text, posted, k, args.whole_text, node, as_note),
                      corpus.links[rel], rel)  # fmt: skip
        for rel, line, targets in sections:
            if "line" in tasks:
                timed("line", lambda: similar_to_line(store, settings, rel, line, k), targets, rel)
            if "section_text" in tasks:
                text = corpus.emacs_section(rel, line)
                node = corpus.node_at(rel, line) if args.node else None
                posted = vecs[text, rel, line]
                timed("section_text", lambda: similar_to_text(store, settings, text, posted, k, args.whole_text, node, as_note),
                      targets, rel)  # fmt: skip
    finally:
        store.close()
    out = {}
    for task in ("node", "text", "line", "section_text"):
        if task in tasks:
            s = summarise(rows[task])
            out[task] = {"recall@10": s["recall@10"], "mrr": s["mrr"], "p50_ms": round(float(np.median(times[task])), 1)}
            if args.depths:
                found = np.asarray(places[task])
                out[task]["depths"] = {d: round(float(((found > 0) & (found <= d)).mean()), 3) for d in DEPTHS}
    return out


async def main_async(args) -> None:
    for name in args.corpora:
        started = time.perf_counter()
        out = await run_corpus(name, args.run, args.tasks, args)
        cells = "  ".join(f"{t}: {v['recall@10']:.3f} {v['mrr']:.3f} ({v['p50_ms']} ms)" for t, v in out.items())
        print(f"{name:20s} {cells}  [{time.perf_counter() - started:.0f} s]", flush=True)
        for task, v in out.items():
            if "depths" in v:
                shares = ", ".join(f"{share:.3f} in the first {d}" for d, share in v["depths"].items())
                print(f"{'':20s} {task}: of the linked notes {shares}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="the --out name of the quality.py run whose kept indexes to read")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam", "info"])
    p.add_argument("--tasks", type=lambda s: set(s.split(",")), default={"node", "text", "line", "section_text"})
    p.add_argument("--max-queries", type=int, default=400)
    p.add_argument("--ollama", help="Ollama URL for the text queries' vectors (default: start st_ollama.py)")
    p.add_argument("--model", default="all-minilm")
    p.add_argument("--raw-words", dest="words", action="store_false",
                   help="text queries searched by the posted text's raw words (drawers, keywords: as before)")
    p.add_argument("--text-as-section", action="store_true",
                   help="a whole note's text asks as a section's text does (as before it asked as ?node=)")
    p.add_argument("--no-section", dest="section", action="store_false",
                   help="text queries without the saved heading they are a state of (no copies left out)")
    p.add_argument("--one-vector", action="store_true",
                   help="text queries embedded whole, as one text (as before POST /similar chunked them)")
    p.add_argument("--no-node", dest="node", action="store_false",
                   help="text queries without the node they come from (as before POST /similar took one)")
    p.add_argument("--depths", action="store_true", help="also where the linked notes stand in the list of 50")
    p.add_argument("--old-text", dest="whole_text", action="store_false",
                   help="text queries as before issue 29 (without the whole-note re-ranking)")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
