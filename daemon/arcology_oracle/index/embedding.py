"""Embedding what is pending: :func:`embed_pending` drains the chunks with no vector
through the embedder into the store (the daemon's background worker is
:class:`~arcology_oracle.index.live.EmbedWorker`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection

from ..ollama.embed import Embedder

# Vectors from a fast embedder are committed together, at most this many or this often.
VECTORS_PER_COMMIT = 512
STORE_VECTORS_EVERY = 0.25
# Embedding requests sent before the first answer is read.
EMBED_REQUESTS_IN_FLIGHT = 2
# Pending texts read from the store at once, in batches.
PENDING_BATCHES_PER_READ = 8
# Vectors held while the writer is busy before embedding waits for it (~50 MB at 768-d).
MAX_UNSTORED = 16_384


async def embed_pending(
    embedder: Embedder,
    run_store: Callable,
    *,
    batch_size: int,
    on_batch: Callable[[int], None] | None = None,
    store_every: float = STORE_VECTORS_EVERY,
    requests_in_flight: int = EMBED_REQUESTS_IN_FLIGHT,
    read_pending: Callable | None = None,
    more: Callable[[], Awaitable[bool]] | None = None,
    withheld: Callable[[], Collection[str]] = frozenset,
) -> int:
    """Embed pending chunk texts batch by batch until none is left; returns how many.

    ``run_store(fn)`` must run ``fn(store)`` against the writer store (directly, or
    awaited on the writer thread) and return its result. Three things keep the embedder
    busy and the writer from committing more often than it must:

    * up to ``requests_in_flight`` batches are requested at once, so Ollama has the next
      batch queued while this process reads the last answer (it serves them in turn, or
      in parallel with ``OLLAMA_NUM_PARALLEL``);
    * vectors are stored while the next batches are being embedded;
    * they are stored at most every ``store_every`` seconds or :data:`VECTORS_PER_COMMIT`
      vectors, in one transaction (a fast embedder's batches would otherwise cost a
      commit each; a slow one's are stored batch by batch); while the writer is still
      busy with the last ones, more are embedded and held, up to :data:`MAX_UNSTORED`.

    ``read_pending(fn)``, when given, runs the reads of pending texts instead of
    ``run_store`` (a reader connection, while the writer is busy reconciling). When
    nothing is pending, ``more()``, when given, is awaited: True means more may be
    pending now (the reconcile committed files), False that the work is done.

    ``withheld()`` names the notes whose chunks are neither read nor sent (the notes
    the store could not take: store/withheld.py); when it changes, the texts read and
    not requested yet are read again.

    ``on_batch(n)`` is called as ``n`` more vectors are stored. Errors from the embedder
    (ServiceUnavailable) or the store (DimensionMismatch) propagate once what was
    embedded before them is stored, so a later call resumes where this one stopped.
    """
    total = 0
    unstored: list[tuple[str, object]] = []
    not_stored: set[str] = set()  # queued, requested or embedded, and not stored yet
    requests: deque[tuple[list[str], asyncio.Future]] = deque()
    queued: deque[tuple[str, str]] = deque()  # read from the store, not requested yet
    storing: asyncio.Future | None = None
    last_store = time.monotonic()
    drained = False
    # Look below the pending reads' cursor (see pending_texts) at every read, or, while
    # more() may bring more, only once it says the work is done.
    below = more is None
    hidden = withheld()  # the notes the texts queued were read without

    async def store(items: list[tuple[str, object]]) -> None:
        await run_store(lambda s: s.store_vectors(items))
        not_stored.difference_update(text_hash for text_hash, _ in items)
        if on_batch:
            on_batch(len(items))

    async def store_unstored() -> None:
        nonlocal storing, unstored, last_store
        if storing is not None:
            previous, storing = storing, None
            await previous
        if unstored:
            items, unstored = unstored, []
            storing = asyncio.ensure_future(store(items))
            last_store = time.monotonic()

    try:
        while True:
            while len(requests) < requests_in_flight:
                if withheld() != hidden:  # a note withheld since: what was read of it is not sent
                    hidden = withheld()
                    not_stored.difference_update(text_hash for text_hash, _ in queued)
                    queued.clear()
                    drained = False
                if len(queued) < batch_size and not drained:
                    # Several batches per trip to the writer thread: one trip per batch
                    # cost the event loop as much as the batch's own bookkeeping.
                    exclude, leave = frozenset(not_stored), frozenset(hidden)
                    read = await (read_pending or run_store)(
                        lambda s: s.pending_texts(
                            batch_size * PENDING_BATCHES_PER_READ, exclude=exclude, below=below, withheld=leave
                        )
                    )
                    drained = not read
                    not_stored.update(text_hash for text_hash, _ in read)
                    queued.extend(read)
                if not queued:
                    break
                pending = [queued.popleft() for _ in range(min(batch_size, len(queued)))]
                hashes = [text_hash for text_hash, _ in pending]
                requests.append((hashes, asyncio.ensure_future(embedder.embed_documents([t for _, t in pending]))))
            if not requests:
                if more is not None:
                    await store_unstored()
                if more is not None and await more():
                    drained = False
                    continue
                if not below:  # done: one last read, below the cursor too
                    below, drained = True, False
                    continue
                break
            hashes, request = requests.popleft()
            vectors = await request
            unstored += zip(hashes, vectors)
            total += len(hashes)
            due = len(unstored) >= VECTORS_PER_COMMIT or time.monotonic() - last_store >= store_every
            if due and (storing is None or storing.done() or len(unstored) >= MAX_UNSTORED):
                await store_unstored()
    finally:
        for _, request in requests:
            request.cancel()
        await asyncio.gather(*(request for _, request in requests), return_exceptions=True)
        await store_unstored()
        await store_unstored()  # wait for the last one
    return total
