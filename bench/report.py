"""Markdown tables of the latest results, for BENCHMARKS.md.

    python bench/report.py        # reads bench/results/{query,index,live,quality-*}.json
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def load_line(data: dict) -> str:
    m = data["machine"]
    start = "/".join(f"{x:.1f}" for x in m["loadavg_at_start"])
    end = "/".join(f"{x:.1f}" for x in data.get("loadavg_at_end", m["loadavg_at_start"]))
    return f"_{m['when']}, {m['cpus']} cores, load average (1/5/15 min) {start} at start, {end} at end._"


def query() -> str:
    data = load("query")
    if not data:
        return ""
    rows = [
        "| chunks | /similar p50 / p95 (ms) | numpy floor p50 / p95 (ms) | /similar p50 ÷ floor p50 | recall@10 /similar | recall@10 KNN | /search p50 / p95 (ms) | first query after start (ms) | peak RSS (MB) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in data["sizes"]:
        rows.append(
            f"| {s['chunks']:,} | {s['similar_p50_ms']:.1f} / {s['similar_p95_ms']:.1f} | {s['numpy_floor_p50_ms']:.1f} / {s['numpy_floor_p95_ms']:.1f}"
            f" | {s['similar_p50_over_floor']:.1f}x | {s['similar_recall_at_10']:.4f} | {s['knn_recall_at_10']:.4f}"
            f" | {s['search_p50_ms']:.1f} / {s['search_p95_ms']:.1f} | {s['first_similar_ms']:.0f} | {s['VmHWM']:.0f} |"
        )
    return "\n".join(rows) + f"\n\n{data['dims']}-d vectors, {data['queries']} queries per size. " + load_line(data)


def index() -> str:
    data = load("index")
    if not data:
        return ""
    rows = [
        "| headings | chunks | parse workers | reconcile (headings/s) | embed, zero-latency embedder (chunks/s) | cold total (headings/s) | restart, unchanged (s) | restart, every file touched (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in data["cold"]:
        workers = c.get("parse_workers")
        rows.append(
            f"| {c['headings']:,} | {c['chunks']:,} | {'default' if workers is None else workers}"
            f" | {c['reconcile_headings_per_s']:,} | {c['embed_chunks_per_s']:,}"
            f" | {c['overall_headings_per_s']:,} | {c['restart_unchanged_s']:.2f} | {c['restart_touched_s']:.2f} |"
        )
    out = "\n".join(rows)
    if data.get("restart_cached"):
        out += "\n\n| restart on an unchanged corpus | files | headings | reconcile, three runs (s) |\n|---|---|---|---|\n"
        for r in sorted(data["restart_cached"], key=lambda r: r["headings"]):
            out += f"| {r['corpus']} | {r['files']:,} | {r['headings']:,} | {' / '.join(f'{x:.2f}' for x in r['restart_unchanged_s'])} |\n"
    lat = data.get("latency")
    if lat:
        out += (
            "\n\n| fake latency | parallel | batch | achieved texts/s | fake's ceiling at this batch | efficiency | ceiling, unlimited batch | efficiency | mean batch |\n|---|---|---|---|---|---|---|---|---|\n"
            f"| {lat['delay_per_request'] * 1000:.0f} ms/request + {lat['delay_per_text'] * 1000:.1f} ms/text | {lat['parallel']} | {lat['batch_size']}"
            f" | {lat['texts_per_s']:.0f} | {lat['ceiling_at_batch_size']:.0f} | {lat['efficiency_vs_batch_ceiling']:.0%}"
            f" | {lat['ceiling_unlimited_batch']:.0f} | {lat['efficiency_vs_unlimited']:.0%} | {lat['mean_batch']} |"
        )
    return out + "\n\n" + load_line(data)


def live() -> str:
    data = load("live")
    if not data:
        return ""
    return (
        "| headings | edits | keyword-searchable p50 / p95 (ms) | embedded and searchable p50 / p95 (ms) | texts embedded per edit (mean / max) |\n|---|---|---|---|---|\n"
        f"| {data['headings']:,} | {data['edits']} | {data['keyword_p50_ms']:.0f} / {data['keyword_p95_ms']:.0f}"
        f" | {data['searchable_p50_ms']:.0f} / {data['searchable_p95_ms']:.0f} | {data['texts_per_edit_mean']:.2f} / {data['texts_per_edit_max']} |\n\n"
        + load_line(data)
    )


def quality() -> str:
    out = []
    for path in sorted(RESULTS.glob("quality-*.json")):
        data = json.loads(path.read_text())
        # One run holds one or more corpora (bench/quality.py ROAM_DIR...).
        for name, corpus in data.get("corpora", {"": data}).items():
            c = corpus["corpus"]
            where = name or corpus.get("roam_dir", data.get("roam_dir", "?"))
            out.append(
                f"**{path.stem}**: `{where}`, model `{data['model']}`; {c['notes']} notes, {c.get('headings', '?')} headings,"
                f" {c.get('chunks', '?')} chunks, {c.get('pages', '?')} pages, {c['links']} linked note pairs.\n\n{corpus['table']}\n\n{load_line(data)}"
            )
    return "\n\n".join(out)


def main() -> None:
    for title, text in (("Queries", query()), ("Indexing", index()), ("Live updates", live()), ("Quality", quality())):
        if text:
            print(f"### {title}\n\n{text}\n")


if __name__ == "__main__":
    main()
