"""Keeping the store in step with the org files.

:class:`Indexer` is synchronous and is the only writer of the store: the CLI calls it
directly, the daemon runs it on one dedicated thread. Files whose size and mtime did not
change are skipped; files whose bytes hash the same are only touched; others are read,
chunked and replaced in one transaction. Vectors follow chunk text hashes (see
``store.index``), so only chunks whose text changed ever become pending; embedding
them is :mod:`.embedding`'s job.

A file naming setup files is read again when one of them changes, though its own bytes
did not (:mod:`arcology_oracle.notes.setup_files`). A file that cannot be read or parsed is
logged with its path and reason and does not stop the others; whatever part of a bad file
could be read is indexed. One the store could not take (a full disk) is ``stale`` in the
report: its old rows stay until it is read again (the daemon retries: :mod:`.live`).

A file the privacy rule keeps out whole (``ParsedFile.private``) leaves nothing in the
store, not even its path: whatever was stored for it is deleted, and only this process
remembers it was seen (:mod:`.private_files`). A rejected link suggestion naming a node
now kept out goes too (:mod:`.kept_out`).

A reconcile of many files parses them in worker processes (:class:`.parsing.ParsePipeline`), stored here in order.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from ..config import Settings
from ..errors import Stopping
from ..ollama.embed import Embedder, prefixes_key
from ..notes.files import (
    PAUSE_EVERY, inside_root, is_indexable_path, iter_org_files, may_have_excluded_names, notes_dir_problem, through_symlink,
)
from ..notes.records import ParsedFile
from ..notes.setup_files import changed_since
from ..store import Store
from ..store.db import OperationalError
from .appends import appended_headings
from .give_way import ReadsInFlight
from .kept_out import KeptOutNodes
from .parsing import ParseOptions, ParsePipeline, default_workers, newly_private, parse_or_error
from .private_files import PrivateFiles
from .reports import IndexReport, Progress
from .regular_files import read_regular_file as _read_regular_file

log = logging.getLogger(__name__)

# Files stored per transaction (each in its own savepoint). 256 rather than 64 made a
# cold index of 22,695 headings 7% faster: fewer copies of the same index pages in the
# WAL and fewer FTS segments to merge.
FILES_PER_COMMIT = 256
# Fewer files than this are parsed in the writer thread: starting worker processes costs
# about as much as parsing 200 typical notes.
PARALLEL_PARSE_MIN_FILES = 200


class Indexer:
    """Reads org files under ``settings.roam_dir`` into ``store``. Not thread-safe: one
    Indexer, used from one thread, is the store's only writer."""

    def __init__(self, settings: Settings, store: Store, reads: ReadsInFlight | None = None):
        self.settings = settings
        self.reads = reads or ReadsInFlight()  # those a reconcile's walk and stats give way to
        self.store = store
        self.root = settings.roam_dir
        self.progress = Progress()
        self._stopping = threading.Event()  # see stop()
        self._private_tags = frozenset(t.lower() for t in settings.private_tags)
        self._real_root = os.path.realpath(self.root)  # again at each reconcile / index_paths
        # Real path -> the symlinked path a file is indexed under (iter_org_files), for the watcher. Replaced whole.
        self.aliases: dict[str, str] = {}
        self.private = PrivateFiles()  # the private files seen: in memory only
        self._lock = threading.Lock()
        self._kept_out = KeptOutNodes()  # for the operation under way (reconcile, index_paths)
        # Called on this thread after each commit of a reconcile (OracleIndex stores vectors there meanwhile).
        self.between_commits: Callable[[], None] | None = None

    def reconcile(self, on_progress: Callable[[Progress], None] | None = None) -> IndexReport:
        """Bring the store in line with every org file under the roam directory."""
        with self._lock:
            report = IndexReport()
            self.progress = Progress("scanning", 0, 0)
            if (problem := notes_dir_problem(self.root)) is not None:
                log.warning("%s; the index is left as it is", problem)
                self.progress = Progress()
                return report
            aliases: dict[str, str] = {}
            give_way = self.reads.work()

            def pause() -> None:
                self._stop_here()
                give_way()

            # The paths as strings: a Path is two objects the cyclic GC tracks, and a
            # million headings' 119,000 Paths were over half of what each full collection
            # during a start's reconcile scanned (several, 40-110 ms each, holding the GIL).
            left_out: set[str] = set()
            files = iter_org_files(self.root, self.settings.exclude_globs, aliases, left_out, pause=pause)
            on_disk = {rel: str(path) for rel, path in files}
            self.aliases = aliases
            self.private.left_out(left_out)
            rules = self.parse_options.reading_rules()
            added = newly_private(self.store.recorded_reading_rules(), rules)
            if self.store.renew_reading_rules(rules, tagged=added):
                self.private.clear()
                if on_disk:
                    log.info("the private tags, the chunking or the reader changed since the files were read: reading %s"
                             " again", "every file" if added is None else "the files tagged " + ", ".join(sorted(added)))  # fmt: skip
            known = self._known(pause)
            self._real_root = os.path.realpath(self.root)
            self.store.remember_notes_dir(self._real_root)
            self._kept_out = KeptOutNodes(self.store)
            self.progress = Progress("indexing", 0, len(on_disk))
            stale = []
            looks: dict[str, tuple] = {}  # each setup file looked at once in this reconcile
            for i, (rel, abs_path) in enumerate(on_disk.items()):
                if not i % PAUSE_EVERY:
                    pause()
                if _same_stat(abs_path, known.get(rel), looks):
                    if rel in self.private:
                        report.private += 1
                    else:
                        report.unchanged += 1
                    self.progress.done += 1
                else:
                    stale.append((rel, Path(abs_path)))
            if on_progress:
                on_progress(self.progress)
            workers = self._parse_workers(len(stale))  # started once worth it (private notes are not)
            with ParsePipeline(self.parse_options, workers, total=len(stale), min_files=PARALLEL_PARSE_MIN_FILES) as pipeline:
                results = pipeline.run(
                    (read, read.rel, read.data)
                    for read in (self._read(rel, abs_path, known.get(rel), looks) for rel, abs_path in stale)
                )
                # Committed in batches (each file in a savepoint): a commit per file cost a third of a cold index.
                # None when nothing changed: a commit is a new write generation, which every reader's caches follow.
                while stale:
                    before = self.progress.done
                    with self.store.transaction():
                        for read, parsed in islice(results, FILES_PER_COMMIT):
                            report.merge(self._apply(read, parsed))
                            self.progress.done += 1
                            if on_progress:
                                on_progress(self.progress)
                    if self.between_commits:
                        self.between_commits()
                    self._stop_here()
                    if self.progress.done == before:
                        break
            if pipeline.parsed_in_workers:
                log.info("parsed %d files in %d worker processes", pipeline.parsed_in_workers, pipeline.workers)
            for rel in known.keys() - on_disk.keys():
                self._forget(rel, report)
            self.private.publish()
            report.seen = len(on_disk)
            self._checkpoint(report)
            self.progress = Progress()
            return report

    def stop(self) -> None:
        """Make a reconcile under way (on another thread) end at its next pause or commit,
        raising :class:`~arcology_oracle.errors.Stopping`: the index is closing (``C-c`` in
        ``index``, the daemon's stop), and waited for the whole walk and every file (7 s
        after ``C-c`` at 12,000 files). What it committed stays; the next reconcile reads
        the rest, as after a crash there (each commit is whole). For good."""
        self._stopping.set()

    def _stop_here(self) -> None:
        if self._stopping.is_set():
            raise Stopping("the index is closing: the reconcile stopped; the next one goes on")

    def index_paths(self, rels: Iterable[str]) -> IndexReport:
        """Re-index (or purge) the given paths, relative to the roam directory.

        A path that no longer exists, or that is not indexable any more (renamed to a
        backup, matched by an exclude glob, a link out of the root), has its rows
        deleted. A path reaching a file through a symlink, or a file of several names (a
        hard link), is indexed only if it is a path ``iter_org_files`` gives, so the
        watcher and a full reconcile always agree.
        """
        with self._lock:
            report = IndexReport()
            known = self._known()
            self._real_root = os.path.realpath(self.root)
            self._kept_out = KeptOutNodes(self.store)
            canonical: set[str] | None = None
            for rel in rels:
                abs_path = self.root / rel
                wanted = (
                    is_indexable_path(rel, self.settings.exclude_globs)
                    and inside_root(self.root, abs_path)
                    and abs_path.is_file()
                )
                if wanted and (through_symlink(self.root, rel) or may_have_excluded_names(abs_path, self.settings.exclude_globs)):
                    # A link to a file inside the root, or a hard link: only as a reconcile chooses.
                    if canonical is None:
                        aliases: dict[str, str] = {}
                        canonical = {r for r, _ in iter_org_files(self.root, self.settings.exclude_globs, aliases)}
                        self.aliases = aliases
                    wanted = rel in canonical
                if wanted:
                    report.merge(self._index_one(rel, abs_path, known.get(rel)))
                    report.seen += 1
                else:
                    self._forget(rel, report)
            self.private.publish()
            self._checkpoint(report)
            return report

    def index_appended(self, rel: str, before, added: bytes, st: os.stat_result, after_hash: str) -> bool:
        """Index the headings ``added`` appended to the indexed file ``rel``, reading only
        them (see :mod:`.appends`): ``before`` is the file's
        :class:`~arcology_oracle.index.note_io.NoteState` before, ``st`` its stat and
        ``after_hash`` its hash after. False, and nothing done, when the store does not
        hold the file as it was before: the caller then indexes the whole file."""
        with self._lock:
            row = self.store.file_row(rel)
            if row is not None and row["hash"] == after_hash and (row["size"], row["mtime_ns"]) == (st.st_size, st.st_mtime_ns):
                return True  # indexed already (the watcher was first)
            if row is None or row["hash"] != before.hexdigest:
                return False
            headings, chunks = appended_headings(
                before.head, before.tags, before.lines, added, rel, self.parse_options,
                title=row["title"], file_id=row["file_node"], setups=before.setups,
            )  # fmt: skip
            parsed = ParsedFile(path=rel, title=row["title"], file_id=row["file_node"], headings=headings)
            pending = self.store.append_headings(parsed, size=st.st_size, mtime_ns=st.st_mtime_ns, file_hash=after_hash, chunks=chunks)
            return pending is not None

    def _known(self, pause: Callable[[], None] | None = None) -> dict:
        """What is remembered of each file to tell whether to read it again: the store's
        record, or for a private file this process's (:mod:`.private_files`). ``pause``: as
        the walk's (:mod:`.give_way`)."""
        return {**self.private.states(), **self.private.with_named_privately(self.store.file_states(pause))}

    def _forget(self, rel: str, report: IndexReport) -> None:
        """``rel`` is no note to index any more: gone, excluded (its nodes kept out), or a link leading out."""
        self._kept_out.left_out(rel, self.root, self._real_root, self.settings.exclude_globs)
        self.private.drop(rel)
        self.private.left_out([rel] if is_indexable_path(rel, self.settings.exclude_globs) and os.path.lexists(self.root / rel) else [])
        report.deleted += int(self.store.delete_file(rel))

    def _checkpoint(self, report: IndexReport) -> None:
        """End of an operation: kept-out nodes' rejections forgotten; the log folded in."""
        if self._kept_out.forget() or report.indexed or report.deleted:
            self.store.checkpoint()

    @property
    def parse_options(self) -> ParseOptions:
        return ParseOptions(self._private_tags, self.settings.chunk_chars, self.settings.chunk_overlap, self.root)

    def _parse_workers(self, files: int) -> int:
        if files < PARALLEL_PARSE_MIN_FILES:
            return 0
        return default_workers() if self.settings.parse_workers is None else self.settings.parse_workers

    def _index_one(self, rel: str, abs_path: Path, known) -> IndexReport:
        # Read and hashed even when its size and mtime are the recorded ones: something
        # wrote it, and an edit of the same size within the file system's timestamp
        # granularity (a tag made :private: in the same second) keeps both.
        read = self._read(rel, abs_path, known)
        parsed = None if read.data is None else parse_or_error(read.data, rel, self.parse_options)
        return self._apply(read, parsed)

    def _read(self, rel: str, abs_path: Path, known, looks: dict[str, tuple] | None = None) -> "_FileRead":
        """Read and hash one file: what must be done with it, and its bytes if they
        need parsing. Never raises. ``looks``: the setup files already looked at (see
        :func:`~arcology_oracle.notes.setup_files.any_changed`)."""
        try:
            read = _read_regular_file(self._real_root, abs_path)
        except (FileNotFoundError, NotADirectoryError):
            read = None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return self._unreadable(rel, abs_path, known, looks, exc.strerror or str(exc))
            read = None
        if read is None:  # gone, or no longer a regular file inside the root
            return _FileRead(rel, abs_path, "gone")
        data, st = read
        file_hash = hashlib.sha256(data).hexdigest()
        if known is not None and known.hash == file_hash and not changed_since(known.setup, looks):
            return _FileRead(rel, abs_path, "same bytes", st=st)
        return _FileRead(rel, abs_path, "changed", data=data, st=st, file_hash=file_hash)

    def _unreadable(self, rel: str, abs_path: Path, known, looks: dict[str, tuple] | None, why: str) -> "_FileRead":
        """A file that cannot be read, logged by name only when the index holds it, public
        as last read, and nothing that makes a note private changed since."""
        was_private = rel in self.private
        if known is not None and (known.hash == "" or changed_since(known.setup, looks)):  # may be private now
            log.warning("cannot read a note (%s), and what makes a note private changed since it was read: it leaves"
                        " the index", why)  # fmt: skip
            return _FileRead(rel, abs_path, "gone", error=why, unsure=True)
        if known is not None and not was_private:
            log.warning("cannot read %s: %s", abs_path, why)
            return _FileRead(rel, abs_path, "failed", error=why)
        if was_private:
            log.warning("cannot read a note private when last read (%s): nothing of it is indexed", why)
        else:
            log.warning("cannot read a note not read before (%s): it is not indexed; `arcology-oracle doctor` names"
                        " it", why)  # fmt: skip
        return _FileRead(rel, abs_path, "failed", error=why, unsure=True)

    def _apply(self, read: "_FileRead", parsed) -> IndexReport:
        """Bring the store in line with one file as read; ``parsed`` is what
        :func:`~arcology_oracle.index.parsing.parse_or_error` gave for a changed one."""
        report = IndexReport()
        if read.outcome == "failed":
            report.failed[read.rel] = read.error or "unreadable"
        elif read.outcome == "gone":
            self.private.drop(read.rel)
            report.deleted = int(self.store.delete_file(read.rel))
        if read.unsure:
            self.private.unsure(read.rel)
        if read.outcome in ("failed", "gone"):
            return report
        if read.outcome == "same bytes" and read.rel in self.private:
            self.private.touch(read.rel, read.st)
            report.private = 1
        elif read.outcome == "same bytes":
            self.store.touch_file(read.rel, read.st.st_size, read.st.st_mtime_ns)
            report.unchanged = 1
        else:
            try:
                if isinstance(parsed, Exception):
                    raise parsed
                headings, chunks = parsed
                if headings.private:  # nothing of it is stored; what was, goes
                    self._kept_out.private_file(read.rel, read.data)
                    self.private.keep(headings, read.st, read.file_hash)
                    report.private, report.deleted = 1, int(self.store.delete_file(read.rel))
                    return report
                self.private.public(headings)
                self._kept_out.kept_out(headings.kept_out_ids)
                report.new_pending = self.store.replace_file(
                    headings, size=read.st.st_size, mtime_ns=read.st.st_mtime_ns, file_hash=read.file_hash, chunks=chunks
                )
            except Exception as exc:  # one bad file must never stop the others; a private one is not named
                log.exception("failed to index %s", "a private note" if read.rel in self.private else read.abs_path)
                report.failed[read.rel] = f"{type(exc).__name__}: {exc}"
                if isinstance(exc, OperationalError):  # a full disk, a locked database: read again later (live.py)
                    report.stale.add(read.rel)
                return report
            report.indexed = 1
        return report

    def prepare_embedding(self, embedder: Embedder) -> bool:
        """Record the embedder's model; True if that reset all vectors (model changed)."""
        reset = self.store.ensure_embedding_model(embedder.model, prefixes_key(embedder.prefixes))
        if reset:
            log.warning("embedding model changed to %s: every chunk will be embedded again", embedder.model)
        return reset


@dataclass
class _FileRead:
    """One file as read for indexing, before parsing. ``outcome`` is one of ``failed``
    (unreadable: ``error``), ``gone``, ``same bytes`` (the recorded hash; its size or
    mtime may have changed) or ``changed`` (``data`` to parse)."""

    rel: str
    abs_path: Path
    outcome: str
    data: bytes | None = None
    st: os.stat_result | None = None
    file_hash: str | None = None
    error: str | None = None
    unsure: bool = False  # could not be read, and may be private (PrivateFiles.unsure)


def _same_stat(path: str, known, looks: dict[str, tuple]) -> bool:
    """Whether ``path`` has the size and mtime the store recorded and the setup files it
    names are as they were (so it is not read; ``looks``: see ``Indexer._read``)."""
    if known is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    return known.size == st.st_size and known.mtime_ns == st.st_mtime_ns and not changed_since(known.setup, looks)

