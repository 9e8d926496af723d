"""Exact re-scoring of KNN candidates: sqlite-vec in SQL against numpy, same rows, same run.

    python bench/bench_rescore.py [--db bench/results/cache/query-100000-768/index.sqlite3]

What ``Store.knn`` does after the in-memory prefilter: given candidate rowids, the k best
by exact distance with their text hashes. Two ways, timed alternately over the same random
candidate sets (100 per setting; median ms):

* ``numpy``: read the candidates' float32 blobs, distances in numpy, then a second query
  for the winners' hashes (the code before issue 19);
* ``sql``: one statement, ``vec_distance_cosine`` over the blob column joined to the
  hashes, ``ORDER BY ... LIMIT k`` (the code now).

Both must return the same hashes. Uses a database bench_query.py built.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import numpy as np

from _common import RESULTS, machine, save

from arcology_oracle.store.db import connect


def numpy_path(conn, q: np.ndarray, ids: list[int], k: int) -> list[str]:
    rows = conn.execute(f"SELECT rowid, embedding FROM vec_embeddings WHERE rowid IN ({','.join('?' * len(ids))})", ids).fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    diff = matrix - q
    d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    found = np.array([r[0] for r in rows], np.int64)
    best = found[np.lexsort((found, d))[:k]].tolist()
    hashes = dict(conn.execute(f"SELECT id, hash FROM embeddings WHERE id IN ({','.join('?' * len(best))})", best).fetchall())
    return [hashes[r] for r in best]


def sql_path(conn, q: np.ndarray, ids: list[int], k: int) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT e.hash, vec_distance_cosine(v.embedding, ?) AS d FROM vec_embeddings v JOIN embeddings e ON e.id = v.rowid"
        " WHERE v.rowid IN (SELECT value FROM json_each(?)) ORDER BY d, v.rowid LIMIT ?",
        (q.tobytes(), json.dumps(ids), k),
    )]  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", type=Path, default=RESULTS / "cache" / "query-100000-768" / "index.sqlite3")
    p.add_argument("--sets", type=int, default=100)
    args = p.parse_args()
    conn = connect(args.db, readonly=True)
    n = conn.execute("SELECT max(rowid) FROM vec_embeddings").fetchone()[0]
    rng = random.Random(1)
    out = {"machine": machine(), "db": str(args.db), "vectors": n, "settings": []}
    # (candidates, k): /similar's pool (k=100 -> 125 candidates), a large pool, a small one.
    for cand, k in ((125, 100), (410, 10), (60, 50)):
        times: dict[str, list[float]] = {"numpy": [], "sql": []}
        for _ in range(args.sets):
            ids = rng.sample(range(1, n + 1), cand)
            q = np.frombuffer(conn.execute("SELECT embedding FROM vec_embeddings WHERE rowid = ?", (ids[0],)).fetchone()[0], "<f4")
            got = {}
            for name, fn in (("numpy", numpy_path), ("sql", sql_path)) if rng.random() < 0.5 else (("sql", sql_path), ("numpy", numpy_path)):
                started = time.perf_counter()
                got[name] = fn(conn, q, ids, k)
                times[name].append(time.perf_counter() - started)
            assert got["numpy"][:3] == got["sql"][:3], "the two paths disagree"
        row = {"candidates": cand, "k": k, **{f"{name}_ms": round(statistics.median(t) * 1000, 3) for name, t in times.items()}}
        print(json.dumps(row))
        out["settings"].append(row)
    save("rescore", out)


if __name__ == "__main__":
    main()
