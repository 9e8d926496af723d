"""The async face of the index, shared by the daemon and the CLI.

:class:`OracleIndex` owns the one writer (an :class:`~arcology_oracle.index.indexer.Indexer`
on a dedicated thread), a small pool of reader threads each with its own connection, the
embedder and the query-vector cache. No SQLite call ever runs on the event loop.
Everything above this layer (answers, http, cli) goes through it; what keeps it live in
the daemon (embedding worker, watcher) is :mod:`arcology_oracle.index.live`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .. import __version__
from ..config import Settings
from ..errors import DimensionMismatch, NotFound, ServiceUnavailable
from ..ollama.client import load_http_backend
from ..ollama.embed import Embedder, OllamaEmbedder, prefixes_key
from ..store import Store
from .alongside import CommitSlots
from .embedding import embed_pending
from .forget_journal import register as journal_forgets
from .give_way import ReadsInFlight
from .indexer import Indexer
from .reports import IndexReport
from .query_vectors import EmbedderState, QueryVectors

log = logging.getLogger(__name__)
T = TypeVar("T")

class OracleIndex:
    """See the module docstring. Create, ``await start()``, use, ``await close()``."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None, *, readers: int = 4):
        self.settings = settings
        self.embedder: Embedder = embedder or OllamaEmbedder(settings)
        self.embedder_state = EmbedderState()
        self.instance = uuid.uuid4().hex  # /status: a client sees a restart (on other notes?)
        self._readers = readers
        self._writer_pool: ThreadPoolExecutor | None = None
        self._reader_pool: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._reader_stores: list[Store] = []
        self._readers_lock = threading.Lock()
        self.reads = ReadsInFlight()  # those in flight, which a reconcile gives way to
        self._writer: Store | None = None
        self.indexer: Indexer | None = None
        self.queries = QueryVectors(self.embedder, self.embedder_state, self._stored_dims, self._query_met_new_model)
        # The daemon's embedding worker's wake: called when every vector was dropped for
        # a new model. None (the CLI): a query never drops them (see _query_met_new_model).
        self.vectors_dropped: Callable[[], None] | None = None
        self._model_check: asyncio.Task | None = None
        # One embedding pipeline at a time (the daemon's worker waits for the one that
        # runs alongside the first reconcile, instead of embedding the same texts).
        self._embedding = asyncio.Lock()
        # Notes the store could not take, whose old rows may hold what was made private
        # since: no reader shows them (store/withheld.py). Replaced whole (index/live.py).
        self.withheld: frozenset[str] = frozenset()

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Open the writer store (migrating it) and record the embedding model; forgets
        in the notes are journaled beside the database from now on (:mod:`.forget_journal`)."""
        journal_forgets(self.settings.roam_dir, self.settings.db_path)
        self._writer_pool = ThreadPoolExecutor(1, thread_name_prefix="oracle-writer")
        self._reader_pool = ThreadPoolExecutor(self._readers, thread_name_prefix="oracle-reader")
        self._local = threading.local()

        def open_writer() -> None:
            self._writer = Store.open(self.settings.db_path, writer=True)
            self.indexer = Indexer(self.settings, self._writer, self.reads)
            self.indexer.prepare_embedding(self.embedder)

        await self._run_writer(open_writer)
        await load_http_backend()
        # Load the in-memory vector index now, on a reader thread, so that the first query
        # after a start does not wait for it (seconds at 100k vectors).
        self._warming = asyncio.get_running_loop().run_in_executor(self._reader_pool, self._warm)

    def _warm(self) -> None:
        """What the first query after a start would otherwise wait for: the vector index
        (loaded, its snapshot's pages read and mapped in) and the count of nodes the graph
        signal weighs labels by (~20-30 ms at a million headings; counted once per
        generation of the headings and shared by every reader)."""
        store = self._reader()
        try:
            store.warm_vectors()
        except Exception:  # the first query loads it instead
            log.exception("could not load the vector index")
        try:
            store.node_count()
        except Exception:  # the first query that needs it counts instead
            log.exception("could not count the nodes")

    async def close(self) -> None:
        """Close the embedder and every connection, a reconcile under way stopped
        (:meth:`Indexer.stop`). The index can be started again."""
        if self.indexer is not None:
            self.indexer.stop()  # (a reconcile under way: at its next commit, not at its end)
        if getattr(self, "_warming", None) is not None:
            await self._warming
            self._warming = None
        if self._model_check is not None:
            await asyncio.gather(self._model_check, return_exceptions=True)
            self._model_check = None
        await self.embedder.close()
        if self._writer is not None:
            await self._run_writer(self._writer.close)
        self._writer = None
        self._writer_pool.shutdown(wait=True)
        self._reader_pool.shutdown(wait=True)
        with self._readers_lock:
            for store in self._reader_stores:
                store.close()
            self._reader_stores.clear()

    # -- running on threads -----------------------------------------------------------

    async def _run_writer(self, fn: Callable[..., T], *args) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._writer_pool, fn, *args)

    async def write(self, fn: Callable[[Store], T]) -> T:
        """Run ``fn(writer_store)`` on the writer thread."""
        return await self._run_writer(lambda: fn(self._writer))

    def _reader(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            store = Store.open(self.settings.db_path)
            self._local.store = store
            with self._readers_lock:
                self._reader_stores.append(store)
        return store

    async def read(self, fn: Callable[[Store], T], *, own: bool = False) -> T:
        """Run ``fn(reader_store)`` on a reader thread (its own connection), which shows
        nothing of the notes :attr:`withheld` as the call is made. A reconcile gives way
        to it until its answer is back on the loop (:attr:`reads`), unless it is ``own``:
        one the daemon makes for itself (the setup files' look every 2 s), which no
        client waits for."""
        loop, withheld = asyncio.get_running_loop(), self.withheld
        with contextlib.nullcontext() if own else self.reads.reading():
            return await loop.run_in_executor(self._reader_pool, lambda: fn(self._reader().hide(withheld)))

    # -- indexing ---------------------------------------------------------------------

    async def reconcile(self, on_progress=None) -> IndexReport:
        return await self._run_writer(lambda: self.indexer.reconcile(on_progress))

    async def index_paths(self, rels: Iterable[str], *, lock_wait_ms: int | None = None) -> IndexReport:
        """See :meth:`Indexer.index_paths`; ``lock_wait_ms``: see :meth:`Store.lock_wait`."""
        rels = list(rels)

        def run() -> IndexReport:
            with self._writer.lock_wait(lock_wait_ms):
                return self.indexer.index_paths(rels)

        return await self._run_writer(run)

    async def index_appended(self, rel: str, before, added: bytes, st, after_hash: str) -> bool:
        """See :meth:`Indexer.index_appended`."""
        return await self._run_writer(lambda: self.indexer.index_appended(rel, before, added, st, after_hash))

    @property
    def progress(self):
        return self.indexer.progress if self.indexer else None

    async def check_embedding_model(self) -> bool:
        """Ask the model for its dimension; when it differs from the stored vectors' (the
        model was replaced under the same name), drop every vector so all are embedded
        again (:attr:`vectors_dropped` is called) and forget the queries' vectors of the
        old model. Returns True when it reset. Raises ServiceUnavailable."""
        dims = await self.embedder.dimensions()
        stored = await self._stored_dims()
        if dims is None or stored is None or dims == stored:
            return False
        log.warning(
            "embedding model %s now describes %d-dimensional vectors, the index holds %d: re-embedding every chunk",
            self.embedder.model, dims, stored,
        )
        key = prefixes_key(self.embedder.prefixes)
        reset = await self.write(lambda s: s.ensure_embedding_model(self.embedder.model, key, force=True))
        if reset:
            self.queries.forget()
            if self.vectors_dropped is not None:
                self.vectors_dropped()
        return reset

    def _query_met_new_model(self) -> None:
        """A query's vector is not of the stored vectors' length. In the daemon, whose
        worker embeds everything again, the index starts over with the new model
        (:meth:`check_embedding_model`, once at a time, in the background: it writes, and
        no query waits for the writer); a CLI search drops nothing (it may be asking
        another Ollama than the daemon's)."""
        if self.vectors_dropped is None or (self._model_check is not None and not self._model_check.done()):
            return
        self._model_check = asyncio.create_task(self._check_model_for_queries(), name="embedding-model-check")

    async def _check_model_for_queries(self) -> None:
        try:
            await self.check_embedding_model()
        except ServiceUnavailable as exc:  # the worker meets the model at its next try
            log.info("could not check the embedding model: %s", exc)

    async def _stored_dims(self) -> int | None:
        return (await self.read(lambda s: s.embedding_model())).dims

    async def embed_pending(self, on_batch=None, **pipeline) -> int:
        """Embed every pending chunk now; raises ServiceUnavailable/DimensionMismatch.

        A dimension mismatch first checks whether the model itself changed (then every
        vector is dropped and embedding starts over); otherwise the bad batch is refused
        and nothing of it is stored. ``pipeline`` goes to
        :func:`~arcology_oracle.index.embedding.embed_pending` (``run_store`` defaults to
        the writer); the chunks of the notes :attr:`withheld` are not embedded."""
        run_store = pipeline.pop("run_store", self.write)
        pipeline.setdefault("withheld", lambda: self.withheld)

        async def run() -> int:
            return await embed_pending(
                self.embedder, run_store, batch_size=self.settings.embed_batch_size, on_batch=on_batch, **pipeline
            )

        try:
            try:
                async with self._embedding:
                    count = await run()
            except DimensionMismatch:
                if not await self.check_embedding_model():
                    raise
                async with self._embedding:
                    count = await run()
        except (ServiceUnavailable, DimensionMismatch) as exc:
            self.embedder_state.failed(exc)
            raise
        self.embedder_state.ok()
        self.embedder_state.embedded_since_start += count
        return count

    async def reconcile_and_embed(self, on_progress=None, on_batch=None, on_reconciled=None):
        """A reconcile that embeds each batch of files as it commits them, instead of after.

        The reconcile holds the writer thread; pending texts are read through a reader
        connection of their own and vectors are stored on the writer thread between the
        reconcile's commits (:class:`~arcology_oracle.index.alongside.CommitSlots`), then
        as usual once it is done. ``await on_reconciled(report)`` runs when the reconcile
        is over and embedding goes on. Returns ``(report, error)``: ``error`` is the
        ServiceUnavailable that stopped the embedding (the chunks stay pending), None when
        every chunk was embedded; a failed reconcile or a DimensionMismatch raises.
        """
        loop = asyncio.get_running_loop()
        slots = CommitSlots(loop)

        def reconcile() -> IndexReport:
            self.indexer.between_commits = lambda: slots.run(self._writer)
            try:
                return self.indexer.reconcile(on_progress)
            finally:
                self.indexer.between_commits = None
                slots.close(self._writer)

        reconciling = asyncio.ensure_future(self._run_writer(reconcile))
        pending_store = await loop.run_in_executor(self._reader_pool, Store.open, self.settings.db_path)

        async def run_store(fn):
            future = slots.submit(fn)
            return await (future if future is not None else self.write(fn))

        async def read_pending(fn):
            return await loop.run_in_executor(self._reader_pool, fn, pending_store)

        looked_after = False

        async def more() -> bool:
            # True after each commit and once after the reconcile: pending may have grown.
            nonlocal looked_after
            if looked_after:
                return False
            committed = asyncio.ensure_future(slots.committed.wait())
            await asyncio.wait([committed, reconciling], return_when=asyncio.FIRST_COMPLETED)
            committed.cancel()
            slots.committed.clear()
            looked_after = reconciling.done()
            return True

        embedding = asyncio.ensure_future(
            self.embed_pending(on_batch, run_store=run_store, read_pending=read_pending, more=more)
        )
        try:
            try:
                report = await reconciling
                if on_reconciled is not None:
                    await on_reconciled(report)
                await asyncio.wait([embedding])  # its error, if any, is read below
            except BaseException:  # the reconcile failed, or this was cancelled
                embedding.cancel()
                await asyncio.gather(embedding, return_exceptions=True)
                raise
            try:
                embedding.result()
            except ServiceUnavailable as exc:
                return report, exc
            return report, None
        finally:
            await loop.run_in_executor(self._reader_pool, pending_store.close)

    # -- queries ----------------------------------------------------------------------

    async def query_vector(self, text: str, *, document: bool = False) -> list[float] | None:
        """The embedding of a query (cached), or None when the embedder is unavailable
        (see :class:`~.query_vectors.QueryVectors`)."""
        if document:
            vectors = await self.queries.documents([text])
            return vectors[0] if vectors else None
        return await self.queries.query(text)

    async def document_vectors(self, texts: list[str]) -> list[list[float]] | None:
        """The embeddings of ``texts`` as documents, in order (cached), or None as
        :meth:`query_vector`."""
        return await self.queries.documents(texts)

    async def has_vectors(self) -> bool:
        return await self.read(lambda s: s.has_vector_table())

    async def node(self, node_id: str) -> dict:
        def run(store: Store):
            node = store.node(node_id)
            if node is None:
                raise NotFound(f"no node with ID {node_id!r} in the index")
            return node, store.node_headings(node_id)

        return await self.read(run)

    async def node_links(self, node_id: str) -> tuple[list[dict], list[dict]]:
        """(links, backlinks) of ``node_id`` among indexed nodes; see Store.node_links."""
        return await self.read(lambda s: s.node_links(node_id))

    async def heading_at(self, path: str, line: int) -> dict:
        def run(store: Store):
            row = store.heading_at(path, line)
            if row is None:
                raise NotFound(f"no indexed heading at {path}:{line}")
            return row

        return await self.read(run)

    async def status(self) -> dict[str, Any]:
        counts = await self.read(lambda s: s.counts())
        info = await self.read(lambda s: s.embedding_model())
        progress = self.progress.as_dict() if self.progress else {"running": False, "phase": "idle", "done": 0, "total": 0}
        return {
            "ok": True,
            "version": __version__,
            "roam_dir": str(self.settings.roam_dir),
            "exclude_globs": list(self.settings.exclude_globs),
            "instance": self.instance,
            "db_path": str(self.settings.db_path),
            **counts,
            "embedder": {
                "model": self.embedder.model,
                "host": self.settings.ollama_host,
                "dims": info.dims,
                "reachable": self.embedder_state.reachable,
                "error": self.embedder_state.error,
            },
            "indexing": progress,
        }
