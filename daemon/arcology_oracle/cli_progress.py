"""Progress on stderr for the long commands (``index``, ``import``)."""

from __future__ import annotations

import sys
from collections.abc import Callable


class ProgressBar:
    """A one-line progress bar on stderr when it is a terminal; otherwise silent, or with
    ``log_every`` (percent) one line each time that much more is done (for logs).
    ``show(done, total)`` writes the counts (default ``done/total``)."""

    def __init__(self, label: str, stream=None, *, show: Callable[[int, int], str] | None = None, log_every: int = 0):
        self.stream = stream or sys.stderr
        self.label = label
        self.enabled = self.stream.isatty()
        self.show = show or (lambda done, total: f"{done}/{total}")
        self.log_every = log_every
        self._last = -1
        self._logged = -1

    def update(self, done: int, total: int) -> None:
        if total <= 0:
            return
        percent = int(done * 100 / total)
        if not self.enabled:
            if self.log_every and percent // self.log_every > self._logged:
                self._logged = percent // self.log_every
                self.stream.write(f"{self.label.strip()}: {percent}% ({self.show(done, total)})\n")
                self.stream.flush()
            return
        if percent == self._last and done != total:
            return
        self._last = percent
        width = 30
        filled = int(width * done / total)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.show(done, total)}")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self._last >= 0:
            self.stream.write("\n")
            self.stream.flush()
            self._last = -1
