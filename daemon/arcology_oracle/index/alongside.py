"""Embedding alongside a reconcile: :class:`CommitSlots` lets the embedding pipeline store
vectors on the writer thread while a reconcile holds it, between the reconcile's commits.

A cold ``arcology-oracle index`` used to embed only once the reconcile was done, so the
embedder and the event loop idled for the reconcile's whole length (43% of a cold index
of 20,000 headings, see BENCHMARKS.md). The writer stays the store's only writer: jobs
run on its thread, with its connection, never inside one of the reconcile's transactions.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Any


class CommitSlots:
    """Jobs for the writer thread, run between the commits of the reconcile that holds it.

    ``submit(fn)`` (event loop) queues ``fn(store)`` and returns a future for its result,
    or None once the slots are closed (the caller then runs it on the writer as usual).
    ``run(store)`` (writer thread, after each commit) runs what is queued, in order, and
    sets :attr:`committed`; ``close(store)`` (writer thread, when the reconcile is over,
    failed or not) refuses new jobs and runs the last ones, so none is ever left waiting.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop
        self._lock = threading.Lock()
        self._jobs: deque[tuple[Callable[[Any], Any], asyncio.Future]] = deque()
        self._open = True
        self.committed = asyncio.Event()

    def submit(self, fn: Callable[[Any], Any]) -> asyncio.Future | None:
        with self._lock:
            if not self._open:
                return None
            future = self._loop.create_future()
            self._jobs.append((fn, future))
            return future

    def run(self, store) -> None:
        while True:
            with self._lock:
                if not self._jobs:
                    break
                fn, future = self._jobs.popleft()
            try:
                result, error = fn(store), None
            except Exception as exc:  # handed to the waiting coroutine
                result, error = None, exc
            self._call(_settle, future, result, error)
        self._call(self.committed.set)

    def _call(self, fn, *args) -> None:
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop closed (the daemon stopped mid-reconcile): nobody waits
            pass

    def close(self, store) -> None:
        with self._lock:
            self._open = False
        self.run(store)


def _settle(future: asyncio.Future, result: Any, error: Exception | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
