"""The walkthrough's bookkeeping: steps that fail without stopping the walk, errors read
from Emacs after each step, and the screens kept for ``WALKTHROUGH.org``.

A step is an async function; :meth:`Walk.step` runs it, then reads the harness's state:
a step fails when it raises ``AssertionError`` (a screen that never came, a wrong file)
or when a command signalled an error or ``*Messages*`` shows one meanwhile. A failed
step is recorded with its screen and the walk goes on from a known state, so one run
lists every step that fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.tmux_emacs import TmuxEmacs

# Lines of *Messages* that are errors: demoted ones from timers, filters and sentinels
# (the package's own guard prints the error object), Emacs's own reports, and warnings.
ERROR_LINE = re.compile(
    r"^(?:Error running timer|error in process (?:filter|sentinel)|arcology-oracle: \(|"
    r"Warning \(|.*(?:Wrong type argument|Symbol’s (?:function|value)|wrong-type-argument|void-function))"
)


@dataclass
class Shot:
    caption: str
    screen: str


@dataclass
class StepRecord:
    title: str
    text: str
    shots: list[Shot] = field(default_factory=list)
    failure: str | None = None


class Walk:
    """Runs the steps of one walk on EMACS and keeps their records."""

    def __init__(self, emacs: TmuxEmacs, replacements: dict[str, str]):
        self.emacs = emacs
        self.steps: list[StepRecord] = []
        self.replacements = replacements
        self.errors_seen = 0
        self.messages_seen = 0

    async def shot(self, caption: str, screen: str | None = None) -> str:
        """Keep the screen (now, or SCREEN) under CAPTION in the current step."""
        screen = screen if screen is not None else await self.emacs.screen()
        self.steps[-1].shots.append(Shot(caption, screen))
        return screen

    async def new_errors(self) -> list[str]:
        """Errors since the last call: signalled by commands, or shown in *Messages*."""
        state = await self.emacs.state()
        errors = state["errors"][self.errors_seen :]
        lines = state["messages"].split("\n")
        shown = [line for line in lines[self.messages_seen :] if ERROR_LINE.match(line)]
        self.errors_seen = len(state["errors"])
        self.messages_seen = max(0, len(lines) - 1)
        return [*errors, *shown]

    async def step(self, title: str, text: str, body, recover=None) -> bool:
        """Run BODY as the step TITLE (TEXT says what a person does and sees). Returns
        whether it passed; after a failure RECOVER (if any) puts Emacs back in shape."""
        record = StepRecord(title, text)
        self.steps.append(record)
        failure = None
        try:
            await body()
        except Exception as e:  # noqa: BLE001 - every failure is the step's, recorded
            failure = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
            try:
                record.shots.append(Shot("When the step failed", await self.emacs.screen()))
            except AssertionError:
                pass
        errors = await self.new_errors()
        if errors:
            failure = (failure + "\n" if failure else "") + "errors: " + "; ".join(errors)
        record.failure = failure
        if failure and recover is not None:
            await recover()
            await self.new_errors()
        return failure is None

    def failures(self) -> list[StepRecord]:
        return [s for s in self.steps if s.failure]

    def report(self, lines: int = 6) -> str:
        """The failed steps, the first LINES lines of each failure."""
        return "\n\n".join(
            f"STEP {s.title!r} FAILED:\n" + "\n".join(s.failure.split("\n")[:lines]) for s in self.failures()
        )

    def _clean(self, text: str) -> str:
        for old, new in self.replacements.items():
            text = text.replace(old, new)
        return text

    def document(self, intro: str) -> str:
        """The walkthrough as org: one heading per step, its screens as example blocks."""
        out = [intro.rstrip(), ""]
        for number, s in enumerate(self.steps, 1):
            out += [f"* {number}. {s.title}", "", s.text.strip(), ""]
            if s.failure:
                out += ["Failed in this run:", "", *_example(self._clean(s.failure))]
            for shot in s.shots:
                out += [f"{shot.caption}:", "", *_example(self._clean(_trim(shot.screen)))]
        return "\n".join(out).rstrip() + "\n"


def _trim(screen: str) -> str:
    lines = [line.rstrip() for line in screen.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _example(text: str) -> list[str]:
    return ["#+begin_example", _escape(text), "#+end_example", ""]


def _escape(text: str) -> str:
    """Escape lines an org example block would read as its own syntax."""
    return re.sub(r"^(\s*)(\*|#\+|,\*|,#\+)", r"\1,\2", text, flags=re.M)


def write_document(path: Path, walk: Walk, intro: str) -> None:
    path.write_text(walk.document(intro))
