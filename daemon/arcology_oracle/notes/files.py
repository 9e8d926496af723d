"""Find the org files below the roam directory, and keep paths inside it.

Which files count (:func:`is_indexable_path`, shared by the walker and the watcher):

* the name ends in ``.org`` (so ``*.org.gpg``, ``*.org~`` and ``#*.org#`` are out);
* the path is UTF-8: the index, its API and Emacs keep paths as text (a walk names in
  its log each file it leaves out for that, which would else fail, with a traceback,
  at each reconcile);
* no path component starts with ``.`` (hidden directories such as ``.git``, hidden
  files, and Emacs lock files ``.#foo.org``);
* no exclude glob matches. Globs are matched with :func:`fnmatch.fnmatchcase`
  (case-sensitive) against the POSIX path relative to the root, where ``*`` also matches
  ``/``. Also: a leading ``**/`` may match no directory at all (``**/draft.org`` matches
  ``draft.org``); a glob ending in ``/`` matches everything below that directory
  (``archive/``); a glob without ``/`` is also matched against each single path
  component (``drafts`` excludes any directory named ``drafts``, ``*.sync-conflict*``
  any such file at any depth).

Symlinks are followed only when their target resolves inside the root, and a file reached
through one counts only when its real path (relative to the root) is not excluded either:
``exclude_globs = ["attic/**"]`` also keeps out ``notes/old.org -> ../attic/old.org`` and
every file below a link to ``attic``. A note is one file whatever its names: a hard link
to an excluded ``.org`` file (the same device and inode) is excluded too, under every
name. Every real file is yielded once: under its real path when that is walked, else
under the first symlinked path in sorted order. Cycles cannot
loop: a symlinked directory whose target was already walked is not walked again.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

# Entries a walk lists, and files it yields, between two calls of its ``pause`` (:func:`iter_org_files`).
PAUSE_EVERY = 32


def is_indexable_path(rel: str, exclude_globs: Sequence[str] = ()) -> bool:
    """Whether the root-relative POSIX path ``rel`` names an org file to index."""
    parts = PurePosixPath(rel).parts
    if not parts or not rel.endswith(".org") or rel.startswith("/") or not is_utf8(rel):
        return False
    name = parts[-1]
    if name == ".org" or ".." in parts or (name.startswith("#") and name.endswith("#")):
        return False
    return not is_private_path(rel, exclude_globs)


def is_utf8(text: str) -> bool:
    """Whether ``text`` (a name as the OS gave it, undecodable bytes as surrogates) is UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(text: str) -> str:
    """``text`` with the bytes that are not UTF-8 as ``\\xNN`` (for a message)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_private_path(rel: str, exclude_globs: Sequence[str] = ()) -> bool:
    """Whether the root-relative POSIX path ``rel`` is private by where it is: in a hidden
    folder or a hidden file (a part starting with ``.``: a sync tool's old versions in
    ``.stversions``, ``.git``), or matched by ``exclude_globs``. The index never reads it,
    and text a client sends from it is never stored, returned or put in a prompt
    (:mod:`arcology_oracle.answers.private_places`): one rule for both."""
    if any(p.startswith(".") for p in PurePosixPath(rel).parts):
        return True
    return is_excluded(rel, exclude_globs)


_ENCRYPTED_RE = re.compile(r"\.(gpg|age)(~|\.~\d+~)?$")  # as epa-file-name-regexp (and age.el), with backups


def is_encrypted_name(path: str) -> bool:
    """Whether ``path`` names a note Emacs keeps encrypted (epa-file's ``.gpg``, age.el's
    ``.age``): it shows it decrypted, its bytes on disk are ciphertext."""
    return _ENCRYPTED_RE.search(path) is not None


def plain_name(path: str) -> str:
    """The name of the note an encrypted ``path`` holds (``chat.org`` of ``chat.org.gpg``
    or of its backup ``chat.org.gpg~``); ``path`` itself when it is not encrypted."""
    return _ENCRYPTED_RE.sub("", path)


def unread_reason(rel: str, exclude_globs: Sequence[str] = ()) -> str | None:
    """Why the index never reads the org file at root-relative ``rel`` (for a 404 that
    would else say only that nothing is indexed there), or None when it may."""
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or ".." in parts:  # (".." is no hidden folder: it was said to be one)
        return "it is not inside the notes directory"
    if any(p.startswith(".") for p in parts):
        return "hidden folders and files are not read"
    if is_excluded(rel, exclude_globs):
        return "it matches exclude_globs"
    return None


def is_excluded(rel: str, exclude_globs: Sequence[str]) -> bool:
    """Whether an exclude glob matches the root-relative POSIX path ``rel``."""
    if not exclude_globs:
        return False
    parts = PurePosixPath(rel).parts
    return any(_glob_matches(g, rel, parts) for g in exclude_globs)


def may_have_excluded_names(path: Path, exclude_globs: Sequence[str] = ()) -> bool:
    """Whether the file at ``path`` may be excluded under another of its names: it has
    other names (hard links) and ``exclude_globs`` is set. Only a walk
    (:func:`iter_org_files`) tells; False for a file of one name, or with no globs."""
    try:
        return bool(exclude_globs) and os.stat(path).st_nlink > 1
    except (OSError, ValueError):
        return False


def is_excluded_file(root: Path, path: Path, exclude_globs: Sequence[str] = ()) -> bool:
    """Whether the file at ``path`` (below ``root``) is excluded under another of its
    names, a hard link ``exclude_globs`` match (as :func:`iter_org_files` judges it). A
    walk of the notes, only for a file with several names."""
    if not may_have_excluded_names(path, exclude_globs):
        return False
    excluded: set[tuple[int, int]] = set()
    for _ in iter_org_files(root, exclude_globs, excluded=excluded):
        pass
    return _identity(str(path)) in excluded


def iter_org_files(
    root: Path, exclude_globs: Sequence[str] = (), aliases: dict[str, str] | None = None,
    left_out: set[str] | None = None, excluded: set[tuple[int, int]] | None = None,
    pause: Callable[[], None] | None = None,
) -> Iterator[tuple[str, Path]]:
    """Yield ``(relative POSIX path, absolute path)`` for each org file below ``root``.

    Sorted by relative path. The absolute path is the root's resolved path joined with
    the relative path. Unreadable directories are skipped, with a warning. ``aliases``,
    when given, is filled with the real relative path of each file yielded under another
    (a symlinked) path, mapped to that path: edits show up under the real path.
    ``left_out``, when given, gets the paths of the links to org files left out for where
    they lead (their real path excluded, or outside the root): names that say what an
    excluded note is, which the daemon's log must not name either; and the names of the
    files that are also an excluded file (a hard link). ``excluded``, when given, gets
    the device and inode of each excluded file with other names. ``pause``, when given,
    is called every :data:`PAUSE_EVERY` entries a directory lists and files yielded, and
    may wait (the start's reconcile gives way to queries: :mod:`arcology_oracle.index.give_way`).
    """
    base = root.resolve()
    prefix = str(base).rstrip(os.sep) + os.sep
    found: dict[str, str] = {}  # real path -> rel path
    walked: set[str] = set()  # real paths of walked directories
    links: list[tuple[str, str]] = []  # (rel path, real target) of symlinks, found in order
    inodes: dict[str, int] = {}  # real path -> inode as its directory lists it (no stat)
    hard: dict[int, set[tuple[int, int]]] = {}  # listed inode -> (device, inode) of excluded files with other names

    def real_excluded(real: str, rel: str) -> bool:
        """Whether the real path (below the root) of the file reached as ``rel`` is excluded."""
        real_rel = real.removeprefix(prefix).replace(os.sep, "/")
        return real_rel != rel and is_excluded(real_rel, exclude_globs)

    def walk(directory: str, rel_dir: str) -> None:
        real = os.path.realpath(directory)
        if real in walked:
            return
        walked.add(real)
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            # Say so: the notes in it are left out (or dropped from the index) otherwise silently.
            log.warning("cannot list %s: %s; the notes in it are not indexed", directory, exc.strerror or exc)
            return
        for i, entry in enumerate(entries):
            if pause is not None and not i % PAUSE_EVERY:
                pause()
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if _inside(target, str(base)) and os.path.exists(target):
                        links.append((rel, target))
                    elif left_out is not None and is_indexable_path(rel, exclude_globs):
                        left_out.add(rel)
                elif entry.is_dir():
                    walk(entry.path, rel)
                elif not is_utf8(rel) and is_indexable_path(shown := shown_name(rel), exclude_globs) and entry.is_file():
                    log.warning("%s: not indexed: its name is not UTF-8 (rename it to index it)", shown)
                elif entry.is_file() and is_indexable_path(rel, exclude_globs):
                    # Not a symlink, in a directory whose real path is known: its own real
                    # path without os.path.realpath, whose lstat of every component of
                    # every file was 80% of a walk (4 of 5 s at 119,000 files).
                    real_file = os.path.join(real, entry.name)
                    if not real_excluded(real_file, rel):
                        found.setdefault(real_file, rel)
                        inodes[real_file] = entry.inode()
                elif exclude_globs and rel.endswith(".org") and entry.is_file() and is_excluded(rel, exclude_globs):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_nlink > 1:  # an excluded note: its other names are excluded too
                        for listed in {entry.inode(), st.st_ino}:
                            hard.setdefault(listed, set()).add((st.st_dev, st.st_ino))
            except OSError:
                continue

    walk(str(base), "")
    # Symlinks after the real tree, so real paths win; links found while walking a linked
    # directory are appended and handled in turn.
    i = 0
    while i < len(links):
        rel, target = links[i]
        i += 1
        if os.path.isdir(target):
            walk(target, rel)
        elif target not in found and is_indexable_path(rel, exclude_globs) and not real_excluded(target, rel):
            found[target] = rel
        elif left_out is not None and is_indexable_path(rel, exclude_globs) and real_excluded(target, rel):
            left_out.add(rel)
    if hard:  # a name of an excluded file: a stat only of the files its directory lists so
        identities = set().union(*hard.values())
        for real, rel in list(found.items()):
            if (real not in inodes or inodes[real] in hard) and _identity(real) in identities:
                del found[real]
                if left_out is not None:
                    left_out.add(rel)
        if excluded is not None:
            excluded.update(identities)
    if aliases is not None:
        for real, rel in found.items():
            real_rel = real.removeprefix(prefix).replace(os.sep, "/")
            if real_rel != rel:
                aliases[real_rel] = rel
    for i, rel in enumerate(sorted(found.values())):
        if pause is not None and not i % PAUSE_EVERY:
            pause()
        yield rel, base / rel


def notes_dir_problem(root: Path) -> str | None:
    """What keeps ``root`` from being read as the notes directory, in words, or None: it
    does not exist, is not a directory, or cannot be listed (its permissions; a walk of
    it found no notes, and a reconcile then forgot every note the index held)."""
    try:
        os.scandir(root).close()
    except FileNotFoundError:
        what = "does not exist"
    except NotADirectoryError:
        what = "is not a directory"
    except OSError as exc:
        what = "is not a directory" if root.exists() and not root.is_dir() else f"cannot be listed ({exc.strerror or exc})"
    else:
        return None
    return f"the notes directory {root} {what}"


def resolve_inside(root: Path, rel: str) -> Path:
    """The absolute path of ``rel`` below ``root``.

    Raises ``ValueError`` when ``rel`` is empty, absolute, contains ``..`` or a NUL, or
    resolves (through symlinks) to a place outside the root. The file need not exist.
    """
    if not rel or "\x00" in rel:
        raise ValueError("empty or invalid path")
    pure = PurePosixPath(rel.replace("\\", "/"))
    if pure.is_absolute() or Path(rel).is_absolute() or Path(rel).drive or ".." in pure.parts:
        raise ValueError(f"path escapes the notes directory: {rel!r}")
    base = root.resolve()
    candidate = base.joinpath(*pure.parts)
    if not _inside(os.path.realpath(candidate), str(base)):
        raise ValueError(f"path escapes the notes directory: {rel!r}")
    return candidate


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def inside_root(root: Path, path: Path) -> bool:
    """Whether ``path``, its links resolved, is below ``root`` (False when it cannot be resolved)."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
    except OSError:
        return False


def through_symlink(root: Path, rel: str) -> bool:
    """Whether some component of ``rel`` below ``root`` is a symlink."""
    return os.path.realpath(root / rel) != os.path.join(os.path.realpath(root), *Path(rel).parts)


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _glob_matches(glob: str, rel: str, parts: tuple[str, ...]) -> bool:
    if glob.endswith("/"):
        glob += "*"
    if fnmatchcase(rel, glob):
        return True
    if glob.startswith("**/") and fnmatchcase(rel, glob[3:]):
        return True
    if "/" not in glob:
        return any(fnmatchcase(p, glob) for p in parts)
    return False
