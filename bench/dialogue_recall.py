"""Evidence found for questions about conversations: /ask's prompt, /recall, and
turn-level baselines at the same budget, in one run.

    python bench/dialogue_recall.py [--corpus DIR] [--seed 28] [--ollama URL --model NAME]
        [--out NAME] [--k 8] [--ask-k K]

The corpus is bench/dialogue_corpus.py's (generated into a temporary folder unless
``--corpus`` names one it wrote). Without ``--ollama`` the script starts
bench/st_ollama.py with all-MiniLM-L6-v2 (the bench extras) and its vector cache.
The daemon's own :class:`OracleIndex` indexes the org files in process; then for each
question:

* ``ask``: :meth:`Oracle.ask` with a chat model that records the messages it is sent;
  the prompt is the whole of them (system and user);
* ``recall``: :func:`recall` with ``k``; what reaches the caller is the notes' ``text``;
* baselines over single turns (the same turns, read by the daemon's dialogue reader):
  BM25, vectors (the same model, one vector per turn) and their RRF, each taking turns
  best first, alone or with their two neighbouring turns (overlapping windows merged),
  until the characters of that question's ``/recall`` text are used up.

"Evidence found" is, per question, the share of its evidence turns whose words (without
the speaker's name, which the import formats write differently; whitespace collapsed)
reach the caller, averaged by kind of question and over all. Writes
bench/results/dialogue-OUT.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import numpy as np

from _common import RESULTS, embed_server, save  # noqa: F401  (puts the package on sys.path)
from quality_lib import BM25, Embeddings, rrf

from arcology_oracle.answers.oracle import Oracle
from arcology_oracle.answers.recall import recall
from arcology_oracle.config import load_settings
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes import dialogue
from arcology_oracle.notes.reader import read_org_file

KINDS = ("fact", "across", "when", "open")
_SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class RecordingChat:
    """A chat model that answers "ok" and keeps every prompt it was sent."""

    model = "recording"

    def __init__(self):
        self.prompts: list[list[dict]] = []

    async def stream_chat(self, messages, model=None, **_):
        self.prompts.append(list(messages))
        yield "ok"


def read_turns(roam: Path) -> list[dict]:
    """Every turn of the corpus in order: file, heading start line, ordinal, text."""
    out = []
    for path in sorted(roam.rglob("*.org")):
        parsed = read_org_file(path, path.name)
        imported = bool(parsed.headings) and "IMPORTED_FROM" in parsed.headings[0].properties
        for h in parsed.headings:
            for t in dialogue.read_turns(h.body, h.date, known=imported):
                out.append({"file": path.name, "heading": h.start_line, "ordinal": t.ordinal, "text": t.text})
    return out


def said(turn: str) -> str:
    """A turn's words without its ``[time] Name:`` (formats name speakers differently:
    an export's friend is its ``ChatGPT``), whitespace collapsed."""
    m = dialogue.SPEAKER_LINE_RE.match(turn.split("\n", 1)[0])
    return norm(turn[m.start("text"):] if m else turn)


def evidence_share(evidence: list[str], seen: str) -> float:
    return sum(said(e) in seen for e in evidence) / len(evidence)


def baseline(order: list[int], turns: list[dict], budget: int, spread: int) -> tuple[set[int], int]:
    """Turn indexes taken best first (with ``spread`` neighbours in the same heading)
    until ``budget`` characters; and the characters taken."""
    taken: set[int] = set()
    chars = 0
    for i in order:
        window = [j for j in range(i - spread, i + spread + 1)
                  if 0 <= j < len(turns) and turns[j]["heading"] == turns[i]["heading"] and turns[j]["file"] == turns[i]["file"]]
        new = [j for j in window if j not in taken]
        cost = sum(len(turns[j]["text"]) + 2 for j in new)
        if chars + cost > budget:
            break
        taken.update(new)
        chars += cost
    return taken, chars


async def run(args) -> dict:
    corpus = args.corpus
    if corpus is None:
        corpus = Path(tempfile.mkdtemp(prefix="dialogue-bench-"))
        subprocess.run([sys.executable, str(Path(__file__).parent / "dialogue_corpus.py"), str(corpus), "--seed", str(args.seed)], check=True)
    roam = corpus / "roam"
    questions = json.loads((corpus / "questions.json").read_text())
    db = Path(tempfile.mkdtemp(prefix="dialogue-db-")) / "index.sqlite3"
    settings = load_settings(overrides={"roam_dir": roam, "db_path": db, "ollama_host": args.ollama,
                                        "embed_model": args.model, "parse_workers": 0,
                                        **({"evidence_neighbours": args.neighbours} if args.neighbours is not None else {})},
                             environ={})  # fmt: skip
    index = OracleIndex(settings)
    await index.start()
    started = time.perf_counter()
    await index.reconcile()
    await index.embed_pending()
    indexed_s = time.perf_counter() - started
    chat = RecordingChat()
    oracle = Oracle(index, chat)
    turns = read_turns(roam)
    texts = [t["text"] for t in turns]
    where = {said(t): i for i, t in enumerate(texts)}
    bm25 = BM25(texts)
    emb = Embeddings(args.ollama, args.model)
    rows = []
    async with aiohttp.ClientSession() as session:
        matrix = await emb.embed(session, texts)
        qvecs = await emb.embed(session, [q["question"] for q in questions], query=True)
        for q, qv in zip(questions, qvecs):
            reply = await oracle.ask(q["question"], k=args.ask_k or args.k)
            await reply.text()
            prompt = norm("\n".join(m["content"] for m in chat.prompts[-1]))
            got = await recall(oracle, q["question"], k=args.k)
            recalled = [n["text"] for n in got["notes"]]
            budget = sum(len(t) for t in recalled)
            row = {"kind": q["kind"], "question": q["question"], "ask": evidence_share(q["evidence"], prompt),
                   "ask_chars": len(prompt), "recall": evidence_share(q["evidence"], norm("\n".join(recalled))),
                   "recall_chars": budget, "recall_windows": len(recalled)}  # fmt: skip
            ev = {where[said(e)] for e in q["evidence"] if said(e) in where}
            orders = {"bm25": bm25.rank(q["question"]), "vector": [int(i) for i in np.argsort(-(matrix @ qv), kind="stable")[:400]]}
            orders["rrf"] = rrf(orders["bm25"], orders["vector"])
            for name, order in orders.items():
                for spread, label in ((0, ""), (1, "+nb")):
                    taken, chars = baseline(order, turns, budget, spread)
                    row[name + label] = len(ev & taken) / len(q["evidence"])
                    row[name + label + "_chars"] = chars
            rows.append(row)
    await index.close()
    return {"rows": rows, "indexed_s": indexed_s, "turns": len(turns), "questions": len(questions),
            "scene_chars": dialogue.SCENE_CHARS, "k": args.k}  # fmt: skip


def table(result: dict) -> str:
    rows = result["rows"]
    columns = ["ask", "recall", "bm25", "bm25+nb", "vector", "vector+nb", "rrf", "rrf+nb"]
    lines = ["| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for kind in (*KINDS, "all"):
        part = [r for r in rows if kind in ("all", r["kind"])]
        cells = [f"{np.mean([r[c] for r in part]):.3f}" for c in columns]
        lines.append(f"| {kind} ({len(part)}) | " + " | ".join(cells) + " |")
    chars = [f"{np.mean([r[c + '_chars'] for r in rows]):,.0f}" for c in columns]
    lines.append("| characters (mean) | " + " | ".join(chars) + " |")
    lines.append(f"\nmax /ask prompt: {max(r['ask_chars'] for r in rows):,} characters; "
                 f"{result['questions']} questions, {result['turns']} turns, indexed in {result['indexed_s']:.1f} s")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path)
    p.add_argument("--seed", type=int, default=28)
    p.add_argument("--ollama")
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--ask-k", type=int, help="/ask's k, when it is not --k (/recall's)")
    p.add_argument("--out", default="run")
    p.add_argument("--neighbours", type=int, help="evidence_neighbours (default: the daemon's)")
    p.add_argument("--scene-chars", type=int, help="scene size to measure instead of the default (max 1.6x, overlap 0.24x)")
    args = p.parse_args()
    if args.scene_chars:  # indexed in this process (parse_workers 0), so this takes
        dialogue.SCENE_CHARS = args.scene_chars
        dialogue.SCENE_MAX_CHARS = args.scene_chars * 8 // 5
        dialogue.SCENE_OVERLAP_CHARS = args.scene_chars * 6 // 25
    server = None
    if not args.ollama:
        server = embed_server(RESULTS / "logs" / "dialogue-embed.log", "--backend", "st", "--model", args.model,
                              "--cache", str(RESULTS / "embed-cache.sqlite3"))  # fmt: skip
        args.ollama = server.url
    try:
        result = asyncio.run(run(args))
    finally:
        if server:
            server.stop()
    print(table(result))
    save(f"dialogue-{args.out}", result)


if __name__ == "__main__":
    main()
