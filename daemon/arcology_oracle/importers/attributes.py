"""The extended attributes of a file an import updates (:mod:`.writing`): an update
renames a new file over the old one, which would lose them. Among them are the file's
POSIX ACL (``system.posix_acl_access``: say an entry keeping one user of the file's
group out of a private chat, who could read it again once it went) and what a desktop or
sync tool keeps there (``user.xdg.tags``, ``user.xdg.origin.url``). They are given to the
new version before it takes the name, or the file is skipped, saying so."""

from __future__ import annotations

import errno
import os
from pathlib import Path

# listxattr answers these where a file system keeps no extended attributes at all.
_NONE_KEPT = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)
_ACCESS_ACL = "system.posix_acl_access"


def keep_attributes(tmp: int, path: Path) -> str | None:
    """Give the staged file open as ``tmp`` every extended attribute of the regular file
    ``path`` it replaces (read without following a link), after its permission bits
    (setting an ACL sets the bits it implies, the old file's); one it holds already with
    the same value (a security label the folder gives every file) is left as it is. An
    ACL the staged file was given by its folder's default ACL and ``path`` has not is
    taken away: it may let in someone the user keeps out of this file. The reason to skip
    when one cannot be read, given or taken away."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as exc:
        return None if exc.errno in _NONE_KEPT else f"its extended attributes cannot be read ({exc.strerror or exc})"
    if _ACCESS_ACL not in names:
        try:
            os.removexattr(tmp, _ACCESS_ACL)
        except OSError as exc:
            if exc.errno not in (errno.ENODATA, *_NONE_KEPT):
                return f"its new version has an ACL it has not, which cannot be taken away ({exc.strerror or exc})"
    for name in names:
        try:
            value = os.getxattr(path, name, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.ENODATA:  # removed meanwhile
                continue
            return f"its extended attribute {name} cannot be read ({exc.strerror or exc})"
        try:
            if os.getxattr(tmp, name) == value:
                continue
        except OSError:
            pass
        try:
            os.setxattr(tmp, name, value)
        except OSError as exc:
            return (f"its extended attribute {name} (an ACL, a label or a tag) cannot be given to its new version "
                    f"({exc.strerror or exc}): replaced, it would lose it")  # fmt: skip
    return None
