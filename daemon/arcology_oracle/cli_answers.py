"""The commands that print what the notes answer: ``search``, ``similar``, ``ask``, ``summarize``.

Each opens the index in process (:func:`with_index`, also used by :mod:`.cli`'s other
commands), prints its answer on stdout and returns the exit code; errors propagate as
:class:`~.errors.OracleError` for :func:`.cli.main` to turn into one line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from .config import Settings
from .errors import ConfigError, NotFound


def print_results(mode: str, results, as_json: bool, note: str | None = None) -> None:
    if as_json:
        print(json.dumps({"mode": mode, "results": [r.as_dict() for r in results]}, ensure_ascii=False, indent=2))
        return
    if not results:
        print(f"no results ({mode} mode)")
        return
    print(f"{len(results)} result{'s' if len(results) != 1 else ''} ({mode} mode){' - ' + note if note else ''}")
    for i, r in enumerate(results, 1):
        parts = [*r.olp, r.heading]
        if r.title not in parts:
            parts.insert(0, r.title)
        path = " > ".join(parts)
        print(f"{i:2}. {path}  [{r.file}:{r.line}]  score {r.score:.4f}")
        if r.snippet:
            print(f"    {r.snippet}")


# -- commands -------------------------------------------------------------------------


async def with_index(settings: Settings, fn, *, new: bool = False):
    """``await fn(index)`` with the index open, and closed after. Unless ``new`` (``index``
    makes it), a database that is not there is an error: a mistyped --db, or a search
    before any index, answered "no results" of an empty index it created."""
    from .index.service import OracleIndex

    if not new and str(settings.db_path) != ":memory:" and not os.path.lexists(settings.db_path):
        raise NotFound(f"no index at {settings.db_path}: `arcology-oracle index DIR` makes it (or give the index's --db)")
    index = OracleIndex(settings)
    await index.start()
    try:
        return await fn(index)
    finally:
        await index.close()


def cmd_search(settings: Settings, args) -> int:
    from .answers.search import search

    async def run(index):
        mode, results = await search(index, args.query, args.k)
        print_results(mode, results, args.json)
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_similar(settings: Settings, args) -> int:
    from .answers.search import similar_to_line, similar_to_node, similar_to_text

    async def run(index):
        if args.node:
            mode, results = await similar_to_node(index, args.node, args.k, exclude_linked=args.exclude_linked)
        elif args.file:
            mode, results = await similar_to_line(index, args.file, args.line, args.k, exclude_linked=args.exclude_linked)
        else:
            mode, results = await similar_to_text(index, args.text, args.k)
        print_results(mode, results, args.json)
        return 0

    return asyncio.run(with_index(settings, run))


async def _stream_reply(reply, out=None) -> None:
    """Print an oracle Reply's text as it streams, then its sources: "Sources (keyword
    match only):" when the notes were found by keywords (the embedder late), as
    ``GET /ask`` says it."""
    from contextlib import aclosing

    from .answers.sources import sources_text_block

    out = out or sys.stdout
    async with aclosing(reply.pieces) as pieces:
        async for piece in pieces:
            out.write(piece)
            out.flush()
    if reply.used_notes and reply.sources:
        head = "Sources (keyword match only):" if reply.mode == "keyword" else "Sources:"
        out.write(f"\n\n{head}\n" + sources_text_block(reply.sources) + "\n")
    else:
        out.write("\n\n(no notes were relevant enough; none were used)\n")
    out.flush()


def _with_oracle(settings: Settings, fn):
    from .answers.oracle import Oracle
    from .ollama.chat import OllamaChat

    async def run(index):
        llm = OllamaChat(settings)
        try:
            return await fn(Oracle(index, llm))
        finally:
            await llm.close()

    return asyncio.run(with_index(settings, run))


def cmd_ask(settings: Settings, args) -> int:
    buffer = None
    if args.buffer is not None:
        try:
            buffer = sys.stdin.read() if str(args.buffer) == "-" else args.buffer.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"cannot read buffer file {args.buffer}: {exc.strerror}") from None

    async def run(oracle):
        reply = await oracle.ask(args.question or "", buffer=buffer, k=args.k, model=args.model)
        await _stream_reply(reply)
        return 0

    return _with_oracle(settings, run)


def cmd_summarize(settings: Settings, args) -> int:
    async def run(oracle):
        reply = await oracle.summarize(node=args.node, question=args.question, k=args.k, model=args.model)
        await _stream_reply(reply)
        return 0

    return _with_oracle(settings, run)
