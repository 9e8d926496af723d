"""The parts of bench/quality.py that do not talk to the daemon: the corpus and its link
graph, the questions, the baselines and the metrics.

Baselines (all on the same link-free text; the vector ones through the same embedding
server and model as the daemon):

* ``bm25_files``: Okapi BM25 (k1=1.2, b=0.75) over whole files;
* ``bm25_headings``: the same over headings (file title, outline path, heading title and
  text: what a heading-level keyword search sees), a note ranked by its best heading;
* ``pages``: files cut into 6000-character pages overlapping by 400, one vector per page,
  a note ranked by its best page (for a whole-note query, the mean of its pages);
* ``heading_vectors``: one vector per heading (its outline path line and text, as the
  daemon's first chunk), a note ranked by its best heading (for a whole note, the mean of
  its headings' vectors);
* ``rrf``: plain reciprocal rank fusion (k=60) of ``bm25_headings`` and
  ``heading_vectors``, at heading level.

Words for BM25: runs of letters/digits lower-cased, and in a run of CJK characters (which
has no spaces between words) every character bigram, so the keyword baselines are fair on
Japanese notes.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections import Counter
from pathlib import Path

import aiohttp
import numpy as np

from arcology_oracle.config import load_settings
from arcology_oracle.notes.files import iter_org_files
from arcology_oracle.notes.reader import read_org_bytes

ID_LINK = re.compile(r"\[\[id:([^\[\]]+)\](?:\[([^\[\]]*)\])?\]")
DEPTH = 50
PAGE, OVERLAP = 6000, 400
RRF_K = 60
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]{{2,}}")
_CJK_RUN = re.compile(rf"[{_CJK}]")


def words(text: str) -> list[str]:
    """BM25 terms: words of two or more letters; CJK runs as character bigrams."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        if _CJK_RUN.match(tok):
            out.extend(tok[i : i + 2] for i in range(max(1, len(tok) - 1)))
        else:
            out.append(tok)
    return out


def strip_links(text: str) -> str:
    return ID_LINK.sub("", text)


class Corpus:
    """The notes (one per file), their link graph (both ways), their link-free text and
    headings parsed from it."""

    def __init__(self, root: Path):
        self.root = root
        self.clean: dict[str, str] = {}
        self.file_id: dict[str, str] = {}
        self.headings: dict[str, list] = {}  # rel -> headings of the link-free text
        raw_headings: dict[str, list] = {}
        node_file: dict[str, str] = {}
        for rel, path in iter_org_files(root):
            data = path.read_bytes()
            parsed = read_org_bytes(data, rel, log_problems=False)
            raw_headings[rel] = parsed.headings
            self.clean[rel] = strip_links(data.decode("utf-8", errors="replace"))
            self.headings[rel] = read_org_bytes(self.clean[rel].encode(), rel, log_problems=False).headings
            if parsed.file_id:
                self.file_id[rel] = parsed.file_id
                node_file[parsed.file_id] = rel
            for h in parsed.headings:
                if h.own_id:
                    node_file[h.own_id] = rel
        self.outline = {rel: [(h.start_line, h.level, h.own_id) for h in hs] for rel, hs in raw_headings.items()}
        self.links: dict[str, set[str]] = {rel: set() for rel in self.clean}
        self.sections: list[tuple[str, int, set[str]]] = []  # (rel, line, linked notes)
        for rel, headings in raw_headings.items():
            for h in headings:
                targets = {node_file[m.group(1)] for m in ID_LINK.finditer(h.body) if m.group(1) in node_file} - {rel}
                for t in targets:
                    self.links[rel].add(t)
                    self.links[t].add(rel)
                if targets and h.level > 0:
                    self.sections.append((rel, h.start_line, targets))

    def heading(self, rel: str, line: int):
        """The heading of the link-free text holding ``line`` (a heading whose title was
        nothing but a link is no heading there: its lines belong to the one above)."""
        found = None
        for h in self.headings[rel]:
            if h.start_line <= line:
                found = h
        if found is None:
            raise KeyError((rel, line))
        return found

    def node_at(self, rel: str, line: int) -> str | None:
        """The ID of the innermost node holding ``line`` (the file's, above its first
        node heading), as Emacs sends it with an unsaved buffer's text (``:node-id``)."""
        stack: list[tuple[int, str | None]] = []
        for start, level, own in self.outline[rel]:
            if start > line:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, own))
        return next((own for _, own in reversed(stack) if own), self.file_id.get(rel))

    def emacs_section(self, rel: str, line: int) -> str:
        """What Emacs posts for the heading at ``line`` of an unsaved buffer: its lines
        from the heading line to the next heading, at most 8,000 characters."""
        lines = self.clean[rel].split("\n")
        start = self.heading(rel, line).start_line
        end = next((i for i in range(start, len(lines)) if re.match(r"\*+ ", lines[i])), len(lines))
        return "\n".join(lines[start - 1 : end])[:8000]

    def section_text(self, rel: str, line: int) -> str:
        h = self.heading(rel, line)
        return h.title + "\n" + h.text

    def heading_docs(self) -> tuple[list[tuple[str, str]], list[str], list[str]]:
        """``(keys, keyword texts, embedding texts)`` of every heading; a key is
        ``(file, heading title)``; the embedding text is the daemon's first chunk."""
        from arcology_oracle.notes.chunking import chunk_heading

        keys, lexical, dense = [], [], []
        for rel, headings in self.headings.items():
            file_title = headings[0].title if headings else rel
            for h in headings:
                keys.append((rel, h.title))
                lexical.append(" ".join([file_title, *h.olp, h.title, h.text]))
                dense.append(chunk_heading(h, file_title)[0].text)
        return keys, lexical, dense


def load_questions(path: Path | None, corpus: Corpus) -> list[dict]:
    """Known-item questions from TOML (``[[question]]`` tables with ``q``, ``file`` and
    ``heading``) or JSONL; each must name a file of the corpus and a heading in it.

    Each question gets ``headings``: the right answers, i.e. its heading and every other
    heading with the same title and text (the Info manuals hold some sections twice, and
    which copy a question was written from is chance); ``files``: the files of those."""
    if path is None:
        return []
    if path.suffix == ".toml":
        items = tomllib.loads(path.read_text(encoding="utf-8"))["question"]
    else:
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for q in items:
        titles = {h.title for h in corpus.headings.get(q["file"], ())}
        if q["heading"] not in titles:
            raise SystemExit(f"{path}: question {q['q']!r}: no heading {q['heading']!r} in {q['file']!r}")
    same: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for rel, headings in corpus.headings.items():
        for h in headings:
            same.setdefault((h.title, h.text.strip()), set()).add((rel, h.title))
    for q in items:
        texts = [(h.title, h.text.strip()) for h in corpus.headings[q["file"]] if h.title == q["heading"]]
        q["headings"] = set().union(*(same[t] for t in texts))
        q["files"] = {rel for rel, _ in q["headings"]}
    return items


class BM25:
    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75):
        tfs = [Counter(words(d)) for d in docs]
        self.n = len(docs)
        lengths = np.array([sum(tf.values()) for tf in tfs], dtype=np.float64)
        avg = lengths.mean() if self.n else 1.0
        df = Counter(w for tf in tfs for w in tf)
        self.idf = {w: math.log(1 + (self.n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        tmp: dict[str, list[tuple[int, float]]] = {}
        for i, tf in enumerate(tfs):
            norm = k1 * (1 - b + b * lengths[i] / avg)
            for w, c in tf.items():
                tmp.setdefault(w, []).append((i, c * (k1 + 1) / (c + norm)))
        for w, pairs in tmp.items():
            self.postings[w] = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))

    def rank(self, query: str) -> list[int]:
        scores = np.zeros(self.n)
        for w in set(words(query)):
            if w in self.postings:
                ids, weights = self.postings[w]
                scores[ids] += self.idf[w] * weights
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order[: DEPTH * 20] if scores[i] > 0]


def pages(text: str) -> list[str]:
    out, start = [], 0
    while True:
        out.append(text[start : start + PAGE])
        if start + PAGE >= len(text):
            return out
        start += PAGE - OVERLAP


class Embeddings:
    """``/api/embed`` at URL, with the daemon's prefixes for the model."""

    def __init__(self, url: str, model: str):
        self.url, self.model = url, model
        self.prefixes = load_settings(overrides={}, environ={}).prefixes_for(model)

    async def embed(self, session: aiohttp.ClientSession, texts: list[str], query: bool = False) -> np.ndarray:
        prefix = self.prefixes.query if query else self.prefixes.document
        out = []
        for start in range(0, len(texts), 64):
            batch = [prefix + t for t in texts[start : start + 64]]
            async with session.post(self.url + "/api/embed", json={"model": self.model, "input": batch}) as resp:
                body = await resp.json()
            out.extend(body["embeddings"])
        m = np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) or 1.0)


def dense_rank(matrix: np.ndarray, q: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-(matrix @ q), kind="stable")[: DEPTH * 20]]


def rrf(*rankings: list[int]) -> list[int]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for r, i in enumerate(ranking, start=1):
            scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + r)
    return sorted(scores, key=lambda i: -scores[i])


def dedupe(items) -> list:
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def scores(ranking: list, relevant: set, exclude=None) -> tuple[float, float, float]:
    """(recall@10, reciprocal rank, hit@5) of a ranking (deduplicated here)."""
    ranking = [r for r in dedupe(ranking) if r != exclude][:DEPTH]
    recall = len(set(ranking[:10]) & relevant) / len(relevant)
    rr = next((1.0 / (i + 1) for i, r in enumerate(ranking) if r in relevant), 0.0)
    hit5 = float(any(r in relevant for r in ranking[:5]))
    return recall, rr, hit5


def summarise(rows: list[tuple[float, float, float]]) -> dict:
    if not rows:
        return {"n": 0}
    a = np.asarray(rows)
    return {"n": len(rows), "recall@10": round(float(a[:, 0].mean()), 4), "mrr": round(float(a[:, 1].mean()), 4),
            "hit@5": round(float(a[:, 2].mean()), 4)}  # fmt: skip
