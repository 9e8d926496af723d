"""The paths a request names, relative to the roam directory, as the request models
(:mod:`.schemas`) take them: :data:`RelPath` any note's or folder's, :data:`NewFolder` a
folder the daemon may create (``dailies_dir``), whose name is held to more."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from ..notes.note_ids import VCS_FOLDERS


def rel_path(value: str) -> str:
    """A path relative to the roam dir, normalised; absolute paths and ``..`` are refused."""
    parts = value.replace("\\", "/").split("/")
    if not value.strip() or value.startswith(("/", "~")) or ".." in parts or "\x00" in value:
        raise ValueError("must be a path relative to the roam directory, without '..'")
    return "/".join(p for p in parts if p not in ("", "."))


def _no_control(value: str) -> str:
    """A name the daemon may create (a folder): no control characters (newline, tab, ESC,
    DEL, C1), which no note name needs and which would split or forge a log line."""
    if any(c < " " or "\x7f" <= c <= "\x9f" for c in value):
        raise ValueError("must not hold control characters (newline, tab, escape...): nothing was written")
    return value


def _no_vcs_store(value: str) -> str:
    """A folder the daemon may create is not in a version control's store (``.git``,
    ``.hg``, ``.svn``, in any letter case): no note is kept there, and a file in
    ``.git/refs/heads`` is a branch to git, which then fails on every ``git log --all``."""
    if any(part.lower() in VCS_FOLDERS for part in value.split("/")):
        raise ValueError("must not lead into a version control's folder (.git, .hg, .svn): nothing was written")
    return value


RelPath = Annotated[str, Field(max_length=4096, description="path relative to the roam directory"), AfterValidator(rel_path)]
NewFolder = Annotated[RelPath, AfterValidator(_no_control), AfterValidator(_no_vcs_store)]  # "." (normalised to "") is the roam directory
