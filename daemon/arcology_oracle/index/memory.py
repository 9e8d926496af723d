"""Memory: the daemon writes org (capture) and deletes what it wrote (forget).

The org files stay the source of truth. A capture appends a heading (made by
:mod:`arcology_oracle.notes.capture`) to today's org-roam daily note and indexes that file at
once, so the heading is searchable when the answer leaves; the watcher later sees the
same bytes and does nothing. The reader decides privacy as for any note: a capture
tagged private is written and never indexed.

Writes never clobber the user's work:

* every write is a temporary file in the same directory renamed over the note, with the
  note's permission bits, and only if the note did not change since it was read (else it
  is read again and the edit redone);
* when Emacs holds the note's lock (a ``.#NAME`` symlink: the buffer has unsaved edits),
  a capture goes to the capture inbox instead and says so, and a forget is refused.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadRequest, Conflict, NotFound
from ..notes import capture
from .service import OracleIndex

log = logging.getLogger(__name__)
WRITE_ATTEMPTS = 5


@dataclass(frozen=True)
class Captured:
    """Where a capture was written; ``inbox`` says the daily was locked by Emacs."""

    id: str
    title: str
    file: str
    line: int
    inbox: bool
    indexed: bool

    def as_dict(self) -> dict:
        return {
            "ok": True,
            "id": self.id,
            "title": self.title,
            "file": self.file,
            "line": self.line,
            "link": f"[[id:{self.id}][{self.title}]]",
            "inbox": self.inbox,
            "indexed": self.indexed,
            "note": (
                "today's daily note has unsaved edits in Emacs (it is locked): written to the capture inbox instead"
                if self.inbox
                else None
            ),
        }


class Memory:
    """Capture and forget against one :class:`OracleIndex`; ``after_index()`` is called
    after each re-index (the daemon wakes its embedding worker there)."""

    def __init__(self, index: OracleIndex, after_index: Callable[[], None] | None = None):
        self.index = index
        self.settings = index.settings
        self.after_index = after_index
        self._lock = asyncio.Lock()  # one edit of the notes at a time

    def daily_rel(self, day: datetime.date, dailies_dir: str | None = None) -> str:
        name = day.strftime(self.settings.daily_file_format)
        return Path(dailies_dir or self.settings.dailies_dir, name).as_posix()

    async def memorize(
        self,
        text: str,
        *,
        title: str | None = None,
        tags: tuple[str, ...] = (),
        now: datetime.datetime | None = None,
        source: str | None = None,
        dailies_dir: str | None = None,
    ) -> Captured:
        """Append ``text`` as a new heading to today's daily (or the inbox); index it.
        ``dailies_dir`` (relative to the roam directory) overrides the setting: Emacs
        sends its ``org-roam-dailies-directory``. ``source`` becomes ``:SOURCE:``."""
        now = now or datetime.datetime.now()
        entry = capture.make_capture(text, title=title, tags=tags, now=now, source=source)
        root = self.settings.roam_dir
        daily = self.daily_rel(now.date(), dailies_dir)
        async with self._lock:
            rel, inbox = daily, False
            if emacs_holds_lock(root / daily):
                rel, inbox = self.settings.capture_inbox, True
                if emacs_holds_lock(root / rel):
                    raise Conflict(
                        f"both today's daily note ({daily}) and the capture inbox ({rel}) have unsaved edits in Emacs; save one and try again"
                    )
            file_title = now.strftime("%Y-%m-%d") if not inbox else "Inbox"

            def edit(existing: str | None) -> tuple[str, int]:
                base = existing if existing is not None else capture.new_file_head(file_title)
                return capture.append_capture(base, entry)

            line = await asyncio.to_thread(edit_file, root / rel, edit)
            await self._reindex(rel)
            indexed = await self.index.read(lambda s: s.node(entry.id) is not None)
        log.info("captured %s into %s:%d%s", entry.id, rel, line, " (inbox: daily locked)" if inbox else "")
        return Captured(entry.id, entry.title, rel, line, inbox, indexed)

    async def forget(self, node_id: str) -> dict:
        """Delete the captured heading ``node_id`` from its file and purge it from the
        index. Raises NotFound, or Conflict for a heading the daemon did not write or a
        file Emacs holds locked."""
        if not node_id or not node_id.strip():
            raise BadRequest("id must not be empty")
        async with self._lock:
            candidates = await self._files_holding(node_id)
            for rel in candidates:
                path = self.settings.roam_dir / rel
                if not path.is_file():
                    continue
                text = await asyncio.to_thread(read_text, path)
                try:
                    found = capture.remove_capture(text, node_id)
                except capture.NotCaptured as exc:
                    raise Conflict(str(exc)) from None
                if found is None:
                    continue
                if emacs_holds_lock(path):
                    raise Conflict(f"{rel} has unsaved edits in Emacs (it is locked); save it and try again")

                def edit(existing: str | None) -> tuple[str, int]:
                    again = capture.remove_capture(existing or "", node_id)
                    if again is None:
                        raise NotFound(f"the heading {node_id} left {rel} while it was being forgotten")
                    return again[0], again[1]

                line = await asyncio.to_thread(edit_file, path, edit)
                await self._reindex(rel)
                remaining = await self.index.read(lambda s: s.rows_of_node(node_id))
                log.info("forgot captured heading %s from %s:%d", node_id, rel, line)
                return {"ok": True, "id": node_id, "file": rel, "line": line, "removed_lines": found[2], "remaining_rows": remaining}
            if await self.index.read(lambda s: s.node(node_id) is not None):
                raise Conflict(f"{node_id} is not a heading captured by arcology-oracle: it is yours to edit")
        raise NotFound(f"no captured heading with ID {node_id!r}")

    async def _files_holding(self, node_id: str) -> list[str]:
        """The file the index places ``node_id`` in, then the dailies and the inbox (a
        private capture is in no index)."""
        row = await self.index.read(lambda s: s.node(node_id))
        out = [row["file"]] if row else []
        root = self.settings.roam_dir
        dailies = root / self.settings.dailies_dir

        def scan() -> list[str]:
            found = []
            paths = sorted(dailies.glob("*.org"), reverse=True) if dailies.is_dir() else []
            for path in [root / self.settings.capture_inbox, *paths]:
                try:
                    if node_id in read_text(path):
                        found.append(path.relative_to(root).as_posix())
                except OSError:
                    continue
            return found

        if not out:
            out = await asyncio.to_thread(scan)
        return out

    async def _reindex(self, rel: str) -> None:
        await self.index.index_paths([rel])
        if self.after_index:
            self.after_index()


def emacs_holds_lock(path: Path) -> bool:
    """Whether Emacs holds ``path``'s lock (``.#NAME`` beside it: unsaved edits).

    A lock naming this host and a process that no longer exists is stale (Emacs crashed)
    and does not count, as Emacs itself decides."""
    lock = path.with_name(".#" + path.name)
    try:
        target = os.readlink(lock)
    except FileNotFoundError:
        return False
    except OSError:
        return lock.exists()  # a lock file rather than a symlink (some file systems)
    _, _, rest = target.partition("@")
    host, _, pid = rest.rpartition(".")
    pid = pid.split(":", 1)[0]
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    return True


def read_text(path: Path) -> str:
    """The file's text; bytes that are not UTF-8 survive a rewrite unchanged."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def edit_file(path: Path, edit: Callable[[str | None], tuple[str, int]]) -> int:
    """Replace ``path``'s text by ``edit(text)`` (``text`` None: no file yet) atomically,
    and return the line ``edit`` gave. If the file changes between the read and the
    rename, the edit is made again on the new text (a few times, then Conflict)."""
    for _ in range(WRITE_ATTEMPTS):
        try:
            before = os.stat(path)
            text: str | None = read_text(path)
        except FileNotFoundError:
            before, text = None, None
        new_text, line = edit(text)
        if _replace_if_unchanged(path, new_text, before):
            return line
    raise Conflict(f"{path.name} kept changing while it was being written; try again")


def _replace_if_unchanged(path: Path, text: str, before: os.stat_result | None) -> bool:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (before.st_mode & 0o7777) if before else (0o666 & ~_umask())
    fd, tmp = tempfile.mkstemp(prefix=".arcology-oracle-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8", errors="surrogateescape"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if (now is None) != (before is None) or (
            now is not None and (now.st_size, now.st_mtime_ns, now.st_ino) != (before.st_size, before.st_mtime_ns, before.st_ino)
        ):
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
        return True
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022
