"""Reading org files into headings and chunks, in the calling thread or in worker processes.

Parsing is pure Python (orgparse) and takes about half of a cold index; the store's
SQLite work takes most of the rest and runs on the writer thread. :class:`ParsePipeline`
lets a large reconcile parse files in worker processes (``spawn``ed: the daemon has
threads, and a forked child could inherit a held lock) while the writer thread stores the
files already parsed, in order. Small jobs, and machines with one core, parse inline.

A worker never logs: the problems it finds come back in ``ParsedFile.problems`` and the
parent logs them with the path (:func:`~arcology_oracle.notes.reader.report_problems`), as
inline parsing does.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Generic, TypeVar

from ..notes.reader import READER_VERSION, read_org_bytes, report_problems
from ..notes.records import Chunk, ParsedFile
from ..notes.oracle_words import without_replies

log = logging.getLogger(__name__)

T = TypeVar("T")
_PICKLE = pickle.HIGHEST_PROTOCOL


@dataclass(frozen=True)
class ParseOptions:
    """What parsing a file depends on besides its bytes and path (picklable)."""

    private_tags: frozenset[str]
    chunk_chars: int
    chunk_overlap: int
    root: Path | None = None  # the roam directory, for #+SETUPFILE (see read_org_bytes)

    def reading_rules(self) -> str:
        """What files are read by, as the store records it (``Store.renew_reading_rules``):
        the reader's version, the private tags, the chunking."""
        return json.dumps(
            {"reader": READER_VERSION, "private_tags": sorted(self.private_tags), "chunk_chars": self.chunk_chars,
             "chunk_overlap": self.chunk_overlap}, sort_keys=True,
        )  # fmt: skip


def newly_private(recorded: str | None, rules: str) -> frozenset[str] | None:
    """The tags ``rules`` makes private that the ``recorded`` rules did not, when that is
    all that differs between them; None when anything else does (no rules recorded, a tag
    no longer private, the reader or the chunking changed). Only the files holding one of
    those tags can then read differently (a heading's stored tags are the ones its privacy
    was judged by, inherited and file tags included)."""
    try:
        old, new = json.loads(recorded or ""), json.loads(rules)
        old_tags, new_tags = set(old.pop("private_tags")), set(new.pop("private_tags"))
    except (ValueError, TypeError, KeyError, AttributeError):  # not rules as written here (edited by hand)
        return None
    if old != new or not old_tags < new_tags or not all(isinstance(t, str) for t in new_tags):
        return None
    return frozenset(new_tags - old_tags)


def parse_note(data: bytes, rel: str, options: ParseOptions, *, log_problems: bool = True) -> tuple[ParsedFile, list[list[Chunk]]]:
    """The headings of the org file ``rel`` (bytes ``data``) and each heading's chunks.

    Never raises on the file's content (see :func:`~arcology_oracle.notes.reader.read_org_bytes`).
    """
    parsed = read_org_bytes(data, rel, options.private_tags, log_problems=log_problems, root=options.root)
    return without_replies(parsed, options.chunk_chars, options.chunk_overlap)


def kept_out_whole(data: bytes, rel: str, options: ParseOptions) -> bool:
    """Whether the privacy rule keeps the org file ``rel`` (bytes ``data``) out whole, so
    that nothing of it is stored (``ParsedFile.private``)."""
    return read_org_bytes(data, rel, options.private_tags, log_problems=False, root=options.root).private


def parse_or_error(data: bytes, rel: str, options: ParseOptions, *, log_problems: bool = True) -> tuple | Exception:
    """:func:`parse_note`, or the exception it raised (a bug in chunking, say): one bad
    file must never stop the others, so the caller reports it with the file's path."""
    try:
        return parse_note(data, rel, options, log_problems=log_problems)
    except Exception as exc:  # noqa: BLE001 - reported per file by the caller
        return exc


def _parse_batch(batch: list[tuple[str, bytes]], options: ParseOptions) -> bytes:
    """In a worker: parse each file, quietly (the parent logs the problems), and pickle
    the list of results.

    Pickled here so that the writer thread unpickles them when it takes them: left to the
    pool, its manager thread unpickles every result as it arrives, and each time the
    writer let go of the GIL (at every SQLite step) it then waited for that thread to
    give it back. Parsing in a worker saved nothing that way.
    """
    return pickle.dumps([parse_or_error(data, rel, options, log_problems=False) for rel, data in batch], _PICKLE)


def _exit_with_parent() -> None:
    """In a worker: exit as soon as the process that started it dies, even by SIGKILL.

    Otherwise a worker outlives a killed daemon, blocked for ever writing its results
    to a pipe that nobody reads.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def default_workers() -> int:
    """Worker processes for a large reconcile: one wherever there is a second core.

    One worker parses faster than the writer thread stores, so more would only compete
    with it. On this 2-core machine one worker made a cold index 10-12% faster when idle,
    and 5-8% slower with the other core busy (BENCHMARKS.md).
    """
    return 1 if (os.cpu_count() or 1) >= 2 else 0


class ParsePipeline(Generic[T]):
    """Parses a stream of files ahead of the caller, in ``workers`` processes.

    ``run(jobs)`` takes ``(key, rel, data)`` triples and yields ``(key, result)`` in the
    same order, where ``result`` is what :func:`parse_or_error` gives, or None when
    ``data`` is None (a job with nothing to parse keeps its place).
    Files go to the workers ``per_task`` at a time, so that the pool's feeder threads,
    which need the GIL the writer thread holds, hand work over rarely, not per file.
    At most ``window`` files are in flight, so memory stays bounded however many files
    there are. With ``workers == 0``, or if the pool cannot start or breaks (a worker
    killed), files are parsed inline; nothing is lost either way.

    Given ``total`` (how many jobs will come), the pool is started only once it is worth
    its start (a process, ~0.1-1 s): files are parsed inline until ``per_task`` of them
    needed a whole read (not kept out whole by the privacy rule, which the reader tells
    from the file's tags in ~0.1 ms), and then only if as many of all the jobs as among
    those seen are expected to need one, at least ``min_files``. A daemon's start reads
    every private note again (nothing of them is stored): hundreds of them alone no longer
    start a process.
    """

    def __init__(
        self, options: ParseOptions, workers: int, *, per_task: int = 32, window: int = 256,
        total: int | None = None, min_files: int = 0,
    ):  # fmt: skip
        self.options = options
        self.workers = workers
        self.per_task = per_task
        self.window = window
        self.parsed_in_workers = 0
        self._pool: ProcessPoolExecutor | None = None
        self._total, self._min_files = total, min_files
        self._started = False  # the pool was started (or could not be): never again
        self._seen = self._whole = 0  # jobs parsed inline while the pool waits, and those read whole

    def __enter__(self) -> "ParsePipeline[T]":
        if self.workers > 0 and self._total is None:
            self._start_pool()
        return self

    def _start_pool(self) -> None:
        self._started = True
        try:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"), initializer=_exit_with_parent)
        except (OSError, ValueError) as exc:  # no processes allowed here: parse inline
            log.warning("cannot start parser processes (%s); parsing in one thread", exc)

    def _judge(self, result: tuple | Exception | None) -> None:
        """After a job parsed inline while the pool waits: start it when worth it."""
        if self._started or self.workers <= 0 or self._total is None:
            return
        self._seen += 1
        self._whole += isinstance(result, tuple) and not result[0].private
        if self._whole >= self.per_task and self._total * self._whole >= self._min_files * self._seen:
            self._start_pool()

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(self, jobs: Iterable[tuple[T, str, bytes | None]]) -> Iterator[tuple[T, tuple | Exception | None]]:
        tasks: deque[tuple[list[tuple[T, str, bytes | None]], Future | None]] = deque()
        batch: list[tuple[T, str, bytes | None]] = []
        in_flight = 0
        for job in jobs:
            if self._pool is None and not tasks and not batch:
                result = self._parse_here(job[1], job[2])
                yield job[0], result
                self._judge(result)
                continue
            batch.append(job)
            if len(batch) >= self.per_task:
                tasks.append((batch, self._submit(batch)))
                in_flight += len(batch)
                batch = []
            while in_flight >= self.window:
                done, _ = tasks[0]
                in_flight -= len(done)
                yield from self._collect(*tasks.popleft())
        if batch:
            tasks.append((batch, self._submit(batch)))
        while tasks:
            yield from self._collect(*tasks.popleft())

    def _submit(self, batch: list[tuple[T, str, bytes | None]]) -> Future | None:
        files = [(rel, data) for _, rel, data in batch if data is not None]
        if self._pool is None or not files:
            return None
        try:
            return self._pool.submit(_parse_batch, files, self.options)
        except BrokenProcessPool:
            self._broken()
            return None

    def _collect(self, batch: list[tuple[T, str, bytes | None]], future: Future | None) -> Iterator[tuple[T, tuple | Exception | None]]:
        results: Iterator[tuple | Exception] | None = None
        if future is not None:
            try:
                results = iter(pickle.loads(future.result()))
            except BrokenProcessPool:
                self._broken()
        for key, rel, data in batch:
            if data is None:
                yield key, None
            elif results is None:
                yield key, self._parse_here(rel, data)
            else:
                result = next(results)
                if isinstance(result, tuple):
                    self.parsed_in_workers += 1
                    report_problems(result[0])
                yield key, result

    def _parse_here(self, rel: str, data: bytes | None) -> tuple | Exception | None:
        return None if data is None else parse_or_error(data, rel, self.options)

    def _broken(self) -> None:
        if self._pool is not None:
            log.warning("a parser process died; parsing the remaining files in one thread")
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
