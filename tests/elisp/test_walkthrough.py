"""The first day in Emacs, as a person lives it: ``emacs -nw`` in tmux with the README's
own configuration, a copy of examples/roam, Debian's org-roam, the real daemon and the
fake Ollama. Keys go in with ``tmux send-keys``; the test reads the screen
(``tmux capture-pane``) and the files, and fails on any error a command signals or
``*Messages*`` shows.

Every step runs even when an earlier one failed (see tests/elisp/walkthrough.py), and
the failure lists them all. ``ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1`` rewrites
WALKTHROUGH.org from this run's screens; otherwise it is only checked to be there and valid org.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.elisp.walkthrough import Walk, write_document
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, SUMMARY, readme_emacs
from tests.elisp.walkthrough_steps import Flow
from tests.emacs_batch import REPO, emacs_env, require_packages, run_emacs
from tests.test_readme_org import ORG_LINT

# Read at import: the suite's autouse fixture clears ARCOLOGY_ORACLE_* before each test.
WRITE = os.environ.get("ARCOLOGY_ORACLE_WRITE_WALKTHROUGH") == "1"
WALKTHROUGH = REPO / "WALKTHROUGH.org"

KEYS = (
    "=n=, =n=, =p= move between the entries, =g= lists again, =RET= visits an entry, =q= hides "
    "the window; none of them edits the buffer."
)

ENTRY_KEYS = (
    "The {name} buffer is read-only: =n=, =n=, =p= move between the {name}, =g= asks again what made "
    "the one at point (a new entry {where}, the old one kept), =RET= on an entry's heading goes back "
    "to the heading it was asked about, =q= hides the window; none of them edits the buffer "
    "(=e= would make it editable)."
)

INTRO = """#+title: Walkthrough: the first day in Emacs

What you see on the first day, screen by screen: Emacs 28 in a terminal (160 x 45), the
configuration of README.org's "Emacs" section pasted as it is, a copy of =examples/roam=
and the daemon. The screens are from one run of =tests/elisp/test_walkthrough.py= (the
model is the suite's fake, so answers quote their sources instead of saying something
clever); =ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1 pytest tests/elisp/test_walkthrough.py=
writes this file again.
"""


def _replacements(tmp_path: Path, roam: Path, url: str) -> dict[str, str]:
    return {
        str(roam): "~/roam", str(tmp_path): "/tmp/walk", url: "http://127.0.0.1:7348", str(REPO): "~/src/arcology-oracle",
    }  # fmt: skip


@pytest.mark.timeout(300)
async def test_walkthrough(tmp_path, roam_dir, fake_ollama):
    """The first-day flow in an interactive Emacs; every failing step is listed."""
    require_packages()
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    walk = Walk(emacs, _replacements(tmp_path, roam_dir, daemon.url))
    flow = Flow(emacs, walk, roam_dir, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        steps = [
            ("Start Emacs with the README's configuration",
             "The README's Emacs lines go into =~/.emacs.d/init.el= (with the checkout's path) after "
             "the user's own org-roam setup; Emacs starts without a warning.", flow.start, flow.start_fallback),
            ("Open a note: the side window follows point",
             "=C-x C-f bread-hydration.org=, =C-c o s=, then move to a heading.", flow.follow_point, flow.recover),
            ("An unsaved edit",
             "Type into =* Baker's percentages= without saving: the list is asked again by the heading's "
             "text, without the note itself; only the edited heading is embedded, once, also after moving "
             "to the next heading and back. One =C-x u= takes the edit out and the list follows the saved "
             "note again.", flow.unsaved_edit, flow.recover),
            ("i from a heading line",
             "Point at the start of =* Baker's percentages=; in the side window =n= then =i=: the link goes "
             "into the heading's body, not into the heading; one =C-x u= takes it out.",
             flow.insert_from_heading, flow.recover),
            ("RET, n, p, g, q in the similar notes",
             KEYS, lambda: flow.keys_in(SIMILAR, "similar notes", reopen=flow.reopen_similar), flow.recover),
            ("C-x 1 in the side window", "No error: the frame keeps one window or says why it cannot.",
             flow.delete_other_windows, flow.recover),
            ("Ask, watch it stream, follow a source",
             "=C-c o a= in =inbox.org=; the answer streams into a window beside the note; "
             "=C-c C-o= on =[1]= opens that heading.", flow.ask, flow.recover),
            ("RET, n, p, g, q in the answers", ENTRY_KEYS.format(name="answers", where="below"), lambda: flow.keys_in(ANSWERS, "answers", reopen=flow.reopen_answers), flow.recover),
            ("Summarize twice", "=C-c o u= twice on =* Starter maintenance=: both summaries stay, the note too.",
             flow.summarize, flow.recover),
            ("RET, n, p, g, q in the summaries", ENTRY_KEYS.format(name="summaries", where="on top"), lambda: flow.keys_in(SUMMARY, "summaries", reopen=flow.reopen_summary), flow.recover),
            ("Converse", "A =:conversation:= heading with a =** Me= turn; =C-c o c= answers; =C-x u= drops it.",
             flow.converse, flow.recover),
            ("Link suggestions: i, g, x, undo",
             "=C-c o l=; =i= inserts the first suggestion, =g= lists again without it, =x= rejects one "
             "and says how to take that back; =u= does.", flow.suggestions, flow.recover),
            ("RET, n, p, g, q in the suggestions", KEYS, lambda: flow.keys_in(LINKS, "suggestions", reopen=flow.reopen_links), flow.recover),
            ("Memorize with the daemon up",
             "A region of =** Reviving a sluggish starter=, =M-x arcology-oracle-memorize=: it lands in the "
             "dailies (=journal/=) with a link back, and the new link is on the kill ring.",
             flow.memorize_up, flow.recover),
            ("Forget it again",
             "=C-c o K= asks, then takes the capture back: the daily note holds every line it held "
             "but the capture's.", flow.forget_it, flow.recover),
            ("The daemon stopped; memorize with it down",
             "The side window says the daemon is down (no Lisp error); what was typed for memorize is kept.",
             flow.daemon_down, flow.recover),
            ("The daemon back", "=g= in the side window lists again; nothing typed was lost.",
             flow.daemon_back, flow.recover),
            ("The org-roam buffer with the similar notes",
             "=M-x org-roam-buffer-toggle= with the side window open: backlinks and similar notes, the note "
             "still readable.", flow.roam_buffer, flow.recover),
            ("The same scores in the side window and the org-roam section",
             "Both list the notes similar to =Sourdough Baking=: a note in both has one score.",
             flow.same_scores, None),
            ("RET, n, p, g, q in the org-roam buffer", KEYS, lambda: flow.keys_in(
                "*org-roam*", "org-roam buffer", reopen=flow.reopen_roam, entries="Similar notes"),
             flow.recover),
            ("A command refused",
             "=M-x arcology-oracle-gptel-add-tools= without gptel, =M-x arcology-oracle-discard= in "
             "=*scratch*=: the echo area and =*Messages*= say why, without a prefix such as =if:=.",
             flow.user_errors, flow.recover),
        ]  # fmt: skip
        for title, text, body, recover in steps:
            await walk.step(title, text, body, recover)
        if WRITE:
            write_document(WALKTHROUGH, walk, INTRO)
    finally:
        await emacs.stop()
        flow.daemon.stop()
        daemon.stop()
    if walk.failures():
        pytest.fail(walk.report() + f"\n\n{len(walk.failures())} of {len(walk.steps)} steps failed", pytrace=False)


async def test_walkthrough_document_is_org(tmp_path):
    """WALKTHROUGH.org is there and Org reads it as written: every screen is a whole
    example block (a screen line starting with * or #+ is escaped)."""
    assert WALKTHROUGH.exists(), "WALKTHROUGH.org is missing: ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1 writes it"
    code, output = await run_emacs(["--eval", ORG_LINT], env=emacs_env(tmp_path, ORG_FILE=str(WALKTHROUGH)))
    assert code == 0, output
    opened = len(re.findall(r"^[ \t]*#\+begin_\S+", WALKTHROUGH.read_text(), re.MULTILINE | re.IGNORECASE))
    parsed = re.search(r"^BLOCKS (\d+)$", output, re.MULTILINE)
    assert parsed and int(parsed.group(1)) == opened, output[-2000:]
