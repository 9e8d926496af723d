"""Background work that gives way to the reads in flight.

A reconcile of unchanged notes is Python on the writer thread (the walk of the notes
directory, a ``stat`` a file: ~4 s at a million headings), which holds the GIL between its
system calls. A query's reader gives the GIL up around each SQLite step and numpy call
and, beside such a thread, waits up to the interpreter's switch interval (5 ms) each time
to have it back, and shares two cores with it: the queries that meet a start's reconcile
(the first ``/similar`` at 100k headings, median 131 ms → 56; those after the first at a
million, p50 259 → 114 ms, at load 5: BENCHMARKS.md, issue 30, fortieth round) were
slowed by it. :class:`ReadsInFlight` counts the reads in flight; the background work calls
:meth:`ReadsInFlight.work`'s pause every few dozen files, which waits while any read is in
flight, within a bound: at most :data:`LONGEST_WAIT` at once, and in all no more than
:data:`FIRST_WAITS` plus the time the work itself has run (a stream of queries at most
doubles a reconcile, and one that finds none is not slowed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# One wait: a first /similar at a million headings, idle, is ~50-110 ms.
LONGEST_WAIT = 0.25
# What the work may wait before it has run long (the first query meets it as it begins).
FIRST_WAITS = 0.25


class ReadsInFlight:
    """The number of reads in flight, and pauses for background work. Thread-safe.
    ``longest`` and ``first`` replace :data:`LONGEST_WAIT` and :data:`FIRST_WAITS`."""

    def __init__(self, *, longest: float = LONGEST_WAIT, first: float = FIRST_WAITS, clock=time.monotonic):
        self.longest, self.first, self._clock = longest, first, clock
        self._count = 0
        self._none = threading.Condition()
        self.gave_way = 0  # pauses that met a read in flight and waited (for tests)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A read in flight for the block's time."""
        with self._none:
            self._count += 1
        try:
            yield
        finally:
            with self._none:
                self._count -= 1
                if not self._count:
                    self._none.notify_all()

    def work(self) -> Callable[[], None]:
        """A pause for one piece of background work that begins now: when called while
        a read is in flight, it returns once none is, or when the bound (see the module
        docstring) says the work has waited enough."""
        began, waited = self._clock(), 0.0

        def pause() -> None:
            nonlocal waited
            if not self._count:  # the common case, without the lock
                return
            started = self._clock()
            allowed = min(self.longest, self.first + (started - began - waited) - waited)
            if allowed <= 0:
                return
            with self._none:
                if self._count:
                    self.gave_way += 1
                    self._none.wait_for(lambda: not self._count, allowed)
            waited += self._clock() - started

        return pause
