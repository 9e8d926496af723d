"""The dialogue benchmark's conversations in the import formats, imported with the real
``arcology-oracle import``, ready for bench/dialogue_recall.py.

    python bench/dialogue_formats.py CORPUS [--formats chatgpt,claude,transcript,vtt,srt,markdown]

CORPUS is what bench/dialogue_corpus.py wrote (``CORPUS/roam``, ``CORPUS/questions.json``).
For each format this writes ``CORPUS-FORMAT/export/`` (the conversations as that format
carries them), imports it into ``CORPUS-FORMAT/roam/`` with ``arcology-oracle import``
(a child process, as a user runs it) and copies the questions; then

    python bench/dialogue_recall.py --corpus CORPUS-FORMAT --out fmt-FORMAT
    python bench/dialogue_formats.py --table org,chatgpt,...   # the table, by format

measures it with the same questions (``--out fmt-org`` on CORPUS itself for plain org). What each format keeps of a conversation:

* ``chatgpt``, ``claude``: one conversation per friend, every session's messages with
  their times (the import starts a dated heading after each pause); only two roles, so
  the friend's turns are the assistant's (``ChatGPT``/``Claude``), the friend's name is
  in the title only;
* ``transcript``: one file per friend, ``[YYYY-MM-DD HH:MM] Name: text`` lines;
* ``vtt``, ``srt``: one recording per session (``NAME-YYYY-MM-DD_HH-MM.vtt``), speakers
  as voice spans (``<v Priya>``) or ``Priya: `` at the start of a cue;
* ``markdown``: one file per session, ``# title``, ``Date:`` and ``**Name:** text``.

Unstamped turns are a minute apart from the session's start.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from _common import REPO, RESULTS  # noqa: F401  (puts the package on sys.path)

from arcology_oracle.notes import dialogue
from arcology_oracle.notes.reader import read_org_file

FORMATS = ("chatgpt", "claude", "transcript", "vtt", "srt", "markdown")


def sessions(roam: Path) -> dict[str, list[dict]]:
    """``{friend: [{"title", "start", "turns": [(speaker, text, time)]}]}`` from the org corpus."""
    out: dict[str, list[dict]] = {}
    for path in sorted(roam.glob("chat-*.org")):
        parsed = read_org_file(path, path.name)
        friend = parsed.title.removeprefix("Chats with ")
        for h in parsed.headings:
            turns = dialogue.read_turns(h.body, h.date)
            if not turns:
                continue
            start = _stamp(h.title)
            rows = []
            for n, t in enumerate(turns):
                m = dialogue.SPEAKER_LINE_RE.match(t.text.split("\n", 1)[0])
                text = (m["text"] + t.text[len(t.text.split("\n", 1)[0]):]) if m else t.text
                when = dt.datetime.fromisoformat(t.when) if t.when and "T" in t.when else start + dt.timedelta(minutes=n)
                while rows and when < rows[-1][2]:  # past midnight
                    when += dt.timedelta(days=1)
                rows.append((t.speaker, text, when))
            out.setdefault(friend, []).append({"title": h.title.split("] ", 1)[1], "start": start, "turns": rows})
    return out


def _stamp(title: str) -> dt.datetime:
    """When a session began, from its heading: ``[2024-01-23 Tue 20:52] ...``."""
    words = title[1:].split("]", 1)[0].split()
    return dt.datetime.fromisoformat(f"{words[0]}T{words[-1]}")


def _epoch(when: dt.datetime) -> float:
    return when.replace(tzinfo=dt.UTC).timestamp()


def write_chatgpt(talks: dict, out: Path) -> Path:
    conversations = []
    for friend, parts in talks.items():
        mapping: dict[str, dict] = {}
        parent = None
        for s in parts:
            for speaker, text, when in s["turns"]:
                key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{friend}/{when}/{text}"))
                role = "user" if speaker == "Me" else "assistant"
                mapping[key] = {"id": key, "parent": parent, "children": [], "message": {
                    "id": key, "author": {"role": role}, "create_time": _epoch(when), "recipient": "all",
                    "content": {"content_type": "text", "parts": [text]}}}  # fmt: skip
                if parent:
                    mapping[parent]["children"].append(key)
                parent = key
        conversations.append({"id": f"bench-{friend.lower()}", "title": f"Chats with {friend}",
                              "create_time": _epoch(parts[0]["start"]), "mapping": mapping, "current_node": parent})  # fmt: skip
    path = out / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return path


def write_claude(talks: dict, out: Path) -> Path:
    conversations = []
    for friend, parts in talks.items():
        messages, parent = [], "00000000-0000-4000-8000-000000000000"
        for s in parts:
            for speaker, text, when in s["turns"]:
                key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{friend}/{when}/{text}"))
                messages.append({"uuid": key, "sender": "human" if speaker == "Me" else "assistant", "text": text,
                                 "content": [{"type": "text", "text": text}], "parent_message_uuid": parent,
                                 "created_at": when.isoformat() + "Z"})  # fmt: skip
                parent = key
        conversations.append({"uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, friend)), "name": f"Chats with {friend}",
                              "created_at": parts[0]["start"].isoformat() + "Z", "chat_messages": messages})  # fmt: skip
    path = out / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return path


def write_transcript(talks: dict, out: Path) -> Path:
    for friend, parts in talks.items():
        lines = [f"[{when:%Y-%m-%d %H:%M}] {speaker}: {text}" for s in parts for speaker, text, when in s["turns"]]
        (out / f"chats-with-{friend.lower()}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _clock(delta: dt.timedelta, sep: str) -> str:
    seconds = int(delta.total_seconds())
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{sep}000"


def write_subtitles(talks: dict, out: Path, fmt: str) -> Path:
    for friend, parts in talks.items():
        for s in parts:
            cues = []
            for n, (speaker, text, when) in enumerate(s["turns"], 1):
                begin = when - s["start"] + dt.timedelta(seconds=1)
                span = f"{_clock(begin, ',' if fmt == 'srt' else '.')} --> {_clock(begin + dt.timedelta(seconds=50), ',' if fmt == 'srt' else '.')}"
                cues.append(f"{n}\n{span}\n{speaker}: {text}" if fmt == "srt" else f"{span}\n<v {speaker}>{text}</v>")
            body = "\n\n".join(cues) + "\n"
            name = f"chat-{friend.lower()}-{s['start']:%Y-%m-%d_%H-%M}.{fmt}"
            (out / name).write_text(body if fmt == "srt" else "WEBVTT\n\n" + body, encoding="utf-8")
    return out


def write_markdown(talks: dict, out: Path) -> Path:
    for friend, parts in talks.items():
        for s in parts:
            lines = [f"# {s['title']} with {friend}", "", f"Date: {s['start']:%Y-%m-%d %H:%M}", ""]
            lines += [f"**{speaker}:** {text}\n" for speaker, text, _ in s["turns"]]
            (out / f"chat-{friend.lower()}-{s['start']:%Y-%m-%d}.md").write_text("\n".join(lines), encoding="utf-8")
    return out


def table(names: list[str]) -> str:
    """The evidence found by format, from bench/results/dialogue-fmt-NAME.json."""
    kinds = ("fact", "across", "when", "open")
    baselines = ("bm25", "bm25+nb", "vector", "vector+nb", "rrf", "rrf+nb")
    lines = ["| format | turns | " + " | ".join(kinds) + " | all: ask = recall | best baseline | ratio | recall chars | max prompt |",
             "|---" * 11 + "|"]  # fmt: skip
    for name in names:
        result = json.loads((RESULTS / f"dialogue-fmt-{name}.json").read_text())
        rows = result["rows"]

        def mean(column, part=rows):
            return sum(r[column] for r in part) / len(part)

        by_kind = [f"{mean('ask', [r for r in rows if r['kind'] == k]):.3f}" for k in kinds]
        best = max(baselines, key=mean)
        lines.append(f"| {name} | {result['turns']:,} | " + " | ".join(by_kind) + f" | **{mean('ask'):.3f}** = {mean('recall'):.3f} "
                     f"| {mean(best):.3f} ({best}) | {mean('ask') / mean(best):.2f}x | {mean('recall_chars'):,.0f} "
                     f"| {max(r['ask_chars'] for r in rows):,} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path, nargs="?")
    p.add_argument("--formats", default=",".join(FORMATS))
    p.add_argument("--table", help="print the table of these results (org,chatgpt,...) instead")
    args = p.parse_args()
    if args.table:
        print(table(args.table.split(",")))
        return
    talks = sessions(args.corpus / "roam")
    friends = list(talks)
    for fmt in args.formats.split(","):
        base = args.corpus.with_name(f"{args.corpus.name}-{fmt}")
        shutil.rmtree(base, ignore_errors=True)
        export, roam = base / "export", base / "roam"
        export.mkdir(parents=True)
        roam.mkdir()
        writer = {"chatgpt": write_chatgpt, "claude": write_claude, "transcript": write_transcript,
                  "markdown": write_markdown}.get(fmt)  # fmt: skip
        source = writer(talks, export) if writer else write_subtitles(talks, export, fmt)
        extra = [a for f in friends for a in ("--speaker", f)] if fmt == "markdown" else []
        command = [sys.executable, "-m", "arcology_oracle", "import", fmt, str(source), "--roam-dir", str(roam), "--into", ".", *extra]
        done = subprocess.run(command, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "daemon")})
        if done.returncode:
            sys.exit(f"{fmt}: import failed\n{done.stdout}\n{done.stderr}")
        shutil.copy(args.corpus / "questions.json", base / "questions.json")
        files = list(roam.rglob("*.org"))
        print(f"{fmt}: {len(files)} org files, {sum(f.stat().st_size for f in files):,} bytes; {done.stdout.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
