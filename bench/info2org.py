"""An org-roam directory made of real prose with human-made links: GNU Info manuals.

    python bench/info2org.py OUT_DIR [--manuals coreutils,find,diffutils,sed,gettext,gnupg]
        [--questions OUT.jsonl] [--seed 1]

Reads ``/usr/share/info/NAME.info*.gz`` (Debian installs the manuals of coreutils, find,
diffutils, sed, gettext, gnupg, ...). Every node at depth 1 or 2 below ``Top`` (a
chapter, or a section of a chapter) becomes one org file, a node with an ``:ID:`` and a
``#+title``; nodes below those become nested headings of their file (no IDs of their
own, so a note is a file). Menus, indices and the licence are dropped. Every cross
reference (``*Note Target::``, ``*note Label: Target.``) becomes
``[[id:FILE-ID][Label]]`` to the file holding the target node: the links a person wrote,
which bench/quality.py tries to predict with the links removed.

``--questions`` writes known-item questions: for a random sample of headings, the first
sentence of the heading's text without the words of its title, at most 12 words (a phrase
its reader might remember), with the file and heading where it is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

INFO = Path("/usr/share/info")
HEADER = re.compile(r"^File: [^,]+,\s+Node: ([^,\n]+)(?:,.*?Up: ([^,\n]+))?", re.M)
NOTE = re.compile(r"\*[Nn]ote\s+([^:]+?)::|\*[Nn]ote\s+([^:]+?):\s+(\([^)]+\))?([^.,]+)[.,]", re.S)
UNDERLINE = re.compile(r"^[=*\-.]{3,}\s*$")
SKIP = re.compile(r"index|licen[cs]e|copying|^top$", re.I)


@dataclass
class Node:
    manual: str
    name: str
    up: str | None
    text: str
    children: list[str] = field(default_factory=list)


def read_manual(name: str) -> dict[str, Node]:
    text = ""
    for part in sorted(INFO.glob(f"{name}.info*.gz"), key=lambda p: (len(p.name), p.name)):
        text += gzip.open(part, "rt", encoding="utf-8", errors="replace").read()
    nodes: dict[str, Node] = {}
    for block in text.split("\x1f\n"):
        m = HEADER.match(block)
        if not m:
            continue
        body = block[m.end() :].split("\n", 1)[1] if "\n" in block[m.end() :] else ""
        body = body.split("\n* Menu:")[0]
        nodes[m.group(1).strip()] = Node(name, m.group(1).strip(), (m.group(2) or "").strip() or None, body)
    for node in nodes.values():
        if node.up in nodes:
            nodes[node.up].children.append(node.name)
    return nodes


def depth(nodes: dict[str, Node], node: Node) -> int:
    d = 0
    while node.up and node.up in nodes and node.up != "Top" and d < 10:
        node = nodes[node.up]
        d += 1
    return d + 1  # chapters (children of Top) are depth 1


def clean(body: str) -> tuple[str, str]:
    """(title, text) of a node body: the underlined title line removed, paragraphs kept."""
    lines = body.strip("\n").split("\n")
    title = ""
    if len(lines) > 1 and UNDERLINE.match(lines[1]):
        title = re.sub(r"^[\d.]+\s+", "", lines[0].strip())
        lines = lines[2:]
    out = []
    for line in lines:
        if UNDERLINE.match(line) and out:  # a sub-title inside the node: keep as text
            continue
        if line.startswith("*"):  # an org heading would start here
            line = " " + line
        out.append(line.rstrip())
    return title, "\n".join(out).strip()


def convert(out: Path, manuals: list[str], questions: Path | None, seed: int) -> dict:
    rng = random.Random(seed)
    all_nodes: dict[tuple[str, str], Node] = {}
    for manual in manuals:
        for name, node in read_manual(manual).items():
            all_nodes[(manual, name)] = node
    # The file of each node: its ancestor at depth 2 (or itself at depth 1 or 2).
    files: dict[tuple[str, str], tuple[str, str]] = {}
    for key, node in all_nodes.items():
        nodes = {n: all_nodes[(key[0], n)] for (m, n) in all_nodes if m == key[0]}
        if node.name == "Top" or SKIP.search(node.name):
            continue
        chain = [node]
        while chain[-1].up and chain[-1].up in nodes and chain[-1].up != "Top":
            chain.append(nodes[chain[-1].up])
        if any(SKIP.search(n.name) for n in chain):
            continue
        owner = chain[-2] if len(chain) >= 2 else chain[-1]
        files[key] = (key[0], owner.name)
    ids = {owner: str(uuid.UUID(int=rng.getrandbits(128), version=4)) for owner in set(files.values())}

    def link(manual: str, m: re.Match) -> str:
        label = (m.group(1) or m.group(2) or "").strip()
        target = (m.group(1) or m.group(4) or "").strip()
        other = m.group(3)
        man = other.strip("()").replace(".info", "") if other else manual
        target = re.sub(r"\s+", " ", target)
        owner = files.get((man, target))
        label = re.sub(r"\s+", " ", label)
        return f"[[id:{ids[owner]}][{label}]]" if owner else label

    written, links, qs = 0, 0, []
    out.mkdir(parents=True, exist_ok=True)
    by_owner: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key, owner in files.items():
        by_owner.setdefault(owner, []).append(key)
    for owner, members in sorted(by_owner.items()):
        manual, name = owner
        nodes = {n: all_nodes[(manual, n)] for (m, n) in all_nodes if m == manual}
        root = nodes[name]
        title, text = clean(root.text)
        title = title or name
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:50]
        rel = f"{manual}/{slug}.org"
        lines = [":PROPERTIES:", f":ID:       {ids[owner]}", ":END:", f"#+title: {title}", f"#+filetags: :{manual}:", ""]

        def body(text: str) -> str:
            nonlocal links
            converted, n = NOTE.subn(lambda m: link(manual, m), text)
            links += converted.count("[[id:")
            return converted

        lines += [body(text), ""]
        base = depth(nodes, root)

        def walk(node: Node) -> None:
            for child_name in node.children:
                child = nodes.get(child_name)
                if child is None or SKIP.search(child_name) or (manual, child_name) not in files:
                    continue
                heading, child_text = clean(child.text)
                heading = heading or child_name
                level = min(depth(nodes, child) - base, 4)
                lines.append(f"{'*' * level} {heading}")
                lines.append(body(child_text))
                lines.append("")
                if questions is not None and rng.random() < 0.25:
                    q = question(heading, child_text)
                    if q:
                        qs.append({"q": q, "file": rel, "heading": heading})
                walk(child)

        walk(root)
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
        written += 1
    if questions is not None:
        questions.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    return {"files": written, "nodes": len(files), "links": links, "questions": len(qs)}


def question(title: str, text: str) -> str | None:
    plain = re.sub(r"\*[Nn]ote[^:]*::?", " ", text)
    sentence = re.split(r"(?<=[.!?])\s", " ".join(plain.split()), maxsplit=1)[0]
    drop = {w.lower() for w in re.findall(r"\w+", title)}
    words = [w for w in re.findall(r"[\w'-]+", sentence) if w.lower() not in drop]
    return " ".join(words[:12]) if len(words) >= 5 else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--manuals", default="coreutils,find,diffutils,sed,gettext,gnupg")
    p.add_argument("--questions", type=Path)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    print(json.dumps(convert(args.out, args.manuals.split(","), args.questions, args.seed)))


if __name__ == "__main__":
    main()
