"""Whether a change to the query path keeps every answer: /similar by node, by heading and
by text, and /search, compared with another copy of the package.

    python bench/same_answers.py OTHER_DAEMON_DIR [--size 20000] [--queries 300]

``--write-queries ASKED`` and ``--answer BASE ASKED OUT`` run one copy alone, to time
it with a whole-process timer (``hyperfine``, ``/usr/bin/time -v``: the answers' CPU
without HTTP). OTHER_DAEMON_DIR is another copy's ``daemon/`` directory, e.g. the parent commit's:
``mkdir /tmp/base && git archive HEAD~1 daemon | tar -x -C /tmp/base`` then
``/tmp/base/daemon``. Each copy answers, in a child process of its own, the same queries
on a copy of bench_query.py's cached corpus and index (built the first time; the hash
embedder's vectors, embedded in process by the same :class:`_common.HashEmbedder`) through
the answers' async API as the routes call it (``similar_to_node``, ``similar_to_line``,
``similar_to_text``, ``search``); every answer is kept whole as JSON (ids, scores to the
six decimals the API rounds to, snippets, order, flags), and the two are compared. Prints
how many differ; exits 1 if any does. ``bench_query.py --compare`` does the same for
/similar?node and /search through the real daemon over HTTP, with timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import DAEMON_SRC, HASH_MODEL, HashEmbedder

import bench_query


def queries(db: Path, n: int, seed: int) -> dict[str, list]:
    conn = sqlite3.connect(db)
    nodes = sorted(r[0] for r in conn.execute("SELECT DISTINCT own_id FROM headings WHERE own_id IS NOT NULL"))
    places = conn.execute(
        "SELECT f.path, h.start_line, h.title || ' ' || h.text FROM headings h JOIN files f ON f.id = h.file ORDER BY h.id"
    ).fetchall()
    conn.close()
    rng = random.Random(seed)
    vocabulary = bench_query.title_words(db)
    return {
        "nodes": rng.sample(nodes, n),
        "places": [list(p) for p in rng.sample(places, n)],
        "searches": [" ".join(rng.sample(vocabulary, rng.randint(1, 3))) for _ in range(n)],
    }


async def answer_all(roam: Path, db: Path, asked: dict[str, list], dims: int) -> dict[str, list]:
    from arcology_oracle.answers import search
    from arcology_oracle.config import load_settings
    from arcology_oracle.index.service import OracleIndex

    settings = load_settings(
        overrides={"roam_dir": roam, "db_path": db, "embed_model": HASH_MODEL, "ollama_host": "http://127.0.0.1:9"},
        environ={},
    )
    index = OracleIndex(settings, embedder=HashEmbedder(dims))
    await index.start()
    out: dict[str, list] = {}
    as_json = lambda answer: [answer[0], [r.as_dict() for r in answer[1]]]  # noqa: E731
    try:
        for node in asked["nodes"]:
            out[f"similar node {node}"] = as_json(await search.similar_to_node(index, node, 10, keep_all=True))
        for path, line, text in asked["places"]:
            out[f"similar line {path}:{line}"] = as_json(await search.similar_to_line(index, path, line, 10, keep_all=True))
            out[f"similar text {path}:{line}"] = as_json(await search.similar_to_text(index, text, 10, keep_all=True))
        for i, q in enumerate(asked["searches"]):
            out[f"search {i} {q}"] = as_json(await search.search(index, q, 10))
    finally:
        await index.close()
    return out


def run_copy(src: Path, base: Path, asked: Path, out: Path, dims: int) -> None:
    """This script's ``--answer`` mode in a child process with ``src`` as the package."""
    env = {**os.environ, "BENCH_DAEMON_SRC": str(src)}
    cmd = [sys.executable, __file__, "--answer", str(base), str(asked), str(out), "--dims", str(dims)]
    subprocess.run(cmd, env=env, check=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("other", type=Path, nargs="?", help="the other copy's daemon/ directory")
    p.add_argument("--size", type=int, default=20000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--dims", type=int, default=768)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--answer", nargs=3, type=Path, metavar=("BASE", "ASKED", "OUT"),
                   help="one copy only (BENCH_DAEMON_SRC's): answer the queries of ASKED on a copy of the index"
                   " in BASE, write them to OUT (what the comparison runs in each child; time it with hyperfine or /usr/bin/time)")
    p.add_argument("--write-queries", type=Path, metavar="ASKED", help="only write the queries (for --answer)")
    args = p.parse_args()
    if args.write_queries:
        _, db, _ = asyncio.run(bench_query.build(args.size, args.dims))
        args.write_queries.write_text(json.dumps(queries(db, args.queries, args.seed)))
        print(f"{args.write_queries}: for --answer {db.parent} {args.write_queries} OUT")
        return
    if args.answer:  # a child: one copy of the package answers on its own copy of the index
        base, asked, out = args.answer
        tmp = Path(tempfile.mkdtemp(prefix="same-answers-"))
        try:
            for name in ("index.sqlite3", "index.sqlite3-vectors"):
                if (base / name).exists():
                    shutil.copy(base / name, tmp / name)
            answers = asyncio.run(answer_all(base / "roam", tmp / "index.sqlite3", json.loads(asked.read_text()), args.dims))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        out.write_text(json.dumps(answers, sort_keys=True))
        return
    if args.other is None:
        p.error("name the other copy's daemon/ directory")
    roam, db, _ = asyncio.run(bench_query.build(args.size, args.dims))
    with tempfile.TemporaryDirectory(prefix="same-answers-") as tmp:
        asked = Path(tmp) / "asked.json"
        asked.write_text(json.dumps(queries(db, args.queries, args.seed)))
        results = {}
        for name, src in (("this", DAEMON_SRC), ("other", args.other.resolve())):
            run_copy(src, db.parent, asked, Path(tmp) / f"{name}.json", args.dims)
            results[name] = json.loads((Path(tmp) / f"{name}.json").read_text())
    this, other = results["this"], results["other"]
    differ = sorted(key for key in this.keys() | other.keys() if this.get(key) != other.get(key))
    print(f"{len(differ)} of {len(this)} answers differ between {DAEMON_SRC} and {args.other}")
    for key in differ[:5]:
        print(f"  {key}:\n    this:  {json.dumps(this.get(key))[:300]}\n    other: {json.dumps(other.get(key))[:300]}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
