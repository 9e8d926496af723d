"""The extended attributes of a file an import writes (:mod:`.writing`). An update
renames a new file over the old one, which would lose them. Among them are the file's
POSIX ACL (``system.posix_acl_access``: say an entry keeping one user of the file's
group out of a private chat, who could read it again once it went) and what a desktop or
sync tool keeps there (``user.xdg.tags``, ``user.xdg.origin.url``). They are given to the
new version before it takes the name, or the file is skipped, saying so. A new file is
made in the import's staging folder, so it took the roam directory's default ACL, not
its own folder's: it is given what a file made in its folder gets instead."""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

# listxattr answers these where a file system keeps no extended attributes at all.
_NONE_KEPT = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)
_ACCESS_ACL = "system.posix_acl_access"
_DEFAULT_ACL = "system.posix_acl_default"
# What a new file is asked for (``open(path, "w")``): a default ACL is masked by it.
_NEW_FILE_MODE = 0o666
# The tags of an ACL's entries whose permissions a new file's mode masks (acl(5)).
_USER_OBJ, _GROUP_OBJ, _MASK, _OTHER = 0x01, 0x04, 0x10, 0x20


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


def as_made_in(tmp: int, folder: int, mode: int) -> str | None:
    """Give the new file open as ``tmp`` the permissions a file made in the folder open as
    ``folder`` gets: that folder's default ACL, masked by the bits a new file is asked for
    as the kernel masks it (the umask is then not used), or, when the folder has none, the
    bits ``mode`` and no ACL (one the staging folder gave it is taken away). The reason to
    skip when that cannot be done."""
    try:
        default = os.getxattr(folder, _DEFAULT_ACL)
    except OSError as exc:
        if exc.errno not in (errno.ENODATA, *_NONE_KEPT):
            return f"its folder's default ACL cannot be read ({exc.strerror or exc})"
        default = None
    try:
        if default is None:
            try:
                os.removexattr(tmp, _ACCESS_ACL)
            except OSError as exc:
                if exc.errno not in (errno.ENODATA, *_NONE_KEPT):
                    raise
            os.fchmod(tmp, mode)
        else:
            os.setxattr(tmp, _ACCESS_ACL, _masked(default, _NEW_FILE_MODE))
    except OSError as exc:
        return f"the permissions of its folder cannot be given to it ({exc.strerror or exc})"
    return None


def _masked(default: bytes, mode: int) -> bytes:
    """The access ACL a new file asked for with ``mode`` gets from the folder's ``default``
    ACL (``system.posix_acl_default``: version, then 8-byte entries of tag, permissions and
    id): the owner's, the others' and the group class's permissions (the mask's, or the
    owning group's without a mask) masked by the mode's."""
    count = (len(default) - 4) // 8
    entries = [list(struct.unpack_from("<HHI", default, 4 + 8 * i)) for i in range(count)]
    group_class = _MASK if any(tag == _MASK for tag, _, _ in entries) else _GROUP_OBJ
    shift = {_USER_OBJ: 6, group_class: 3, _OTHER: 0}
    for entry in entries:
        if entry[0] in shift:
            entry[1] &= (mode >> shift[entry[0]]) & 0o7
    return default[:4] + b"".join(struct.pack("<HHI", *entry) for entry in entries)
