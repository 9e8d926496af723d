"""Writing an import's org files: staged first, renamed into place at the end, never over
the user's edits.

:class:`ImportBatch` takes the rendered files of an export one at a time
(:meth:`~ImportBatch.stage`): each is compared with the file of the same ``:ID:``
anywhere below the roam directory (found by reading the file-level drawers there once,
hidden and excluded folders included; of two files with one ID, the one below the
target first), and only a new or changed file is written, to a temporary file in a
hidden staging directory of the roam directory (which neither the walker nor the
watcher reads). Nothing under the
target changes until :meth:`~ImportBatch.commit`, which the command calls only after the
whole export was read and rendered: an export that turns out malformed half-way imports
nothing (:meth:`~ImportBatch.discard` removes the files it staged, and the staging directory
unless something else was put there meanwhile). It holds copies of
chats, private ones too: the import holds an exclusive ``flock`` on it while it runs (the
kernel releases it however the import ends), and one no running import holds, left by a
killed import, is removed at the daemon's next start once ten minutes old and by the next
import after an hour (:mod:`.staging`). Commit renames each
staged file over its target (same file system, so each file is whole or absent), keeping
the old file's permission bits, owner and group, and its extended attributes (its ACL
among them, :mod:`.attributes`): swapped with it in one step, and
swapped back when the file swapped out is not the one checked (a sync tool renamed its
version over it just before), :mod:`.placing`. A new file, and each folder made for it,
gets the owner and group of the folder it is made in, where the import can give them
(:mod:`.owners`), and the permissions a file made there gets (the folder's default ACL,
or the umask's bits); a folder made for a file not placed is removed again.

Skipped, with the reason in :attr:`ImportSummary.skipped`: a file edited since it was
imported (its ``:IMPORT_HASH:`` no longer matches: the user's edits win; delete the file
to import it again), a file of the chosen name that is not this conversation's, a file
Emacs holds with unsaved edits (its lock, or an auto-save newer than the file), and a
file that changed between staging and commit (its size, time, inode or bytes, checked
again just before the rename; a new file is linked into place only if no file of its
name appeared meanwhile). Skipped too,
since a rename over them would change what the user has: a symlink (it would become a
file and its target keep the old text), a file with other hard links (they would keep
the old text), a read-only file, anything but a regular file, a path outside the roam
directory, and a file whose owner and group, or extended attributes, the import cannot
give its replacement (an update otherwise keeps them, as it keeps the permission bits). A file that cannot be
written is skipped with the system's reason.
Skipped as well, rather than written again where the index would read it: a file the
user moved to a place the index leaves out (a hidden folder, or one ``exclude_globs``
matches), unless it is below the target and the target is such a place too; and a new
file whose name, with ``.gpg`` or ``.age``, an encrypted file below the roam directory
has (the user encrypted the chat: its ID cannot be read, its plain text must not come back).

An update keeps every tag of the file's ``#+filetags`` (those of the import come after
them): importing again without ``--tag private`` never makes a private chat public.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..notes.disk import emacs_holds, umask
from ..notes.files import is_indexable_path
from ..notes.org_syntax import split_lines
from ..notes.privacy import file_tags
from .attributes import as_made_in, keep_attributes
from .existing import Existing
from .owners import folder_owner, give, keep_owner, make_folders, remove_folders
from .placing import create, identity, swap_in
from .render import RenderedFile, begins_alike, continues, file_id_of, unchanged_since_import, with_tags
from .staging import STAGING_PREFIX, remove_batch, remove_stale_staging

class DuplicateConversation(ValueError):
    """Two conversations of one export map to the same file (the same id)."""


@dataclass
class ImportSummary:
    """What an import did, by root-relative path."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the user should know besides


@dataclass(slots=True)
class _Staged:
    tmp: Path
    before: os.stat_result | None
    sha: bytes | None  # SHA-256 of the file's bytes when it was staged
    inode: tuple[int, int]  # the staged file's device and inode


class _NotReplaceable(Exception):
    """The file must not be replaced by an import; the message says why."""


class ImportBatch:
    """The files of one import, staged below ``roam_dir`` and written into ``target``
    (a directory inside ``roam_dir``) by :meth:`commit`; ``exclude_globs`` are the
    settings' (the places the index leaves out)."""

    def __init__(self, roam_dir: Path, target: Path, exclude_globs: tuple[str, ...] = ()):
        self.roam = roam_dir.resolve()
        self.target = target
        self.exclude_globs = exclude_globs
        remove_stale_staging(self.roam)
        found = Existing(self.roam, target)
        self.existing, self.encrypted = found.ids, found.encrypted
        self.summary = ImportSummary()
        self._staging: Path | None = None
        self._staging_lock: int | None = None  # the descriptor holding the staging directory's flock
        self._pending: dict[Path, _Staged] = {}
        self._made: list[tuple[Path, tuple[int, int, int, int]]] = []  # each file staged, and its identity as written
        self._seen: set[str] = set()

    def rel(self, path: Path) -> str:
        """``path`` as the summary names it: relative to the roam directory (a symlink
        by its own name, not its target's); absolute when it is outside."""
        try:
            return (path.parent.resolve() / path.name).relative_to(self.roam).as_posix()
        except ValueError:
            return path.as_posix()

    def holds_another(self, rendered: RenderedFile) -> str | None:
        """The path (as the summary names it) of the file of ``rendered``'s ID when it holds
        another conversation than ``rendered``: for a file still as imported, one that
        :func:`~.render.continues` does not continue (writing over it would lose turns);
        for a file edited since, one that does not begin alike. None otherwise (no such
        file, or one that cannot be read: :meth:`stage` says why)."""
        if (found := self.earlier(rendered)) is None:
            return None
        path, old = found
        same = continues(old, rendered.text) if unchanged_since_import(old) else begins_alike(old, rendered.text)
        return None if same else self.rel(path)

    def earlier(self, rendered: RenderedFile) -> tuple[Path, str] | None:
        """The file of ``rendered``'s ID and its text (as :meth:`stage` finds it), None when
        there is none or it cannot be read."""
        path = self.existing.get(rendered.id) or self.target / rendered.filename
        try:
            found = _read_plain(path)
        except _NotReplaceable:
            return None
        old = found[1].decode("utf-8", "surrogateescape") if found else None
        return (path, old) if old is not None and file_id_of(old) == rendered.id else None

    def stage(self, rendered: RenderedFile) -> None:
        """Compare ``rendered`` with its file on disk and stage it when it is new or changed."""
        if rendered.id in self._seen:
            raise DuplicateConversation(f"two conversations have the same id (file ID {rendered.id})")
        self._seen.add(rendered.id)
        default = self.target / rendered.filename
        path = self.existing.get(rendered.id) or default
        rel = self.rel(path)
        if os.path.isabs(rel):
            self.summary.skipped[rel] = "it is outside the notes directory (a link leads out)"
            return
        if path != default and self._left_out(path) and not (_below(path, self.target) and self._left_out(default)):
            self.summary.skipped[rel] = ("it is in a place the index leaves out (a hidden folder or exclude_globs): "
                                         "not updated there, and not imported again elsewhere (move it back to update it)")  # fmt: skip
            return
        try:
            found = _read_plain(path)
        except _NotReplaceable as exc:
            self.summary.skipped[rel] = str(exc)
            return
        before, data = found if found else (None, None)
        if data is None and (copy := self.encrypted.get(rendered.filename)) is not None:
            self.summary.skipped[rel] = (f"you encrypted it ({self.rel(copy)}): not imported again in plain text "
                                         "(delete the encrypted copy to import it again)")  # fmt: skip
            return
        if data is not None:
            old = data.decode("utf-8", "surrogateescape")
            rendered = with_tags(rendered, file_tags(split_lines(old)))  # wherever they stand, as Org reads them
            if old == rendered.text:
                self.summary.unchanged.append(rel)
                return
            if reason := _not_replaceable(path, before):
                self.summary.skipped[rel] = reason
                return
            if file_id_of(old) != rendered.id:
                self.summary.skipped[rel] = "a file of that name holds another note"
                return
            if not unchanged_since_import(old):
                self.summary.skipped[rel] = "edited since it was imported (your edits stay; delete the file to import it again)"
                return
        if self._staging is None:
            self._staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.roam))
            # Held until the import ends, so no daemon's start removes the directory (which
            # removes none changed in the last ten minutes: this one is new until it is locked).
            self._staging_lock = os.open(self._staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            with contextlib.suppress(OSError):  # a file system without locks: only its age protects it
                fcntl.flock(self._staging_lock, fcntl.LOCK_EX)
        tmp = self._staging / f"{len(self._made)}.tmp"
        # Made here (no name already there followed or emptied), and known as written (its
        # inode, size and time): :meth:`discard` removes only the files the batch wrote.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        made = os.fstat(fd)
        try:
            with open(fd, "wb") as fh:
                fh.write(rendered.text.encode("utf-8", "surrogateescape"))
                fh.flush()
                # On disk before it is renamed into place: after a power loss, a note is the
                # old one or the new one, never an empty file (some file systems order the
                # rename before the data).
                os.fsync(fh.fileno())
                st = os.fstat(fh.fileno())
        except BaseException:  # (a disk full): the file made goes, if its name still leads to it
            with contextlib.suppress(OSError):
                os.path.samestat(os.lstat(tmp), made) and os.unlink(tmp)
            raise
        self._made.append((tmp, identity(st)))
        self._pending[path] = _Staged(tmp, before, None if data is None else _sha(data), (st.st_dev, st.st_ino))

    def commit(self) -> ImportSummary:
        """Rename every staged file into place (see the module docstring); return the summary."""
        try:
            new_mode = 0o666 & ~umask()
            for path, staged in self._pending.items():
                rel = self.rel(path)
                try:
                    skipped = _put_in_place(path, staged, new_mode, self.roam)
                except OSError as exc:
                    skipped = f"cannot write it: {exc.strerror or exc}"
                if skipped:
                    self.summary.skipped[rel] = skipped
                else:
                    (self.summary.updated if staged.before else self.summary.added).append(rel)
        finally:
            self.discard()
        return self.summary

    def _left_out(self, path: Path) -> bool:
        """Whether the index leaves ``path`` out: hidden, or matched by ``exclude_globs``
        (by its name, or reached through a symlink by its real one, as the index)."""
        rel = self.rel(path)
        try:
            real = Path(os.path.realpath(path)).relative_to(self.roam).as_posix()
        except ValueError:
            real = rel
        return not (is_indexable_path(rel, self.exclude_globs) and is_indexable_path(real, self.exclude_globs))

    def discard(self) -> None:
        """Forget everything staged (nothing under the target was touched): the files the
        batch wrote go, and its staging folder unless it holds anything else
        (:func:`.staging.remove_batch`)."""
        if self._staging is not None:
            remove_batch(self._staging, self._made)
            self._staging = None
            self._made.clear()
        if self._staging_lock is not None:
            os.close(self._staging_lock)
            self._staging_lock = None
        self._pending.clear()


def _below(path: Path, directory: Path) -> bool:
    """Whether ``path`` is inside ``directory`` (their folders resolved)."""
    try:
        path.parent.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


def _put_in_place(path: Path, staged: _Staged, new_mode: int, roam: Path) -> str | None:
    """Move ``staged`` to ``path`` unless the file there is no longer the one staged
    against (checked last, just before the rename); the reason when it is skipped. Its
    owner and permission bits are given, and a copy read, through a descriptor of the
    staged file itself (:func:`_open_staged`), never by a name that may lead elsewhere."""
    if emacs_holds(path):
        return "Emacs has unsaved edits of it (save them, then import again)"
    fd = _open_staged(staged)
    if fd is None:
        return "its staged copy was moved while importing (import again)"
    try:
        if staged.before is None:
            return _create_new(path, staged.tmp, fd, new_mode, roam)
        os.fchmod(fd, staged.before.st_mode & 0o7777)
        if reason := keep_owner(fd, staged.before):
            return reason
        try:
            found = _read_plain(path)
        except _NotReplaceable as exc:
            return str(exc)
        if found and (reason := _not_replaceable(path, found[0])):
            return reason
        if found is None or identity(found[0]) != identity(staged.before) or _sha(found[1]) != staged.sha:
            return "it changed while importing (import again)"
        if reason := keep_attributes(fd, path):
            return reason
        return swap_in(path, staged.tmp, found[0])
    finally:
        os.close(fd)


def _open_staged(staged: _Staged) -> int | None:
    """A descriptor of the file staged, opened without following a link; None when its
    name leads to another file now. The staging folder is root's in an import run as
    root, but stands in the notes folder, where whoever may write the notes can rename it
    and put a symlink in its place: root must not change the owner or the permission
    bits of (or copy into the notes) a file the staged name then leads to."""
    try:
        fd = os.open(staged.tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) == staged.inode:
        return fd
    os.close(fd)
    return None


def _create_new(path: Path, tmp: Path, fd: int, mode: int, roam: Path) -> str | None:
    """Put the new file ``tmp`` (open as ``fd``) at ``path`` with the permissions a file
    made in its folder gets (:func:`.attributes.as_made_in`: the folder's default ACL, or
    the bits ``mode``) and the owner and group of the folder it goes in, making the folders it
    needs (:mod:`.owners`); those are removed again when the file is not placed. The
    reason when it is skipped, as when the folder, opened, is not in the resolved roam
    directory ``roam`` (a folder of the path swapped for a symlink leading out)."""
    owner = folder_owner(path.parent)
    made, folder = make_folders(path.parent, owner)
    try:
        if not _below(Path(os.path.realpath(path.parent)) / "x", roam) or not _is_open(folder, path.parent):
            reason = "its folder leads out of the notes directory now (a symlink put in its place)"
        else:
            reason = as_made_in(fd, folder, mode)
            if not reason:
                give(fd, owner)
                reason = create(path, tmp, fd, owner, folder)
    except BaseException:
        remove_folders(made)
        raise
    finally:
        os.close(folder)
    if reason:
        remove_folders(made)
    return reason


def _is_open(fd: int, directory: Path) -> bool:
    """Whether ``directory``'s name leads to the folder open as ``fd``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(directory))
    except OSError:
        return False


def _read_plain(path: Path) -> tuple[os.stat_result, bytes] | None:
    """The stat and bytes of the regular file at ``path`` (a symlink is not followed),
    None when there is none; :class:`_NotReplaceable` for a symlink, anything but a
    regular file, and a file that cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _NotReplaceable("it is a symbolic link (an import would put a file in its place and leave "
                                  "the file it leads to as it was): import into the folder it leads to") from None
        raise _NotReplaceable(f"it cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotReplaceable("it is not a regular file")
        parts, offset = [], 0
        while part := os.pread(fd, 1 << 20, offset):
            parts.append(part)
            offset += len(part)
        return st, b"".join(parts)
    finally:
        os.close(fd)


def _not_replaceable(path: Path, st: os.stat_result) -> str | None:
    """Why the regular file ``path`` (stat ``st``) must not be renamed over, if so."""
    if st.st_nlink > 1:
        return (f"it has {st.st_nlink} hard links: an import would replace it under this name only, and the other "
                "names would keep the old text")  # fmt: skip
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
        return "it is read-only (no write permission): not replaced"
    return None


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()
