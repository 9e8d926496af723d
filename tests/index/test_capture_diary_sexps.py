"""A capture's text, title or source never runs code when the user opens their agenda.
Org's agenda evaluates every diary sexp it finds in its files: a line starting with
``%%(`` or ``&%%(``, and a sexp timestamp ``<%%(...)>`` anywhere (``org-agenda-get-sexps``,
``org-agenda-get-timestamps``), with no question asked, and a daily is an agenda file
for many users. Text a capture keeps (a web page, the oracle's own answer, which a
note or page it read may have steered) must stay text there. The real daemon writes
it; a real batch Emacs builds the agenda over the daily; the sexps would each write a
file."""

from __future__ import annotations

import datetime
import re

from arcology_oracle.notes.conversations import org_safe
from arcology_oracle.notes.org_escape import ZWSP, inert
from tests.emacs_batch import emacs_env, run_emacs
from tests.index.test_write_attacks import post, roam, serve, today_rel  # noqa: F401 (roam: a fixture)
from tests.org_reading import OrgProcess


def sexp(marker) -> str:
    return f'(progn (write-region "ran" nil "{marker}") nil)'


async def test_diary_sexps_in_a_capture_are_never_evaluated_by_the_agenda(tmp_path, roam, fake_ollama):
    markers = [tmp_path / f"ran-{i}" for i in range(7)]
    text = "\n".join([
        "Notes from a page:", f"%%{sexp(markers[0])}", f"&%%{sexp(markers[1])}",
        f"See <%%{sexp(markers[2])}> too", "#+begin_src elisp", f"%%{sexp(markers[3])}", "#+end_src",
    ])  # fmt: skip
    answer = org_safe(f"```elisp\n%%{sexp(markers[6])}\n```\nand <%%{sexp(markers[6])}>")
    daemon = await serve(tmp_path, roam, fake_ollama)
    try:
        sent = [
            {"text": text},
            {"text": "A title with a sexp", "title": f"Meet <%%{sexp(markers[4])}>"},
            {"text": "A source with a sexp", "source": f"<%%{sexp(markers[5])}>"},
            {"text": answer, "role": "oracle"},
        ]
        ids = []
        for body in sent:
            status, captured = await post(daemon, "/memorize", body)
            assert status == 200 and captured["file"] == today_rel(), captured
            ids.append(captured["id"])
    finally:
        daemon.stop()
    daily = roam / today_rel()
    with OrgProcess(emacs_env(tmp_path)) as org:  # the captures as Org reads them, nothing else
        assert [h.id for h in org.read(daily).headings if h.id in ids] == ids
    agenda = (f'(progn (require (quote org-agenda)) (setq org-agenda-files (list "{daily}"))'
              f' (org-agenda-list nil "{datetime.date.today():%Y-%m-%d}" 7) (princ "agenda built"))')  # fmt: skip
    status, out = await run_emacs(["--eval", agenda], env=emacs_env(tmp_path))
    assert status == 0 and "agenda built" in out, out
    assert [m.name for m in markers if m.exists()] == []
    # Escaped, not changed: every character sent is there, the zero-width spaces aside.
    written = daily.read_text(encoding="utf-8").replace(ZWSP, "")
    assert all(line in written for line in text.split("\n")[1:4]), written


def test_the_escape_only_adds_zero_width_spaces():
    for text in ("%%(a)", "&%%(b)", "x <%%(c)> y", "<<%%(d)", "a\n&%%(e)\n%%(f)", "50%%(g)", "&&%%(h)"):
        assert inert(text).replace(ZWSP, "") == text, text
        assert not re.search(r"(?m)^&?%%\(|<%%\(", inert(text)), inert(text)
