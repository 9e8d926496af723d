"""What a reconcile or an indexing of some paths says: :class:`Progress` while it runs
(progress bars, ``/status``), :class:`IndexReport` when it ends."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Progress:
    """What the indexer is doing, for progress bars and ``/status``; safe to read anywhere."""

    phase: str = "idle"
    done: int = 0
    total: int = 0

    def as_dict(self) -> dict:
        return {"running": self.phase != "idle", "phase": self.phase, "done": self.done, "total": self.total}


@dataclass
class IndexReport:
    """The outcome of a reconcile or of indexing some paths."""

    seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    new_pending: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    private: int = 0  # files kept out whole by the privacy rule (read or not): nothing of them stored
    stale: set[str] = field(default_factory=set)  # of ``failed``: the store could not take them (its disk full)

    def merge(self, other: "IndexReport") -> None:
        self.seen += other.seen
        self.indexed += other.indexed
        self.unchanged += other.unchanged
        self.deleted += other.deleted
        self.private += other.private
        self.new_pending += other.new_pending
        self.failed.update(other.failed)
        self.stale |= other.stale
