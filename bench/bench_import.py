"""The cost of ``arcology-oracle import``: a generated ChatGPT export of about 100 MB
imported with its progress shown, its peak RSS and time, then ``arcology-oracle index
--no-embed`` of the org files it wrote, in the same run.

The export is deterministic (``--seed``) and invented: words made of syllables, sentences
of them, answers with markdown (lists, code fences with ``#`` comments, lines that Org
would read as headings or keywords, which the import escapes), conversations over two
years with pauses that start new sessions, and some edited prompts (branches that are
not shown). Both commands run as child processes; their peak RSS is the kernel's
``ru_maxrss`` of that child (``os.wait4``). Results go to ``bench/results/import.json``.

    nice python bench/bench_import.py --mb 100
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DAEMON_SRC, machine, save

SYLLABLES = [a + b for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou", "ea")]
START = 1_650_000_000  # 2022-04-15


def words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choices(SYLLABLES, k=rng.choice((1, 2, 2, 3)))) for _ in range(n)]


def sentence(rng: random.Random, vocab: list[str]) -> str:
    body = " ".join(rng.choices(vocab, k=rng.randint(6, 18)))
    return body[0].upper() + body[1:] + rng.choice(".!?..")


def answer(rng: random.Random, vocab: list[str]) -> str:
    parts = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.random()
        if kind < 0.15:
            parts.append("```python\n# " + sentence(rng, vocab) + "\n" + "\n".join(f"{w} = {i}" for i, w in enumerate(rng.sample(vocab, 4))) + "\n```")
        elif kind < 0.3:
            parts.append("\n".join("- " + sentence(rng, vocab) for _ in range(rng.randint(2, 5))))
        elif kind < 0.35:
            parts.append("* " + sentence(rng, vocab) + "\n#+" + rng.choice(vocab) + ": " + rng.choice(vocab))
        else:
            parts.append(" ".join(sentence(rng, vocab) for _ in range(rng.randint(2, 6))))
    return "\n\n".join(parts)


def conversation(rng: random.Random, vocab: list[str], n: int) -> dict:
    t = START + rng.randint(0, 2 * 365 * 86400)
    conv_id = f"{rng.getrandbits(128):032x}"
    mapping: dict[str, dict] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for turn in range(rng.randint(3, 30)):
        t += rng.choice((20, 40, 90, 300, 3600 * 3)) if turn else 0
        for role in ("user", "assistant"):
            node = f"{conv_id[:8]}-{turn}-{role[0]}"
            text = sentence(rng, vocab) + (" " + sentence(rng, vocab) if rng.random() < 0.5 else "") if role == "user" else answer(rng, vocab)
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t + (15 if role == "assistant" else 0),
                "update_time": None, "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
                "end_turn": role == "assistant", "weight": 1.0, "metadata": {}, "recipient": "all"}}  # fmt: skip
            mapping[parent]["children"].append(node)
            if role == "user" and rng.random() < 0.05:  # an edited prompt: a branch nobody sees
                dead = node + "-old"
                mapping[dead] = {**mapping[node], "id": dead, "children": []}
                mapping[parent]["children"].insert(0, dead)
            parent = node
    return {"title": " ".join(rng.choices(vocab, k=rng.randint(2, 5))).capitalize(), "create_time": START, "update_time": t,
            "mapping": mapping, "moderation_results": [], "current_node": parent, "plugin_ids": None,
            "conversation_id": conv_id, "id": conv_id}  # fmt: skip


def generate(path: Path, megabytes: float, seed: int) -> int:
    rng = random.Random(seed)
    vocab = words(rng, 3000)
    target = int(megabytes * 1e6)
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        while fh.tell() < target:
            fh.write(("," if n else "") + json.dumps(conversation(rng, vocab, n), ensure_ascii=False))
            n += 1
        fh.write("]")
    return n


def run(cmd: list[str], env: dict) -> dict:
    """Run ``cmd`` with its stderr shown as it comes; its time, peak RSS and output."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"{cmd[3]} failed ({proc.returncode}):\n{out}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "stdout": out.strip()}


def command(work: Path, src: Path = DAEMON_SRC) -> tuple[list[str], dict]:
    """``arcology-oracle`` from ``src`` as a new process, and its environment (its config
    and data under ``work``, never the user's)."""
    env = {**os.environ, "PYTHONPATH": str(src), "XDG_CONFIG_HOME": str(work / "config"), "XDG_DATA_HOME": str(work / "data")}
    return [sys.executable, "-m", "arcology_oracle"], env


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mb", type=float, default=100, help="size of the generated export (default 100)")
    p.add_argument("--seed", type=int, default=28)
    p.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = p.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-import-"))
    work.mkdir(parents=True, exist_ok=True)
    export, roam, db = work / "conversations.json", work / "roam", work / "index.sqlite3"
    shutil.rmtree(roam, ignore_errors=True)
    db.unlink(missing_ok=True)
    roam.mkdir()
    t = time.perf_counter()
    conversations = generate(export, args.mb, args.seed)
    print(f"generated {export.stat().st_size / 1e6:.1f} MB, {conversations} conversations in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    cli, env = command(work)
    imported = run([*cli, "import", "chatgpt", str(export), "--roam-dir", str(roam), "--db", str(db)], env)
    print(imported["stdout"], file=sys.stderr)
    again = run([*cli, "import", "chatgpt", str(export), "--roam-dir", str(roam), "--db", str(db)], env)
    indexed = run([*cli, "index", str(roam), "--db", str(db), "--no-embed"], env)
    print(indexed["stdout"], file=sys.stderr)
    files = list(roam.rglob("*.org"))
    result = {
        "machine": machine(), "export_mb": round(export.stat().st_size / 1e6, 1), "conversations": conversations,
        "org_files": len(files), "org_mb": round(sum(f.stat().st_size for f in files) / 1e6, 1),
        "import": imported, "import_again": again, "index_no_embed": indexed,
        "import_over_index": round(imported["seconds"] / indexed["seconds"], 2),
    }  # fmt: skip
    save("import", result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
