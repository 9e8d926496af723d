"""Memory: the daemon writes org (capture) and deletes what it wrote (forget).

The org files stay the source of truth. A capture appends a heading (made by
:mod:`arcology_oracle.notes.capture`) to today's org-roam daily note, in place, and
indexes just that heading at once (:mod:`.appends`), so it is searchable when the answer
leaves and ``indexed`` says what the index really holds; the watcher later sees the
same bytes and does nothing. The reader decides privacy as for any note: a capture
tagged private is written and never indexed. :mod:`.note_io` does every read and write
of a note, and says why no byte anyone else wrote can be lost.

A capture into a note the index leaves out (a hidden folder, or one ``exclude_globs``
matches: Emacs may send such a folder as ``dailies_dir``) is written there and never
indexed, and the answer's ``note`` says so; where it went is recorded first
(:mod:`.capture_places`), so that it can be forgotten by its ID like any other.

The capture goes to the capture inbox instead, and the answer's ``note`` says why, when
Emacs holds the daily or it cannot take a capture (:mod:`.capture_target` decides it, in
a worker thread, as every look at the files here is).
A forget removes only a heading the daemon wrote whose bytes are still the ones written
(its ``:CAPTURE_HASH:``, which counts tabs as the spaces up to their column:
:mod:`~arcology_oracle.notes.capture_blanks`); anything else is refused with 409 saying what changed,
and a heading the index does not hold (private, or unknown) answers 404 alike. A capture
the user copied within its file is refused too (409): the copy is byte for byte the
capture, so which heading the daemon wrote cannot be told. A daily path with a name or
a length no file system holds is a 400, before any directory is created.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadRequest, Conflict, NotFound, StoreError
from ..notes import capture
from ..notes.disk import emacs_holds
from ..notes.model_text import unknown_ids_quieted
from ..notes.note_ids import held_until
from ..notes.todo_keywords import file_task_keyword, file_todo_keywords
from ..store.db import DatabaseError
from . import capture_places, capture_target, note_io
from .aside import folders_below, give_back_left_aside, remove_stale_temp_files
from .created_notes import CreatedNotes
from .id_mentions import head_ids, mentioned_elsewhere
from .other_names import other_names
from .service import OracleIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Captured:
    """Where a capture was written; ``note`` says why it went to the inbox."""

    id: str
    title: str
    file: str
    line: int
    inbox: bool
    indexed: bool
    link: str
    note: str | None = None

    def as_dict(self) -> dict:
        return {"ok": True, **dataclasses.asdict(self)}


class Memory:
    """Capture and forget against one :class:`OracleIndex`; ``after_index()`` is called
    after each re-index (the daemon wakes its embedding worker there); ``ready`` is set
    once the index has read the notes (its first reconcile; None: it has)."""

    def __init__(self, index: OracleIndex, after_index: Callable[[], None] | None = None, ready: asyncio.Event | None = None):
        self.index = index
        self.ready = ready
        self.settings = index.settings
        self.after_index = after_index
        self._lock = asyncio.Lock()  # one edit of the notes at a time
        # The state each note was left in by this daemon's last capture (see note_io).
        self._states: dict[str, note_io.NoteState] = {}
        self.places = capture_places.CapturePlaces(self.settings.roam_dir, self.settings.db_path)
        self.created = CreatedNotes(self.settings.roam_dir, self.settings.db_path)
        note_io.prepare_leases()

    def daily_rel(self, day: datetime.date, dailies_dir: str | None = None) -> str:
        name = day.strftime(self.settings.daily_file_format)
        return Path(self.settings.dailies_dir if dailies_dir is None else dailies_dir, name).as_posix()

    async def clean_up(self) -> int:
        """Remove temporary copies an older version left beside the notes, and give a note a
        killed forget left aside its name back (at start)."""
        root = self.settings.roam_dir
        dirs = [root, root / self.settings.dailies_dir, (root / self.settings.capture_inbox).parent]

        def clean() -> int:
            found = list(dict.fromkeys([*dirs, *(root / folder for folder in self.places.folders())]))
            below = [*folders_below(root), *folders_below(root / self.settings.dailies_dir)]  # a daily's own folder
            give_back_left_aside(list(dict.fromkeys([*found, *below])))
            return remove_stale_temp_files(found)

        return await asyncio.to_thread(clean)

    async def memorize(
        self,
        text: str,
        *,
        title: str | None = None,
        tags: tuple[str, ...] = (),
        now: datetime.datetime | None = None,
        source: str | None = None,
        dailies_dir: str | None = None,
        role: str | None = None,
        quiet_title: bool = False,
        task: bool = False,
        unsaved: Collection[str] = (),
    ) -> Captured:
        """Append ``text`` as a new heading to today's daily (or the inbox); index it.
        ``dailies_dir`` (relative to the roam directory) overrides the setting: Emacs
        sends its ``org-roam-dailies-directory``. ``source`` becomes ``:SOURCE:``,
        ``role`` ``:ROLE:``; ``quiet_title``: a text the user did not type (an agent's), its
        title quieted as the oracle's, against the keywords the note it goes to declares
        (:func:`~arcology_oracle.notes.capture.make_capture`); the ``id:`` links of such a
        text, and of the oracle's, to IDs no note has are quieted (until the index has read
        the notes, ``ready``, the IDs it does not know are looked for in the files).
        ``task``: the heading is a task, in the state that note reads as one
        (:func:`~arcology_oracle.notes.todo_keywords.file_task_keyword`). A note the index leaves
        out is written, not indexed, and ``note`` says so; its folder is recorded before
        (Conflict, nothing written, when it cannot be). ``unsaved`` names notes (relative
        to the roam directory) the client's editor holds with unsaved edits: each counts
        as one Emacs holds locked (an Emacs that makes no lock file says so this way);
        they are only compared with the daily and the inbox, never opened."""
        now, root = now or datetime.datetime.now(), self.settings.roam_dir
        if role or quiet_title:  # not the user's typing: a mangled ID would make every export of the daily fail
            text = await unknown_ids_quieted(text, self.index.read, await held_until(self.ready, root, self.index.read))
        made = dict(title=title, tags=tags, now=now, source=source, role=role, quiet_title=quiet_title)
        entry = capture.make_capture(text, **made)
        daily, inbox = self.daily_rel(now.date(), dailies_dir), self.settings.capture_inbox
        held = await asyncio.to_thread(capture_target.unsaved_among, root, (daily, inbox), unsaved) if unsaved else set()
        async with self._lock:
            placed = await asyncio.to_thread(capture_target.place, root, daily, inbox, held, self.settings.exclude_globs)
            rel, note = placed.rel, placed.note
            if placed.left_out:
                await self._record_place(rel)
                left = capture_places.left_out_note(rel, placed.left_out)
                note = f"{note}; {left}" if note else left
            keywords = await asyncio.to_thread(file_todo_keywords, root / rel) if role or quiet_title else ()
            state = await asyncio.to_thread(file_task_keyword, root / rel) if task else None
            if keywords or state:
                entry = capture.make_capture(text, **made, node_id=entry.id, keywords=keywords, task=state)
            title_of_file = now.strftime("%Y-%m-%d") if rel == daily else "Inbox"
            head = capture.new_file_head(title_of_file).encode("utf-8")

            def build(eol: bytes, lead: bytes, real_rel: str) -> bytes:
                return capture.render_capture(entry, rel=real_rel, eol=eol, lead=lead)

            shown = await self._shown(rel) if not placed.left_out else note_io.UNNAMED
            try:
                written = await asyncio.to_thread(
                    note_io.append_note, root, rel, build, head, self._states.pop(rel, None), shown
                )
            except note_io.LeadsOut as exc:
                raise Conflict(f"{exc}: nothing was written", retry=False) from None
            if written.after is not None:
                self._states[rel] = written.after
            if written.created:  # so that forgetting its captures in any order takes it away again
                await asyncio.to_thread(self.created.add, written.real_rel, head, real_rels(root, written.created[1:]))
            # The note is written: whatever the index does now, the capture succeeded (a
            # retry after an error would write it twice). A broken index says so.
            try:
                await self._index_capture(rel, written)
                indexed = await self.index.read(lambda s: s.node(entry.id) is not None)
            except (DatabaseError, StoreError) as exc:
                log.error("a capture was written, but the index could not take it: %s", exc)  # maybe private: unnamed
                broken = f"the index could not take it ({exc}); the note holds it"
                indexed, note = False, f"{note}; {broken}" if note else broken
        if indexed:
            log.info("captured %s into %s:%d%s%s", entry.id, rel, written.line, f" ({note})" if note else "", "" if written.after else " (read whole)")
        else:  # private (tagged so, or its note is), or in a left-out note: neither it nor its note is named
            log.info("captured a heading the index does not hold (private, or in a note it leaves out)")
        return Captured(entry.id, entry.title, rel, written.line, rel != daily, indexed, entry.link, note)

    async def _index_capture(self, rel: str, written: note_io.Appended) -> None:
        """Index what the capture added: only its heading when the file holds nothing but
        the bytes known (and the index held them before), else the whole file."""
        done = False
        if written.after is not None:
            for path in dict.fromkeys([written.real_rel, rel]):
                if await self.index.index_appended(path, written.before, written.added, written.st, written.after.hexdigest):
                    done = True
                    break
        if not done:
            log.debug("indexing the whole note after a capture")
            await self.index.index_paths(list(dict.fromkeys([rel, written.real_rel])))
        if others := await self._other_names(rel, written.st):  # its hard links in the notes
            await self.index.index_paths(others)
        if self.after_index:
            self.after_index()

    async def forget(self, node_id: str, unsaved: Collection[str] = ()) -> dict:
        """Delete the captured heading ``node_id`` from its file and purge it from the
        index. NotFound for an unknown ID and for a heading the index does not hold
        (private) that the daemon did not write, whatever its file's state (locked,
        read-only, open elsewhere): nothing about it is told; Conflict for the user's own heading, a
        capture changed since or copied within its file, a file Emacs holds locked or
        the client's editor holds unsaved (``unsaved``, as :meth:`memorize` takes it), or
        a file that cannot be deleted (its directory is read-only)."""
        if not node_id or not node_id.strip():
            raise BadRequest("id must not be empty")
        root = self.settings.roam_dir
        unknown = NotFound(f"no captured heading with ID {node_id!r}")
        async with self._lock:
            indexed = await self.index.read(lambda s: s.node(node_id) is not None)
            for rel in await self._files_holding(node_id):
                if not indexed:
                    # A heading the index does not hold is looked at only when it is a
                    # capture: else any refusal about its file (locked, read-only, open in
                    # another program) would tell that a private heading, or one in a
                    # left-out folder, has this ID, and name its file.
                    data = await asyncio.to_thread(note_io.read_note, root, rel)
                    if data is None or not holds_capture(data, node_id):
                        continue
                if await asyncio.to_thread(emacs_holds, root / rel):
                    raise Conflict(f"{rel} has unsaved edits in Emacs (it is locked, or auto-saved since); save it and try again", retry=True)
                if unsaved and await asyncio.to_thread(capture_target.unsaved_among, root, (rel,), unsaved):
                    raise Conflict(f"{rel} has unsaved edits in the editor (the request says so); save it and try again", retry=True)

                real: list[str] = []
                # A head another note links to (its file-level ID) is no longer only the daemon's.
                linked = await self.index.read(lambda s: s.linked_from_elsewhere(rel))
                seen, mentioned = (None, False) if linked else await asyncio.to_thread(self._linked_by_user, root, rel, node_id)

                def plan(data: bytes, real_rel: str) -> capture.Removal | None:
                    refuse_copies(data, rel, node_id)
                    # Another name of the file (a hard link) would keep the capture were this one
                    # deleted: the capture is taken out of the file, and the head stays.
                    hard = has_other_names(root / rel)
                    # Changed since the look for the user's links: the head stays when the file would go.
                    mine = not linked and not mentioned and (seen is None or seen == data) and not hard
                    real.append(real_rel)
                    try:
                        removal = capture.plan_forget(data, real_rel, node_id)
                        # All else gone, the head the daemon wrote creating the file goes with it
                        # (created_notes.py: in whatever order the captures are forgotten).
                        head = self.created.head_of(real_rel)
                        if removal is not None and not removal.whole_file and mine and data[: removal.start] + data[
                            removal.end :
                        ] == head:
                            removal = dataclasses.replace(removal, whole_file=True)
                        elif removal is not None and removal.whole_file and not mine and head and data.startswith(head):
                            removal = dataclasses.replace(removal, start=len(head), whole_file=False)  # the head stays
                        elif removal is not None and removal.whole_file and hard:  # (no record of the head)
                            removal = dataclasses.replace(removal, start=heading_start(data, removal.line), whole_file=False)
                        return removal
                    except capture.NotCaptured as exc:
                        if not indexed:
                            raise unknown from None
                        raise Conflict(f"{exc} (tag it private to keep it out of the index)", retry=False) from None
                    except capture.Changed as exc:
                        raise Conflict(str(exc), retry=False) from None

                try:
                    done = await asyncio.to_thread(note_io.remove_from_note, root, rel, plan, await self._shown(rel))
                except note_io.LeadsOut:
                    continue
                if done is None:
                    continue
                removal = done[0]
                self._states.pop(rel, None)
                if removal.whole_file:  # the folders made for it, when empty, and its record
                    await asyncio.to_thread(self.created.forgotten, real[-1])
                note = None
                try:  # the note is changed: whatever the index does now, the forget is done (a retry finds nothing)
                    # Every name the index reads it under (a hard link in the notes holds the same bytes).
                    others = await self.index.read(lambda s: s.files_of_node(node_id))
                    others += await self._other_names(rel, done[2])  # holding the capture or not
                    await self.index.index_paths(list(dict.fromkeys([rel, *others])))
                except (DatabaseError, StoreError) as exc:
                    log.error("a capture was forgotten, but the index could not take it: %s", exc)
                    note = f"the index could not take it ({exc}); it is read again until it can"
                if self.after_index:
                    self.after_index()
                remaining = await self.index.read(lambda s: s.rows_of_node(node_id))
                if indexed:
                    log.info("forgot captured heading %s from %s:%d", node_id, rel, removal.line)
                else:  # private, or in a left-out note: unnamed, as when it was captured
                    log.info("forgot a captured heading the index did not hold (private, or in a note it leaves out)")
                return {"ok": True, "id": node_id, "file": rel, "line": removal.line, "removed_lines": removal.lines,
                        "remaining_rows": remaining, "note": note}  # fmt: skip
            if indexed:
                raise Conflict(f"{node_id} is not a heading captured by arcology-oracle: it is yours to edit", retry=False)
        raise unknown

    async def _files_holding(self, node_id: str) -> list[str]:
        """The file the index places ``node_id`` in, else the notes that hold the ID (a
        private capture, or one in a note the index leaves out, is in no index): see
        :func:`.capture_places.files_holding`."""
        row = await self.index.read(lambda s: s.node(node_id))
        if row:
            return [row["file"]]
        return await asyncio.to_thread(capture_places.files_holding, self.settings, self.places, node_id)

    async def _other_names(self, rel: str, st: os.stat_result) -> list[str]:
        """The other names the index holds the file ``rel`` (stat ``st``) under (:mod:`.other_names`)."""
        if st.st_nlink < 2:
            return []
        indexed = await self.index.read(lambda s: s.file_paths())
        return await asyncio.to_thread(other_names, self.settings.roam_dir, rel, indexed, st)

    async def _shown(self, rel: str) -> str:
        """``rel`` when the index holds that note (it was read public), else
        :data:`.note_io.UNNAMED`: how a write's failure-path log line names it."""
        held = await self.index.read(lambda s: s.file_info([rel]))
        return rel if rel in held else note_io.UNNAMED

    async def _record_place(self, rel: str) -> None:
        """Record the folder of the left-out note ``rel`` (unless a forget looks there
        anyway: the inbox, the configured dailies folder)."""
        folder = Path(rel).parent
        if rel != Path(self.settings.capture_inbox).as_posix() and folder != Path(self.settings.dailies_dir):
            await asyncio.to_thread(self.places.add, folder.as_posix())

    def _linked_by_user(self, root: Path, rel: str, node_id: str) -> tuple[bytes | None, bool]:
        """The note ``rel`` as read now, and whether forgetting ``node_id`` would take
        away a file a capture created whose ``:ID:`` another note links to (private,
        excluded or not yet indexed ones too: :mod:`.id_mentions`; read only then), or
        may (the note cannot be read now: unsure, the head stays)."""
        real_rel = real_rels(root, [root / rel])[0]
        head = self.created.head_of(real_rel)
        if head is None:
            return None, False
        data = note_io.read_note(root, rel)
        if data is None:  # not to be read now (held by another program): the head stays, unsure
            return None, True
        try:
            removal = capture.plan_forget(data, real_rel, node_id)
        except (capture.NotCaptured, capture.Changed):
            return data, False  # refused under the lease
        goes = removal is not None and (removal.whole_file or data[: removal.start] + data[removal.end :] == head)
        return data, goes and mentioned_elsewhere(root, rel, head_ids(head))


def real_rels(root: Path, paths: Collection[Path]) -> list[str]:
    """``paths`` (below ``root``) as real paths relative to the real ``root``."""
    real_root = os.path.realpath(root)
    return [Path(os.path.relpath(os.path.realpath(p), real_root)).as_posix() for p in paths]


def has_other_names(path: Path) -> bool:
    """Whether the file ``path`` names has another name too (a hard link); True when
    that cannot be told (then nothing is deleted)."""
    try:
        return os.stat(path).st_nlink > 1
    except OSError:
        return True


def heading_start(data: bytes, line: int) -> int:
    """The offset in the note ``data`` of its 1-based ``line`` (a BOM before the first)."""
    eol = capture.file_eol(data)
    bom = len(capture.BOM) if data.startswith(capture.BOM) else 0
    return bom + sum(map(len, capture.split_keeping_ends(data[bom:], eol)[: line - 1]))


def holds_capture(data: bytes, node_id: str) -> bool:
    """Whether the note's bytes ``data`` hold the heading ``node_id`` marked as captured,
    its lines as Emacs reads them (as :func:`~.capture.plan_forget` does: not
    str.splitlines, which breaks at U+2028 and U+0085 too, where a private note's text
    could pass for a capture's heading)."""
    eol = capture.file_eol(data)
    lines = [line.removesuffix(eol).decode("utf-8", "replace")
             for line in capture.split_keeping_ends(data.removeprefix(capture.BOM), eol)]  # fmt: skip
    found = capture.find_heading(lines, node_id)
    return found is not None and capture.is_captured(capture.heading_properties(lines, found[0]))


def refuse_copies(data: bytes, rel: str, node_id: str) -> None:
    """Conflict when ``node_id`` is the ID of more than one heading of the note ``rel``
    (bytes ``data``) and one of them says arcology-oracle captured it: the user copied
    the capture, and the copy is byte for byte the capture, so which one is the daemon's
    cannot be told. Headings the daemon did not write are left to the forget's own
    answer (a private one must stay unknown)."""
    if data.count(node_id.encode("utf-8", "surrogateescape")) < 2:
        return
    eol = capture.file_eol(data)
    lines = [line.removesuffix(eol).decode("utf-8", "surrogateescape")
             for line in capture.split_keeping_ends(data.removeprefix(capture.BOM), eol)]  # fmt: skip
    drawers, offset = [], 0
    while (found := capture.find_heading(lines[offset:], node_id)) is not None:
        drawers.append(capture.heading_properties(lines, offset + found[0]))
        offset += found[0] + 1
    if len(drawers) > 1 and any(d.get(capture.CAPTURED_BY) == capture.CAPTURED_BY_VALUE for d in drawers):
        raise Conflict(f"the captured heading {node_id} is in {rel} {len(drawers)} times (it was copied), so which "
                       "one arcology-oracle wrote cannot be told: remove it by hand", retry=False)  # fmt: skip
