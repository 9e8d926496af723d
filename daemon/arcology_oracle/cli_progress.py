"""Progress on stderr for the long commands (``index``, ``import``).

What else is written to stderr while a bar is drawn (a warning logged, the error or the
"interrupted" line :func:`.cli.main` prints) first calls :func:`end_line`, so that it
starts a line of its own instead of ending the bar's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


_drawn: ProgressBar | None = None  # the bar whose line the terminal's cursor is on


def end_line() -> None:
    """End the line of the bar drawn last, if it is not ended yet (nothing otherwise);
    the bar draws itself again below at its next update."""
    global _drawn
    if _drawn is not None:
        bar, _drawn = _drawn, None
        bar.stream.write("\n")
        bar.stream.flush()
        bar._last = -1


def end_line_first(record) -> bool:
    """A logging filter (for the stderr handler): ends a drawn bar's line before each record."""
    end_line()
    return True


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
        global _drawn
        if _drawn is not None and _drawn is not self:
            end_line()
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.show(done, total)}")
        self.stream.flush()
        _drawn = self

    def finish(self) -> None:
        """End the bar's line (nothing when it is not drawn)."""
        if _drawn is self:
            end_line()
