"""Where ``GET /similar?node=`` misses linked notes that a simple baseline finds (issue 29).

    python bench/note_misses.py RUN [CORPUS ...] --ollama URL [--model all-MiniLM-L6-v2]

A failure analysis, numbers only (no text of the notes is printed), on the indexes
``bench/quality.py --out RUN --keep`` kept, with bench/similar_lab.py's note queries
(the harness's sample and links). For every linked note of every query it compares the
daemon's list of 50 (:func:`similar_lab.similar_to_node`) with each baseline of
bench/quality.py (the same code, vectors through bench/st_ollama.py and its cache), and
prints:

* how many linked notes each baseline and the daemon put in their first ten (both, only
  one, neither), and where the daemon ranks those only a baseline found;
* the linked notes found and missed, and the wrong notes in the daemon's first ten, by
  kind: a note of one heading, of several, or a *holder* (a note holding every heading of
  another note word for word and more, ``Store.holders_among``: a manual's chapter);
* the mean z-scores the word re-ranking (``similarity._rerank_by_words``, recomputed here
  the way it computes them) gave each of those groups: the vector score, the whole-note
  BM25, the index BM25, and the share that came in as keyword candidates;
* recall@10 / MRR by kind of query note, beside the baselines' recall;
* the share of the linked notes the daemon and RRF put in their first ten by the link's
  direction: written in the query note (out), in the linked note (in), or both.

Any index ``quality.py --keep`` made will do, a private collection's too: what it prints
are counts and means.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter, defaultdict

import aiohttp
import numpy as np
import quality
import similar_lab as lab
from _common import RESULTS
from arcology_oracle.answers import fusion, similarity
from arcology_oracle.answers.retrieval import note_key, quoted
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from arcology_oracle.store.search import bm25_scores
from quality_lib import ID_LINK, Corpus, Embeddings, dedupe, pages, scores

BASELINES = ("rrf", "bm25_headings", "bm25_files", "pages", "heading_vectors")
SIGNALS: dict[str, dict] = {}  # file -> its z-scores in the last re-ranking
_rerank = similarity._rerank_by_words


def recording(store, hits, text, vector, exclude_nodes, evidence=None, **kw):
    """The daemon's re-ranking, unchanged; each candidate's z-scores recomputed beside it."""
    out = _rerank(store, hits, text, vector, exclude_nodes, evidence, **kw)
    SIGNALS.clear()
    head = hits[: similarity.RERANK_NOTES]
    words = similarity.frequent_words(text, similarity.MAX_QUERY_WORDS)
    if len(head) < 2 or not words:
        return out
    index_bm25, joining = similarity._keyword_candidates(
        store, words, head, vector, exclude_nodes, {}, owners=kw.get("owners"),
        exclude_headings=kw.get("exclude_headings", frozenset()), note_query=kw.get("note_query", False),
    )  # fmt: skip
    every = head + joining
    owners = store.heading_owners([h for h, _ in every])
    notes = {h: note_key(*owners[h]) for h, _ in every if h in owners}
    texts = store.note_texts([h for h, _ in every], similarity.RERANK_NOTE_CHARS, cjk_bigrams=True, notes=notes)
    note_bm25 = bm25_scores([texts.get(h, "") for h, _ in every], " OR ".join(quoted(words)))
    vz = fusion.standardised(list(enumerate(s for _, s in every)))
    nz = fusion.standardised([(i, note_bm25.get(i, 0.0)) for i in range(len(every))])
    iz = fusion.standardised([(i, index_bm25.get(h, 0.0)) for i, (h, _) in enumerate(every)])
    for i, (h, _) in enumerate(every):
        if h in owners:
            SIGNALS[owners[h][1]] = {"vector": vz[i], "note BM25": nz[i], "index BM25": iz[i], "keyword": i >= len(head)}
    return out


def written_links(corpus: Corpus) -> dict[str, set[str]]:
    """Each note's links as written in it (:class:`Corpus` keeps them both ways)."""
    owner = {node: rel for rel, outline in corpus.outline.items() for _, _, node in outline if node}
    owner.update((node, rel) for rel, node in corpus.file_id.items())
    return {
        rel: {owner[m.group(1)] for m in ID_LINK.finditer((corpus.root / rel).read_text(errors="replace"))
              if m.group(1) in owner} - {rel}
        for rel in corpus.clean
    }  # fmt: skip


def kind(rel: str, headings: Counter, holders: set[str]) -> str:
    return "holder" if rel in holders else ("one heading" if headings[rel] <= 1 else "several")


async def baselines(corpus: Corpus, url: str, model: str) -> quality.Baselines:
    emb = Embeddings(url, model)
    _, _, dense = corpus.heading_docs()
    texts, owner = [], []
    for rel, text in corpus.clean.items():
        for p in pages(text):
            texts.append(p)
            owner.append(rel)
    async with aiohttp.ClientSession() as session:
        return quality.Baselines(corpus, await emb.embed(session, dense), await emb.embed(session, texts), owner)


async def analyse(name: str, run: str, url: str, model: str) -> None:
    corpus = Corpus(lab.source(name))
    notes, _ = lab.queries(corpus, 400)
    base = await baselines(corpus, url, model)
    headings = Counter(key[0] for key in base.keys)
    chars = {rel: len(text) for rel, text in corpus.clean.items()}
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    settings = load_settings(overrides={}, environ={})
    by_id = {corpus.file_id[rel]: rel for rel in corpus.clean if rel in corpus.file_id}
    holders = {by_id[n] for n in store.holders_among(list(by_id))}
    written = written_links(corpus)
    directions: Counter = Counter()
    both: Counter = Counter()
    groups: dict[str, list] = defaultdict(list)  # group -> [(file, its kind, signals or None)]
    missed_ranks: list[int] = []
    found_by: Counter = Counter()
    per_query: dict[str, list] = defaultdict(list)
    similarity._rerank_by_words = recording
    try:
        for rel in notes:
            daemon = [f for f in dedupe(r.file for r in lab.similar_to_node(store, settings, corpus.file_id[rel], 50)) if f != rel]
            signals = dict(SIGNALS)
            ranked = base.note_rankings(corpus.clean[rel], base.note_vector(rel), base.page_vector(rel))
            ranked = {b: [f for f in dedupe(r) if f != rel] for b, r in ranked.items()}
            links = corpus.links[rel]
            for target in links:
                hit = target in daemon[:10]
                groups["found" if hit else "missed"].append((target, kind(target, headings, holders), signals.get(target)))
                found = [b for b in BASELINES if target in ranked[b][:10]]
                way = "both" if rel in written[target] and target in written[rel] else ("out" if target in written[rel] else "in")
                directions[way] += 1
                directions[way, "daemon"] += hit
                directions[way, "rrf"] += "rrf" in found
                for b in BASELINES:
                    both[b, hit, b in found] += 1
                if not hit and found:
                    missed_ranks.append(daemon.index(target) + 1 if target in daemon else 0)
                    found_by.update(found)
            if any(t not in daemon[:10] for t in links):
                groups["wrong, in the first ten"] += [(f, kind(f, headings, holders), signals.get(f)) for f in daemon[:10] if f not in links]
            recall, rr, _ = scores(daemon, links, rel)
            per_query[kind(rel, headings, holders)].append([recall, rr] + [scores(ranked[b], links, rel)[0] for b in ("rrf", "pages", "bm25_headings")])
    finally:
        similarity._rerank_by_words = _rerank
        store.close()
    report(name, both, groups, missed_ranks, found_by, per_query, chars, len(notes))
    print("  by direction: " + "; ".join(
        f"{way} {directions[way]}: daemon {directions[way, 'daemon'] / directions[way]:.3f}, rrf {directions[way, 'rrf'] / directions[way]:.3f}"
        for way in ("out", "in", "both") if directions[way]
    ))  # fmt: skip


def report(name, both, groups, missed_ranks, found_by, per_query, chars, n_queries) -> None:
    print(f"\n{name}: {n_queries} note queries, {len(groups['found']) + len(groups['missed'])} links, "
          f"{len(groups['found'])} in the daemon's first ten")  # fmt: skip
    for b in BASELINES:
        print(f"  {b:16s} both {both[b, True, True]:4d}  daemon only {both[b, True, False]:4d}  "
              f"{b} only {both[b, False, True]:4d}  neither {both[b, False, False]:4d}")  # fmt: skip
    ranks = np.asarray(missed_ranks)
    if len(ranks):
        inside = ranks[ranks > 0]
        print(f"  missed by the daemon, in some baseline's first ten: {len(ranks)}; daemon's rank of them "
              f"p25/p50/p75 {np.percentile(inside, [25, 50, 75]).round(1).tolist()}, not in its 50: {int((ranks == 0).sum())}; "
              f"found by {dict(found_by)}")  # fmt: skip
    for group, rows in groups.items():
        kinds = Counter(k for _, k, _ in rows)
        recorded = [s for _, _, s in rows if s]
        means = "  ".join(f"{sig} {np.mean([s[sig] for s in recorded]):+.2f}" for sig in ("vector", "note BM25", "index BM25")) if recorded else ""
        share = f"keyword {np.mean([s['keyword'] for s in recorded]):.2f}" if recorded else ""
        print(f"  {group:24s} {len(rows):4d}  {dict(kinds)}  median chars {np.median([chars[f] for f, _, _ in rows]):.0f}"
              f"  re-ranked {len(recorded)}: {means}  {share}")  # fmt: skip
    for k, rows in sorted(per_query.items()):
        a = np.asarray(rows)
        print(f"  queries: {k:12s} n={len(rows):3d}  daemon {a[:, 0].mean():.3f} / {a[:, 1].mean():.3f}  recall: rrf "
              f"{a[:, 2].mean():.3f}, pages {a[:, 3].mean():.3f}, bm25_headings {a[:, 4].mean():.3f}; "
              f"recall lost {(1 - a[:, 0]).sum() / n_queries:.3f} of the corpus's")  # fmt: skip


async def main_async(args) -> None:
    for name in args.corpora:
        await analyse(name, args.run, args.ollama, args.model)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam-sub", "info-sub"])
    p.add_argument("--ollama", required=True, help="bench/st_ollama.py's URL (the baselines' vectors)")
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
